"""The input as it was before the call: a private copy for the implementation, and a way
to tell whether the implementation changed anything reachable from it.

:class:`Frozen` pickles the case: the pickle is the source of the copy, and the copy's own
pickle after the call is compared with it (pickle records every attribute of every object,
private ones included, and every element of every container). Pickling runs in C, several
times faster than a deep copy plus a Python walk. Where the bytes differ afterwards, :func:`snapshot`
compares the values, so rebinding an attribute to an equal value is not an edit. A case
that cannot be pickled is copied with :func:`copy.deepcopy` and compared by the walk.

:func:`snapshot` walks every attribute of
every object (``__dict__`` and ``__slots__``, private ones included), every element of
every list, tuple, set and dict, so an edit anywhere (a message, a part, a part's content,
a list inside content, tool-call arguments, metadata) changes it. It is built with an
explicit stack, so deeply nested data cannot exhaust the interpreter's recursion limit.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from enum import Enum
from typing import Any
from uuid import UUID

from chatconform.frame import collector

_ATOMS = (str, bytes, int, bool, type(None), datetime, date, time, timedelta, Decimal, UUID, Enum, complex)
_NAMES_CACHE: dict[type, tuple[str, ...]] = {}


def _names(cls: type) -> tuple[str, ...]:
    """Declared attribute names: dataclass fields, then ``__slots__`` along the MRO."""
    names = _NAMES_CACHE.get(cls)
    if names is None:
        found: list[str] = [f.name for f in dataclasses.fields(cls)] if dataclasses.is_dataclass(cls) else []
        for klass in cls.__mro__:
            declared = klass.__dict__.get("__slots__", ())
            found.extend([declared] if isinstance(declared, str) else declared)
        names = _NAMES_CACHE[cls] = tuple(n for n in dict.fromkeys(found) if n not in ("__dict__", "__weakref__"))
    return names


def _attributes(value: Any) -> list[tuple[str, Any]]:
    """Every attribute by name, read with ``getattr``: an instance attribute left at its
    class-level default reads the same as one set to that default."""
    names = list(_names(type(value)))
    state = getattr(value, "__dict__", None)
    if isinstance(state, dict):
        names.extend(sorted(name for name in state if name not in names))
    return [(name, getattr(value, name, _MISSING)) for name in names]


_MISSING = "<unset>"


def snapshot(value: Any) -> list[Any]:
    """A flat, comparable record of ``value`` and everything reachable from it.

    Two values give equal snapshots exactly when they have the same types, the same
    structure and the same contents everywhere. Floats are recorded by ``repr`` (a NaN
    equals itself); an object seen twice is recorded as a back-reference, so shared and
    cyclic data terminate and aliasing changes show.
    """
    out: list[Any] = []
    seen: dict[int, int] = {}
    keep_alive: list[Any] = []  # ids stay unique while the walk runs
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if isinstance(item, _ATOMS):
            out.append((kind.__name__, item))
            continue
        if kind is float:
            out.append(("float", repr(item)))
            continue
        if isinstance(item, (bytearray, memoryview)):
            out.append((kind.__name__, bytes(item)))
            continue
        key = id(item)
        if key in seen:
            out.append(("ref", seen[key]))
            continue
        seen[key] = len(seen)
        keep_alive.append(item)
        if isinstance(item, dict):
            entries = list(item.items())
            out.append((kind.__name__, len(entries)))
            for k, v in reversed(entries):
                stack.append(v)
                stack.append(k)
        elif isinstance(item, (list, tuple)):
            out.append((kind.__name__, len(item)))
            stack.extend(reversed(item))
        elif isinstance(item, (set, frozenset)):
            members = sorted(item, key=repr)
            out.append((kind.__name__, len(members)))
            stack.extend(reversed(members))
        else:
            attributes = _attributes(item)
            out.append((kind.__module__, kind.__qualname__, tuple(name for name, _ in attributes)))
            stack.extend(v for _, v in reversed(attributes))
    return out


class Frozen:
    """One case, frozen before the call (see the module docstring)."""

    def __init__(self, case: Any) -> None:
        self._case = case
        self._baseline: bytes | None = None
        try:
            self._blob: bytes | None = _pickled(case)
        except (pickle.PicklingError, TypeError, AttributeError):
            self._blob = None

    @classmethod
    def from_pickle(cls, blob: bytes) -> Frozen:
        """A case that arrived as a pickle (the built-in host's call): the pickle is the
        source of the copy, and the case itself is loaded only if a comparison needs it."""
        frozen = cls.__new__(cls)
        frozen._case, frozen._blob, frozen._baseline = _UNLOADED, blob, None
        return frozen

    def copy(self) -> Any:
        """A fresh copy of the case, sharing nothing with it."""
        if self._blob is None:
            return copy.deepcopy(self._case)
        return collector.loads(self._blob)

    def lent(self) -> Any:
        """The case itself where its pickle can tell what a call changed (a copy otherwise):
        for the bundled reference, which the engine calls on the case itself for every oracle
        answer, so a copy made for it would only cost a load of the pickle per call."""
        if self._blob is None or self._case is _UNLOADED:
            return self.copy()
        return self._case

    def changed(self, working: Any) -> bool:
        """Whether ``working`` (a copy made by :meth:`copy`) differs from the case in any way."""
        if self._blob is not None:
            try:
                after = _pickled(working)
            except (pickle.PicklingError, TypeError, AttributeError):
                after = None  # something unpicklable was put into the input: the walk decides
            if after == self._blob:  # the case's own pickle, nearly always: nothing changed
                return False
            # Pickle records which objects are shared, equal strings included, and a copy
            # may share them differently from the case: then an untouched copy's pickle is
            # the baseline. Every copy loads from the same bytes, so one baseline serves
            # every copy (a case kept for many implementations is frozen once: ``engine.drawn``).
            if after is not None:
                if self._baseline is None:
                    self._baseline = _pickled(collector.loads(self._blob))
                if after == self._baseline:
                    return False
        # Different bytes may still be equal values rebound in place: compare by value.
        if self._blob is None:  # the case was never pickled: ``working`` is a deep copy of it
            return snapshot(working) != snapshot(self._case)
        if self._case is _UNLOADED:
            self._case = collector.loads(self._blob)
        before = self._case if self._case is not working else collector.loads(self._blob)  # lent
        return snapshot(working) != snapshot(before)


_UNLOADED = object()


def _pickled(value: Any) -> bytes:
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
