"""The Anthropic Messages dialect (``anthropic``): the message, its named SSE events, and the
``{"type": "error", "error": {...}}`` body."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from starlette.responses import Response

from chatconform.serve.replies import Context, Reply, call_id, completion_tokens
from chatconform.serve.stream import json_response, sse_event, sse_response

_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
          404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 529: "overloaded_error"}
CHUNK = 16


def error(status: int, message: str, provider: str) -> Response:
    kind = _TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    return json_response({"type": "error", "error": {"type": kind, "message": message}}, status=status)


def wants_stream(body: dict, query: dict[str, str]) -> bool:
    return body.get("stream") is True


def include_usage(body: dict) -> bool:
    return True


def tool_names(body: dict) -> list[str]:
    return [tool["name"] for tool in body.get("tools") or () if isinstance(tool, dict)
            and isinstance(tool.get("name"), str)]


def call_ids(reply: Reply, ctx: Context) -> list[str]:
    return [call_id("toolu_", ctx.conversation, ctx.turn, i, call) for i, call in enumerate(reply.tool_calls)]


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


def answer(reply: Reply, ctx: Context) -> Response:
    ids = call_ids(reply, ctx)
    blocks = _blocks(reply, ids)
    stop = "tool_use" if reply.tool_calls else "end_turn"
    output = completion_tokens(reply)
    message: dict[str, Any] = {"id": f"msg_{ctx.conversation[:12]}{ctx.turn}", "type": "message",
                               "role": "assistant", "model": ctx.model, "content": blocks, "stop_reason": stop,
                               "stop_sequence": None,
                               "usage": {"input_tokens": ctx.prompt_tokens, "output_tokens": output}}
    if not ctx.stream:
        return json_response(message, cut_after=reply.cut_stream_after)

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
    return sse_response(events, cut_after=reply.cut_stream_after)


def _deltas(block: dict[str, Any]) -> list[dict[str, Any]]:
    if block["type"] == "thinking":
        return [{"type": "thinking_delta", "thinking": block["thinking"]},
                {"type": "signature_delta", "signature": block["signature"]}]
    if block["type"] == "text":
        text = block["text"]
        return [{"type": "text_delta", "text": text[at:at + CHUNK]} for at in range(0, len(text), CHUNK)]
    return [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
