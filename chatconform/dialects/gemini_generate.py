"""The Gemini API dialect (``gemini``): ``contents`` of user and model turns beside
``systemInstruction``; ``generateContent``, ``streamGenerateContent`` (SSE with ``alt=sse``,
else one JSON array of the chunks), and the ``{"error": {"code", "message", "status"}}``
body of Google APIs. What the rendering sends and why (ids, the placeholder thought
signature) is the reference policy's "Gemini." point (``chatconform.reference.payload``).
"""

from __future__ import annotations

import base64
import hashlib
import re
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
    inline_bytes,
    link,
    list_of,
    neutral_role,
    reasoning_token,
    str_of,
    system_slot,
)
from chatconform.dialects.http import (
    SERVED_MODEL,
    Answer,
    Context,
    Reply,
    RouteCall,
    completion_tokens,
    embedding,
    json_answer,
    sse_answer,
    sse_event,
)

if TYPE_CHECKING:
    from chatconform.providers.profile import Provider

__all__ = ["CANNED_METHODS", "DIALECT", "GEMINI_THOUGHT_SIGNATURE_PLACEHOLDER", "METHODS"]

#: Google's documented value for a function call replayed without a real signature.
GEMINI_THOUGHT_SIGNATURE_PLACEHOLDER = "skip_thought_signature_validator"

_STATUSES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
             409: "ABORTED", 429: "RESOURCE_EXHAUSTED", 499: "CANCELLED", 500: "INTERNAL", 501: "NOT_IMPLEMENTED",
             503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}
#: The two methods of the route ``/v1beta/models/{model}:{method}``.
METHODS = ("generateContent", "streamGenerateContent")
#: The methods of that route the SDK calls besides the chat, answered by ``canned``, not judged.
CANNED_METHODS = ("countTokens", "embedContent", "batchEmbedContents")
CHUNK = 16


def _alias(mapping: dict, camel: str, snake: str) -> Any:
    value = mapping.get(camel)
    return mapping.get(snake) if value is None else value


