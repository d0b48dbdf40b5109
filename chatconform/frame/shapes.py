"""The files chatconform reads back (reports, saved failures) are data from anywhere: a pull
request can commit them. This module parses their JSON with bounds and checks every field
read against a small shape, so damage or a forgery is one ConfigError naming the file, the
line and the field, never a traceback and never a wrong verdict.

A shape is a :class:`Kind` (a type test), :class:`Nullable`, :class:`ListOf`,
:class:`MapOf`, :class:`Pair` or :class:`Record`; :func:`check` applies one. The shapes of
the report lines and of a saved failure are at the end.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from chatconform.errors import ConfigError
from chatconform.frame.status import STATUSES

#: Deeper JSON than any case or report chatconform writes; deeper is refused before code that
#: walks a case by recursion meets it.
MAX_DEPTH = 300


# -- parsing -------------------------------------------------------------------------------------

def parse_json(text: str, where: str, line: int = 1) -> Any:
    """``text`` (starting at line ``line`` of the file ``where``) parsed; a ConfigError naming
    the file and line for bad JSON, nesting deeper than :data:`MAX_DEPTH`, or a number too
    long for Python to read."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        empty = " (the file is empty)" if not text.strip() else ""
        raise ConfigError(f"{where}:{line + exc.lineno - 1}:{exc.colno}: not JSON ({exc.msg}){empty}") from None
    except RecursionError:
        raise ConfigError(f"{where}:{line + _deep_line(text)}: JSON nested more than {MAX_DEPTH} deep") from None
    except ValueError:  # Python's limit on the digits of an integer
        raise ConfigError(f"{where}:{line + _long_number_line(text)}: a number with more than "
                          f"{sys.get_int_max_str_digits()} digits") from None
    if _too_deep(value):
        raise ConfigError(f"{where}:{line + _deep_line(text)}: JSON nested more than {MAX_DEPTH} deep")
    return value


def _too_deep(value: Any) -> bool:
    """Whether ``value`` nests deeper than :data:`MAX_DEPTH` (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > MAX_DEPTH:
                return True
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False


def _deep_line(text: str) -> int:
    """The offset (0 for the first line) of the line where ``text`` first nests too deep."""
    depth = 0
    for match in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[{]|[\]}]', text):
        token = match.group()
        depth += 1 if token in "[{" else -1 if token in "]}" else 0
        if depth > MAX_DEPTH:
            return text.count("\n", 0, match.start())
    return 0


def _long_number_line(text: str) -> int:
    """The offset of the line holding a number longer than Python reads."""
    match = re.search(rf"\d{{{sys.get_int_max_str_digits() + 1},}}", text)
    return text.count("\n", 0, match.start()) if match else 0


# -- shapes --------------------------------------------------------------------------------------

class Malformed(Exception):
    """A value that does not fit its shape: the field's path and what was wrong."""

    def __init__(self, path: str, problem: str):
        super().__init__(f"{path}: {problem}" if path else problem)
        self.path, self.problem = path, problem


