"""The Bedrock Converse dialect (``bedrock-converse``): ``system`` blocks beside ``messages``
of content blocks, and ``toolConfig``; the Converse response, ConverseStream's events in
AWS's binary event stream, and the AWS JSON error (the exception's name in
``x-amzn-ErrorType``, the text in ``{"message": ...}``), which botocore raises as
``client.exceptions.<name>``; ConverseStream rejects a request with the same error, before
any event. What the rendering sends and why (``toolConfig``, image URLs as text, document
names) is the reference policy's "Bedrock." point (``chatconform.reference.payload``).
"""

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
    RenderHooks,
    SentFile,
    Text,
    Turn,
    dicts,
    files,
    list_of,
    neutral_role,
    result_text,
    source_file,
    str_of,
    system_slot,
    text_blocks,
)
from chatconform.dialects.eventstream import event
from chatconform.dialects.http import (
    DEFAULT_TEXT,
    Answer,
    Context,
    Reply,
    RouteCall,
    call_id,
    completion_tokens,
    json_answer,
    stream_answer,
)

if TYPE_CHECKING:
    from chatconform.providers.profile import Provider

__all__ = ["DIALECT"]

_ERRORS = {400: "ValidationException", 403: "AccessDeniedException", 404: "ResourceNotFoundException",
           408: "ModelTimeoutException", 424: "ModelErrorException", 429: "ThrottlingException",
           503: "ServiceUnavailableException"}
#: Characters of text per delta of a stream.
CHUNK = 16
#: The blocks that carry a file.
_FILE_BLOCKS = ("image", "document", "video", "audio")


def _stream(content: list[dict[str, Any]], stop: str, usage: dict[str, int], cut_after: int | None) -> Answer:
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
    return stream_answer(events, "application/vnd.amazon.eventstream", cut_after=cut_after)


def _deltas(block: dict[str, Any]) -> list[dict[str, Any]]:
    if "reasoningContent" in block:
        reasoning = block["reasoningContent"]["reasoningText"]
        return [{"reasoningContent": {"text": reasoning["text"]}},
                {"reasoningContent": {"signature": reasoning["signature"]}}]
    if "toolUse" in block:
        return [{"toolUse": {"input": json.dumps(block["toolUse"]["input"])}}]
    text = block["text"]
    return [{"text": text[at:at + CHUNK]} for at in range(0, len(text), CHUNK)] or [{"text": ""}]


