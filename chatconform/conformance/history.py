"""The shared history layer: what every contract over pydantic-ai histories needs, once.

A history is ``list[pydantic_ai.messages.ModelMessage]``. Contracts whose input holds
histories (payload today; compaction, persistence, sanitize, repair, trim, serde next)
derive from :class:`HistoryContract`: their case is a dataclass whose history fields are
copied, fingerprinted, sized and written to JSON here, and its other fields are plain JSON
values. The invariants several contracts share over histories live here too:
:func:`visible_items` (what a reader of the conversation sees, in order),
:func:`lost_items` and :func:`out_of_order` over two item lists, and
:func:`tool_pairing_problems` (every call answered exactly once, every result with its call).
"""

from __future__ import annotations

import base64
import dataclasses
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar, Literal

from pydantic import ValidationError
from pydantic_ai.messages import (
    BinaryContent,
    CompactionPart,
    FileUrl,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryPromptPart,
    SystemPromptPart,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from chatconform.conformance.contract import Contract

History = list[ModelMessage]

ItemKind = Literal["system", "user", "summary", "feedback", "assistant", "thinking", "call", "result", "media"]


# -- JSON ---------------------------------------------------------------------------------------

def history_to_json(history: Sequence[ModelMessage]) -> list[Any]:
    """JSON for people to read: fields left at None are omitted (they load back as None)."""
    return ModelMessagesTypeAdapter.dump_python(list(history), mode="json", exclude_none=True)


def history_from_json(data: Any, where: str) -> History:
    """A history from its JSON form; ValueError naming ``where`` and the first bad field."""
    if not isinstance(data, list):
        raise ValueError(f"{where} must be a JSON array of pydantic-ai messages, got {type(data).__name__}")
    try:
        return ModelMessagesTypeAdapter.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        location = ".".join(str(step) for step in first["loc"])
        raise ValueError(f"{where}[{location}]: {first['msg']} "
                         f"({exc.error_count()} problem(s) in all)") from None


# -- contracts over histories -------------------------------------------------------------------

class HistoryContract(Contract):
    """A contract whose case is a dataclass (:attr:`case_type`) holding histories.

    Fields named in :attr:`history_fields` are histories; every other field is a plain
    JSON value. Copying and fingerprinting are the base's (:class:`~chatconform.conformance.snapshot.Frozen`).
    """

    case_type: ClassVar[type]
    history_fields: ClassVar[tuple[str, ...]] = ("history",)

    def case_to_json(self, case: Any) -> dict[str, Any]:
        return {f.name: history_to_json(getattr(case, f.name)) if f.name in self.history_fields
                else getattr(case, f.name) for f in dataclasses.fields(case)}

    def case_from_json(self, data: Any) -> Any:
        fields = {f.name: f for f in dataclasses.fields(self.case_type)}
        shape = "{" + ", ".join(f'"{name}": ...' for name in fields) + "}"
        if not isinstance(data, dict):
            raise ValueError(f"a {self.name} case is a JSON object {shape}")
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise ValueError(f"unknown key(s) {', '.join(unknown)} in a {self.name} case {shape}")
        values: dict[str, Any] = {}
        for name, spec in fields.items():
            required = spec.default is dataclasses.MISSING and spec.default_factory is dataclasses.MISSING
            if name not in data:
                if required:
                    raise ValueError(f"a {self.name} case needs {name!r}: {shape}")
                continue
            values[name] = history_from_json(data[name], name) if name in self.history_fields else data[name]
        return self.case_type(**values)

    def size(self, case: Any) -> int:
        return sum(len(getattr(case, name)) for name in self.history_fields)


# -- what a history holds ------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True)
class Item:
    """One thing a reader of the conversation sees.

    ``value`` is the text (for text kinds), the tool name (calls and results) or the
    media identity (a URL, or the base64 of inline data); ``ref`` is the tool-call id.
    """

    kind: ItemKind
    value: str
    ref: str = ""


def media_identity(content: Any) -> str | None:
    """How a file travels in any dialect: its URL, or the base64 of its bytes."""
    if isinstance(content, FileUrl):
        return content.url
    if isinstance(content, BinaryContent):
        return base64.b64encode(content.data).decode("ascii")
    return None


def _user_items(content: Any, kind: ItemKind) -> Iterable[Item]:
    for piece in [content] if isinstance(content, str) else content:
        if isinstance(piece, str):
            yield Item(kind, piece)
        elif isinstance(piece, TextContent):
            yield Item(kind, piece.content)
        elif (identity := media_identity(piece)) is not None:
            yield Item("media", identity)


def _part_items(message: ModelMessage, part: Any) -> Iterable[Item]:
    if isinstance(message, ModelRequest):
        if isinstance(part, SystemPromptPart):
            yield Item("system", part.content)
        elif isinstance(part, UserPromptPart):
            yield from _user_items(part.content, "user")
        elif isinstance(part, CompactionPart):
            if part.content:
                yield Item("summary", part.content)
        elif isinstance(part, RetryFeedbackPart) and isinstance(part.content, str):
            yield Item("feedback", part.content)
        elif isinstance(part, (ToolReturnPart, RetryPromptPart)) and part.tool_call_id and part.tool_name:
            yield Item("result", part.tool_name, part.tool_call_id)
    elif isinstance(part, TextPart):
        yield Item("assistant", part.content)
    elif isinstance(part, ThinkingPart):
        yield Item("thinking", part.content)
    elif isinstance(part, ToolCallPart):
        yield Item("call", part.tool_name, part.tool_call_id)


def visible_items(history: Sequence[ModelMessage], *, kinds: frozenset[str] | None = None) -> list[Item]:
    """Every item of the history in order, blank texts left out (no provider sends them).

    ``kinds`` keeps only those kinds (e.g. without ``"thinking"`` where it is not kept).
    """
    items = []
    for message in history:
        for part in message.parts:
            for item in _part_items(message, part):
                if (kinds is None or item.kind in kinds) and (item.kind in ("call", "result", "media")
                                                               or item.value.strip()):
                    items.append(item)
    return items


def lost_items(before: Sequence[Item], after: Sequence[Item]) -> list[Item]:
    """Items of ``before`` missing from ``after`` (as a multiset: a duplicate counts twice)."""
    missing = Counter(before) - Counter(after)
    out = []
    for item in before:
        if missing[item]:
            missing[item] -= 1
            out.append(item)
    return out


def out_of_order(kept: Sequence[Item], result: Sequence[Item]) -> Item | None:
    """The first item of ``kept`` that does not follow the previous one in ``result``, or None.

    A greedy subsequence match (linear): ``result`` may hold more than ``kept`` (a summary,
    a standing prompt, an item equal to a kept one, such as the same image sent twice), so
    each kept item is matched to its earliest occurrence after the previous match, which
    finds ``kept`` in order whenever it is there. Report :func:`lost_items` first: an item
    missing altogether also ends the match.
    """
    position = 0
    for item in kept:
        while position < len(result) and result[position] != item:
            position += 1
        if position == len(result):
            return item
        position += 1
    return None


def tool_pairing_problems(history: Sequence[ModelMessage]) -> list[str]:
    """Where tool calls and results of a history do not pair up one to one.

    Every ``ToolCallPart`` needs exactly one later result (a ``ToolReturnPart`` or a
    ``RetryPromptPart`` with its id) and every result an earlier call: what every provider
    requires of the payload built from it (OpenAI, Anthropic, Gemini, Bedrock, Mistral).
    An id may come back in a later round once its earlier call is answered (some
    OpenAI-compatible servers number calls ``call_1``, ``call_2``, ... afresh each turn).
    """
    problems: list[str] = []
    open_calls: dict[str, int] = {}
    answered: set[str] = set()
    for index, message in enumerate(history):
        for part in message.parts:
            if isinstance(message, ModelResponse) and isinstance(part, ToolCallPart):
                if part.tool_call_id in open_calls:
                    problems.append(f"message {index}: tool call id {part.tool_call_id} is used twice "
                                    "while its first call is unanswered")
                open_calls[part.tool_call_id] = index
                answered.discard(part.tool_call_id)
            elif isinstance(message, ModelRequest) and isinstance(part, (ToolReturnPart, RetryPromptPart)):
                if isinstance(part, RetryPromptPart) and not part.tool_name:
                    continue  # a retry of the output, not of a tool call
                call_id = part.tool_call_id
                if call_id in open_calls:
                    del open_calls[call_id]
                    answered.add(call_id)
                elif call_id in answered:
                    problems.append(f"message {index}: tool call {call_id} is answered twice")
                else:
                    problems.append(f"message {index}: tool result {call_id} has no earlier call")
    problems.extend(f"message {index}: tool call {call_id} is never answered"
                    for call_id, index in open_calls.items())
    return problems
