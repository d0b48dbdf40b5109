"""The OpenAI Responses API dialect (``openai-responses``): ``{"instructions": ..., "input":
[items]}``, where an item is a message (``input_text``, ``input_image``, ``input_file``
content), a ``function_call``, its ``function_call_output`` (paired by ``call_id``), a
``reasoning`` item or an ``item_reference``; the response object and its typed SSE events
(``response.created`` ... ``response.completed``), and OpenAI's ``{"error": {...}}`` body.

What the reference sends, and why:

- **System text goes in ``instructions``**, not in a leading ``system`` or ``developer``
  message. ``instructions`` is the API's own system slot: it is not stored with the
  response, so a run's current instructions never pile up behind those of earlier
  responses, and ``input`` stays the conversation alone.
- **One item per text, call and result**: each assistant text its own assistant message
  (no two texts glued into one string), each call a ``function_call`` and each result a
  ``function_call_output`` with the call's ``call_id`` (an error as ``{"error": ...}`` JSON,
  the API having no error flag).
- **Reasoning replayed whole, stored nowhere**, with the request's reasoning on (a reasoning
  model). A ``ThinkingPart`` of OpenAI's (pydantic-ai's convention: ``provider_name="openai"``,
  the item id in ``id``, its ``encrypted_content`` in ``signature``; summaries of one item
  share its id) is sent as its ``reasoning`` item, with
  its encrypted content, right before the item it produced. The body says ``store: false``
  and asks for the next reasoning's encrypted content back (``include``), so nothing is
  looked up by id: the API refuses an id it did not store (X6). A reasoning item with no
  encrypted content, or with no text or call after it in its response (a run cancelled
  while it reasoned), is left out (the reference's ``replayable_reasoning``): sent, it is
  refused (X6, X5), and the model's reasoning is no content the conversation loses.

``serve`` keeps its own answers (:class:`ResponsesSession`): ``previous_response_id`` is read
as the stored response's items before the request's (X8 when there is none), and what the
server returned is judged on how it comes back (``rules/openai_responses.py``, ``replayed``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chatconform.dialects.base import (
    BodyTurn,
    Call,
    CallNames,
    Dialect,
    Image,
    Reasoning,
    RenderHooks,
    Result,
    SentFile,
    Text,
    Turn,
    dicts,
    files,
    inline_bytes,
    is_error_text,
    link,
    reasoning_token,
    result_text,
    str_of,
    system_slot,
)
from chatconform.dialects.http import (
    Answer,
    Context,
    Refusal,
    Reply,
    Session,
    call_id,
    completion_tokens,
    json_answer,
    sse_answer,
    sse_event,
)
from chatconform.dialects.openai_chat import DIALECT as OPENAI_CHAT

if TYPE_CHECKING:
    from chatconform.providers.profile import Provider

__all__ = ["DIALECT", "ENCRYPTED_CONTENT", "NO_PREVIOUS", "ResponsesSession", "input_items", "output_items",
           "reasoning_item", "response_id"]

#: What ``include`` asks for to get a reasoning item's encrypted content back.
ENCRYPTED_CONTENT = "reasoning.encrypted_content"
#: X8: the API's answer to a ``previous_response_id`` it does not hold.
NO_PREVIOUS = "Previous response with id '{id}' not found."
#: Characters of text per delta of a stream.
CHUNK = 16


# -- rendering ---------------------------------------------------------------------------------


def _user_content(hooks: RenderHooks, items: list, profile: Provider) -> list[dict]:
    parts: list[dict] = []
    for item in items:
        if isinstance(item, Text):
            parts.append({"type": "input_text", "text": item.text})
            continue
        url = item.url or f"data:{item.media_type};base64,{hooks.inline_data(item.data)}"
        if isinstance(item, Image):
            parts.append({"type": "input_image", "image_url": url, "detail": "auto"})
        elif hooks.file_part(item, profile) is None:
            parts.append({"type": "input_text", "text": url})
        elif item.url:
            parts.append({"type": "input_file", "file_url": url})
        else:
            parts.append({"type": "input_file", "filename": f"{item.kind}.{item.format}", "file_data": url})
    return parts


def reasoning_item(item_id: str, summaries: list[str], encrypted: str | None) -> dict:
    """A ``reasoning`` input item: its id, its summary texts and its encrypted content."""
    return {"type": "reasoning", "id": item_id,
            "summary": [{"type": "summary_text", "text": text} for text in summaries],
            "encrypted_content": encrypted}


def _assistant_items(turn: Turn) -> Iterator[dict]:
    """An assistant turn's items in order, the summaries of one reasoning item (which share
    its id) merged into it; the reference has kept only the reasoning items the API takes."""
    held: dict | None = None
    for item in turn.items:
        if isinstance(item, Reasoning):
            if held is None or held["id"] != item.id:
                if held is not None:
                    yield held
                held = reasoning_item(item.id or "", [], None)
            if item.text:
                held["summary"].append({"type": "summary_text", "text": item.text})
            held["encrypted_content"] = held["encrypted_content"] or item.signature
            continue
        if held is not None:
            yield held
        held = None
        if isinstance(item, Text):
            yield {"role": "assistant", "content": item.text}
        elif isinstance(item, Call):
            yield {"type": "function_call", "call_id": item.id, "name": item.name, "arguments": item.arguments}
    if held is not None:
        yield held


# -- reading back --------------------------------------------------------------------------------

_SYSTEM_ROLES = frozenset({"system", "developer"})
_TEXT_PARTS = frozenset({"input_text", "output_text", "text"})
#: What a reasoning item sends back (:attr:`BodyTurn.reasoning`): its id, summaries, encrypted
#: content and raw content (gpt-oss).
_REASONING_KEYS = ("type", "id", "summary", "encrypted_content", "content")


def input_items(body: dict) -> list:
    """The body's ``input`` as a list of items (a string is one user message)."""
    value = body.get("input")
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    return value if isinstance(value, list) else []