def _string_leaves(value: Any) -> Iterator[str]:
    """Text of a functionResponse ``response`` object: its string values, depth first."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))


def _parts(reply: Reply, model: str) -> list[dict[str, Any]]:
    """The answer's parts. A thinking model's first function call carries a thoughtSignature
    (base64), as Gemini 3 always and Gemini 2.5 with thinking give one, for the client to send
    back on that part (G9)."""
    parts: list[dict[str, Any]] = []
    if reply.thinking is not None:
        parts.append({"text": reply.thinking, "thought": True})
    if reply.text is not None:
        parts.append({"text": reply.text})
    signed = reply.thinking is not None or re.search(r"(^|/)gemini-[3-9]", model) is not None
    for n, call in enumerate(reply.tool_calls):
        function: dict[str, Any] = {"name": call.name, "args": call.arguments}
        if call.id:
            function["id"] = call.id
        part: dict[str, Any] = {"functionCall": function}
        if signed and n == 0:
            seed = (reply.thinking or "") + call.name
            part["thoughtSignature"] = base64.b64encode(hashlib.sha256(seed.encode()).digest()).decode()
        parts.append(part)
    return parts


def _model(name: str) -> dict[str, Any]:
    return {"name": f"models/{name}", "displayName": name, "version": "001",
            "supportedGenerationMethods": [*METHODS, *CANNED_METHODS]}


def _content_text(content: Any) -> str:
    return "\n".join(p["text"] for p in dicts(content.get("parts")) if isinstance(p.get("text"), str)) \
        if isinstance(content, dict) else ""


class GeminiGenerate(Dialect):
    name = "gemini_generate"
    routes = ("/{version}/models/{model}:{method}",)
    extra_routes = (("GET", "/{version}/models"), ("GET", "/{version}/models/{model}"))
    markers = ("x-goog-api-client", "x-goog-api-key")
    #: "the total request size (including the files, text prompt, system instructions, etc.)"
    #: is at most 20 MB inline (https://ai.google.dev/gemini-api/docs/image-understanding).
    max_request_bytes = 20 * 2**20

    def too_large(self, size: int, limit: int, profile: Provider) -> Answer:
        """400 ``INVALID_ARGUMENT`` in the words of Google's API front end."""
        return _error(400, f"Request payload size exceeds the limit: {limit} bytes.")

    def canned(self, method: str, path: str, params: Mapping[str, str], body: Any, ctx: Context) -> Answer:
        """The model list, one model, a token count (estimated from the request's length) and
        embeddings of each content's text."""
        request = body if isinstance(body, dict) else {}
        called = params.get("method")
        if called == "countTokens":
            return json_answer({"totalTokens": ctx.prompt_tokens})
        if called == "embedContent":
            return json_answer({"embedding": {"values": embedding(_content_text(request.get("content")),
                                                                  _alias(request, "outputDimensionality",
                                                                         "output_dimensionality"))}})
        if called == "batchEmbedContents":
            return json_answer({"embeddings": [
                {"values": embedding(_content_text(r.get("content")),
                                     _alias(r, "outputDimensionality", "output_dimensionality"))}
                for r in dicts(request.get("requests"))]})
        if "model" in params:
            return json_answer(_model(params["model"].removeprefix("models/")))
        return json_answer({"models": [_model(SERVED_MODEL)]})

    def render(self, hooks: RenderHooks, profile: Provider, system: str | None, turns: list[Turn]) -> dict:
        contents = []
        for turn in turns:
            parts: list[dict] = []
            signed = False
            for item in turn.items:
                if isinstance(item, Text):
                    parts.append({"text": item.text, "thoughtSignature": item.signature} if item.signature
                                 else {"text": item.text})
                elif isinstance(item, (Image, File)):
                    parts.append({"fileData": {"mimeType": item.media_type, "fileUri": item.url}} if item.url else
                                 {"inlineData": {"mimeType": item.media_type, "data": hooks.inline_data(item.data)}})
                elif isinstance(item, Call):
                    part: dict = {"functionCall": {"id": item.id, "name": item.name, "args": item.args}}
                    # The call's own signature (G9); the placeholder only on a first call without one.
                    if item.signature or not signed:
                        part["thoughtSignature"] = item.signature or GEMINI_THOUGHT_SIGNATURE_PLACEHOLDER
                        signed = True
                    parts.append(part)
                else:
                    response = ({"error": item.content} if item.error else
                                item.content if isinstance(item.content, dict) else {"output": item.content})
                    parts.append({"functionResponse": {"id": item.id, "name": item.name, "response": response}})
            contents.append({"role": "model" if turn.role == "assistant" else neutral_role(turn, profile.id),
                             "parts": parts})
        body: dict = {"contents": contents}
        if system is not None:
            body = {"systemInstruction": {"parts": [{"text": system}]}, **body}
        return body

    def read(self, body: dict) -> Iterator[BodyTurn]:
        key = "systemInstruction" if "systemInstruction" in body else "system_instruction"
        system = body.get(key)
        if isinstance(system, dict):
            system_texts = [p["text"] for p in dicts(system.get("parts")) if isinstance(p.get("text"), str)]
            yield from system_slot(tuple(system_texts), f"$.{key}")
        names = CallNames()
        for i, content in enumerate(list_of(body.get("contents"))):
            if not isinstance(content, dict) or content.get("role", "user") not in ("user", "model"):
                continue
            parts = list(dicts(content.get("parts")))
            texts: list[str] = []
            media: list[SentFile] = []
            calls: list[tuple[str, str]] = []
            results: list[tuple[str, str]] = []
            errors: list[int] = []
            reasoning: list[str] = []
            for part in parts:
                signature = _alias(part, "thoughtSignature", "thought_signature")
                if isinstance(signature, str) and signature != GEMINI_THOUGHT_SIGNATURE_PLACEHOLDER:
                    on = ("functionCall" if _alias(part, "functionCall", "function_call") is not None
                          else "text" if "text" in part else "other")
                    reasoning.append(reasoning_token({"thoughtSignature": signature, "on": on}))
                inline = _alias(part, "inlineData", "inline_data")
                linked = _alias(part, "fileData", "file_data")
                file = (inline_bytes(inline.get("data")) if isinstance(inline, dict) else None) or (
                    link(_alias(linked, "fileUri", "file_uri")) if isinstance(linked, dict) else None)
                if file:
                    media.append(file)
                call = _alias(part, "functionCall", "function_call")
                response = _alias(part, "functionResponse", "function_response")
                if isinstance(call, dict):
                    calls.append(names.call(str_of(call.get("id")), str_of(call.get("name"))))
                elif isinstance(response, dict):
                    if isinstance(response.get("response"), dict) and "error" in response["response"]:
                        errors.append(len(results))
                    results.append(names.result(str_of(response.get("id")), str_of(response.get("name"))))
                    texts.extend(_string_leaves(response.get("response")))
                elif isinstance(part.get("text"), str) and part.get("thought") is not True:
                    texts.append(part["text"])
            if content.get("role", "user") == "model":
                role = "assistant"
            else:
                role = "tool" if results and len(results) == len(parts) else "user"
            yield BodyTurn(role, tuple(texts), tuple(calls), tuple(results), f"$.contents[{i}]",
                           error_results=tuple(errors), reasoning=tuple(reasoning), **files(media))

    def route(self, path: str, params: Mapping[str, str], query: Mapping[str, str]) -> RouteCall | Answer:
        """The model and the method are in the path; ``alt=sse`` asks for server-sent events."""
        model, method = params["model"], params["method"]
        if method in CANNED_METHODS:
            return RouteCall(model=model, stream=False, judged=False)
        if method not in METHODS:
            return _error(404, f"Method {method} is not found for models/{model}.")
        return RouteCall(model=model, stream=method == "streamGenerateContent", sse=query.get("alt") == "sse")

    def error(self, status: int, message: str, profile: Provider) -> Answer:
        return _error(status, message)

    def tool_names(self, body: dict) -> list[str]:
        return list(self.tool_schemas(body))

    def tool_schemas(self, body: dict) -> dict[str, dict]:
        """Each function declaration's ``parametersJsonSchema`` (JSON Schema), else its
        ``parameters`` (Gemini's OpenAPI subset: upper-case types, ``nullable``) read as JSON Schema."""
        schemas = {}
        for tool in body.get("tools") or ():
            declarations = (tool.get("functionDeclarations") or tool.get("function_declarations") or ()
                            if isinstance(tool, dict) else ())
            for declaration in declarations:
                if not isinstance(declaration, dict) or not isinstance(declaration.get("name"), str):
                    continue
                given = declaration.get("parametersJsonSchema", declaration.get("parameters_json_schema"))
                if given is None:
                    given = _json_schema(declaration.get("parameters"))
                schemas[declaration["name"]] = self.parameters(given)
        return schemas

    def call_ids(self, reply: Reply, ctx: Context) -> list[str]:
        """Gemini sends no call ids of its own: only those a script names."""
        return [call.id for call in reply.tool_calls if call.id]

    def answer(self, reply: Reply, ctx: Context) -> Answer:
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

        parts = _parts(reply, ctx.model)
        if not ctx.stream:
            return json_answer(response(parts, True), cut_after=reply.cut_stream_after)
        pieces: list[list[dict[str, Any]]] = []
        for part in parts:
            text = part.get("text")
            if isinstance(text, str) and len(text) > CHUNK:
                pieces += [[{**part, "text": text[at:at + CHUNK]}] for at in range(0, len(text), CHUNK)]
            else:
                pieces.append([part])
        pieces = pieces or [[]]
        chunks = [response(piece, index == len(pieces) - 1) for index, piece in enumerate(pieces)]
        if not ctx.sse:
            return json_answer(chunks, cut_after=reply.cut_stream_after)
        return sse_answer((sse_event(c) for c in chunks), cut_after=reply.cut_stream_after)


