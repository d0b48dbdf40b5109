"""The Anthropic Messages dialect (``anthropic``): ``system`` beside ``messages`` of user and
assistant content blocks; the message, its named SSE events, and the ``{"type": "error",
"error": {...}}`` body."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from chatconform.dialects.base import (
    BodyTurn,
    Call,
    CallNames,
    Dialect,
    File,
    Image,
    Reasoning,
    RenderHooks,
    SentFile,
    Text,
    Turn,
    dicts,
    files,
    list_of,
    neutral_role,
    reasoning_token,
    result_text,
    source_file,
    str_of,
    system_slot,
    text_blocks,
)
from chatconform.dialects.http import (
    SERVED_MODEL,
    Answer,
    Context,
    Reply,
    call_id,
    completion_tokens,
    json_answer,
    sse_answer,
    sse_event,
)

if TYPE_CHECKING:
    from chatconform.providers.profile import Provider

__all__ = ["DIALECT"]

_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
          404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 529: "overloaded_error"}
CHUNK = 16


def _source(hooks: RenderHooks, item: Image | File) -> dict:
    """An image's or a document's ``source``: its URL, or its bytes as base64."""
    if item.url:
        return {"type": "url", "url": item.url}
    return {"type": "base64", "media_type": item.media_type, "data": hooks.inline_data(item.data)}


def _signature(thinking: str) -> str:
    """A stand-in for the signature Anthropic puts on a thinking block (clients send it back)."""
    return hashlib.sha256(thinking.encode()).hexdigest()


def _blocks(reply: Reply, ids: list[str]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.thinking is not None:
        blocks.append({"type": "thinking", "thinking": reply.thinking, "signature": _signature(reply.thinking)})
    if reply.text is not None:
        blocks.append({"type": "text", "text": reply.text})
    blocks += [{"type": "tool_use", "id": i, "name": c.name, "input": c.arguments}
               for i, c in zip(ids, reply.tool_calls, strict=True)]
    return blocks


def _deltas(block: dict[str, Any]) -> list[dict[str, Any]]:
    if block["type"] == "thinking":
        return [{"type": "thinking_delta", "thinking": block["thinking"]},
                {"type": "signature_delta", "signature": block["signature"]}]
    if block["type"] == "text":
        text = block["text"]
        return [{"type": "text_delta", "text": text[at:at + CHUNK]} for at in range(0, len(text), CHUNK)]
    return [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]


def _model(name: str) -> dict[str, Any]:
    return {"type": "model", "id": name, "display_name": name, "created_at": "2025-01-01T00:00:00Z"}


class AnthropicMessages(Dialect):
    name = "anthropic_messages"
    routes = ("/v1/messages",)
    extra_routes = (("POST", "/v1/messages/count_tokens"), ("GET", "/v1/models"), ("GET", "/v1/models/{model:path}"))
    markers = ("anthropic-version",)
    #: "The maximum request size is 32 MB for standard API endpoints" (https://docs.anthropic.com/en/api/errors).
    max_request_bytes = 32 * 2**20

    def too_large(self, size: int, limit: int, profile: Provider) -> Answer:
        """413 ``request_too_large``, as the API's front end answers before the API sees it."""
        return self.error(413, "Request exceeds the maximum allowed number of bytes.", profile)

    def canned(self, method: str, path: str, params: Mapping[str, str], body: Any, ctx: Context) -> Answer:
        """The token count of a request (estimated from its length), the model list, one model."""
        if path == "/v1/messages/count_tokens":
            return json_answer({"input_tokens": ctx.prompt_tokens})
        if path == "/v1/models":
            return json_answer({"data": [_model(SERVED_MODEL)], "has_more": False, "first_id": SERVED_MODEL,
                                "last_id": SERVED_MODEL})
        return json_answer(_model(params["model"]))

    def render(self, hooks: RenderHooks, profile: Provider, system: str | None, turns: list[Turn]) -> dict:
        messages: list[dict[str, Any]] = []
        for turn in turns:
            blocks: list[dict] = []
            items = turn.items
            if turn.role == "assistant" and any(isinstance(item, Reasoning) for item in items):
                # Thinking blocks lead their turn (a merged turn included): with thinking on, a
                # final assistant turn must start with one (A20).
                items = sorted(items, key=lambda item: not isinstance(item, Reasoning))
            for item in items:
                if isinstance(item, Reasoning):
                    blocks.append({"type": "redacted_thinking", "data": item.signature} if item.redacted else
                                  {"type": "thinking", "thinking": item.text, "signature": item.signature})
                elif isinstance(item, Text):
                    blocks.append({"type": "text", "text": item.text})
                elif isinstance(item, Image):
                    blocks.append({"type": "image", "source": _source(hooks, item)})
                elif isinstance(item, File):
                    if hooks.file_part(item, profile) is None:
                        blocks.append({"type": "text", "text": item.url})
                    else:
                        blocks.append({"type": "document", "source": _source(hooks, item)})
                elif isinstance(item, Call):
                    blocks.append({"type": "tool_use", "id": item.id, "name": item.name, "input": item.args})
                else:
                    blocks.append({"type": "tool_result", "tool_use_id": item.id,
                                   "content": result_text(item.content), "is_error": item.error})
            messages.append({"role": neutral_role(turn, profile.id), "content": blocks})
        if messages and messages[-1]["role"] == "assistant" and messages[-1]["content"][-1]["type"] == "text":
            # A final assistant text may not end in whitespace (A10); only the edge goes.
            last = messages[-1]["content"][-1]
            last["text"] = last["text"].rstrip()
        body: dict = {"messages": messages}
        if system is not None:
            body = {"system": system, **body}
        return body

    def read(self, body: dict) -> Iterator[BodyTurn]:
        if "system" in body and isinstance(body["system"], (str, list)):
            yield from system_slot(tuple(text_blocks(body["system"], typed=True)), "$.system")
        names = CallNames()
        for i, message in enumerate(list_of(body.get("messages"))):
            if not isinstance(message, dict) or message.get("role") not in ("user", "assistant", "system"):
                continue
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(dicts(content))
            texts: list[str] = []
            media: list[SentFile] = []
            calls: list[tuple[str, str]] = []
            results: list[tuple[str, str]] = []
            errors: list[int] = []
            reasoning: list[str] = []
            leads = True
            for position, block in enumerate(blocks):
                kind = block.get("type")
                if kind in ("thinking", "redacted_thinking"):
                    leads = leads and len(reasoning) == position
                    reasoning.append(reasoning_token(block))
                elif kind == "text" and isinstance(block.get("text"), str):
                    texts.append(block["text"])
                elif kind in ("image", "document") and (file := source_file(block.get("source"))):
                    media.append(file)
                elif kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
                    calls.append(names.call(str_of(block.get("id")), str_of(block.get("name"))))
                elif kind == "tool_result":
                    if block.get("is_error") is True:
                        errors.append(len(results))
                    results.append(names.result(str_of(block.get("tool_use_id"))))
                    texts.extend(text_blocks(block.get("content"), typed=True))
                    media.extend(file for inner in dicts(block.get("content"))
                                 if inner.get("type") in ("image", "document")
                                 and (file := source_file(inner.get("source"))))
            role = message["role"]
            if role == "user" and results and len(results) == len(blocks):
                role = "tool"
            yield BodyTurn(role, tuple(texts), tuple(calls), tuple(results), f"$.messages[{i}]",
                           error_results=tuple(errors), reasoning=tuple(reasoning), reasoning_leads=leads,
                           **files(media))

    def error(self, status: int, message: str, profile: Provider) -> Answer:
        kind = _TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
        return json_answer({"type": "error", "error": {"type": kind, "message": message}}, status=status)

    def tool_names(self, body: dict) -> list[str]:
        return [tool["name"] for tool in body.get("tools") or () if isinstance(tool, dict)
                and isinstance(tool.get("name"), str)]

    def call_ids(self, reply: Reply, ctx: Context) -> list[str]:
        return [call_id("toolu_", ctx.conversation, ctx.turn, i, call) for i, call in enumerate(reply.tool_calls)]

    def answer(self, reply: Reply, ctx: Context) -> Answer:
        ids = self.call_ids(reply, ctx)
        blocks = _blocks(reply, ids)
        stop = "tool_use" if reply.tool_calls else "end_turn"
        output = completion_tokens(reply)
        message: dict[str, Any] = {"id": f"msg_{ctx.conversation[:12]}{ctx.turn}", "type": "message",
                                   "role": "assistant", "model": ctx.model, "content": blocks, "stop_reason": stop,
                                   "stop_sequence": None,
                                   "usage": {"input_tokens": ctx.prompt_tokens, "output_tokens": output}}
        if not ctx.stream:
            return json_answer(message, cut_after=reply.cut_stream_after)

        start = message | {"content": [], "stop_reason": None, "usage": {"input_tokens": ctx.prompt_tokens,
                                                                          "output_tokens": 1}}
        events = [sse_event({"type": "message_start", "message": start}, "message_start")]
        for index, block in enumerate(blocks):
            kind = block["type"]
            empty = {"thinking": {"type": "thinking", "thinking": ""}, "text": {"type": "text", "text": ""},
                     "tool_use": {"type": "tool_use", "id": block.get("id"), "name": block.get("name"), "input": {}}}
            events.append(sse_event({"type": "content_block_start", "index": index, "content_block": empty[kind]},
                                    "content_block_start"))
            for delta in _deltas(block):
                events.append(sse_event({"type": "content_block_delta", "index": index, "delta": delta},
                                        "content_block_delta"))
            events.append(sse_event({"type": "content_block_stop", "index": index}, "content_block_stop"))
        events.append(sse_event({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                 "usage": {"output_tokens": output}}, "message_delta"))
        events.append(sse_event({"type": "message_stop"}, "message_stop"))
        return sse_answer(events, cut_after=reply.cut_stream_after)


DIALECT = AnthropicMessages()