def _side(item: dict) -> str | None:
    """Which turn an item belongs to: a message's role (system and developer are system),
    ``assistant`` for what a response holds (calls, reasoning), ``tool`` for a call's output."""
    kind = item.get("type")
    if kind in (None, "message"):
        role = item.get("role")
        return "system" if role in _SYSTEM_ROLES else role if role in ("user", "assistant") else None
    if not isinstance(kind, str) or kind == "item_reference":
        return None
    if kind.endswith("_output"):
        return "tool"
    return "assistant" if kind.endswith("_call") or kind == "reasoning" else None


def _texts_and_files(content: Any) -> tuple[list[str], list[SentFile]]:
    if isinstance(content, str):
        return [content], []
    texts: list[str] = []
    found: list[SentFile | None] = []
    for part in dicts(content):
        kind = part.get("type")
        if kind in _TEXT_PARTS and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "input_image":
            found.append(link(part.get("image_url") or part.get("file_id")))
        elif kind == "input_audio" and isinstance(part.get("input_audio"), dict):
            # Read as sent: the reference sends no audio here (the API's content types left it
            # out until lately), but a mapper that does has not lost it.
            found.append(inline_bytes(part["input_audio"].get("data")))
        elif kind == "input_file":
            data = part.get("file_data")
            found.append((link(data) if data.startswith("data:") else inline_bytes(data)) if isinstance(data, str)
                         else link(part.get("file_url") or part.get("file_id")))
    return texts, [file for file in found if file]


@dataclass
class _Group:
    role: str
    start: int
    texts: list[str]
    calls: list[tuple[str, str]]
    results: list[tuple[str, str]]
    media: list[SentFile]
    errors: list[int]
    reasoning: list[str]


# -- answering -----------------------------------------------------------------------------------


def _digest(ctx: Context, *parts: object) -> str:
    return hashlib.sha256("/".join(map(str, (ctx.conversation, ctx.turn, *parts))).encode()).hexdigest()[:32]


def response_id(ctx: Context) -> str:
    """The id of the response a request gets: one per conversation and turn."""
    return f"resp_{_digest(ctx)}"


def _encrypted(item_id: str, thinking: str) -> str:
    """A stand-in for the encrypted content of a reasoning item (opaque to clients, sent back as it is)."""
    return base64.b64encode(hashlib.sha256(f"{item_id}\n{thinking}".encode()).digest() * 2).decode("ascii")


def output_items(reply: Reply, ctx: Context) -> list[dict]:
    """The ``output`` of the response to ``reply``: a reasoning item (its thinking as the summary,
    the encrypted content when ``include`` asks for it), the text as a message, each call."""
    items: list[dict] = []
    if reply.thinking is not None:
        item_id = f"rs_{_digest(ctx, 'reasoning')}"
        wanted = ENCRYPTED_CONTENT in (ctx.request.get("include") or ())
        items.append(reasoning_item(item_id, [reply.thinking], _encrypted(item_id, reply.thinking) if wanted else None))
    if reply.text is not None:
        items.append({"id": f"msg_{_digest(ctx, 'message')}", "type": "message", "role": "assistant",
                      "status": "completed",
                      "content": [{"type": "output_text", "text": reply.text, "annotations": [], "logprobs": []}]})
    for index, (ident, call) in enumerate(zip(DIALECT.call_ids(reply, ctx), reply.tool_calls, strict=True)):
        items.append({"id": f"fc_{_digest(ctx, 'call', index)}", "type": "function_call", "status": "completed",
                      "call_id": ident, "name": call.name, "arguments": json.dumps(call.arguments)})
    return items


