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
  refused before it is allocated), none of the numbered memo stores (``PUT``, ``BINPUT``,
  ``LONG_BINPUT``: protocol 4 and later memoize in order, and one store at index 10**9
  would make the unpickler allocate 16 GB for its table), and no ``BUILD`` or ``APPENDS``
  on a class (``BUILD`` would set an attribute of a class of the run's process).
- **Sharing bounded by the bytes**: :func:`_scan` weighs what a walk of the value meets,
  each shared object every time, and refuses a value that weighs more than
  :data:`SHARED_PER_BYTE` times its bytes (plus :data:`SHARED_FLOOR`), or holds itself. A
  few bytes of references can otherwise make a walk meet 2**100 objects (a tuple of two
  references to a tuple of two references ..., hashed as a set member while it loads, or
  compared, printed or written as JSON by a check). Such a refusal is :class:`Shared`: a
  pickler writes such values, so the run asks for that result as the contract's JSON
  instead, which holds no sharing.

The bytes themselves are capped by the protocol's line limit
(:data:`~chatconform.runner.protocol.program.MAX_LINE_BYTES`). Anything else is refused
with a ValueError, which the run reports as a malformed result (``<contract>.no_crash``).
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

# What each opcode a protocol 4 or 5 pickler writes for data does to the unpickler's stack
# (see :func:`_scan`), numbered in the order :func:`_scan` tests them (most frequent first):
# fetch from the memo (a one-byte index), push an atom with no argument, memoize, push an
# empty container, mark, push an atom of the size its argument counts, or of a fixed size,
# fetch from the memo (a four-byte index), take the items above the mark (or 1 or 2 items)
# into the object below them, or the items above the mark (or 1, 2 or 3) into a new object,
# take a module and a name for a class, pop one item or those above the mark, read a
# frame's length, stop, read the protocol; anything else is refused.
(_GET1, _NO_ARGUMENT_ATOM, _MEMOIZE, _EMPTY, _MARK, _SIZED_ATOM, _ATOM, _GET4, _ADD_MARKED, _ADD_1, _ADD_2,
 _MAKE_MARKED, _MAKE_1, _MAKE_2, _MAKE_3, _GLOBAL, _POP, _POP_MARK, _FRAME, _STOP, _PROTO, _REFUSED) = range(22)
#: How many items each action takes from the top of the stack (0: those above the mark).
_TAKES = [0] * _REFUSED
_TAKES[_ADD_1] = _TAKES[_MAKE_1] = _TAKES[_POP] = 1
_TAKES[_ADD_2] = _TAKES[_MAKE_2] = _TAKES[_GLOBAL] = 2
_TAKES[_MAKE_3] = 3
_ACTIONS = {
    "BINGET": _GET1, "LONG_BINGET": _GET4, "MEMOIZE": _MEMOIZE, "MARK": _MARK,
    **dict.fromkeys(["NONE", "NEWTRUE", "NEWFALSE", "EMPTY_TUPLE"], _NO_ARGUMENT_ATOM),
    **dict.fromkeys(["BININT", "BININT1", "BININT2", "BINFLOAT"], _ATOM),
    **dict.fromkeys(["LONG1", "LONG4", "SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "SHORT_BINBYTES",
                     "BINBYTES", "BINBYTES8", "BYTEARRAY8"], _SIZED_ATOM),
    **dict.fromkeys(["EMPTY_LIST", "EMPTY_DICT", "EMPTY_SET"], _EMPTY),
    **dict.fromkeys(["APPENDS", "SETITEMS", "ADDITEMS"], _ADD_MARKED),
    "APPEND": _ADD_1, "BUILD": _ADD_1, "SETITEM": _ADD_2,
    "TUPLE": _MAKE_MARKED, "FROZENSET": _MAKE_MARKED, "TUPLE1": _MAKE_1, "TUPLE2": _MAKE_2, "TUPLE3": _MAKE_3,
    "REDUCE": _MAKE_2, "NEWOBJ": _MAKE_2, "NEWOBJ_EX": _MAKE_3, "STACK_GLOBAL": _GLOBAL,
    "POP": _POP, "POP_MARK": _POP_MARK, "FRAME": _FRAME, "STOP": _STOP, "PROTO": _PROTO,
}
#: The opcodes a protocol 4 or 5 pickler writes for data: no numbered memo stores, no DUP
#: (a pickler never writes it), no persistent ids, no out-of-band buffers, no extension
#: registry, no text forms of old protocols.
_WRITTEN = frozenset(_ACTIONS)

#: The objects a reply's walk meets may weigh this many times its bytes, plus
#: :data:`SHARED_FLOOR`, counting each shared object every time it is met (see
#: :func:`_scan`): a pickler's own sharing (an interned name, a class, the one
#: ``timezone.utc``, a message a result holds twice) adds a fraction of the bytes; a value
#: built to expand, as much as it likes.
SHARED_PER_BYTE = 4
SHARED_FLOOR = 1 << 20


def _opcode_tables() -> tuple[list[int], list[int]]:
    """For each byte, the action of the opcode it is (:data:`_REFUSED` for one not written for
    data), and the size of its argument: the bytes that follow it, or minus the bytes of a
    little-endian count of the bytes that follow it."""
    counted = {pickletools.TAKEN_FROM_ARGUMENT1: -1, pickletools.TAKEN_FROM_ARGUMENT4: -4,
               pickletools.TAKEN_FROM_ARGUMENT4U: -4, pickletools.TAKEN_FROM_ARGUMENT8U: -8}
    actions, sizes = [_REFUSED] * 256, [0] * 256
    for opcode in pickletools.opcodes:
        if opcode.name in _ACTIONS:
            code = ord(opcode.code.encode("latin-1"))
            n = opcode.arg.n if opcode.arg is not None else 0
            assert n != pickletools.UP_TO_NEWLINE, opcode.name  # text arguments are no protocol-5 opcode's
            actions[code], sizes[code] = _ACTIONS[opcode.name], counted.get(n, n)
    assert actions.count(_REFUSED) == 256 - len(_ACTIONS)
    return actions, sizes


_ACTION_OF, _SIZE_OF = _opcode_tables()
_OPCODE_NAMES = {ord(opcode.code.encode("latin-1")): opcode.name for opcode in pickletools.opcodes}
_MEMOIZE_BYTE = _ACTION_OF.index(_MEMOIZE)


class _Refused(ValueError):
    pass


class Shared(ValueError):
    """A pickle a pickler of data writes, refused all the same: its objects are shared past
    the bound, or an object holds itself (a cycle). The run asks the host for such a result as
    the contract's JSON instead (``"resend"``, ``docs/protocol.md``), which holds no sharing."""


def _scan(data: bytes) -> None:
    """Refuse ``data`` unless a protocol-5 pickler of data could have written it, and a walk of
    its value meets objects weighing at most :data:`SHARED_PER_BYTE` times its bytes (plus
    :data:`SHARED_FLOOR`).

    It runs the opcodes as the unpickler would, keeping of each object only its *weight*:
    what a walk of its tree meets, a string or bytes by its length and anything else as one,
    a shared object each time. Each opcode must be one of :data:`_WRITTEN`, with its
    argument within the data; an object is added to only while it is being built: never an
    atom or a class (no ``BUILD`` reaches a class of this process), and never once it has
    been fetched from the memo (so a cycle is refused, and a fetch counts the weight the
    object keeps); and the fetches together weigh at most the bound. Every other opcode
    makes its object once, so no walk of the value, loading's own hashing of a set member or
    a dict key included, meets more than the data's objects and the bound. A step is one
    opcode, whatever the bytes of its argument.

    The stack is kept as running totals of its items' weights (``totals[i]``: the items up
    to position ``i``; position 0 is below the stack), so that taking the items above a
    mark into the object below is a cut and a store. ``open`` lists the positions of the
    objects that may still be added to. A memo entry holds its object's weight, or minus
    its position while it is on the stack and open; ``building`` lists those entries."""
    actions, sizes, end, at, from_bytes = _ACTION_OF, _SIZE_OF, len(data), 0, int.from_bytes
    totals = [0]
    push = totals.append
    open_: list[int] = []
    marks: list[int] = []
    memo: list[int] = []
    remember = memo.append
    building: list[int] = []
    frozen: set[int] = set()
    shared, bound = 0, SHARED_PER_BYTE * len(data) + SHARED_FLOOR
    # The actions as local names: this loop runs once per opcode of every reply.
    get1, get4, no_argument_atom, atom, memoize, empty, mark, sized_atom = (
        _GET1, _GET4, _NO_ARGUMENT_ATOM, _ATOM, _MEMOIZE, _EMPTY, _MARK, _SIZED_ATOM)
    add_2, global_, pop_mark, takes, memoize_byte = _ADD_2, _GLOBAL, _POP_MARK, _TAKES, _MEMOIZE_BYTE
    try:
        while at < end:
            action = actions[data[at]]
            at += 1
            if action == get1:
                weight = memo[data[at]]  # (past the memo: an IndexError, refused below)
                if weight <= 0:  # an object on the stack, which stays as it is from now on
                    weight = _freeze(totals, open_, memo, building, frozen, data[at])
                at += 1
                shared += weight
                if shared > bound:
                    raise Shared(_too_shared(end))
                push(totals[-1] + weight)
            elif action == no_argument_atom:
                push(totals[-1] + 1)
            elif action == memoize:
                top = len(totals) - 1
                if open_ and open_[-1] == top:
                    if building and memo[building[-1]] == -top:
                        raise _Refused(f"the object memoized at byte {at - 1} is memoized already")
                    building.append(len(memo))
                    remember(-top)
                elif top:  # an atom, a class or an object fetched
                    remember(totals[top] - totals[top - 1])
                else:
                    raise IndexError(top)
            elif action == empty:
                top = len(totals)
                open_.append(top)
                push(totals[-1] + 1)
                if data[at] == memoize_byte:  # as a pickler writes every new container (one step for two)
                    at += 1
                    building.append(len(memo))
                    remember(-top)
            elif action == mark:
                marks.append(len(totals))
            elif action == sized_atom:
                size = sizes[data[at - 1]]
                if size == -1:
                    counted = data[at]
                    at += 1 + counted
                else:
                    counted = from_bytes(data[at:at - size], "little")
                    at += counted - size
                if at > end:
                    raise _Refused(f"an argument runs past the end of the pickle ({end} bytes)")
                push(totals[-1] + 1 + counted)
                if data[at] == memoize_byte:  # as a pickler writes every string
                    at += 1
                    remember(1 + counted)
            elif action == atom:
                at += sizes[data[at - 1]]
                push(totals[-1] + 1)
            elif action == get4:
                index = from_bytes(data[at:at + 4], "little")
                at += 4
                weight = memo[index]
                if weight <= 0:
                    weight = _freeze(totals, open_, memo, building, frozen, index)
                shared += weight
                if shared > bound:
                    raise Shared(_too_shared(end))
                push(totals[-1] + weight)
            elif action <= pop_mark:  # the items above the mark, or the top 1 to 3, are taken
                taken = takes[action]
                if action == _POP and marks and marks[-1] == len(totals):  # a POP right after a MARK drops it
                    marks.pop()
                    continue
                start = len(totals) - taken if taken else marks.pop()
                if start < 1:
                    raise IndexError(start)
                if building and memo[building[-1]] <= -start:
                    _finish(totals, memo, building, start)
                while open_ and open_[-1] >= start:
                    open_.pop()
                total = totals[-1]
                del totals[start:]
                if action <= add_2:  # into the object below them
                    if not open_ or open_[-1] != start - 1:
                        if start - 1 in frozen:
                            raise Shared(f"the opcode at byte {at - 1} adds to an object fetched from the memo "
                                         "(a cycle, or an object changed after it was shared)")
                        raise _Refused(f"the opcode at byte {at - 1} adds to what is not being built (an atom or "
                                       "a class)")
                    totals[-1] = total
                elif action == global_:  # a class: what a walk meets of it is itself
                    push(totals[-1] + 1)
                elif action < _POP:  # a new object
                    open_.append(start)
                    push(total + 1)
                    if data[at] == memoize_byte:  # as a pickler writes every new object
                        at += 1
                        building.append(len(memo))
                        remember(-start)
            elif action == _FRAME:  # the frame's length; its opcodes follow
                at += 8
                if from_bytes(data[at - 8:at], "little") > end - at:
                    raise _Refused(f"a frame at byte {at - 9} claims more bytes than the pickle holds")
            elif action == _STOP:
                if at != end:
                    raise _Refused(f"{end - at} bytes after the pickle's end")
                if len(totals) != 2 or marks:
                    raise _Refused("the pickle does not end with one value")
                return
            elif action == _PROTO:
                at += 1
            else:
                name = _OPCODE_NAMES.get(data[at - 1], hex(data[at - 1]))
                raise _Refused(f"opcode {name} at byte {at - 1} is not one a "
                               "protocol-5 pickle of data holds")
    except IndexError:  # a pop from an empty stack, a missing mark or memo entry, an argument past the end
        raise _Refused(f"at byte {at}: the pickle uses an object, a mark, a memo entry or a byte it does not "
                       "hold") from None
    raise _Refused("the pickle has no end (STOP)")


def _too_shared(size: int) -> str:
    return (f"its objects are shared to more than {SHARED_PER_BYTE} times its {size:,} bytes (a value that expands "
            "when walked)")


def _finish(totals: list[int], memo: list[int], building: list[int], start: int) -> None:
    """The memoized objects on the stack from position ``start`` on are taken: each entry
    gets its object's weight."""
    while building and memo[building[-1]] <= -start:
        index = building.pop()
        position = -memo[index]
        memo[index] = totals[position] - totals[position - 1]


def _freeze(totals: list[int], open_: list[int], memo: list[int], building: list[int], frozen: set[int],
            index: int) -> int:
    """The weight of memo entry ``index``, an object still on the stack, fetched: from now on
    nothing may be added to it (a cycle, or a change after it was shared); ``frozen`` gets its
    position, to say so should something be."""
    position = -memo[index]
    weight = memo[index] = totals[position] - totals[position - 1]
    building.remove(index)
    open_.remove(position)
    frozen.add(position)
    return weight


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
    """The value of a data pickle (base64 text); ValueError naming what it holds otherwise
    (:class:`Shared` for one a pickler of data writes, shared past the bound or a cycle)."""
    try:
        data = base64.b64decode(text, validate=True)
        _scan(data)
        with collector.paused():
            return _DataUnpickler(io.BytesIO(data)).load()
    except Shared as exc:
        raise Shared(f"not a data pickle: {exc}") from None
    except Exception as exc:
        raise ValueError(f"not a data pickle: {exc}") from None


def dumps(value: Any) -> str | None:
    """``value`` as a data pickle (base64 text), or None where it holds anything else."""
    try:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)  # as :func:`_scan` reads it
        with collector.paused():
            _DataUnpickler(io.BytesIO(data)).load()
    except Exception:
        return None
    return base64.b64encode(data).decode("ascii")
