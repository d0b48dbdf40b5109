"""The OpenAI Chat Completions dialect (``openai-chat``, ``qwen-vllm``, ``glm``, ``mistral``):
the completion and its SSE chunks, and the ``{"error": {...}}`` body OpenAI-style servers
answer a bad request with."""

from __future__ import annotations

import json
import time
from typing import Any

from starlette.responses import Response

from chatconform.providers import get_provider
from chatconform.serve.replies import Context, Reply, call_id, completion_tokens
from chatconform.serve.stream import json_response, sse_event, sse_response

#: The error ``type`` OpenAI gives each status (anything else 5xx is a server error).
_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
          404: "not_found_error", 409: "conflict_error", 422: "invalid_request_error", 429: "rate_limit_error"}
#: The ``code`` a provider puts beside its message (Z.ai: 1214 on every invalid ``messages``).
_CODES = {"glm": "1214"}
#: Characters of text per content chunk of a stream.
CHUNK = 16


def error(status: int, message: str, provider: str) -> Response:
    kind = _TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    code = _CODES.get(provider) if status == 400 else None
    return json_response({"error": {"message": message, "type": kind, "param": None, "code": code}}, status=status)


def wants_stream(body: dict, query: dict[str, str]) -> bool:
    return body.get("stream") is True


def include_usage(body: dict) -> bool:
    options = body.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


def tool_names(body: dict) -> list[str]:
    names = []
    for tool in body.get("tools") or ():
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.append(function["name"])
    return names


def call_ids(reply: Reply, ctx: Context) -> list[str]:
    """Call ids as the provider makes them: Mistral's are 9 letters and digits (rule M6)."""
    short = get_provider(ctx.provider).short_tool_call_ids
    ids = [call_id("" if short else "call_", ctx.conversation, ctx.turn, i, call)
           for i, call in enumerate(reply.tool_calls)]
    return [i[:9] if short and call.id is None else i for i, call in zip(ids, reply.tool_calls, strict=True)]


def answer(reply: Reply, ctx: Context) -> Response:
    ids = call_ids(reply, ctx)
    ident = f"chatcmpl-{ctx.conversation[:12]}-{ctx.turn}"
    created = int(time.time())
    finish = "tool_calls" if reply.tool_calls else "stop"
    usage = {"prompt_tokens": ctx.prompt_tokens, "completion_tokens": completion_tokens(reply),
             "total_tokens": ctx.prompt_tokens + completion_tokens(reply)}
    if not ctx.stream:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if reply.thinking is not None:
            message["reasoning_content"] = reply.thinking
        if reply.tool_calls:
            message["tool_calls"] = [
                {"id": i, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                for i, c in zip(ids, reply.tool_calls, strict=True)]
        return json_response({"id": ident, "object": "chat.completion", "created": created, "model": ctx.model,
                              "choices": [{"index": 0, "message": message, "finish_reason": finish,
                                           "logprobs": None}], "usage": usage}, cut_after=reply.cut_stream_after)

    def chunk(delta: dict, finish_reason: str | None = None) -> bytes:
        return sse_event({"id": ident, "object": "chat.completion.chunk", "created": created, "model": ctx.model,
                          "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason,
                                       "logprobs": None}]})

    events = [chunk({"role": "assistant", "content": ""})]
    if reply.thinking is not None:
        events.append(chunk({"reasoning_content": reply.thinking}))
    text = reply.text or ""
    events += [chunk({"content": text[at:at + CHUNK]}) for at in range(0, len(text), CHUNK)]
    for index, (ident_, call) in enumerate(zip(ids, reply.tool_calls, strict=True)):
        events.append(chunk({"tool_calls": [{"index": index, "id": ident_, "type": "function",
                                             "function": {"name": call.name, "arguments": ""}}]}))
        events.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": json.dumps(call.arguments)}}]}))
    events.append(chunk({}, finish))
    if ctx.include_usage:
        events.append(sse_event({"id": ident, "object": "chat.completion.chunk", "created": created,
                                 "model": ctx.model, "choices": [], "usage": usage}))
    events.append(sse_event("[DONE]"))
    return sse_response(events, cut_after=reply.cut_stream_after)
