"""Cases written for people: JSON (or the Python literal of it) that is compact where it fits.

A container goes on one line when that line stays within ``width`` (a record, whose values
are plain or hold only plain values, such as a stored row or a tool call with its
arguments, when it is itself at most ``FLAT_WIDTH`` long, however deep it sits); otherwise
one item per line, each again on one line where it fits. An object with one value that
does not fit keeps its other keys on the lines around it and "hugs" that value, so a
message reads ``{"kind": "response", "parts": [`` with one part per line below it, then
``], "model_name": "m"}``. The same layout is written as JSON (failure output, saved
cases) or as a Python literal (regression tests).
"""

from __future__ import annotations

import json
from typing import Any

#: A record of plain values (a stored row, a part) may run this long before it is broken up.
FLAT_WIDTH = 160


def render(value: Any, *, python: bool = False, width: int = 100, step: int = 2, indent: int = 0) -> str:
    """``value`` as compact JSON, or as a Python literal with ``python=True``.

    ``indent`` is the column the text starts at (continuation lines are indented from it);
    the first line carries no indentation of its own.
    """
    return _Writer(python, width, step).block(value, indent, indent)


def string_literal(text: str) -> str:
    """A string literal that is both JSON and Python (printable: a lone surrogate is escaped)."""
    out = json.dumps(text, ensure_ascii=False)
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in text):  # a lone surrogate cannot be printed
        out = json.dumps(text)
    return out


def _plain(value: Any) -> bool:
    return not isinstance(value, (dict, list, tuple)) or not value


def _record(value: Any) -> bool:
    """Plain values, or containers of plain values: one thing, read best on one line."""
    values = value.values() if isinstance(value, dict) else value
    return all(_plain(v) or all(_plain(w) for w in (v.values() if isinstance(v, dict) else v)) for v in values)


class _Writer:
    def __init__(self, python: bool, width: int, step: int):
        self.python, self.width, self.step = python, width, step

    def scalar(self, value: Any) -> str:
        if isinstance(value, str):
            return string_literal(value)
        if self.python and (value is None or isinstance(value, bool)):
            return repr(value)
        return json.dumps(value)

    def key(self, key: Any) -> str:
        return self.scalar(key if isinstance(key, str) else str(key))

    def inline(self, value: Any) -> str:
        if isinstance(value, dict):
            return "{" + ", ".join(f"{self.key(k)}: {self.inline(v)}" for k, v in value.items()) + "}"
        if isinstance(value, (list, tuple)):
            return "[" + ", ".join(self.inline(v) for v in value) + "]"
        return self.scalar(value)

    def block(self, value: Any, indent: int, used: int) -> str:
        """``value`` starting at column ``used`` on a line indented by ``indent``."""
        text = self.inline(value)
        if not isinstance(value, (dict, list, tuple)) or not value:
            return text
        if used + len(text) + 1 <= self.width or (_record(value) and len(text) + 1 <= FLAT_WIDTH):
            return text  # a record is measured by itself, so a case reads alike at any depth
        inner = indent + self.step
        if isinstance(value, dict):
            items = list(value.items())
            nested = [i for i, (_, v) in enumerate(items) if isinstance(v, (dict, list, tuple)) and v]
            if len(nested) == 1:  # {"kind": "response", "parts": [ ... ], "model_name": "m"}
                at = nested[0]
                (key, held), after = items[at], items[at + 1:]
                opening = "{" + "".join(f"{self.key(k)}: {self.inline(v)}, " for k, v in items[:at])
                opening += f"{self.key(key)}: " + ("{" if isinstance(held, dict) else "[")
                closing = (("}" if isinstance(held, dict) else "]")
                           + "".join(f", {self.key(k)}: {self.inline(v)}" for k, v in after) + "}")
                if indent + max(len(opening), len(closing)) <= max(FLAT_WIDTH, self.width):
                    children = held.items() if isinstance(held, dict) else held
                    lines = self._lines(children, isinstance(held, dict), inner)
                    return opening + "\n" + lines + "\n" + " " * indent + closing
            return "{\n" + self._lines(items, True, inner) + "\n" + " " * indent + "}"
        return "[\n" + self._lines(value, False, inner) + "\n" + " " * indent + "]"

    def _lines(self, children, keyed: bool, inner: int) -> str:
        children = list(children)
        pad = " " * inner
        out = []
        for number, child in enumerate(children):
            comma = "," if number < len(children) - 1 else ""
            if keyed:
                key, value = child
                prefix = f"{self.key(key)}: "
                out.append(pad + prefix + self.block(value, inner, inner + len(prefix)) + comma)
            else:
                out.append(pad + self.block(child, inner, inner) + comma)
        return "\n".join(out)
