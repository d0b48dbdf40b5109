"""Pickles that can only make data, at a cost bounded by their size: how a result comes
back from the built-in host.

A result read back from JSON is not what the implementation returned (an exception object
inside a part, a tuple, bytes, a subclass: the checks judge such things), and JSON is slow
to write for long histories. A pickle keeps every object as it was, but loading an
arbitrary pickle runs code, and a pickle of a few bytes can ask for gigabytes. So
:func:`loads` reads only what a protocol-5 pickle of data holds:

- **Classes known to be data**: pydantic-ai's message and usage classes, chatconform's
  row, the built-in exceptions and containers, dates, times, decimals and UUIDs (each
  class defined in the module named, so nothing imported there passes). Loading calls no
  ``__init__``; the one constructor it can reach is the class's own, with the pickle's
  arguments, and none of these does more than store them or copy a container the pickle
  holds. Constructors that make more than they are given are not among them: no
  ``range`` (which ``deque(range(10**9), 0)`` would walk) and no ``bytearray`` (a pickle
  holds one as its bytes; ``bytearray(3 * 2**30)`` would allocate them). (Python's pickle
  documentation, "Restricting Globals", describes the technique.)
- **Opcodes a protocol-5 pickler writes**, checked by :func:`_scan` before the C unpickler
  sees a byte: every length within the data (a frame or a string that claims gigabytes is
  refused before it is allocated), and none of the numbered memo stores (``PUT``,
  ``BINPUT``, ``LONG_BINPUT``: protocol 4 and later memoize in order, and one store at
  index 10**9 would make the unpickler allocate 16 GB for its table).

The bytes themselves are capped by the protocol's line limit
(:data:`~chatconform.runner.protocol.program.MAX_LINE_BYTES`). Anything else is refused
with a ValueError, which the run reports as a malformed result (``<contract>.no_crash``).
What stays unbounded: a value that shares one object many times over is cheap to load
but can be long to walk (a tuple of two references to a tuple of two references ...
hashed as a set member, or printed); a set or dict key is hashed as it loads.
"""

from __future__ import annotations

import base64
import builtins
import io
import pickle
import pickletools
from typing import Any

from chatconform.frame import collector

#: The modules whose classes a result may hold (each class defined in that module).
DATA_MODULES = frozenset({
    "pydantic_ai.messages", "pydantic_ai.usage", "chatconform.history", "datetime", "decimal", "uuid",
    "collections",
})
_BUILTIN_DATA = frozenset({"set", "frozenset", "complex", "slice"})

#: The opcodes a protocol 4 or 5 pickler writes for data (no numbered memo stores, no
#: persistent ids, no out-of-band buffers, no extension registry, no text forms of old protocols).
_WRITTEN = frozenset({
    "PROTO", "FRAME", "STOP", "MARK", "POP", "POP_MARK", "DUP", "MEMOIZE", "BINGET", "LONG_BINGET",
    "NONE", "NEWTRUE", "NEWFALSE", "BININT", "BININT1", "BININT2", "LONG1", "LONG4", "BINFLOAT",
    "SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "SHORT_BINBYTES", "BINBYTES", "BINBYTES8", "BYTEARRAY8",
    "EMPTY_LIST", "APPEND", "APPENDS", "EMPTY_TUPLE", "TUPLE", "TUPLE1", "TUPLE2", "TUPLE3", "EMPTY_DICT",
    "SETITEM", "SETITEMS", "EMPTY_SET", "ADDITEMS", "FROZENSET", "STACK_GLOBAL", "REDUCE", "BUILD", "NEWOBJ",
    "NEWOBJ_EX",
})


def _argument_sizes() -> dict[int, int]:
    """Each allowed opcode's byte, with the size of its argument: the bytes that follow it, or
    minus the bytes of a little-endian count of the bytes that follow it."""
    counted = {pickletools.TAKEN_FROM_ARGUMENT1: -1, pickletools.TAKEN_FROM_ARGUMENT4: -4,
               pickletools.TAKEN_FROM_ARGUMENT4U: -4, pickletools.TAKEN_FROM_ARGUMENT8U: -8}
    sizes = {}
    for opcode in pickletools.opcodes:
        if opcode.name in _WRITTEN:
            n = opcode.arg.n if opcode.arg is not None else 0
            assert n != pickletools.UP_TO_NEWLINE, opcode.name  # text arguments are no protocol-5 opcode's
            sizes[ord(opcode.code.encode("latin-1"))] = counted.get(n, n)
    assert len(sizes) == len(_WRITTEN)
    return sizes


_SIZES = _argument_sizes()
_FRAME, _STOP = 0x95, ord(".")


_BY_BYTE: list[int | None] = [_SIZES.get(code) for code in range(256)]


def _scan(data: bytes) -> None:
    """Refuse ``data`` unless it is a sequence of :data:`_WRITTEN` opcodes whose arguments all
    lie within it and that ends at its STOP. The walk skips each argument by its size, so it
    costs one step per opcode, not per byte (about three times what loading costs)."""
    sizes, end, at, from_bytes = _BY_BYTE, len(data), 0, int.from_bytes
    while at < end:
        opcode = data[at]
        size = sizes[opcode]
        at += 1
        if size is None:
            name = pickletools.code2op.get(chr(opcode))
            raise ValueError(f"opcode {name.name if name else hex(opcode)} at byte {at - 1} is not one a "
                             "protocol-5 pickle of data holds")
        if size == -1:  # one byte counts the bytes that follow
            at += 1 + data[at] if at < end else 1
        elif size < 0:  # so do four or eight
            at += from_bytes(data[at:at - size], "little") - size
        elif opcode == _FRAME:  # the frame's length; its opcodes follow
            if from_bytes(data[at:at + 8], "little") > end - at - 8:
                raise ValueError(f"a frame at byte {at - 1} claims more bytes than the pickle holds")
            at += 8
        elif opcode == _STOP:
            if at != end:
                raise ValueError(f"{end - at} bytes after the pickle's end")
            return
        else:
            at += size
    if at > end:
        raise ValueError(f"an argument runs past the end of the pickle ({end} bytes)")
    raise ValueError("the pickle has no end (STOP)")


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
        data = base64.b64decode(text, validate=True)
        _scan(data)
        with collector.paused():
            return _DataUnpickler(io.BytesIO(data)).load()
    except Exception as exc:
        raise ValueError(f"not a data pickle: {exc}") from None


def dumps(value: Any) -> str | None:
    """``value`` as a data pickle (base64 text), or None where it holds anything else."""
    try:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)  # opcodes :func:`_scan` passes
        with collector.paused():
            _DataUnpickler(io.BytesIO(data)).load()
    except Exception:
        return None
    return base64.b64encode(data).decode("ascii")
