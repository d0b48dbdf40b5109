"""The Gemini API dialect (``gemini``): ``generateContent``, ``streamGenerateContent`` (SSE with
``alt=sse``, else one JSON array of the chunks), and the ``{"error": {"code", "message",
"status"}}`` body of Google APIs."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from chatconform.serve.replies import Context, Reply, completion_tokens
from chatconform.serve.stream import json_response, sse_event, sse_response

_STATUSES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
             409: "ABORTED", 429: "RESOURCE_EXHAUSTED", 499: "CANCELLED", 500: "INTERNAL", 501: "NOT_IMPLEMENTED",
             503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}
#: The two methods of the route ``/v1beta/models/{model}:{method}``.
METHODS = ("generateContent", "streamGenerateContent")
CHUNK = 16


def error(status: int, message: str, provider: str) -> Response:
    kind = _STATUSES.get(status, "INTERNAL" if status >= 500 else "FAILED_PRECONDITION")
    return json_response({"error": {"code": status, "message": message, "status": kind}}, status=status)


def tool_names(body: dict) -> list[str]:
    names = []
    for tool in body.get("tools") or ():
        declarations = (tool.get("functionDeclarations") or tool.get("function_declarations") or ()
                        if isinstance(tool, dict) else ())
        names += [d["name"] for d in declarations if isinstance(d, dict) and isinstance(d.get("name"), str)]
    return names


def call_ids(reply: Reply, ctx: Context) -> list[str]:
    """Gemini sends no call ids of its own: only those a script names."""
    return [call.id for call in reply.tool_calls if call.id]


def _parts(reply: Reply) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if reply.thinking is not None:
        parts.append({"text": reply.thinking, "thought": True})
    if reply.text is not None:
        parts.append({"text": reply.text})
    for call in reply.tool_calls:
        function: dict[str, Any] = {"name": call.name, "args": call.arguments}
        if call.id:
            function["id"] = call.id
        parts.append({"functionCall": function})
    return parts


def answer(reply: Reply, ctx: Context, *, sse: bool = True) -> Response:
    output = completion_tokens(reply)
    usage = {"promptTokenCount": ctx.prompt_tokens, "candidatesTokenCount": output,
             "totalTokenCount": ctx.prompt_tokens + output}
    ident = f"{ctx.conversation[:12]}{ctx.turn}"

    def response(parts: list[dict[str, Any]], last: bool) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": ctx.model, "responseId": ident}
        if last:
            candidate["finishReason"] = "STOP"
            chunk["usageMetadata"] = usage
        return chunk

    parts = _parts(reply)
    if not ctx.stream:
        return json_response(response(parts, True), cut_after=reply.cut_stream_after)
    pieces: list[list[dict[str, Any]]] = []
    for part in parts:
        text = part.get("text")
        if isinstance(text, str) and len(text) > CHUNK:
            pieces += [[{**part, "text": text[at:at + CHUNK]}] for at in range(0, len(text), CHUNK)]
        else:
            pieces.append([part])
    pieces = pieces or [[]]
    chunks = [response(piece, index == len(pieces) - 1) for index, piece in enumerate(pieces)]
    if not sse:
        return json_response(chunks, cut_after=reply.cut_stream_after)
    return sse_response((sse_event(c) for c in chunks), cut_after=reply.cut_stream_after)
