"""Results the built-in host keeps for the rest of a case, and sends back by reference.

The checks give the implementation its own results again: the compacted history to its
``to_payload`` for each of seven providers, a repaired history to ``repair`` once more.
In one process those calls get the very objects the implementation returned. Across the
pipe, each would pickle a long history here and load it there again, seven times. So the
host keeps each result (and each item of a list or tuple result) under a key the run's
process chose, this side keeps its copies under the same keys, and a pickle of arguments
names a kept object by its key (pickle's persistent ids) instead of holding it: the
implementation gets back its own objects, as it would in one process.

Both tables start empty at each case (the engine's call of a case says ``"fresh"``) and
whenever the host is started again; neither side ever loads a key from the other's data
(the run's process reads results with :mod:`~chatconform.runner.protocol.datapickle`,
which refuses persistent ids).
"""

from __future__ import annotations

import hashlib
import io
import itertools
import pickle
import sys
from typing import Any

from chatconform.frame import collector

#: Values that are never kept: immutable, and cheap to send again.
_ATOMS = (str, bytes, int, float, bool, complex, type(None))
#: Kept objects after which this side starts a fresh table (runs that never say a case began).
LIMIT = 10_000


def named(kwargs: dict) -> dict:
    """Keyword arguments by their names as the interpreter interns them, as they were in the
    run's process. There a keyword and an attribute of the same name in the input
    (``instructions``) are one string, pickled once; loaded, the attribute's name is interned
    again and the keyword's is not, so an untouched copy would pickle differently from the
    bytes it was loaded from, and telling it untouched would cost another load and pickle."""
    return {sys.intern(key) if type(key) is str else key: value for key, value in kwargs.items()}


def digest(data: bytes) -> str:
    """The digest both sides compare a pickled input by (the host's copy after a call, the
    run's bytes as sent)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def handles(prefix: str, value: Any) -> list[tuple[str, Any]]:
    """The keys a result is kept under, with what each names: the result, and each item
    of a list or tuple. Both sides compute them from their own copy, which has the same
    shape."""
    found = [(prefix, value)] if not isinstance(value, _ATOMS) else []
    if isinstance(value, (list, tuple)):
        found.extend((f"{prefix}.{index}", item) for index, item in enumerate(value) if not isinstance(item, _ATOMS))
    return found


class Sent:
    """This side's table: the host's kept results, by this side's copies of them."""

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[Any, str]] = {}  # id of the copy -> (the copy, its key)
        self._prefixes = itertools.count(1)

    def clear(self) -> None:
        """Forget every kept result."""
        self._by_id.clear()

    def full(self) -> bool:
        return len(self._by_id) >= LIMIT

    def prefix(self) -> str:
        """A new key for the result of the next call."""
        return str(next(self._prefixes))

    def remember(self, prefix: str, copy: Any) -> None:
        """``copy`` (this side's load of the result kept under ``prefix``) names the kept one."""
        for key, item in handles(prefix, copy):
            self._by_id[id(item)] = (item, key)

    def dumps(self, value: Any) -> bytes:
        """``value`` pickled, each kept result in it named by its key."""
        if not self._by_id:
            return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        buffer = io.BytesIO()
        _ByKey(buffer, self._by_id).dump(value)
        return buffer.getvalue()


class _ByKey(pickle.Pickler):
    def __init__(self, file: io.BytesIO, by_id: dict[int, tuple[Any, str]]):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._by_id = by_id

    def persistent_id(self, obj: Any) -> str | None:
        entry = self._by_id.get(id(obj))
        return entry[1] if entry is not None and entry[0] is obj else None


class KeptMissing(Exception):
    """The run named a result the host does not hold: the two tables went out of step."""


class Kept:
    """The host's table: the implementation's results, by key."""

    def __init__(self) -> None:
        self._objects: dict[str, Any] = {}

    def clear(self) -> None:
        self._objects.clear()

    def keep(self, prefix: str, value: Any) -> None:
        self._objects.update(handles(prefix, value))

    def get(self, key: Any) -> Any:
        """The result kept under ``key`` (named by arguments, or asked for again as JSON);
        KeptMissing where none is."""
        try:
            return self._objects[key]
        except (KeyError, TypeError):
            raise KeptMissing(f"no kept result {key!r} in this process") from None

    def loads(self, blob: bytes) -> Any:
        """Arguments as pickled by :meth:`Sent.dumps`, each key replaced by the kept object."""
        with collector.paused():
            return _Resolving(io.BytesIO(blob), self).load()


class _Resolving(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, kept: Kept):
        super().__init__(file)
        self.persistent_load = kept.get  # type: ignore[method-assign]
