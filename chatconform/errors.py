"""Every exception a user, a contract author or an adapter can meet, in one place.

Other modules import these and define none of their own that cross a module boundary.
A :class:`ConfigError` (and its subclasses) is a problem the user can fix: the command line
prints its one-line message and exits 2. :class:`Violation` and :class:`NotApplicable` are
what a check raises; :class:`ConformanceWarning` is the Python warning a warning-level
failure is emitted as. The rest describe a failure of the implementation under test or of
chatconform itself, and become verdicts, never crashes.

Every one of them derives from :class:`ChatconformError`, so ``except ChatconformError``
catches anything chatconform raises, and :class:`ConformanceWarning` is one too (a warning
is an exception class). The one exception outside it is :class:`Interrupted`: a stop the
user asked for, a ``KeyboardInterrupt`` on purpose, which ``except Exception`` must not catch.
"""

from __future__ import annotations

from typing import Any

#: A failure the provider answers with a rejection, or that silently changes the conversation.
ERROR = "error"
#: A portability hazard: accepted where judged, rejected by another widely used server of
#: the same API, or by some of the provider's models; or advice (``matches_reference``).
WARNING = "warning"
LEVELS = (ERROR, WARNING)


class ChatconformError(Exception):
    """The root of every exception chatconform raises (but the stop, :class:`Interrupted`)."""


class ConfigError(ChatconformError):
    """A usage or configuration problem the user can fix (exit code 2)."""


class MissingDependency(ConfigError):
    """An implementation whose libraries are not installed; the message names the extra that
    installs them. A run over every registered implementation skips it with this message."""


class ContractLoadError(ConfigError):
    """A contract module or entry point could not be loaded."""


class UnknownProvider(ChatconformError, ValueError):
    """A provider id that is not in the table; the message lists the known ids."""

    def __init__(self, provider: object, known: tuple[str, ...] = ()) -> None:
        self.provider = provider
        super().__init__(f"unknown provider {provider!r}; known providers: {', '.join(known)}")


class UnknownDialect(ChatconformError, ValueError):
    """A request dialect no module of ``chatconform.dialects`` speaks: a profile naming one
    fails when its module is imported, rather than render in another dialect's shape."""

    def __init__(self, dialect: object, known: tuple[str, ...] = ()) -> None:
        self.dialect = dialect
        super().__init__(f"unknown dialect {dialect!r}; known dialects: {', '.join(known)}")


class UnsendableContent(ChatconformError, ValueError):
    """History content the provider cannot take in any form (audio bytes for Anthropic): the
    reference raises it rather than drop the content, and an implementation that raises on
    such a history has refused it, not crashed (``Contract.refusable``)."""


class ConformanceWarning(ChatconformError, UserWarning):
    """A warning-level finding: a portability hazard or advice, not a rejection. Where a run
    reports it as ``warn`` and passes, :func:`~chatconform.outputs.repro.check_case` and
    the pytest plugin emit it as a Python warning; ``strict=True`` (``--chatconform-strict``)
    fails on it instead."""


class Violation(ChatconformError):
    """Raised by a check: what was wrong, with expected vs actual where they exist.

    ``level`` overrides the check's own level for this one failure (``provider_rules``
    fails at the level of the worst rule broken); ``why`` its rationale, where a check that
    guards several bugs can tell from the failure's shape which one this is.
    """

    def __init__(self, message: str, *, expected: Any = None, actual: Any = None,
                 level: str | None = None, why: str | None = None):
        super().__init__(message)
        self.message = message
        self.expected = expected
        self.actual = actual
        if level is not None and level not in LEVELS:
            raise ValueError(f"unknown level {level!r}; one of {', '.join(LEVELS)}")
        self.level = level
        self.why = why

    @staticmethod
    def worst(faults: list[Violation]) -> Violation:
        """The fault to report of several a check found in one case: the first at error level
        (a level of None is the check's own, counted as an error), else the first; an error is
        never hidden behind a warning met before it. Its message counts the others."""
        chosen = next((f for f in faults if f.level != WARNING), faults[0])
        others = len(faults) - 1
        if others:
            chosen.message += f" (and {others} more fault{'s' if others > 1 else ''})"
            chosen.args = (chosen.message,)
        return chosen


class NotApplicable(ChatconformError):
    """Raised by a check for a case it has nothing to judge on (say, a history with no user
    content for ``user_led``): the case does not count as one the check was evaluated on."""


class ProtocolError(ChatconformError):
    """An ``exec:`` program broke the protocol; it was stopped, and starts again on the next call."""


class ProgramHung(ProtocolError):
    """An ``exec:`` program (or a Python implementation in its own process) gave no answer
    before the call's deadline; it was stopped. A hang, as a call past its deadline is."""


class ProgramError(ChatconformError):
    """An ``exec:`` program answered a call with an error: the implementation raised."""


class RejectedInput(ProgramError, ValueError):
    """The program refused its input as invalid data (its error says ``"invalid_input": true``):
    a :class:`ValueError`, as a validation error is in Python (``serde.rejects_malformed``)."""


class MalformedResult(ChatconformError):
    """The program answered with a result that is not the contract's kind of result."""


class UnsendableCase(ChatconformError):
    """chatconform could not send a case to the implementation's own process (neither as a
    pickle nor as JSON): the engine's failure, raised as an :class:`EngineCaseError`."""


class DriverError(ChatconformError):
    """pydantic-ai refused a call the run driver (``chatconform.strategies.runs``) made of its
    own accord (its ``run_id``, its arguments), not the history it was given: chatconform's
    bug, never the run's failure nor the implementation's (the engine reports it as an
    :class:`EngineCaseError`)."""


class EngineCaseError(ChatconformError):
    """chatconform itself could not copy, fingerprint or serialise a case: our bug, not the
    implementation's. Carries a readable (possibly shortened) form of the case."""

    def __init__(self, stage: str, error: BaseException, case: Any):
        try:
            text = repr(case)
        except RecursionError:
            text = f"<a {type(case).__name__} nested too deeply to show>"
        self.case_text = text if len(text) <= 2000 else text[:2000] + " …"
        super().__init__(f"the engine could not {stage} a generated case "
                         f"({type(error).__name__}: {str(error)[:300]})")

    @classmethod
    def restore(cls, message: str, case_text: str) -> EngineCaseError:
        """The error again from its message and case text (sent from a worker, read from a report)."""
        error = cls.__new__(cls)
        Exception.__init__(error, message)
        error.case_text = case_text
        return error

    def __reduce__(self):
        return (EngineCaseError.restore, (str(self), self.case_text))


class Interrupted(KeyboardInterrupt):
    """The run was asked to stop (``signal``: ``"SIGINT"`` or ``"SIGTERM"``), raised where the
    engine looks for a stop, never from a signal handler. A KeyboardInterrupt, so that
    Hypothesis treats it as one: it stops at once and neither retries nor saves the case."""

    def __init__(self, signal: str):
        super().__init__(signal)
        self.signal = signal
