"""The OpenAI Chat Completions dialect (``openai-chat``, ``qwen-vllm``, ``glm``, ``mistral``):
``{"messages": [...]}`` with system and tool roles; the completion and its SSE chunks, and
the ``{"error": {...}}`` body OpenAI-style servers answer a bad request with.

What one provider adds is a field of its profile: Mistral's 9-character call ids
(``short_tool_call_ids``, M6) and prefill mark (``marks_prefill``, M2), a tool message's
``name`` (``names_tool_results``), Qwen's escaped ``<tool_response>`` user text
(``escapes_tool_response_text``, Q2), vLLM's bare ``image_url`` string
(``image_url_as_string``), GLM's error code (``error_code``).
"""

from __future__ import annotations

import hashlib
import json
import re
import string
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from chatconform.dialects.base import (
    BodyTurn,
    Call,
    CallNames,
    Dialect,
    Image,
    Reasoning,
    RenderHooks,
    SentFile,
    Text,
    Turn,
    dicts,
    files,
    inline_bytes,
    is_error_text,
    link,
    list_of,
    reasoning_token,
    result_text,
    str_of,
    text_blocks,
)
from chatconform.dialects.http import (
    DEFAULT_TEXT,
    SERVED_MODEL,
    Answer,
    Context,
    Reply,
    call_id,
    completion_tokens,
    embedding,
    embedding_base64,
    json_answer,
    sse_answer,
    sse_event,
    tokens,
)

if TYPE_CHECKING:
    from chatconform.providers.profile import Provider

__all__ = ["DIALECT", "mistral_tool_call_id"]

_MISTRAL_ID = re.compile(r"[a-zA-Z0-9]{9}")
_BASE62 = string.digits + string.ascii_letters


def mistral_tool_call_id(tool_call_id: str) -> str:
    """The id Mistral sees for ``tool_call_id``: kept if already 9 ``[a-zA-Z0-9]``,
    else 9 base62 digits of its SHA-256. A pure function, so checks can map ids too."""
    if _MISTRAL_ID.fullmatch(tool_call_id):
        return tool_call_id
    number = int.from_bytes(hashlib.sha256(tool_call_id.encode()).digest(), "big")
    digits = []
    for _ in range(9):
        number, digit = divmod(number, 62)
        digits.append(_BASE62[digit])
    return "".join(digits)


def _not_a_tool_response(text: str) -> str:
    """User text that Qwen's chat template would read as a tool result, with its opening
    ``<`` escaped; any other text unchanged.

    The template takes a user message that is only a ``<tool_response>`` wrapper for a tool
    result: it is not a user query (a conversation of nothing else is refused with "No user
    query found in messages.", rule Q2 in docs/provider-rules.md), and a user could forge a
    tool's answer with it. Escaping keeps every character readable, as pydantic-ai escapes a
    ``<system>`` tag in user text.
    """
    stripped = text.strip()
    if not (stripped.startswith("<tool_response>") and stripped.endswith("</tool_response>")):
        return text
    at = len(text) - len(text.lstrip())
    return text[:at] + "&lt;" + text[at + 1:]


def _user_content(hooks: RenderHooks, items: list, profile: Provider) -> str | list[dict]:
    if all(isinstance(item, Text) for item in items):
        return "\n\n".join(item.text for item in items)
    parts: list[dict] = []
    for item in items:
        if isinstance(item, Text):
            parts.append({"type": "text", "text": item.text})
            continue
        url = item.url or f"data:{item.media_type};base64,{hooks.inline_data(item.data)}"
        kind = "image_url" if isinstance(item, Image) else hooks.file_part(item, profile)
        if kind is None:
            parts.append({"type": "text", "text": url})
        elif kind == "file":
            parts.append({"type": "file", "file": {"filename": f"{item.kind}.{item.format}", "file_data": url}})
        elif kind == "input_audio":
            parts.append({"type": "input_audio",
                          "input_audio": {"data": hooks.inline_data(item.data), "format": item.format}})
        else:
            parts.append({"type": kind, kind: url if profile.image_url_as_string else {"url": url}})
    return parts


# -- reading a body back ------------------------------------------------------------------------

_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant",
          "tool": "tool", "function": "tool"}


