"""The history vocabulary every layer shares: the reference, the strategies, the adapters,
the checks and the engine.

A history is ``list[pydantic_ai.messages.ModelMessage]``. This module writes it to the
smallest JSON that loads back equal (:func:`history_to_json`, :func:`history_from_json`),
says what a reader of the conversation sees in it (:func:`visible_items`, compared with
:func:`lost_items` and :func:`out_of_order`), and where its tool calls and results fail to
pair up (:func:`tool_pairing_problems`), and what a stored thread row is (:class:`Row`,
:data:`UUID_NIL`). It imports nothing of chatconform's: every other layer may import it.
"""

from __future__ import annotations

import base64
import copy as copy_module
import dataclasses
import functools
import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import ValidationError

from chatconform.lazy import pai

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

History = list["ModelMessage"]

ItemKind = Literal["system", "user", "summary", "feedback", "assistant", "thinking", "call", "result", "media"]


# -- JSON ---------------------------------------------------------------------------------------

#: The timestamp a history's first message has when its JSON gives none (the clock the
#: bundled strategies start from). Later messages default to the one before, parts to their
#: message, so a history written by :func:`history_to_json` carries only the times that change.
DEFAULT_TIMESTAMP = "2026-01-05T09:00:00Z"

#: The keys pydantic-ai reads to tell message and part types apart: always written, first.
_TAGS = ("kind", "part_kind")


@functools.cache
def _kinds() -> dict[str, type]:
    """Message and part classes of pydantic-ai by their ``kind`` / ``part_kind`` tag (read on
    first use: reading them imports pydantic-ai, :mod:`chatconform.lazy`).

    A subclass that keeps its base's tag (``ToolSearchCallPart`` is a ``tool-call`` whose
    ``tool_name`` defaults to ``search_tools``) does not stand for the tag: loading makes the
    base class, and the subclass's defaults would drop a field loading needs.
    """
    import pydantic_ai.messages as messages

    found: dict[str, type] = {}
    for obj in vars(messages).values():
        if isinstance(obj, type) and dataclasses.is_dataclass(obj):
            for field in dataclasses.fields(obj):
                if field.name in _TAGS and isinstance(field.default, str):
                    tag = f"{field.name}:{field.default}"
                    if tag not in found or issubclass(found[tag], obj):
                        found[tag] = obj
    return found


_DEFAULTS: dict[type, dict[str, Any]] = {}


def _defaults(cls: type) -> dict[str, Any]:
    """The JSON of each field default of ``cls`` that loading fills in by itself."""
    if cls not in _DEFAULTS:
        from pydantic import TypeAdapter

        found: dict[str, Any] = {}
        for field in dataclasses.fields(cls):
            if field.name in _TAGS:
                continue
            if field.default is not dataclasses.MISSING:
                found[field.name] = TypeAdapter(Any).dump_python(field.default, mode="json")
            elif field.default_factory is not dataclasses.MISSING and field.name != "timestamp":
                try:  # plain value factories (usage, dict, list); not ids or clocks
                    if isinstance(field.default_factory, type):
                        value = field.default_factory()
                        found[field.name] = TypeAdapter(type(value)).dump_python(value, mode="json")
                except Exception:
                    pass
        _DEFAULTS[cls] = found
    return _DEFAULTS[cls]


