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

import dataclasses
import hashlib
import json
import math
import random
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chatconform.dialects.http import DEFAULT_TEXT, Reply, ToolCall
from chatconform.errors import ConfigError
from chatconform.inputs import read_input

if TYPE_CHECKING:
    from chatconform.providers.profile import Provider

__all__ = ["DEFAULT_TEXT", "Replies", "Reply", "Script", "ToolCall", "Tools", "interruption_kinds", "load_script",
           "parse_entries", "parse_script"]

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


def interruption_kinds(text: str | None) -> tuple[str, ...]:
    """``--interruptions``: kinds by comma (``none``: no kind; None: every kind); a ConfigError
    naming one that is not a kind."""
    from chatconform.strategies.replies import INTERRUPTIONS

    if text is None:
        return INTERRUPTIONS
    kinds = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    if kinds == ("none",):
        return ()
    unknown = [kind for kind in kinds if kind not in INTERRUPTIONS]
    if unknown or not kinds:
        raise ConfigError(f"--interruptions: {unknown[0] if unknown else text!r} is no interruption; the kinds are "
                          f"{', '.join(INTERRUPTIONS)} (or none)")
    return kinds


def load_script(path: str | Path) -> Script:
    """A script file: a JSON list of entries or an object of them by marker, or JSON lines (one
    entry a line, split at newlines alone: JSON text may hold U+2028 raw)."""
    text = read_input(path, "a serve script")
    try:
        return parse_script(json.loads(text), str(path))
    except json.JSONDecodeError as whole:
        numbered = [(number, line) for number, line in enumerate(text.split("\n"), 1) if line.strip()]
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


#: A drawn reply's tools: the JSON schema of each declared tool's arguments, by name.
Tools = Mapping[str, Mapping[str, Any]]


@dataclass
class Replies:
    """The reply to each request: the script's entry for its turn, else a drawn one
    (``generate``), else the default. ``script``: a list of entries or a :data:`Script`.

    A drawn reply is what a model answers: calls only to the declared tools, arguments valid
    for each tool's schema, fresh ids (an id sent before only for a provider whose models
    reuse ids, :attr:`~chatconform.providers.profile.Provider.reuses_call_ids`, labelled),
    text, thinking, parallel calls; and, one reply in six (``interruptions``), an interruption:
    an error status a busy provider answers, a cut stream, a dropped connection or a slow
    answer, never two in a row in one conversation, so a client's retry meets an answer."""

    script: list[Reply] | Script = field(default_factory=list)
    generate: bool = False
    seed: int = 0
    #: The interruptions a drawn reply may be (of ``strategies.replies.INTERRUPTIONS``).
    interruptions: tuple[str, ...] = ()
    _ids: dict[str, list[str]] = field(default_factory=dict)  # call ids sent, per conversation
    _drawn_entries: dict[tuple[str, int], Reply] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def entries(self, first_user_text: str) -> list[Reply]:
        """The script entries of the conversation that opens with ``first_user_text``."""
        if isinstance(self.script, list):
            return self.script
        found = next((marker for marker in self.script if marker and marker in first_user_text), "")
        return self.script.get(found, [])

    def next(self, first_user_text: str, conversation: str, entry: int, tools: Tools | Sequence[str],
             profile: Provider | None = None, statuses: Sequence[int] = (429, 500, 503)) -> Reply:
        """The ``entry``-th reply (from 1) of ``conversation``, which opens with ``first_user_text``,
        to a request that declares ``tools`` (names alone: tools that take no arguments), sent
        as ``profile`` (None: no provider's habits) answers, whose busy errors are ``statuses``."""
        script = self.entries(first_user_text)
        if entry <= len(script):
            return script[entry - 1]
        if self.generate:
            schemas = dict(tools) if isinstance(tools, Mapping) else dict.fromkeys(tools, _NO_ARGUMENTS)
            return self._drawn(conversation, entry, schemas, profile, tuple(statuses))
        return Reply()

    def _drawn(self, conversation: str, entry: int, tools: dict[str, Mapping[str, Any]],
               profile: Provider | None, statuses: tuple[int, ...]) -> Reply:
        """An entry drawn from a seed made of ``--seed``, the conversation and the entry, so a
        rerun with the same seed answers the same requests the same way; the same entry asked
        again is the same reply.

        Hypothesis has no public way to draw one value from a given seed (``.example()`` takes
        none), so this feeds a seeded ConjectureData, as the engine's pin of Hypothesis allows."""
        from hypothesis.control import BuildContext
        from hypothesis.errors import InvalidArgument, StopTest
        from hypothesis.internal.conjecture.data import ConjectureData

        from chatconform.strategies.replies import replies

        with self._lock:
            known = self._drawn_entries.get((conversation, entry))
            if known is not None:
                return known
            seen = tuple(self._ids.get(conversation, ()))
            previous = self._drawn_entries.get((conversation, entry - 1))
        reuses = profile.reuses_call_ids if profile is not None else None
        # never two interruptions in a row: a client that retries meets an answer
        calm = previous is not None and _interrupted(previous)
        strategy = replies(tool_schemas=dict(sorted(tools.items())), reusable_ids=seen if reuses else (),
                           interruptions=() if calm else self.interruptions, statuses=statuses)
        material = f"{self.seed}/{conversation}/{entry}".encode()
        data = ConjectureData(random=random.Random(hashlib.sha256(material).digest()))
        try:
            with BuildContext(data, wrapped_test=self._drawn):  # what a composite strategy's draw needs
                drawn = data.draw(strategy)
        except (StopTest, InvalidArgument):  # the draw ran out of room, or a schema it cannot read
            drawn = {}
        reply = _entry(drawn)
        reused = [call.id for call in reply.tool_calls if call.id]
        note = "drawn" + (f"; reused id {', '.join(reused)}: {reuses}" if reused else "")
        reply = dataclasses.replace(reply, note=note)
        with self._lock:
            return self._drawn_entries.setdefault((conversation, entry), reply)

    def drawn(self, conversation: str, entry: int) -> Reply | None:
        """The reply drawn for ``entry`` of ``conversation`` (None: none was drawn for it)."""
        with self._lock:
            return self._drawn_entries.get((conversation, entry))

    def remember(self, conversation: str, ids: Sequence[str]) -> None:
        """The call ids sent in ``conversation``: a drawn reply may reuse one."""
        if self.generate and ids:
            with self._lock:
                self._ids.setdefault(conversation, []).extend(ids)


#: The schema of a tool known by its name alone: it takes no arguments.
_NO_ARGUMENTS: Mapping[str, Any] = {"type": "object", "properties": {}}


def _interrupted(reply: Reply) -> bool:
    return reply.status is not None or reply.cut_stream_after is not None
