"""One turn view over every request dialect, so payload checks are written once.

A check that asks "is the first non-system turn a user turn?" or "is every tool call answered?"
reads ``turn_view(body, provider)`` instead of four dialects. The view is forgiving: it reads
what it can and skips what it cannot (the schema reports malformed bodies, not this).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from chatconform.history import data_url_payload, inline_identity
from chatconform.providers import get_provider


@dataclass(frozen=True)
class Turn:
    role: str  # "system" | "user" | "assistant" | "tool"
    texts: tuple[str, ...]  # text items in order (string content counts as one item)
    tool_calls: tuple[tuple[str, str], ...]  # (id, tool name) of calls made in this turn
    tool_results: tuple[tuple[str, str], ...]  # (id, tool name or "") answered in this turn
    path: str  # e.g. "$.messages[2]", "$.system", "$.systemInstruction"
    #: Files in order: each its URL (or file id, storage location), or, for bytes sent inline,
    #: the standard base64 of the bytes the body's text decodes to (``history.inline_identity``:
    #: one spelling for the same bytes, whatever the alphabet or padding; text that is no
    #: base64 kept as it is).
    media: tuple[str, ...] = ()
    #: Positions in ``tool_results`` of the results marked as errors, in the dialect's way:
    #: Anthropic ``is_error``, Bedrock ``status: "error"``, an ``{"error": ...}`` content
    #: (the OpenAI-style tool message as JSON text, the Gemini ``response``).
    error_results: tuple[int, ...] = ()
    #: Positions in ``media`` of the files sent inline, as bytes (the others are links).
    inline: tuple[int, ...] = ()


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _dicts(value: Any) -> Iterator[dict]:
    return (item for item in _list(value) if isinstance(item, dict))


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _text_blocks(value: Any, *, typed: bool) -> list[str]:
    """Strings of a content value: a string, or text blocks (``{"type":"text"}`` when typed)."""
    if isinstance(value, str):
        return [value]
    return [
        block["text"]
        for block in _dicts(value)
        if isinstance(block.get("text"), str) and (not typed or block.get("type") == "text")
    ]


#: A file as the body sends it: its identity, and whether it travels as bytes (inline).
File = tuple[str, bool]


def _bytes(data: Any) -> File | None:
    """Inline bytes given as base64 text (Gemini's JSON takes either alphabet, google-genai
    sends the URL-safe one): the identity of the bytes it decodes to."""
    if not isinstance(data, str) or not data:
        return None
    return inline_identity(data) or data, True


def _link(url: Any) -> File | None:
    """A URL: a ``data:`` URL is its bytes, any other URL (or id) is a link."""
    if not isinstance(url, str) or not url:
        return None
    inline = data_url_payload(url)
    return _bytes(inline) if inline is not None else (url, False)


def _source_file(source: Any) -> File | None:
    """Anthropic and Bedrock file sources: inline bytes, a URL or a storage location."""
    if not isinstance(source, dict):
        return None
    for key in ("data", "bytes"):
        if isinstance(source.get(key), str):
            return _bytes(source[key])
    location = source.get("s3Location")
    return _link(source.get("url") or source.get("file_id") or
                 (location.get("uri") if isinstance(location, dict) else None))


_NO_FILES: dict[str, tuple] = {}


def _files(found: list[File]) -> dict[str, tuple]:
    """A turn's ``media`` and ``inline`` fields from its files in order."""
    if not found:  # most turns: the fields' defaults
        return _NO_FILES
    return {"media": tuple(identity for identity, _ in found),
            "inline": tuple(i for i, (_, inline) in enumerate(found) if inline)}


class _Names:
    """Tool name by call id, so a result that does not repeat the name still gets it: the
    name of the latest call with that id (an id may be reused in a later round)."""

    def __init__(self) -> None:
        self.by_id: dict[str, str] = {}

    def call(self, call_id: str, name: str) -> tuple[str, str]:
        if call_id and name:
            self.by_id[call_id] = name
        return call_id, name

    def result(self, call_id: str, name: str = "") -> tuple[str, str]:
        return call_id, name or self.by_id.get(call_id, "")


# --- OpenAI-compatible: openai-chat, qwen-vllm, glm, mistral --------------------------------

