"""The verdict statuses, in one place: reports, the matrix, exit codes and diffs read them."""

from __future__ import annotations

from enum import Enum


class Status(str, Enum):  # noqa: UP042 - str() and format() give "Status.PASS", as reports and messages were written with
    """The status of one (implementation, check) verdict.

    A ``str`` enum, so a status is written to JSON reports as its plain value and compares
    equal to it (``Status.PASS == "pass"``).
    """

    #: Evaluated on at least one case, and held on every case where it was evaluated.
    PASS = "pass"
    #: Failed on some case, at error level: a provider rejects it or the conversation changes.
    FAIL = "fail"
    #: Failed only at warning level: a portability hazard or advice. Fails the run only
    #: under ``--strict``.
    WARN = "warn"
    #: Never evaluated: the implementation produced no output this check could judge
    #: (it raised, hung or returned something malformed on every case), or no case
    #: was one the check applies to. Fails the run: it is not a pass.
    NOT_EVALUATED = "not_evaluated"
    #: chatconform itself could not run the check (a check or the engine raised).
    ERROR = "error"
    #: Not run, with the reason (the implementation lacks the contract method).
    SKIP = "skip"
    #: Failed, as the implementation's ``expected_failures`` says it does.
    XFAIL = "xfail"

    def __str__(self) -> str:
        return self.value

    @property
    def fails_run(self) -> bool:
        """Whether this status makes the run exit 1."""
        return self in _FAILING

    def fails(self, *, strict: bool = False) -> bool:
        """Whether this status makes the run exit 1; ``strict`` counts warnings too."""
        return self in _FAILING or (strict and self is Status.WARN)

    @property
    def label(self) -> str:
        """How the matrix shows it."""
        return _LABELS[self]

    @property
    def style(self) -> str:
        """A terminal style for the label (rich markup)."""
        return _STYLES[self]


_FAILING = frozenset({Status.FAIL, Status.NOT_EVALUATED, Status.ERROR})
_LABELS = {Status.PASS: "pass", Status.FAIL: "FAIL", Status.WARN: "warn", Status.NOT_EVALUATED: "not evaluated",
           Status.ERROR: "error", Status.SKIP: "skip", Status.XFAIL: "xfail"}
_STYLES = {Status.PASS: "green", Status.FAIL: "bold red", Status.WARN: "bold yellow", Status.NOT_EVALUATED: "bold red",
           Status.ERROR: "bold magenta", Status.SKIP: "dim", Status.XFAIL: "yellow"}

#: Statuses in report order.
STATUSES: tuple[Status, ...] = tuple(Status)