def _slim(obj: dict[str, Any], inherited_time: Any, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """``obj`` without the fields loading would fill in anyway, its tag first; the keys in
    ``skip`` left for the caller."""
    cls = next((_kinds().get(f"{tag}:{obj.get(tag)}") for tag in _TAGS if tag in obj), None)
    defaults = _defaults(cls) if cls else {}
    out = {tag: obj[tag] for tag in _TAGS if tag in obj}
    for key, value in obj.items():
        if key in _TAGS or key in skip:
            continue
        if key == "timestamp":
            if value != inherited_time:
                out[key] = value
        elif key == "content" and obj.get("part_kind") in _VERBATIM_CONTENT:
            out[key] = value
        elif key in defaults:
            if value != defaults[key]:
                out[key] = _drop_none(value)
        elif value is not None:
            out[key] = _drop_none(value)
    return out


#: Parts whose ``content`` is the tool's own data, written as it is: a None in it is data,
#: and a file in it is recognised on loading only with every one of its keys.
_VERBATIM_CONTENT = ("tool-return", "builtin-tool-return")


def _drop_none(value: Any) -> Any:
    """Nested objects (file contents, usage details) lose their None fields, as before."""
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value


def history_to_json(history: Sequence[ModelMessage]) -> list[Any]:
    """The smallest JSON that :func:`history_from_json` loads back to an equal history.

    pydantic-ai's own JSON, less what loading fills in: fields at their defaults (zero
    usage, ``state: complete``, ``scope: conversation``, None), and timestamps equal to
    the one they default to (:data:`DEFAULT_TIMESTAMP`, then the message before, then the
    part's message). The ``kind``/``part_kind`` tags stay, and come first.
    """
    out = []
    previous = DEFAULT_TIMESTAMP
    for message in pai.ModelMessagesTypeAdapter.dump_python(list(history), mode="json"):
        stamp = message.get("timestamp")
        slim = _slim(message, previous, skip=("parts",))
        if stamp is not None:
            previous = stamp
        elif "timestamp" in message:  # a request without a time: say so, or it would inherit one
            slim["timestamp"] = None
        if "parts" in message:
            slim["parts"] = [_slim(part, previous) for part in message["parts"]]
        out.append(slim)
    return out


def _with_defaults(data: list[Any]) -> list[Any]:
    """The timestamps :func:`history_to_json` left out, put back."""
    out = []
    previous: Any = DEFAULT_TIMESTAMP
    for message in data:
        if not isinstance(message, dict):
            out.append(message)
            continue
        message = dict(message)
        message.setdefault("timestamp", previous)
        if message["timestamp"] is not None:
            previous = message["timestamp"]
        if isinstance(message.get("parts"), list):
            message["parts"] = [_part_with_time(part, previous) for part in message["parts"]]
        out.append(message)
    return out


def _part_with_time(part: Any, stamp: Any) -> Any:
    if not isinstance(part, dict) or "timestamp" in part:
        return part
    cls = _kinds().get(f"part_kind:{part.get('part_kind')}")
    has_time = cls is not None and any(f.name == "timestamp" for f in dataclasses.fields(cls))
    return dict(part, timestamp=stamp) if has_time else part


def history_from_json(data: Any, where: str) -> History:
    """A history from its JSON form; ValueError naming ``where`` and the first bad field."""
    if not isinstance(data, list):
        raise ValueError(f"{where} must be a JSON array of pydantic-ai messages, got {type(data).__name__}")
    try:
        return pai.ModelMessagesTypeAdapter.validate_python(_with_defaults(data))
    except ValidationError as exc:
        first = exc.errors()[0]
        location = ".".join(str(step) for step in first["loc"])
        raise ValueError(f"{where}[{location}]: {first['msg']} "
                         f"({exc.error_count()} problem(s) in all)") from None


def history_problem(output: Any) -> str | None:
    """Why ``output`` is not a history (a list of ``ModelRequest``/``ModelResponse``), or None:
    the ``output_problem`` of every contract whose method returns a history."""
    if not isinstance(output, list):
        return f"returned {type(output).__name__}, expected a history (a list of messages)"
    bad = next((i for i, m in enumerate(output) if not isinstance(m, (pai.ModelRequest, pai.ModelResponse))), None)
    if bad is not None:
        return f"item {bad} of the result is {type(output[bad]).__name__}, not a ModelRequest or ModelResponse"
    return None


def with_parts(message: ModelMessage, parts: Sequence[Any], **changes: Any) -> ModelMessage:
    """``message`` with ``parts`` (of kinds its class takes) and ``changes`` (``dataclasses.replace``
    per class: mypy types it for one dataclass, not for the union of the two)."""
    if isinstance(message, pai.ModelRequest):
        return dataclasses.replace(message, parts=parts, **changes)
    return dataclasses.replace(message, parts=parts, **changes)


def fresh_lists(history: Sequence[ModelMessage]) -> History:
    """A copy of ``history`` down to each message's list of parts (the parts are shared):
    what an implementation that rebuilds lists in place may touch, at a fraction of a
    deep copy's cost on long histories. ``input_untouched`` judges deeper edits."""
    out = []
    for message in history:
        clone = copy_module.copy(message)
        clone.parts = list(message.parts)  # type: ignore[assignment]  # the message's own parts
        out.append(clone)
    return out


def first_difference(a: Sequence[Any], b: Sequence[Any], same: Callable[[Any, Any], bool] | None = None) -> int:
    """The first index where ``a`` and ``b`` differ (the shorter length when one is a prefix);
    ``same(x, y)`` says whether two items match (equality by default)."""
    differ = (lambda x, y: x != y) if same is None else (lambda x, y: not same(x, y))
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if differ(x, y)), min(len(a), len(b)))