def _system_slot(texts: tuple[str, ...], path: str) -> Iterator[Turn]:
    """The provider's system slot as a turn; an empty slot (``""``, ``[]``, no parts) sends
    no system text, so it is no turn at all."""
    if any(texts):
        yield Turn("system", texts, (), (), path)


_OPENAI_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant",
                 "tool": "tool", "function": "tool"}


def _openai_turns(body: dict) -> Iterator[Turn]:
    names = _Names()
    for i, message in enumerate(_list(body.get("messages"))):
        role = _OPENAI_ROLES.get(_str(message.get("role"))) if isinstance(message, dict) else None
        if role is None:
            continue
        texts = _text_blocks(message.get("content"), typed=False)
        media = _openai_media(message.get("content"))
        calls: list[tuple[str, str]] = []
        results: list[tuple[str, str]] = []
        if role == "assistant":
            for call in _dicts(message.get("tool_calls")):
                function = call.get("function") if isinstance(call.get("function"), dict) else call.get("custom")
                name = _str(function.get("name")) if isinstance(function, dict) else ""
                calls.append(names.call(_str(call.get("id")), name))
            legacy = message.get("function_call")
            if isinstance(legacy, dict):
                calls.append(("", _str(legacy.get("name"))))
        elif role == "tool":
            if message["role"] == "function":
                results.append(("", _str(message.get("name"))))
            else:
                results.append(names.result(_str(message.get("tool_call_id")), _str(message.get("name"))))
        errors = (0,) if role == "tool" and _is_error_text(message.get("content")) else ()
        yield Turn(role, tuple(texts), tuple(calls), tuple(results), f"$.messages[{i}]", error_results=errors,
                   **_files(media))


def _is_error_text(content: Any) -> bool:
    """An OpenAI-style tool content that is a JSON object with an ``error`` member."""
    if not isinstance(content, str) or not content.lstrip().startswith("{"):
        return False
    try:
        value = json.loads(content)
    except ValueError:
        return False
    return isinstance(value, dict) and "error" in value


_OPENAI_FILE_PARTS = ("image_url", "document_url", "audio_url", "video_url")


def _openai_media(content: Any) -> list[File]:
    found: list[File | None] = []
    for part in _dicts(content):
        kind = _str(part.get("type"))
        value = part.get(kind) if kind else None
        if kind in _OPENAI_FILE_PARTS:
            found.append(_link(value.get("url") if isinstance(value, dict) else value))
        elif kind == "input_audio" and isinstance(value, dict):
            found.append(_bytes(value.get("data")))
        elif kind == "file" and isinstance(value, dict):
            data = value.get("file_data")
            found.append(_link(value.get("file_id")) if not data else
                         _link(data) if isinstance(data, str) and data.startswith("data:") else _bytes(data))
    return [file for file in found if file]


# --- Anthropic ------------------------------------------------------------------------------


def _anthropic_turns(body: dict) -> Iterator[Turn]:
    if "system" in body and isinstance(body["system"], (str, list)):
        yield from _system_slot(tuple(_text_blocks(body["system"], typed=True)), "$.system")
    names = _Names()
    for i, message in enumerate(_list(body.get("messages"))):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant", "system"):
            continue
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(_dicts(content))
        texts: list[str] = []
        media: list[File] = []
        calls: list[tuple[str, str]] = []
        results: list[tuple[str, str]] = []
        errors: list[int] = []
        for block in blocks:
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif kind in ("image", "document") and (file := _source_file(block.get("source"))):
                media.append(file)
            elif kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
                calls.append(names.call(_str(block.get("id")), _str(block.get("name"))))
            elif kind == "tool_result":
                if block.get("is_error") is True:
                    errors.append(len(results))
                results.append(names.result(_str(block.get("tool_use_id"))))
                texts.extend(_text_blocks(block.get("content"), typed=True))
                media.extend(file for inner in _dicts(block.get("content"))
                             if inner.get("type") in ("image", "document")
                             and (file := _source_file(inner.get("source"))))
        role = message["role"]
        if role == "user" and results and len(results) == len(blocks):
            role = "tool"
        yield Turn(role, tuple(texts), tuple(calls), tuple(results), f"$.messages[{i}]",
                   error_results=tuple(errors), **_files(media))


# --- Gemini ---------------------------------------------------------------------------------


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