class BedrockConverse(Dialect):
    name = "bedrock_converse"
    routes = ("/model/{model_id:path}/converse", "/model/{model_id:path}/converse-stream")
    takes_image_links = False
    extra_routes = (("POST", "/model/{model_id:path}/invoke"), ("POST", "/model/{model_id:path}/count-tokens"))
    markers = ("x-amz-date",)

    def canned(self, method: str, path: str, params: Mapping[str, str], body: Any, ctx: Context) -> Answer:
        """InvokeModel in the model's own shape (Claude's Messages answer for a body with
        ``anthropic_version``, else Nova's, which is Converse's) and CountTokens."""
        if path.endswith("/count-tokens"):
            return json_answer({"inputTokens": ctx.prompt_tokens})
        usage = {"input_tokens": ctx.prompt_tokens, "output_tokens": 1}
        if isinstance(body, dict) and "anthropic_version" in body:
            ident = "msg_bdrk_" + hashlib.sha256(json.dumps(body).encode()).hexdigest()[:24]
            return json_answer({"id": ident, "type": "message", "role": "assistant",
                                "model": ctx.model, "content": [{"type": "text", "text": DEFAULT_TEXT}],
                                "stop_reason": "end_turn", "stop_sequence": None, "usage": usage})
        return json_answer({"output": {"message": {"role": "assistant", "content": [{"text": DEFAULT_TEXT}]}},
                            "stopReason": "end_turn", "usage": {"inputTokens": ctx.prompt_tokens, "outputTokens": 1,
                                                                "totalTokens": ctx.prompt_tokens + 1}})

    def render(self, hooks: RenderHooks, profile: Provider, system: str | None, turns: list[Turn]) -> dict:
        documents = 0
        messages = []
        tools: dict[str, None] = {}
        for turn in turns:
            blocks: list[dict] = []
            for item in turn.items:
                if isinstance(item, Text):
                    blocks.append({"text": item.text})
                elif isinstance(item, Image):
                    if item.url:
                        blocks.append({"text": item.url})
                    else:
                        fmt = item.media_type.split("/", 1)[1]
                        blocks.append({"image": {"format": fmt, "source": {"bytes": hooks.inline_data(item.data)}}})
                elif isinstance(item, File):
                    block = hooks.file_part(item, profile)
                    if block is None:
                        blocks.append({"text": item.url})
                    elif block == "document":
                        documents += 1
                        blocks.append({"document": {"format": item.format, "name": f"document-{documents}",
                                                    "source": {"bytes": hooks.inline_data(item.data)}}})
                    else:
                        source = {"bytes": hooks.inline_data(item.data)}
                        blocks.append({block: {"format": item.format, "source": source}})
                elif isinstance(item, Call):
                    tools[item.name] = None
                    blocks.append({"toolUse": {"toolUseId": item.id, "name": item.name, "input": item.args}})
                else:
                    tools[item.name] = None
                    result: dict = {"toolUseId": item.id, "content": [{"text": result_text(item.content)}]}
                    if item.error:
                        result["status"] = "error"
                    blocks.append({"toolResult": result})
            if any("document" in block for block in blocks) and not any("text" in block for block in blocks):
                # A message with a document must hold a text block too (B7): its name, visible.
                blocks.append({"text": f"(document-{documents})"})
            messages.append({"role": neutral_role(turn, profile.id), "content": blocks})
        body: dict = {"messages": messages}
        if system is not None:
            body = {"system": [{"text": system}], **body}
        if tools:
            body["toolConfig"] = {"tools": [
                {"toolSpec": {"name": name, "inputSchema": {"json": {"type": "object"}}}} for name in tools
            ]}
        return body

    def read(self, body: dict) -> Iterator[BodyTurn]:
        if isinstance(body.get("system"), list):
            system_texts = [b["text"] for b in dicts(body["system"]) if isinstance(b.get("text"), str)]
            yield from system_slot(tuple(system_texts), "$.system")
        names = CallNames()
        for i, message in enumerate(list_of(body.get("messages"))):
            if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
                continue
            blocks = [b for b in dicts(message.get("content")) if "cachePoint" not in b]
            texts: list[str] = []
            media: list[SentFile] = []
            calls: list[tuple[str, str]] = []
            results: list[tuple[str, str]] = []
            errors: list[int] = []
            for block in blocks:
                use, result = block.get("toolUse"), block.get("toolResult")
                file = next((block[k] for k in _FILE_BLOCKS if isinstance(block.get(k), dict)), None)
                if isinstance(block.get("text"), str):
                    texts.append(block["text"])
                elif file is not None and (found := source_file(file.get("source"))):
                    media.append(found)
                elif isinstance(use, dict):
                    calls.append(names.call(str_of(use.get("toolUseId")), str_of(use.get("name"))))
                elif isinstance(result, dict):
                    if result.get("status") == "error":
                        errors.append(len(results))
                    results.append(names.result(str_of(result.get("toolUseId"))))
                    texts.extend(text_blocks(result.get("content"), typed=False))
            role = message["role"]
            if role == "user" and results and len(results) == len(blocks):
                role = "tool"
            yield BodyTurn(role, tuple(texts), tuple(calls), tuple(results), f"$.messages[{i}]",
                           error_results=tuple(errors), **files(media))

    def route(self, path: str, params: Mapping[str, str], query: Mapping[str, str]) -> RouteCall | Answer:
        """The model is in the path; ``converse-stream`` asks for the event stream."""
        return RouteCall(model=params["model_id"], stream=path.endswith("/converse-stream"))

    def error(self, status: int, message: str, profile: Provider) -> Answer:
        name = _ERRORS.get(status, "InternalServerException" if status >= 500 else "ValidationException")
        return json_answer({"message": message}, status=status, headers={"x-amzn-ErrorType": name})

    def tool_names(self, body: dict) -> list[str]:
        config = body.get("toolConfig")
        tools = config.get("tools") if isinstance(config, dict) else None
        names = []
        for tool in tools or ():
            spec = tool.get("toolSpec") if isinstance(tool, dict) else None
            if isinstance(spec, dict) and isinstance(spec.get("name"), str):
                names.append(spec["name"])
        return names

    def call_ids(self, reply: Reply, ctx: Context) -> list[str]:
        return [call_id("tooluse_", ctx.conversation, ctx.turn, i, call) for i, call in enumerate(reply.tool_calls)]

    def answer(self, reply: Reply, ctx: Context) -> Answer:
        content: list[dict[str, Any]] = []
        if reply.thinking is not None:
            signature = hashlib.sha256(reply.thinking.encode()).hexdigest()
            content.append({"reasoningContent": {"reasoningText": {"text": reply.thinking, "signature": signature}}})
        if reply.text is not None:
            content.append({"text": reply.text})
        content += [{"toolUse": {"toolUseId": i, "name": c.name, "input": c.arguments}}
                    for i, c in zip(self.call_ids(reply, ctx), reply.tool_calls, strict=True)]
        output = completion_tokens(reply)
        stop = "tool_use" if reply.tool_calls else "end_turn"
        usage = {"inputTokens": ctx.prompt_tokens, "outputTokens": output, "totalTokens": ctx.prompt_tokens + output}
        if ctx.stream:
            return _stream(content, stop, usage, reply.cut_stream_after)
        return json_answer({"output": {"message": {"role": "assistant", "content": content}}, "stopReason": stop,
                            "usage": usage, "metrics": {"latencyMs": 1}}, cut_after=reply.cut_stream_after)


DIALECT = BedrockConverse()
