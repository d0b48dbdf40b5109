"""The check registry: stable dotted ids, each with the real bug it guards.

Ids are never reused; titles and rationales may be reworded. A check is a function of
one evaluated example that raises :class:`Violation` when the invariant does not hold.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chatconform.errors import ERROR


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
    #: Whether its failures are shrunk (a time depends on the machine, so ``slow`` is not).
    shrinks: bool = True

    def level_for(self, variant: str | None) -> str:
        return dict(self.levels).get(variant, self.level) if variant is not None else self.level


_CHECKS: dict[str, Check] = {}


def register(check: Check) -> Check:
    existing = _CHECKS.get(check.id)
    if existing is not None and existing != check:
        raise RuntimeError(f"check id {check.id!r} registered twice")
    _CHECKS[check.id] = check
    return check


def registered_checks() -> list[Check]:
    """The checks registered so far (the catalog, :mod:`chatconform.contracts`,
    loads every contract first)."""
    return list(_CHECKS.values())


def find_check(check_id: str) -> Check | None:
    return _CHECKS.get(check_id)
