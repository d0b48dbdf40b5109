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


class MissingDependency(ConfigError):
    """An implementation whose libraries are not installed; the message names the extra that
    installs them. A run over every registered implementation skips it with this message."""


class Violation(Exception):
    """Raised by a check: what was wrong, with expected vs actual where they exist."""

    def __init__(self, message: str, *, expected: Any = None, actual: Any = None):
        super().__init__(message)
        self.message = message
        self.expected = expected
        self.actual = actual


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