def counted(count: int, noun: str) -> str:
    """``count`` and ``noun``, plural unless the count is one: ``1 row``, ``3 rows``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def list_difference(expected: Sequence[Any], actual: Sequence[Any], noun: str = "item", *,
                    show: Callable[[Any], str] = repr, width: int = 160,
                    same: Callable[[Any, Any], bool] | None = None) -> str:
    """How ``actual`` differs from ``expected``, for a failure message: both lengths, and the
    first index where they differ with the item each has there (``show``, cut to ``width``).

    ``expected 51 rows, got 50; first difference at row 50: expected 'r1', got nothing (the
    list ends)``. A failure's expected and actual values may be cut for display, so two long
    lists can look alike there; this names what differs. ``same`` as for :func:`first_difference`.
    """
    index = first_difference(expected, actual, same)

    def at(items: Sequence[Any]) -> str:
        if index >= len(items):
            return "nothing (the list ends)"
        text = show(items[index])
        return text if len(text) <= width else text[:width] + " …"

    if len(expected) == len(actual):
        sizes = f"{counted(len(actual), noun)} in both"
    else:
        sizes = f"expected {counted(len(expected), noun)}, got {len(actual)}"
    if index >= max(len(expected), len(actual)):
        return f"{sizes}; every {noun} matches"
    return f"{sizes}; first difference at {noun} {index}: expected {at(expected)}, got {at(actual)}"


def message_text(message: Any) -> str:
    """One message as a failure message shows it: its JSON, as :func:`history_to_json` writes
    it, or its repr when it is not a message that dumps."""
    try:
        return json.dumps(history_to_json([message])[0], ensure_ascii=False, default=str)
    except Exception:
        return repr(message)


def describe_at(items: Sequence[Any], index: int, width: int = 600) -> str:
    """Item ``index`` of ``items`` for a failure message (its repr, cut), or that there is none."""
    if index >= len(items):
        return f"nothing at {index} (there are {len(items)})"
    return repr(items[index])[:width]


def walk_parts(history: Sequence[ModelMessage]) -> int:
    """One bare pass over a history, every part looked at once: the floor benchmarks
    measure a contract's implementation against. Returns the number of parts."""
    count = 0
    for message in history:
        for _part in message.parts:
            count += 1
    return count


# -- what a history holds ------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True)
class Item:
    """One thing a reader of the conversation sees.

    ``value`` is the text (for text kinds), the tool name (calls and results) or the
    media identity (:func:`media_identity`); ``ref`` is the tool-call id, or, for a file,
    :data:`INLINE` when its bytes are held inline (a link has none).
    """

    kind: ItemKind
    value: str
    ref: str = ""


#: The ``ref`` of a file item whose bytes the history holds (or a ``data:`` URL spells out).
INLINE = "inline"

_URLSAFE = str.maketrans("-_", "+/")


def inline_identity(data: str) -> str | None:
    """The identity of the bytes that base64 text ``data`` decodes to (either alphabet,
    padding optional), as :func:`media_identity` writes it; None when ``data`` is no base64.

    Two bodies that send the same bytes have one identity however they spell them, and
    text that is not the encoding of the stored bytes (raw bytes that merely look like
    base64, sent as they are) has another.
    """
    text = "".join(data.split()).translate(_URLSAFE).rstrip("=")  # line breaks are not data
    text += "=" * (-len(text) % 4)
    try:
        return base64.b64encode(base64.b64decode(text, validate=True)).decode("ascii")
    except ValueError:
        return None


def data_url_payload(url: str) -> str | None:
    """The base64 text of a ``data:...;base64,`` URL, or None for any other URL."""
    head, sep, data = url.partition(";base64,")
    return data if sep and head.startswith("data:") else None


