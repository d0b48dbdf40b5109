"""The Bedrock Converse dialect (``bedrock-converse``): the Converse response, ConverseStream's
events in AWS's binary event stream, and the AWS JSON error (the exception's name in
``x-amzn-ErrorType``, the text in ``{"message": ...}``), which botocore raises as
``client.exceptions.<name>``; ConverseStream rejects a request with the same error, before
any event."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from starlette.responses import Response

from chatconform.serve.eventstream import event
from chatconform.serve.replies import Context, Reply, call_id, completion_tokens
from chatconform.serve.stream import json_response, stream_response

_ERRORS = {400: "ValidationException", 403: "AccessDeniedException", 404: "ResourceNotFoundException",
           408: "ModelTimeoutException", 424: "ModelErrorException", 429: "ThrottlingException",
           503: "ServiceUnavailableException"}
#: Characters of text per delta of a stream.
CHUNK = 16


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
    stop = "tool_use" if reply.tool_calls else "end_turn"
    usage = {"inputTokens": ctx.prompt_tokens, "outputTokens": output, "totalTokens": ctx.prompt_tokens + output}
    if ctx.stream:
        return _stream(content, stop, usage, reply.cut_stream_after)
    return json_response({"output": {"message": {"role": "assistant", "content": content}}, "stopReason": stop,
                          "usage": usage, "metrics": {"latencyMs": 1}}, cut_after=reply.cut_stream_after)


def _stream(content: list[dict[str, Any]], stop: str, usage: dict[str, int], cut_after: int | None) -> Response:
    """ConverseStream's events for the blocks of a Converse message. As Bedrock does, only a
    tool use opens with ``contentBlockStart``; a text or reasoning block opens with its first delta."""
    events = [event("messageStart", {"role": "assistant"})]
    for index, block in enumerate(content):
        if "toolUse" in block:
            start = {key: block["toolUse"][key] for key in ("toolUseId", "name")}
            events.append(event("contentBlockStart", {"start": {"toolUse": start}, "contentBlockIndex": index}))
        events += [event("contentBlockDelta", {"delta": delta, "contentBlockIndex": index}) for delta in _deltas(block)]
        events.append(event("contentBlockStop", {"contentBlockIndex": index}))
    events.append(event("messageStop", {"stopReason": stop}))
    events.append(event("metadata", {"usage": usage, "metrics": {"latencyMs": 1}}))
    return stream_response(events, "application/vnd.amazon.eventstream", cut_after=cut_after)


def _deltas(block: dict[str, Any]) -> list[dict[str, Any]]:
    if "reasoningContent" in block:
        reasoning = block["reasoningContent"]["reasoningText"]
        return [{"reasoningContent": {"text": reasoning["text"]}},
                {"reasoningContent": {"signature": reasoning["signature"]}}]
    if "toolUse" in block:
        return [{"toolUse": {"input": json.dumps(block["toolUse"]["input"])}}]
    text = block["text"]
    return [{"text": text[at:at + CHUNK]} for at in range(0, len(text), CHUNK)] or [{"text": ""}]
