"""The check registry: stable dotted ids, each with the real bug it guards.

Ids are never reused; titles and rationales may be reworded. A check is a function of
one evaluated example that raises :class:`Violation` when the invariant does not hold.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chatconform.errors import ERROR, ConfigError


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
