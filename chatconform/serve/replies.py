"""What ``chatconform serve`` answers: a short text by default, a script's entry per turn
(``--script``), or an entry drawn by Hypothesis from a seed (``--generate``).

A script is JSON (a list of entries, or an object of such lists by marker) or JSON lines (one
entry a line). Entry ``n`` answers the ``n``-th turn of each conversation (``conversations``
says which request is which), so every conversation an application runs plays the same
script; past its end the default reply answers. In an object, a conversation whose first
user text holds a key plays that key's list (the first key found, in the file's order; the
key ``""`` is every other conversation's). An entry is checked when the script is read, and
a bad one is a one-line error naming the file, the entry and the field.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chatconform.dialects.http import DEFAULT_TEXT, Reply, ToolCall
from chatconform.errors import ConfigError
from chatconform.inputs import read_input

__all__ = ["DEFAULT_TEXT", "Replies", "Reply", "Script", "ToolCall", "load_script", "parse_entries", "parse_script"]

#: A script: its entries by the marker a conversation's first user text holds ("": any other).
Script = dict[str, list[Reply]]

_KEYS = ("text", "thinking", "tool_calls", "status", "message", "delay", "cut_stream_after")
_CALL_KEYS = ("name", "arguments", "id")


class _Bad(Exception):
    pass


def _entry(value: Any) -> Reply:
    """One script entry as a Reply; _Bad naming the field at fault."""
    if isinstance(value, str):
        return Reply(text=value)
    if not isinstance(value, dict):
        raise _Bad(f"expected an object (or a string: the reply's text), got {type(value).__name__}")
    unknown = [key for key in value if key not in _KEYS]
    if unknown:
        raise _Bad(f"unknown field {unknown[0]!r}; the fields are {', '.join(_KEYS)}")
    for key in ("text", "thinking", "message"):
        if key in value and not isinstance(value[key], str):
            raise _Bad(f"field {key}: expected a string")
    calls = value.get("tool_calls", [])
    if not isinstance(calls, list):
        raise _Bad("field tool_calls: expected a list of calls")
    parsed = tuple(_call(call, index) for index, call in enumerate(calls))
    status = value.get("status")
    if status is not None and (not _whole(status) or not 400 <= status <= 599):
        raise _Bad("field status: expected an HTTP error status from 400 to 599")
    delay = value.get("delay", 0)
    if isinstance(delay, bool) or not isinstance(delay, (int, float)) or not math.isfinite(delay) or delay < 0:
        raise _Bad("field delay: expected seconds, a number >= 0")
    cut = value.get("cut_stream_after")
    if cut is not None and (not _whole(cut) or cut < 0):
        raise _Bad("field cut_stream_after: expected a whole number of chunks >= 0")
    plain = not parsed and "thinking" not in value
    text = value.get("text", DEFAULT_TEXT if plain else None)
    return Reply(text=text, thinking=value.get("thinking"), tool_calls=parsed, status=status,
                 message=value.get("message"), delay=float(delay), cut_stream_after=cut)


def _call(value: Any, index: int) -> ToolCall:
    where = f"field tool_calls[{index}]"
    if not isinstance(value, dict):
        raise _Bad(f"{where}: expected an object with name and arguments")
    unknown = [key for key in value if key not in _CALL_KEYS]
    if unknown:
        raise _Bad(f"{where}: unknown field {unknown[0]!r}; a call has {', '.join(_CALL_KEYS)}")
    if not isinstance(value.get("name"), str) or not value["name"]:
        raise _Bad(f"{where}.name: expected the tool's name, a non-empty string")
    arguments = value.get("arguments", {})
    if not isinstance(arguments, dict):
        raise _Bad(f"{where}.arguments: expected an object (the call's arguments)")
    if "id" in value and (not isinstance(value["id"], str) or not value["id"]):
        raise _Bad(f"{where}.id: expected a non-empty string")
    return ToolCall(value["name"], arguments, value.get("id"))


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_entries(entries: Any, where: str = "the script", lines: Sequence[int] | None = None) -> list[Reply]:
    """Script entries (a list of JSON values) as replies; a ConfigError naming the bad one."""
    if not isinstance(entries, list):
        raise ConfigError(f"{where}: expected a list of replies, one per turn")
    replies = []
    for index, value in enumerate(entries):
        try:
            replies.append(_entry(value))
        except _Bad as exc:
            at = f"{where}:{lines[index]}" if lines else where
            raise ConfigError(f"{at}: entry {index + 1}: {exc}") from None
    return replies


def parse_script(value: Any, where: str = "the script") -> Script:
    """A script: a list of entries (every conversation's), or an object of lists by marker."""
    if not isinstance(value, dict):
        return {"": parse_entries(value, where)}
    script = {}
    for marker, entries in value.items():
        script[marker] = parse_entries(entries, f"{where}: conversation {marker!r}" if marker else where)
    return script


def load_script(path: str | Path) -> Script:
    """A script file: a JSON list of entries or an object of them by marker, or JSON lines (one
    entry a line)."""
    text = read_input(path, "a serve script")
    try:
        return parse_script(json.loads(text), str(path))
    except json.JSONDecodeError as whole:
        numbered = [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
        if len(numbered) < 2:
            raise ConfigError(f"{path}:{whole.lineno}:{whole.colno}: not JSON ({whole.msg})") from None
        values = []
        for number, line in numbered:
            try:
                values.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{path}:{number}:{exc.colno}: not JSON ({exc.msg}); a script is a JSON "
                                  "list of replies or JSON lines, one reply a line") from None
        return {"": parse_entries(values, str(path), [number for number, _ in numbered])}


@dataclass
class Replies:
    """The reply to each request: the script's entry for its turn, else a drawn one
    (``generate``), else the default. ``script``: a list of entries or a :data:`Script`."""

    script: list[Reply] | Script = field(default_factory=list)
    generate: bool = False
    seed: int = 0
    #: Whether a drawn call may reuse an id sent before in its conversation (off: every id fresh).
    reuse_ids: bool = False
    _ids: dict[str, list[str]] = field(default_factory=dict)  # call ids sent, per conversation
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def entries(self, first_user_text: str) -> list[Reply]:
        """The script entries of the conversation that opens with ``first_user_text``."""
        if isinstance(self.script, list):
            return self.script
        found = next((marker for marker in self.script if marker and marker in first_user_text), "")
        return self.script.get(found, [])

    def next(self, first_user_text: str, conversation: str, entry: int, tool_names: Sequence[str]) -> Reply:
        """The ``entry``-th reply (from 1) of ``conversation``, which opens with ``first_user_text``."""
        script = self.entries(first_user_text)
        if entry <= len(script):
            return script[entry - 1]
        if self.generate:
            return self._drawn(conversation, entry, tool_names)
        return Reply()

    def _drawn(self, conversation: str, turn: int, tool_names: Sequence[str]) -> Reply:
        """An entry drawn from a seed made of ``--seed``, the conversation and the turn, so a
        rerun with the same seed answers the same requests the same way, in any order.

        Hypothesis has no public way to draw one value from a given seed (``.example()`` takes
        none), so this feeds a seeded ConjectureData, as the engine's pin of Hypothesis allows."""
        from hypothesis.control import BuildContext
        from hypothesis.errors import StopTest
        from hypothesis.internal.conjecture.data import ConjectureData

        from chatconform.strategies.replies import replies

        with self._lock:
            seen = tuple(self._ids.get(conversation, ()))
        material = f"{self.seed}/{conversation}/{turn}".encode()
        data = ConjectureData(random=random.Random(hashlib.sha256(material).digest()))
        # fresh ids by default: a drawn reply reuses a call id only when asked to (reuse_ids)
        strategy = replies(tool_names=sorted(set(tool_names)), reusable_ids=seen if self.reuse_ids else ())
        try:
            with BuildContext(data, wrapped_test=self._drawn):  # what a composite strategy's draw needs
                entry = data.draw(strategy)
        except StopTest:  # the draw ran out of room: a plain answer
            return Reply()
        return _entry(entry)

    def remember(self, conversation: str, ids: Sequence[str]) -> None:
        """The call ids sent in ``conversation``: a drawn reply may reuse one."""
        if self.generate and ids:
            with self._lock:
                self._ids.setdefault(conversation, []).extend(ids)