#: The fields an assistant message carries reasoning in: DeepSeek's and Kimi's
#: ``reasoning_content``, OpenRouter's ``reasoning_details``, and ``reasoning`` (Groq's name).
_REASONING_KEYS = ("reasoning_content", "reasoning_details", "reasoning")

_FILE_PARTS = ("image_url", "document_url", "audio_url", "video_url")


def _media(content: Any) -> list[SentFile]:
    found: list[SentFile | None] = []
    for part in dicts(content):
        kind = str_of(part.get("type"))
        value = part.get(kind) if kind else None
        if kind in _FILE_PARTS:
            found.append(link(value.get("url") if isinstance(value, dict) else value))
        elif kind == "input_audio" and isinstance(value, dict):
            found.append(inline_bytes(value.get("data")))
        elif kind == "file" and isinstance(value, dict):
            data = value.get("file_data")
            found.append(link(value.get("file_id")) if not data else
                         link(data) if isinstance(data, str) and data.startswith("data:") else inline_bytes(data))
    return [file for file in found if file]


# -- answering over HTTP ------------------------------------------------------------------------

#: The error ``type`` OpenAI gives each status (anything else 5xx is a server error).
_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
          404: "not_found_error", 409: "conflict_error", 422: "invalid_request_error", 429: "rate_limit_error"}
#: Characters of text per content chunk of a stream.
CHUNK = 16


