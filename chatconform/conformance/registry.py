"""The check registry: stable dotted ids, each with the real bug it guards.

Ids are never reused; titles and rationales may be reworded. A check is a function of
one evaluated example that raises :class:`Violation` when the invariant does not hold.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class ConfigError(Exception):
    """A usage or configuration problem the user can fix (exit code 2)."""


#: A failure the provider answers with a rejection, or that silently changes the conversation.
ERROR = "error"
#: A portability hazard: accepted where judged, rejected by another widely used server of
#: the same API, or by some of the provider's models; or advice (``matches_reference``).
WARNING = "warning"
LEVELS = (ERROR, WARNING)


class MissingDependency(ConfigError):
    """An implementation whose libraries are not installed; the message names the extra that
    installs them. A run over every registered implementation skips it with this message."""


class Violation(Exception):
    """Raised by a check: what was wrong, with expected vs actual where they exist.

    ``level`` overrides the check's own level for this one failure (``provider_rules``
    fails at the level of the worst rule broken).
    """

    def __init__(self, message: str, *, expected: Any = None, actual: Any = None,
                 level: str | None = None):
        super().__init__(message)
        self.message = message
        self.expected = expected
        self.actual = actual
        if level is not None and level not in LEVELS:
            raise ValueError(f"unknown level {level!r}; one of {', '.join(LEVELS)}")
        self.level = level


class NotApplicable(Exception):
    """Raised by a check for a case it has nothing to judge on (say, a history with no user
    content for ``user_led``): the case does not count as one the check was evaluated on."""


@dataclass(frozen=True)
class Check:
    id: str
    contract: str
    title: str
    rationale: str
    evaluate: Callable[[Any], None] | None  # None: evaluated by the engine itself
    #: The level of a failure, per variant (a provider id) where it differs from ``level``.
    level: str = ERROR
    levels: tuple[tuple[str, str], ...] = ()
    #: Why a level is what it is: the evidence a user can follow.
    level_note: str = ""

    def level_for(self, variant: str | None) -> str:
        return dict(self.levels).get(variant, self.level) if variant is not None else self.level


_CHECKS: dict[str, Check] = {}


def register(check: Check) -> Check:
    existing = _CHECKS.get(check.id)
    if existing is not None and existing != check:
        raise RuntimeError(f"check id {check.id!r} registered twice")
    _CHECKS[check.id] = check
    return check


def all_checks() -> list[Check]:
    _load_contracts()
    return list(_CHECKS.values())


def get_check(check_id: str) -> Check:
    _load_contracts()
    try:
        return _CHECKS[check_id]
    except KeyError:
        close = difflib.get_close_matches(check_id, _CHECKS, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else "; `chatconform list` shows them"
        raise ConfigError(f"unknown check id {check_id!r}{hint}") from None


def _load_contracts() -> None:
    from chatconform.conformance.contracts import all_contracts

    all_contracts()
