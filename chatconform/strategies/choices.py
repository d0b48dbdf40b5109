"""Where the simulators get their choices: from Hypothesis, or from a seeded PRNG.

A simulator (user actions on a chat tree, an agent run) asks a *chooser* for every
decision: a boolean, an integer in a range, an item of a sequence, a permutation. The
same simulator code then runs in two modes:

- :class:`DrawChooser` turns each choice into a Hypothesis draw, so the section it plays
  shrinks choice by choice toward the first option of everything;
- :class:`SeededChooser` answers from ``random.Random(seed)``, so a bulk section of
  thousands of choices costs Hypothesis only the two draws of :func:`bulk_section`
  (a seed and a length), and shrinks by cutting the length toward 0.

Because both modes run the same code, everything a drawn section can hold can also
appear inside a bulk section.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol, TypeVar

from hypothesis import strategies as st

T = TypeVar("T")

_SEEDS = st.integers(0, 2**32 - 1)


class Chooser(Protocol):
    def boolean(self) -> bool: ...

    def integer(self, low: int, high: int) -> int: ...

    def choice(self, options: Sequence[T]) -> T: ...

    def permutation(self, items: Sequence[T]) -> list[T]: ...

    def span(self, play: Callable[[], T]) -> T: ...


@st.composite
def _span(draw, play):
    return play(draw)


class _Pending(threading.local):
    play: Callable | None = None


_PENDING = _Pending()  # the play a span hands to the one span strategy, for its next draw


def _pending_play(draw):
    play, _PENDING.play = _PENDING.play, None
    assert play is not None, "a span hands its play over before it draws"
    return play(draw)


#: One strategy for every span. A new composite strategy per span (a turn, a tool round) made
#: Hypothesis work out its properties anew, in closures that refer to themselves: cycles that
#: held the history being drawn until a full collection, most of the cyclic garbage of a run.
#: A composite's label comes from its function alone (``_span``, as before), so the choices
#: and spans drawn, and how they shrink, are the same.
_SPAN = _span(_pending_play)


@lru_cache(maxsize=256)
def _integers(low: int, high: int):
    return st.integers(low, high)


@lru_cache(maxsize=256)
def _indices(count: int):
    return st.integers(0, count - 1)


class DrawChooser:
    """Every choice is one Hypothesis draw (simplest answer: False, ``low``, the first option).

    A choice from a sequence is drawn as its index, so any sequence works (hashable or
    not) and building the strategy is cached.
    """

    def __init__(self, draw) -> None:
        self._draw = draw

    def boolean(self) -> bool:
        return self._draw(st.booleans())

    def integer(self, low: int, high: int) -> int:
        return self._draw(_integers(low, high))

    def choice(self, options: Sequence[T]) -> T:
        return options[self._draw(_indices(len(options)))]

    def permutation(self, items: Sequence[T]) -> list[T]:
        return list(self._draw(st.permutations(items)))

    def span(self, play: Callable[[], T]) -> T:
        """Run ``play`` (which chooses through this chooser) as one Hypothesis draw, so
        its choices form one span: the shrinker can delete a whole turn at once, where
        deleting a few choices at a time would leave the rest misaligned."""
        def inside(draw):
            outer, self._draw = self._draw, draw
            try:
                return play()
            finally:
                self._draw = outer

        _PENDING.play = inside
        try:
            return self._draw(_SPAN)
        finally:
            _PENDING.play = None  # taken on entry; cleared here if the draw stopped before it


class SeededChooser:
    """Every choice comes from ``random.Random(seed)``: deterministic, and free for Hypothesis."""

    def __init__(self, seed: int | str) -> None:
        self._rng = random.Random(seed)

    def boolean(self) -> bool:
        return self._rng.random() < 0.5

    def integer(self, low: int, high: int) -> int:
        return self._rng.randint(low, high)

    def choice(self, options: Sequence[T]) -> T:
        return options[self._rng.randrange(len(options))]

    def permutation(self, items: Sequence[T]) -> list[T]:
        shuffled = list(items)
        self._rng.shuffle(shuffled)
        return shuffled

    def span(self, play: Callable[[], T]) -> T:
        return play()


@dataclass(frozen=True)
class Bulk:
    """A bulk section: ``size`` units played by a :class:`SeededChooser` seeded with ``seed``.

    With ``per_unit``, unit ``i`` of the section is played by a chooser of its own, seeded
    with ``seed`` and ``first + i``: the section is the window ``[first, first + size)`` of
    one endless seeded sequence, so shrinking can drop units from either end and keep the
    one a failure needs (see :func:`bulk_window`).
    """

    seed: int
    size: int
    first: int = 0
    per_unit: bool = False

    def chooser(self) -> SeededChooser:
        return SeededChooser(self.seed)

    def unit_chooser(self, index: int) -> SeededChooser:
        """The chooser of unit ``index`` (0-based) of a ``per_unit`` section."""
        return SeededChooser(f"{self.seed}:{self.first + index}")


NO_BULK = Bulk(0, 0)

# The gate: a bulk section when a draw in [0, _GATE_SIDES) lands on the top ``hits``
# values (Hypothesis favours 0: two hits are about one example in twelve, three one in eight).
_GATE_SIDES = 16


def bulk_section(draw, max_size: int, *, hits: int = 2, near_top: int = 300) -> Bulk:
    """Draw whether this example has a bulk section, and its seed and length.

    About one example in twelve gets one (``hits`` of 16 gate values). Three in four of those are within
    ``near_top`` units of ``max_size`` (a run of a few hundred examples always meets the longest inputs, where
    window and truncation bugs hide); the others take any length from 0 to ``max_size``.
    The length is one draw, so shrinking finds the shortest failing length by halving
    (a cap at 50 shrinks to 51, not to the next round number); the near-the-top choice
    shrinks first, keeping the length, which is valid in the wider range too. Every draw
    shrinks toward 0: no bulk, then a shorter one, then seed 0, so a failure found on a
    long input is still reported on a short one when the length did not matter.
    """
    if max_size < 1 or draw(st.integers(0, _GATE_SIDES - 1)) < _GATE_SIDES - hits:
        return NO_BULK
    low = max(0, max_size - near_top) if draw(st.integers(0, 3)) else 0
    return Bulk(draw(_SEEDS), draw(st.integers(low, max_size)))


def bulk_window(draw, max_size: int, *, hits: int = 3, near_top: int = 150) -> Bulk:
    """A bulk section drawn as a window of a seeded sequence whose units are seeded one by
    one (``Bulk.per_unit``): its end, then its length, both near the top as in
    :func:`bulk_section`, about one example in eight by default.

    A failure inside a long section then shrinks to the unit that causes it: lowering the
    end drops the units after it, lowering the length those before it, and the unit keeps
    its seed, so it plays the same way (only what it carries over from earlier units, such
    as tag numbers, changes).
    """
    if max_size < 1 or draw(st.integers(0, _GATE_SIDES - 1)) < _GATE_SIDES - hits:
        return NO_BULK
    near = draw(st.integers(0, 3))
    low = max(0, max_size - near_top) if near else 0
    seed = draw(_SEEDS)
    end = draw(st.integers(low, max_size))
    length = min(end, draw(st.integers(low, max_size)))
    return Bulk(seed, length, first=end - length, per_unit=True)
