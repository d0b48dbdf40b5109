"""The Bedrock Converse dialect (``bedrock-converse``): the Converse response, and the AWS JSON
error (the exception's name in ``x-amzn-ErrorType``, the text in ``{"message": ...}``), which
botocore raises as ``client.exceptions.<name>``. ConverseStream (AWS's binary event stream)
is not served."""

from __future__ import annotations

import hashlib
from typing import Any

from starlette.responses import Response

from .replies import Context, Reply, call_id, completion_tokens
from .stream import json_response

_ERRORS = {400: "ValidationException", 403: "AccessDeniedException", 404: "ResourceNotFoundException",
           408: "ModelTimeoutException", 424: "ModelErrorException", 429: "ThrottlingException",
           503: "ServiceUnavailableException"}


def error(status: int, message: str, provider: str) -> Response:
    name = _ERRORS.get(status, "InternalServerException" if status >= 500 else "ValidationException")
    return json_response({"message": message}, status=status, headers={"x-amzn-ErrorType": name})


def tool_names(body: dict) -> list[str]:
    config = body.get("toolConfig")
    tools = config.get("tools") if isinstance(config, dict) else None
    names = []
    for tool in tools or ():
        spec = tool.get("toolSpec") if isinstance(tool, dict) else None
        if isinstance(spec, dict) and isinstance(spec.get("name"), str):
            names.append(spec["name"])
    return names


def call_ids(reply: Reply, ctx: Context) -> list[str]:
    return [call_id("tooluse_", ctx.conversation, ctx.turn, i, call) for i, call in enumerate(reply.tool_calls)]


def answer(reply: Reply, ctx: Context) -> Response:
    content: list[dict[str, Any]] = []
    if reply.thinking is not None:
        signature = hashlib.sha256(reply.thinking.encode()).hexdigest()
        content.append({"reasoningContent": {"reasoningText": {"text": reply.thinking, "signature": signature}}})
    if reply.text is not None:
        content.append({"text": reply.text})
    content += [{"toolUse": {"toolUseId": i, "name": c.name, "input": c.arguments}}
                for i, c in zip(call_ids(reply, ctx), reply.tool_calls, strict=True)]
    output = completion_tokens(reply)
    return json_response({
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": "tool_use" if reply.tool_calls else "end_turn",
        "usage": {"inputTokens": ctx.prompt_tokens, "outputTokens": output,
                  "totalTokens": ctx.prompt_tokens + output},
        "metrics": {"latencyMs": 1},
    }, cut_after=reply.cut_stream_after)