def _model(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": 0, "owned_by": "chatconform-serve"}


def _inputs(value: Any) -> list[str]:
    """The texts of an embeddings or completions request: a string, a list of them, or token
    arrays (each read as its numbers' text)."""
    if isinstance(value, str):
        return [value]
    items = value if isinstance(value, list) else []
    if items and all(isinstance(i, int) for i in items):
        return [json.dumps(items)]
    return [i if isinstance(i, str) else json.dumps(i) for i in items] or [""]


#: OpenRouter's ``format`` of a reasoning detail, by the model behind it (first match wins).
_DETAIL_FORMATS = ((re.compile(r"gemini"), "google-gemini-v1"),
                   (re.compile(r"claude|anthropic"), "anthropic-claude-v1"),
                   (re.compile(r"(^|/)(gpt|o[1-9])|openai/"), "openai-responses-v1"))


def _reasoning(reply: Reply, ctx: Context) -> dict[str, Any]:
    """The reasoning fields of an answer with thinking: OpenRouter's ``reasoning`` and
    ``reasoning_details`` (one signed text detail, in the format of the model behind it, which
    clients send back unchanged), else the provider's own field (``answer_reasoning``), or none
    where its answers carry no reasoning (OpenAI's)."""
    if reply.thinking is None:
        return {}
    if ctx.profile.reasoning_slot != "reasoning_details":
        field = ctx.profile.answer_reasoning
        return {field: reply.thinking} if field else {}
    form = next((name for pattern, name in _DETAIL_FORMATS if pattern.search(ctx.model)), "unknown")
    detail = {"type": "reasoning.text", "text": reply.thinking,
              "signature": hashlib.sha256(reply.thinking.encode()).hexdigest(), "format": form, "index": 0}
    return {"reasoning": reply.thinking, "reasoning_details": [detail]}


class OpenAIChat(Dialect):
    name = "openai_chat"
    routes = ("/v1/chat/completions",)
    base_path = "/v1"
    extra_routes = (("GET", "/v1/models"), ("GET", "/v1/models/{model:path}"), ("POST", "/v1/embeddings"),
                    ("POST", "/v1/completions"))

    def canned(self, method: str, path: str, params: Mapping[str, str], body: Any, ctx: Context) -> Answer:
        """The model list, one model, embeddings (as floats, or base64 as the openai SDK asks by
        default) and a legacy completion (streamed when asked)."""
        request = body if isinstance(body, dict) else {}
        if path == "/v1/models":
            return json_answer({"object": "list", "data": [_model(SERVED_MODEL)]})
        if path == "/v1/models/{model:path}":
            return json_answer(_model(params["model"]))
        texts = _inputs(request.get("input") if path == "/v1/embeddings" else request.get("prompt"))
        used = sum(tokens(t) for t in texts)
        if path == "/v1/embeddings":
            vectors = [embedding(t, request.get("dimensions")) for t in texts]
            coded = request.get("encoding_format") == "base64"
            return json_answer({"object": "list", "model": ctx.model, "usage": {"prompt_tokens": used,
                                                                                  "total_tokens": used},
                                "data": [{"object": "embedding", "index": i,
                                          "embedding": embedding_base64(v) if coded else v}
                                         for i, v in enumerate(vectors)]})
        ident = f"cmpl-{hashlib.sha256(json.dumps(texts).encode()).hexdigest()[:24]}"
        choices = [{"text": DEFAULT_TEXT, "index": i, "logprobs": None, "finish_reason": "stop"}
                   for i in range(len(texts))]
        completion = {"id": ident, "object": "text_completion", "created": int(time.time()), "model": ctx.model}
        if not ctx.stream:
            return json_answer(completion | {"choices": choices, "usage": {
                "prompt_tokens": used, "completion_tokens": len(texts), "total_tokens": used + len(texts)}})
        return sse_answer([*(sse_event(completion | {"choices": [choice]}) for choice in choices),
                           sse_event("[DONE]")])

    def render(self, hooks: RenderHooks, profile: Provider, system: str | None, turns: list[Turn]) -> dict:
        fix_id = mistral_tool_call_id if profile.short_tool_call_ids else str
        messages: list[dict] = []
        if system is not None:
            messages.append({"role": "system", "content": system})
        for turn in turns:
            if turn.role == "system":  # only the known-bug fakes leave system turns in place
                messages.append({"role": "system", "content": "\n\n".join(i.text for i in turn.items)})
            elif turn.role == "user":
                content = _user_content(hooks, turn.items, profile)
                if profile.escapes_tool_response_text and isinstance(content, str):
                    content = _not_a_tool_response(content)
                messages.append({"role": "user", "content": content})
            elif turn.role == "assistant":
                message: dict = {"role": "assistant"}
                texts = [item.text for item in turn.items if isinstance(item, Text)]
                calls = [item for item in turn.items if isinstance(item, Call)]
                reasoning = [item for item in turn.items if isinstance(item, Reasoning)]
                if texts:
                    message["content"] = "\n\n".join(texts)
                if reasoning and profile.reasoning_slot == "reasoning_details":
                    message["reasoning_details"] = [item.details for item in reasoning]
                elif reasoning:  # reasoning_content: the turn's reasoning texts, "" where it had none
                    message["reasoning_content"] = "\n\n".join(item.text for item in reasoning if item.text)
                if calls:
                    message["tool_calls"] = [
                        {"id": fix_id(c.id), "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                        for c in calls
                    ]
                messages.append(message)
            else:
                for result in turn.items:
                    sent = {"error": result.content} if result.error else result.content
                    message = {"role": "tool", "tool_call_id": fix_id(result.id), "content": result_text(sent)}
                    if profile.names_tool_results:
                        message["name"] = result.name
                    messages.append(message)
        if profile.marks_prefill and len(messages) > 1 and messages[-1]["role"] == "assistant":
            messages[-1]["prefix"] = True  # a prefill (M2); only the last may say so (M3)
        return {"messages": messages}

    def read(self, body: dict) -> Iterator[BodyTurn]:
        names = CallNames()
        for i, message in enumerate(list_of(body.get("messages"))):
            role = _ROLES.get(str_of(message.get("role"))) if isinstance(message, dict) else None
            if role is None:
                continue
            texts = text_blocks(message.get("content"), typed=False)
            media = _media(message.get("content"))
            calls: list[tuple[str, str]] = []
            results: list[tuple[str, str]] = []
            if role == "assistant":
                for call in dicts(message.get("tool_calls")):
                    function = call.get("function") if isinstance(call.get("function"), dict) else call.get("custom")
                    name = str_of(function.get("name")) if isinstance(function, dict) else ""
                    calls.append(names.call(str_of(call.get("id")), name))
                legacy = message.get("function_call")
                if isinstance(legacy, dict):
                    calls.append(("", str_of(legacy.get("name"))))
            elif role == "tool":
                if message["role"] == "function":
                    results.append(("", str_of(message.get("name"))))
                else:
                    results.append(names.result(str_of(message.get("tool_call_id")), str_of(message.get("name"))))
            errors = (0,) if role == "tool" and is_error_text(message.get("content")) else ()
            reasoning = tuple(reasoning_token({key: message[key]}) for key in _REASONING_KEYS
                              if role == "assistant" and key in message)
            yield BodyTurn(role, tuple(texts), tuple(calls), tuple(results), f"$.messages[{i}]",
                           error_results=errors, reasoning=reasoning, **files(media))

    def error(self, status: int, message: str, profile: Provider) -> Answer:
        kind = _TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
        code = profile.error_code if status == 400 else None
        return json_answer({"error": {"message": message, "type": kind, "param": None, "code": code}}, status=status)

    def include_usage(self, body: dict) -> bool:
        options = body.get("stream_options")
        return isinstance(options, dict) and options.get("include_usage") is True

    def tool_names(self, body: dict) -> list[str]:
        return list(self.tool_schemas(body))

    def tool_schemas(self, body: dict) -> dict[str, dict]:
        """``tools[].function.parameters``; a function without it takes no arguments."""
        schemas = {}
        for tool in body.get("tools") or ():
            function = tool.get("function") if isinstance(tool, dict) else None
            if isinstance(function, dict) and isinstance(function.get("name"), str):
                schemas[function["name"]] = self.parameters(function.get("parameters"))
        return schemas

    def call_ids(self, reply: Reply, ctx: Context) -> list[str]:
        """Call ids as the provider makes them: Mistral's are 9 letters and digits (rule M6)."""
        short = ctx.profile.short_tool_call_ids
        ids = [call_id("" if short else "call_", ctx.conversation, ctx.turn, i, call)
               for i, call in enumerate(reply.tool_calls)]
        return [i[:9] if short and call.id is None else i for i, call in zip(ids, reply.tool_calls, strict=True)]

    def answer(self, reply: Reply, ctx: Context) -> Answer:
        ids = self.call_ids(reply, ctx)
        ident = f"chatcmpl-{ctx.conversation[:12]}-{ctx.turn}"
        created = int(time.time())
        finish = "tool_calls" if reply.tool_calls else "stop"
        usage = {"prompt_tokens": ctx.prompt_tokens, "completion_tokens": completion_tokens(reply),
                 "total_tokens": ctx.prompt_tokens + completion_tokens(reply)}
        if not ctx.stream:
            message: dict[str, Any] = {"role": "assistant", "content": reply.text, **_reasoning(reply, ctx)}
            if reply.tool_calls:
                message["tool_calls"] = [
                    {"id": i, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                    for i, c in zip(ids, reply.tool_calls, strict=True)]
            return json_answer({"id": ident, "object": "chat.completion", "created": created, "model": ctx.model,
                                "choices": [{"index": 0, "message": message, "finish_reason": finish,
                                             "logprobs": None}], "usage": usage}, cut_after=reply.cut_stream_after)

        def chunk(delta: dict, finish_reason: str | None = None) -> bytes:
            return sse_event({"id": ident, "object": "chat.completion.chunk", "created": created, "model": ctx.model,
                              "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason,
                                           "logprobs": None}]})

        events = [chunk({"role": "assistant", "content": ""})]
        if reasoning := _reasoning(reply, ctx):
            events.append(chunk(reasoning))
        text = reply.text or ""
        events += [chunk({"content": text[at:at + CHUNK]}) for at in range(0, len(text), CHUNK)]
        for index, (ident_, call) in enumerate(zip(ids, reply.tool_calls, strict=True)):
            events.append(chunk({"tool_calls": [{"index": index, "id": ident_, "type": "function",
                                                 "function": {"name": call.name, "arguments": ""}}]}))
            events.append(chunk({"tool_calls": [{"index": index,
                                                 "function": {"arguments": json.dumps(call.arguments)}}]}))
        events.append(chunk({}, finish))
        if ctx.include_usage:
            events.append(sse_event({"id": ident, "object": "chat.completion.chunk", "created": created,
                                     "model": ctx.model, "choices": [], "usage": usage}))
        events.append(sse_event("[DONE]"))
        return sse_answer(events, cut_after=reply.cut_stream_after)


DIALECT = OpenAIChat()