def _json_schema(schema: Any) -> Any:
    """A Gemini ``Schema`` (OpenAPI 3.0's subset) as JSON Schema: ``type`` in lower case,
    ``nullable`` as a ``null`` type beside it, and so on down its properties and items."""
    if isinstance(schema, list):
        return [_json_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _json_schema(value) if key in ("items", "anyOf") else value
           for key, value in schema.items() if key not in ("nullable", "propertyOrdering", "properties")}
    if isinstance(schema.get("properties"), dict):
        out["properties"] = {name: _json_schema(sub) for name, sub in schema["properties"].items()}
    kind = schema.get("type")
    if isinstance(kind, str):
        out["type"] = kind.lower() if kind.upper() != "TYPE_UNSPECIFIED" else None
        if out["type"] is None:
            del out["type"]
        elif schema.get("nullable") is True:
            out["type"] = [out["type"], "null"]
    if "enum" in out and schema.get("nullable") is True:
        out["enum"] = [*out["enum"], None]
    return out


def _error(status: int, message: str) -> Answer:
    kind = _STATUSES.get(status, "INTERNAL" if status >= 500 else "FAILED_PRECONDITION")
    return json_answer({"error": {"code": status, "message": message, "status": kind}}, status=status)


DIALECT = GeminiGenerate()