def describe(value: Any) -> str:
    """A value's kind in a few words, for an error message (never the whole value)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return f"the text {value[:40]!r}" + ("..." if len(value) > 40 else "")
    return "a list" if isinstance(value, list) else "an object"


@dataclass(frozen=True)
class Kind:
    """A leaf: ``name`` says what is expected ("a string"), ``test`` accepts a value."""

    name: str
    test: Callable[[Any], bool]

    def check(self, value: Any, path: str) -> None:
        if not self.test(value):
            raise Malformed(path, f"expected {self.name}, got {describe(value)}")


@dataclass(frozen=True)
class Nullable:
    shape: Any

    def check(self, value: Any, path: str) -> None:
        if value is not None:
            self.shape.check(value, path)


@dataclass(frozen=True)
class ListOf:
    item: Any

    def check(self, value: Any, path: str) -> None:
        if not isinstance(value, list):
            raise Malformed(path, f"expected a list, got {describe(value)}")
        for index, item in enumerate(value):
            self.item.check(item, f"{path}[{index}]")


@dataclass(frozen=True)
class MapOf:
    """An object with any keys, every value of one shape."""

    value: Any

    def check(self, value: Any, path: str) -> None:
        if not isinstance(value, dict):
            raise Malformed(path, f"expected an object, got {describe(value)}")
        for key, item in value.items():
            self.value.check(item, f"{path}.{key}" if path else key)


@dataclass(frozen=True)
class Pair:
    """A list of exactly these shapes, in order (``[implementation, contract, variant]``)."""

    items: tuple

    def check(self, value: Any, path: str) -> None:
        if not isinstance(value, list) or len(value) != len(self.items):
            raise Malformed(path, f"expected a list of {len(self.items)} items, got {describe(value)}")
        for index, (item, shape) in enumerate(zip(value, self.items, strict=True)):
            shape.check(item, f"{path}[{index}]")


@dataclass(frozen=True)
class Record:
    """An object with these fields (``optional`` ones may be absent); other fields are let
    through unread, so a report of a newer chatconform still reads."""

    required: dict = field(default_factory=dict)
    optional: dict = field(default_factory=dict)

    def check(self, value: Any, path: str) -> None:
        if not isinstance(value, dict):
            raise Malformed(path, f"expected an object, got {describe(value)}")
        for name, shape in self.required.items():
            where = f"{path}.{name}" if path else name
            if name not in value:
                raise Malformed(where, "missing")
            shape.check(value[name], where)
        for name, shape in self.optional.items():
            if name in value:
                shape.check(value[name], f"{path}.{name}" if path else name)


def check(value: Any, shape: Any, where: str) -> None:
    """Raise a ConfigError ``"<where>: field <path>: <problem>"`` unless ``value`` fits ``shape``."""
    try:
        shape.check(value, "")
    except Malformed as exc:
        raise ConfigError(f"{where}: field {exc.path}: {exc.problem}" if exc.path else f"{where}: {exc.problem}") \
            from None


def check_document(value: Any, shape: Any, where: str, text: str) -> None:
    """:func:`check` for a whole-file JSON document ``text``: the error names the line of the
    top-level field at fault (where its key is written), else line 1."""
    try:
        shape.check(value, "")
    except Malformed as exc:
        key = re.split(r"[.\[]", exc.path, maxsplit=1)[0]
        found = re.search(rf'"{re.escape(key)}"\s*:', text) if key else None
        line = text.count("\n", 0, found.start()) + 1 if found else 1
        raise ConfigError(f"{where}:{line}: field {exc.path}: {exc.problem}" if exc.path
                          else f"{where}:{line}: {exc.problem}") from None


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _text(value: Any) -> bool:
    """A string that can be printed: no lone surrogate (``"\\ud800"`` reads as JSON, but
    writing it to a UTF-8 terminal raises)."""
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


STR = Kind("a string of UTF-8 text", _text)
BOOL = Kind("true or false", lambda v: isinstance(v, bool))
COUNT = Kind("a whole number >= 0", lambda v: _whole(v) and v >= 0)
NUMBER = Kind("a number", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool))
ANY = Kind("any JSON value", lambda v: True)
#: A shard's index or count: at least 1, and few enough to list.
SHARD_NUMBER = Kind("a whole number from 1 to 10000", lambda v: _whole(v) and 1 <= v <= 10_000)
STATUS = Kind("one of " + ", ".join(map(str, STATUSES)), lambda v: v in {str(s) for s in STATUSES})


# -- the records -----------------------------------------------------------------------------------

#: Every report line: an object with a ``type``.
LINE = Record({"type": STR})

#: ``[implementation, contract, variant]``: one search of a run.
UNIT = Pair((STR, STR, Nullable(STR)))

HEADER = Record(optional={
    "version": STR, "profile": STR, "examples": Nullable(COUNT), "checks": Nullable(ListOf(STR)),
    "implementations": MapOf(Record(optional={"spec": STR, "expected_failures": MapOf(STR),
                                              "contracts": ListOf(STR)})),
    "shard": Record({"index": SHARD_NUMBER, "count": SHARD_NUMBER, "run": STR, "units": ListOf(UNIT),
                     "planned": ListOf(UNIT)}),
})

#: ``failures``: each variant's failure where several failed (a line of an older chatconform has none).
RESULT = Record({"implementation": STR, "check": STR, "status": STATUS}, {
    "contract": STR, "level": Nullable(STR), "message": Nullable(STR), "example": ANY,
    "variant": Nullable(STR), "examples": Nullable(COUNT), "evaluated": Nullable(COUNT),
    "failures": ListOf(Record({"message": STR}, {"variant": Nullable(STR), "level": Nullable(STR), "example": ANY})),
})

FAILURE = Record({"check": STR, "message": STR, "case": ANY}, {
    "variant": Nullable(STR), "expected": ANY, "actual": ANY, "shrunk": BOOL, "shrink_note": Nullable(STR),
    "level": STR, "why": Nullable(STR),
})

SEARCH = Record({"implementation": STR, "contract": STR}, {
    "variant": Nullable(STR), "skip": Nullable(STR),
    "result": Record({"failures": ListOf(FAILURE), "examples": COUNT, "unjudged": COUNT,
                      "evaluated": MapOf(COUNT)}, {
        "hung": Nullable(FAILURE), "broken": Nullable(MapOf(STR)), "aborted": Nullable(STR),
        "engine_error": Nullable(Pair((STR, STR))), "replayed": COUNT, "hangs": COUNT,
        "passed_over": MapOf(ListOf(STR)),
    }),
})

#: ``interrupted``, ``searched`` and ``searches``: a run stopped by a signal (a partial report).
FOOTER = Record({"counts": MapOf(COUNT)}, {"seconds": NUMBER, "interrupted": STR, "searched": COUNT,
                                           "searches": COUNT})

#: The shape of each report line by its ``type``; a line of another type is not read.
REPORT_LINES = {"header": HEADER, "result": RESULT, "search": SEARCH, "footer": FOOTER}

#: A saved failure (``.chatconform/failures/*.json``).
SAVED_FAILURE = Record({"implementation": STR, "check": STR, "case": ANY}, {"variant": Nullable(STR)})