def _gemini_turns(body: dict) -> Iterator[Turn]:
    key = "systemInstruction" if "systemInstruction" in body else "system_instruction"
    system = body.get(key)
    if isinstance(system, dict):
        system_texts = [p["text"] for p in _dicts(system.get("parts")) if isinstance(p.get("text"), str)]
        yield from _system_slot(tuple(system_texts), f"$.{key}")
    names = _Names()
    for i, content in enumerate(_list(body.get("contents"))):
        if not isinstance(content, dict) or content.get("role", "user") not in ("user", "model"):
            continue
        parts = list(_dicts(content.get("parts")))
        texts: list[str] = []
        media: list[File] = []
        calls: list[tuple[str, str]] = []
        results: list[tuple[str, str]] = []
        errors: list[int] = []
        for part in parts:
            inline = _alias(part, "inlineData", "inline_data")
            linked = _alias(part, "fileData", "file_data")
            file = (_bytes(inline.get("data")) if isinstance(inline, dict) else None) or (
                _link(_alias(linked, "fileUri", "file_uri")) if isinstance(linked, dict) else None)
            if file:
                media.append(file)
            call = _alias(part, "functionCall", "function_call")
            response = _alias(part, "functionResponse", "function_response")
            if isinstance(call, dict):
                calls.append(names.call(_str(call.get("id")), _str(call.get("name"))))
            elif isinstance(response, dict):
                if isinstance(response.get("response"), dict) and "error" in response["response"]:
                    errors.append(len(results))
                results.append(names.result(_str(response.get("id")), _str(response.get("name"))))
                texts.extend(_string_leaves(response.get("response")))
            elif isinstance(part.get("text"), str) and part.get("thought") is not True:
                texts.append(part["text"])
        if content.get("role", "user") == "model":
            role = "assistant"
        else:
            role = "tool" if results and len(results) == len(parts) else "user"
        yield Turn(role, tuple(texts), tuple(calls), tuple(results), f"$.contents[{i}]",
                   error_results=tuple(errors), **_files(media))


# --- Bedrock Converse -----------------------------------------------------------------------


def _bedrock_turns(body: dict) -> Iterator[Turn]:
    if isinstance(body.get("system"), list):
        system_texts = [b["text"] for b in _dicts(body["system"]) if isinstance(b.get("text"), str)]
        yield from _system_slot(tuple(system_texts), "$.system")
    names = _Names()
    for i, message in enumerate(_list(body.get("messages"))):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            continue
        blocks = [b for b in _dicts(message.get("content")) if "cachePoint" not in b]
        texts: list[str] = []
        media: list[File] = []
        calls: list[tuple[str, str]] = []
        results: list[tuple[str, str]] = []
        errors: list[int] = []
        for block in blocks:
            use, result = block.get("toolUse"), block.get("toolResult")
            file = next((block[k] for k in _BEDROCK_FILES if isinstance(block.get(k), dict)), None)
            if isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif file is not None and (found := _source_file(file.get("source"))):
                media.append(found)
            elif isinstance(use, dict):
                calls.append(names.call(_str(use.get("toolUseId")), _str(use.get("name"))))
            elif isinstance(result, dict):
                if result.get("status") == "error":
                    errors.append(len(results))
                results.append(names.result(_str(result.get("toolUseId"))))
                texts.extend(_text_blocks(result.get("content"), typed=False))
        role = message["role"]
        if role == "user" and results and len(results) == len(blocks):
            role = "tool"
        yield Turn(role, tuple(texts), tuple(calls), tuple(results), f"$.messages[{i}]",
                   error_results=tuple(errors), **_files(media))


_BEDROCK_FILES = ("image", "document", "video", "audio")

_DIALECTS: dict[str, Callable[[dict], Iterator[Turn]]] = {
    "openai": _openai_turns,
    "anthropic": _anthropic_turns,
    "gemini": _gemini_turns,
    "bedrock": _bedrock_turns,
}


def turn_view(body: dict | list, provider: str) -> list[Turn]:
    """The body's turns in order, the provider's system slot first (a bare list = the messages)."""
    dialect = get_provider(provider)
    if isinstance(body, list):
        body = {dialect.messages_key: body}
    if not isinstance(body, dict):
        return []
    return list(_DIALECTS[dialect.dialect](body))