def _response(reply: Reply, ctx: Context, output: list[dict], status: str) -> dict:
    request = ctx.request
    output_tokens = completion_tokens(reply)
    reasoning_tokens = max(1, len(reply.thinking) // 4) if reply.thinking else 0
    previous = request.get("previous_response_id")
    return {
        "id": response_id(ctx), "object": "response", "created_at": int(time.time()), "status": status,
        "model": ctx.model, "output": output, "instructions": request.get("instructions"),
        "previous_response_id": previous if isinstance(previous, str) else None,
        "store": request.get("store") is not False, "parallel_tool_calls": True, "tool_choice": "auto",
        "tools": request.get("tools") or [], "temperature": 1.0, "top_p": 1.0, "error": None,
        "incomplete_details": None, "metadata": {}, "text": {"format": {"type": "text"}},
        "usage": None if status != "completed" else {
            "input_tokens": ctx.prompt_tokens, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": output_tokens, "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
            "total_tokens": ctx.prompt_tokens + output_tokens},
    }


def _item_events(item: dict, index: int, event: Any) -> list[bytes]:
    """The events of one output item: added (empty), its deltas, its parts done, done."""
    ident, kind = item["id"], item["type"]
    where = {"item_id": ident, "output_index": index}
    if kind == "reasoning":
        events = [event("response.output_item.added", output_index=index, item=item | {"summary": []})]
        for n, summary in enumerate(item["summary"]):
            text, empty = summary["text"], {"type": "summary_text", "text": ""}
            events.append(event("response.reasoning_summary_part.added", **where, summary_index=n, part=empty))
            events += [event("response.reasoning_summary_text.delta", **where, summary_index=n,
                             delta=text[at:at + CHUNK]) for at in range(0, len(text), CHUNK)]
            events.append(event("response.reasoning_summary_text.done", **where, summary_index=n, text=text))
            events.append(event("response.reasoning_summary_part.done", **where, summary_index=n, part=summary))
    elif kind == "message":
        part = item["content"][0]
        text = part["text"]
        events = [event("response.output_item.added", output_index=index,
                        item=item | {"status": "in_progress", "content": []}),
                  event("response.content_part.added", **where, content_index=0, part=part | {"text": ""})]
        events += [event("response.output_text.delta", **where, content_index=0, delta=text[at:at + CHUNK],
                         logprobs=[]) for at in range(0, len(text), CHUNK)]
        events += [event("response.output_text.done", **where, content_index=0, text=text, logprobs=[]),
                   event("response.content_part.done", **where, content_index=0, part=part)]
    else:
        events = [event("response.output_item.added", output_index=index,
                        item=item | {"status": "in_progress", "arguments": ""}),
                  event("response.function_call_arguments.delta", **where, delta=item["arguments"]),
                  event("response.function_call_arguments.done", **where, name=item["name"],
                        arguments=item["arguments"])]
    return [*events, event("response.output_item.done", output_index=index, item=item)]


class OpenAIResponses(Dialect):
    name = "openai_responses"
    routes = ("/v1/responses",)
    base_path = "/v1"
    # The model list is the OpenAI Chat dialect's route (the same SDK, the same path).
    extra_routes = (("POST", "/v1/responses/input_tokens"),)

    def canned(self, method: str, path: str, params: Mapping[str, str], body: Any, ctx: Context) -> Answer:
        """The input token count (``client.responses.input_tokens.count``)."""
        return json_answer({"object": "response.input_tokens", "input_tokens": ctx.prompt_tokens})

    def render(self, hooks: RenderHooks, profile: Provider, system: str | None, turns: list[Turn]) -> dict:
        items: list[dict] = []
        for turn in turns:
            if turn.role == "system":  # only the known-bug fakes leave system turns in place
                items.append({"role": "system", "content": "\n\n".join(i.text for i in turn.items)})
            elif turn.role == "user":
                items.append({"role": "user", "content": _user_content(hooks, turn.items, profile)})
            elif turn.role == "assistant":
                items.extend(_assistant_items(turn))
            else:
                items += [{"type": "function_call_output", "call_id": result.id,
                           "output": result_text({"error": result.content} if result.error else result.content)}
                          for result in turn.items if isinstance(result, Result)]
        body: dict[str, Any] = {"input": items, "store": False}
        if any(item.get("type") == "reasoning" for item in items):
            body["include"] = [ENCRYPTED_CONTENT]
        return body if system is None else {"instructions": system, **body}

    def read(self, body: dict) -> Iterator[BodyTurn]:
        if isinstance(body.get("instructions"), str):
            yield from system_slot((body["instructions"],), "$.instructions")
        if isinstance(body.get("input"), str):
            yield BodyTurn("user", (body["input"],), (), (), "$.input")
            return
        names = CallNames()
        group: _Group | None = None
        for i, item in enumerate(input_items(body)):
            side = _side(item) if isinstance(item, dict) else None
            if side is None:
                continue
            if group is None or side != group.role or side in ("user", "system"):
                if group is not None:
                    yield self._turn(group)
                group = _Group(side, i, [], [], [], [], [], [])
            kind = item.get("type")
            if side == "tool":
                if is_error_text(item.get("output")):
                    group.errors.append(len(group.results))
                group.results.append(names.result(str_of(item.get("call_id"))))
                texts, found = _texts_and_files(item.get("output"))
            elif kind in ("function_call", "custom_tool_call"):
                group.calls.append(names.call(str_of(item.get("call_id")), str_of(item.get("name"))))
                continue
            elif kind == "reasoning":
                group.reasoning.append(reasoning_token({key: item[key] for key in _REASONING_KEYS if key in item}))
                continue
            elif kind not in (None, "message"):
                continue  # hosted tools' calls: no content the turn view reads
            else:
                texts, found = _texts_and_files(item.get("content"))
            group.texts += texts
            group.media += found
        if group is not None:
            yield self._turn(group)

    @staticmethod
    def _turn(group: _Group) -> BodyTurn:
        return BodyTurn(group.role, tuple(group.texts), tuple(group.calls), tuple(group.results),
                        f"$.input[{group.start}]", error_results=tuple(group.errors),
                        reasoning=tuple(group.reasoning), **files(group.media))

    def tool_names(self, body: dict) -> list[str]:
        return list(self.tool_schemas(body))

    def tool_schemas(self, body: dict) -> dict[str, dict]:
        """``tools[].parameters`` of each function tool (the Responses API declares them flat,
        not under ``function``); the built-in tools (web search, file search) are never called."""
        return {tool["name"]: self.parameters(tool.get("parameters")) for tool in body.get("tools") or ()
                if isinstance(tool, dict) and tool.get("type", "function") == "function"
                and isinstance(tool.get("name"), str)}

    def call_ids(self, reply: Reply, ctx: Context) -> list[str]:
        return [call_id("call_", ctx.conversation, ctx.turn, i, call) for i, call in enumerate(reply.tool_calls)]

    def answer(self, reply: Reply, ctx: Context) -> Answer:
        output = output_items(reply, ctx)
        if not ctx.stream:
            return json_answer(_response(reply, ctx, output, "completed"), cut_after=reply.cut_stream_after)
        number = iter(range(1 << 30))

        def event(kind: str, **fields: Any) -> bytes:
            return sse_event({"type": kind, "sequence_number": next(number), **fields}, kind)

        started = _response(reply, ctx, [], "in_progress")
        events = [event("response.created", response=started), event("response.in_progress", response=started)]
        for index, item in enumerate(output):
            events += _item_events(item, index, event)
        events.append(event("response.completed", response=_response(reply, ctx, output, "completed")))
        return sse_answer(events, cut_after=reply.cut_stream_after)

    def error(self, status: int, message: str, profile: Provider) -> Answer:
        return OPENAI_CHAT.error(status, message, profile)

    def session(self) -> ResponsesSession:
        return ResponsesSession()


# -- serve: the responses it stored --------------------------------------------------------------


@dataclass(frozen=True)
class _Stored:
    items: list  # the input as the API read it, then the output
    stored: bool  # False: answered with store=false, so no later request can continue it


class ResponsesSession(Session):
    """The responses one server gave, by id, so ``previous_response_id`` continues them as the
    API does: the stored response's input and output, then the request's own items (the
    problems' paths count in that list). A response made with ``store: false`` is not kept."""

    def __init__(self) -> None:
        self._responses: dict[str, _Stored] = {}
        self._lock = threading.Lock()

    def resolve(self, body: dict) -> tuple[dict, list[Refusal]]:
        previous = body.get("previous_response_id")
        if not isinstance(previous, str):
            return body, []
        with self._lock:
            stored = self._responses.get(previous)
        if stored is None or not stored.stored:
            return body, [Refusal("X8", "$.previous_response_id", NO_PREVIOUS.format(id=previous))]
        read = {key: value for key, value in body.items() if key != "previous_response_id"}
        read["input"] = [*stored.items, *input_items(body)]
        return read, []

    def answered(self, body: dict, reply: Reply, ctx: Context) -> None:
        items = [*input_items(body), *output_items(reply, ctx)]
        with self._lock:
            self._responses[response_id(ctx)] = _Stored(items, body.get("store") is not False)


DIALECT = OpenAIResponses()

