"""The cyclic garbage collector: paused while a pickle is loaded, and its full collections
spaced out while a run keeps its drawn cases.

Loading a pickle of a long history makes tens of thousands of objects, and the collector
runs after every 700 new ones; its older generations walk every live object of the
process (a search's whole heap, Hypothesis' included). Loading a 75 KB history took
11 ms with the collector running and 2 ms with it paused. What was just loaded is not
garbage, and nothing is lost by the pause: the next collection sees whatever became
garbage meanwhile.

A run keeps each contract's drawn cases for every implementation it judges
(:mod:`chatconform.conformance.engine.drawn`): a hundred histories of hundreds of messages,
and the reference's answers for them, most of a run's heap. Every full collection walks all
of it, and by default one comes after every ten collections of the middle generation (when
a quarter of the heap is new since the last): in a ``ci`` run of the reference's payload
contract, 34 full collections took 18 of its 42 seconds of CPU. While the cases are kept,
:func:`spaced` lets ten times as many middle collections pass before a full one: 6 full
collections, 22 seconds in all, and the same peak memory (328 and 332 MB), since what is
freed by reference counting, nearly all of it, is freed at once either way.

While a case is judged (:func:`collecting_less`: copied, called, compared, checked), the
young generation is collected every 50,000 allocations instead of 700: the private copy of a
long history and what the call and the checks make of it die by reference counting before
a collection sees them, where at the default each was scanned, promoted, and counted towards
the next full collection. In a ``ci`` run of the reference, every contract: 15,065
collections (13 full) and 7.5 s became 5,701 (5 full) and 4.0 s, the same peak (about 340 MB).
"""

from __future__ import annotations

import gc
import pickle
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def paused() -> Iterator[None]:
    """The collector off for the block (left off if it was off already)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def loads(data: bytes) -> Any:
    """``pickle.loads`` with the collector paused."""
    with paused():
        return pickle.loads(data)


#: How many collections of the middle generation may pass before a full one while
#: :func:`spaced` holds (Python's default is 10).
SPACED_FULL = 100


@contextmanager
def spaced() -> Iterator[None]:
    """Full collections ten times rarer for the block (``gc.set_threshold``), as they were after."""
    before = gc.get_threshold()
    gc.set_threshold(before[0], before[1], max(before[2], SPACED_FULL))
    try:
        yield
    finally:
        gc.set_threshold(*before)


#: The young generation's threshold while a case is judged (Python's default is 700
#: allocations). A private copy of a long history is some 20,000 objects that die when the
#: case is judged; collected at the default, each is scanned and promoted, and the full
#: collections the promotions set off scan every case a run keeps. Cyclic garbage made
#: meanwhile is still collected, every 50,000 allocations.
YOUNG_WHILE_JUDGING = 50_000


@contextmanager
def collecting_less() -> Iterator[None]:
    """Judge a case (copy it, call, compare) with :data:`YOUNG_WHILE_JUDGING`, and put the
    thresholds back afterwards, unless the call set its own (an implementation's process
    is its own). Collection switched off (a threshold of 0) stays off."""
    before = gc.get_threshold()
    if not before[0]:
        yield
        return
    judging = (max(before[0], YOUNG_WHILE_JUDGING), *before[1:])
    gc.set_threshold(*judging)
    try:
        yield
    finally:
        if gc.get_threshold() == judging:
            gc.set_threshold(*before)
