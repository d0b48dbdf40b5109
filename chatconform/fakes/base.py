"""The base every known-bug implementation derives from."""

from __future__ import annotations

from typing import ClassVar


class Fake:
    """A known-bug implementation: the contract methods it overrides reproduce one real bug.

    A fake declares ``name``, ``reproduces`` (the bug, with a link), ``violates`` (the check
    ids that must catch it at error level) and optionally ``warns`` (checks that report it
    only as a warning). ``chatconform.fakes.all_fakes`` lists every public subclass that
    declares ``violates``; the project's tests hold the suite to all three.
    """

    name: ClassVar[str]
    reproduces: ClassVar[str]
    violates: ClassVar[tuple[str, ...]]
    warns: ClassVar[tuple[str, ...]] = ()
    version: ClassVar[str] = "0"
