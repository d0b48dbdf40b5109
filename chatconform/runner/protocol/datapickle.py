"""Pickles that can only make data: how a result comes back from the built-in host.

A result read back from JSON is not what the implementation returned (an exception object
inside a part, a tuple, bytes, a subclass: the checks judge such things), and JSON is slow
to write for long histories. A pickle keeps every object as it was, but loading an
arbitrary pickle runs code. :func:`loads` loads one that names only classes known to be
data: pydantic-ai's message and usage classes, chatconform's row, the built-in exceptions
and containers, dates, times, decimals and UUIDs (each class defined in the module named,
so nothing imported there passes). Loading calls no ``__init__``; the one constructor it
can reach is the class's own, with the pickle's arguments, and none of these does more
than store them. Anything else is refused, and the host answers in JSON instead.
(Python's pickle documentation, "Restricting Globals", describes the technique.)
"""

from __future__ import annotations

import base64
import builtins
import io
import pickle
from typing import Any

from chatconform.frame import collector

#: The modules whose classes a result may hold (each class defined in that module).
DATA_MODULES = frozenset({
    "pydantic_ai.messages", "pydantic_ai.usage", "chatconform.history", "datetime", "decimal", "uuid",
    "collections",
})
_BUILTIN_DATA = frozenset({"set", "frozenset", "bytearray", "complex", "slice", "range"})


class _DataUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins":
            found = getattr(builtins, name, None)
            if name in _BUILTIN_DATA or (isinstance(found, type) and issubclass(found, BaseException)):
                return found
        elif module in DATA_MODULES:
            imported = __import__(module, fromlist=[name])
            found = getattr(imported, name, None)
            if isinstance(found, type) and found.__module__ == module:
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not a data class chatconform reads back")


def loads(text: str) -> Any:
    """The value of a data pickle (base64 text); ValueError naming what it holds otherwise."""
    try:
        with collector.paused():
            return _DataUnpickler(io.BytesIO(base64.b64decode(text, validate=True))).load()
    except Exception as exc:
        raise ValueError(f"not a data pickle: {exc}") from None


def dumps(value: Any) -> str | None:
    """``value`` as a data pickle (base64 text), or None where it holds anything else."""
    try:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        with collector.paused():
            _DataUnpickler(io.BytesIO(data)).load()
    except Exception:
        return None
    return base64.b64encode(data).decode("ascii")