def media_identity(content: Any) -> str | None:
    """How a file travels in any dialect: its URL, or the base64 of its bytes (a ``data:``
    URL is its bytes)."""
    if isinstance(content, pai.FileUrl):
        inline = data_url_payload(content.url)
        return (inline_identity(inline) if inline is not None else None) or content.url
    if isinstance(content, pai.BinaryContent):
        return base64.b64encode(content.data).decode("ascii")
    return None


def _inline(content: Any) -> bool:
    return isinstance(content, pai.BinaryContent) or (
        isinstance(content, pai.FileUrl) and data_url_payload(content.url) is not None)


def _user_items(content: Any, kind: ItemKind) -> Iterable[Item]:
    for piece in [content] if isinstance(content, str) else content:
        if isinstance(piece, str):
            yield Item(kind, piece)
        elif isinstance(piece, pai.TextContent):
            yield Item(kind, piece.content)
        elif (identity := media_identity(piece)) is not None:
            yield Item("media", identity, INLINE if _inline(piece) else "")


def _part_items(message: ModelMessage, part: Any) -> Iterable[Item]:
    if isinstance(message, pai.ModelRequest):
        if isinstance(part, pai.SystemPromptPart):
            yield Item("system", part.content)
        elif isinstance(part, pai.UserPromptPart):
            yield from _user_items(part.content, "user")
        elif isinstance(part, pai.CompactionPart):
            if part.content:
                yield Item("summary", part.content)
        elif isinstance(part, pai.RetryFeedbackPart) and isinstance(part.content, str):
            yield Item("feedback", part.content)
        elif isinstance(part, (pai.ToolReturnPart, pai.RetryPromptPart)) and part.tool_call_id and part.tool_name:
            yield Item("result", part.tool_name, part.tool_call_id)
    elif isinstance(part, pai.TextPart):
        yield Item("assistant", part.content)
    elif isinstance(part, pai.ThinkingPart):
        yield Item("thinking", part.content)
    elif isinstance(part, pai.ToolCallPart):
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
            if isinstance(message, pai.ModelResponse) and isinstance(part, pai.ToolCallPart):
                if part.tool_call_id in open_calls:
                    problems.append(f"message {index}: tool call id {part.tool_call_id} is used twice "
                                    "while its first call is unanswered")
                open_calls[part.tool_call_id] = index
                answered.discard(part.tool_call_id)
            elif isinstance(message, pai.ModelRequest) and isinstance(part, (pai.ToolReturnPart, pai.RetryPromptPart)):
                if isinstance(part, pai.RetryPromptPart) and not part.tool_name:
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


#: The marker pydantic-ai-harness 0.62 puts on the ``CompactionPart`` it writes: a
#: compaction summary the bundled strategies, the reference and the checks all recognise.
SUMMARY_METADATA_KEY = "pydantic-ai-harness.compaction.summary.v1"

#: Tool-return outcomes that mean the tool did not succeed: the result is an error.
ERROR_OUTCOMES = frozenset({"failed", "retried"})


def and_more(items: Sequence[Any] | int, noun: str) -> str:
    """`` (and N more <noun>s)`` after the first of ``items`` (a count or a sequence), or
    nothing: ``noun`` names what was left out (``problem``, ``unanswered call``), so a list cut
    after its first entry is not read as one whose last entries were cut."""
    extra = (items if isinstance(items, int) else len(items)) - 1
    return f" (and {counted(extra, 'more ' + noun)})" if extra > 0 else ""


def item_label(item: Item, width: int = 80) -> str:
    """One item as a failure message shows it: its kind and the start of its value."""
    return f"{item.kind}: {item.value[:width]}"


# -- thread rows ----------------------------------------------------------------------------------

#: The parent a legacy or Service-API row carries: "the previous row in time" (Dify's
#: message table, where the thread bugs were found).
UUID_NIL = "00000000-0000-0000-0000-000000000000"


class RowLike(Protocol):
    """A stored thread row as the thread contract reads it (a Dify ORM row works as it is)."""

    id: str
    parent_message_id: str | None
    created_at: Any


@dataclasses.dataclass(slots=True)
class Row:
    """A stored thread row; any object with these three attributes works the same."""

    id: str
    parent_message_id: str | None
    created_at: datetime
