"""The cyclic garbage collector: paused while a pickle is loaded, and its full collections
spaced out while a run keeps its drawn cases.

Loading a pickle of a long history makes tens of thousands of objects, and the collector
runs after every 700 new ones; its older generations walk every live object of the
process (a search's whole heap, Hypothesis' included). Loading a 75 KB history took
11 ms with the collector running and 2 ms with it paused. What was just loaded is not
garbage, and nothing is lost by the pause: the next collection sees whatever became
garbage meanwhile.

A run keeps each contract's drawn cases for every implementation it judges
(:mod:`chatconform.engine.drawn`): a hundred histories of hundreds of messages,
and the reference's answers for them, most of a run's heap. Every full collection walks all
of it, and by default one comes after every ten collections of the middle generation (when
a quarter of the heap is new since the last): in a ``ci`` run of the reference's payload
contract, 34 full collections took 18 of its 42 seconds of CPU. While the cases are kept,
:func:`spaced` lets ten times as many middle collections pass before a full one: 6 full
collections, 22 seconds in all, and the same peak memory (328 and 332 MB), since what is
freed by reference counting, nearly all of it, is freed at once either way.
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
