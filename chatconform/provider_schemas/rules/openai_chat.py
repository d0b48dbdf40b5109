"""OpenAI Chat Completions: tool messages pair with the assistant turn right before them (O7-O9); a
strict tool's parameters close every object (O15)."""

from __future__ import annotations

import re
from typing import Any

from .common import (
    CONTENT,
    SCHEMA,
    SEQUENCE,
    Family,
    ModelDependence,
    Report,
    RuleInfo,
    as_dict,
    as_list,
    as_str,
    rules,
    tool_pairing,
)

O7 = "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"
O8 = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)
O9 = "Invalid parameter: 'tool_call_id' of '{id}' not found in 'tool_calls' of previous message."
O15 = ("Invalid schema for function '{name}': In context={context}, 'additionalProperties' is required to be "
       "supplied and to be false.")


def _open_objects(schema: Any, context: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The places in a JSON Schema where an object schema leaves ``additionalProperties`` other
    than false (strict mode requires it false on every object)."""
    found: list[tuple[str, ...]] = []
    if not isinstance(schema, dict):
        return found
    if (schema.get("type") == "object" or "properties" in schema) and schema.get("additionalProperties") is not False:
        found.append(context)
    for key in ("properties", "$defs", "definitions"):
        for name, sub in as_dict(schema.get(key)).items():
            found += _open_objects(sub, (*context, key, name))
    if isinstance(schema.get("items"), dict):
        found += _open_objects(schema["items"], (*context, "items"))
    for key in ("anyOf", "allOf"):
        for n, sub in enumerate(as_list(schema.get(key))):
            found += _open_objects(sub, (*context, key, str(n)))
    return found


def _strict_tools(body: dict, report: Report) -> None:
    """O15: a tool with ``strict: true`` whose parameters leave an object open."""
    for i, tool in enumerate(as_list(body.get("tools"))):
        function = as_dict(as_dict(tool).get("function"))
        if function.get("strict") is not True or not isinstance(function.get("parameters"), dict):
            continue
        for context in _open_objects(function["parameters"])[:1]:
            shown = "(" + ", ".join(repr(part) for part in context) + ("," if len(context) == 1 else "") + ")"
            report.error("O15", ["tools", i, "function", "parameters"],
                         O15.format(name=as_str(function.get("name")) or "", context=shown))


def check(body: dict, report: Report) -> None:
    texts = {"O7": O7, "O8": O8, "O9": O9}

    def on_problem(kind: str, parts: list, detail: str) -> None:
        report.error(kind, parts, texts[kind].format(ids=detail, id=detail))

    tool_pairing(as_list(body.get("messages")), on_problem, duplicates=False)
    _strict_tools(body, report)


_OPENAPI = "https://github.com/openai/openai-openapi"
_OAI_EMPTY_ARRAY = (
    "Invalid '{oai}': empty array. Expected an array with minimum length 1, but got an empty array instead."
)

CATALOG = rules(
    RuleInfo(
        "O0", "request shape (openai-openapi CreateChatCompletionRequest)", SCHEMA,
        "Invalid '{oai}': {detail}", _OPENAPI, text="synthesized",
    ),
    RuleInfo(
        "O1", "messages is non-empty", SCHEMA,
        "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
        "https://github.com/CopilotKit/CopilotKit/issues/529",
    ),
    RuleInfo(
        "O2", "role is known; per-role required members (content, tool_call_id, name)", SCHEMA,
        "Missing required parameter: '{oai}'.", "https://github.com/docker/docker-agent/issues/63", text="adapted",
    ),
    RuleInfo(
        "O3", "content is a string or a non-empty array of the parts that role allows", SCHEMA,
        _OAI_EMPTY_ARRAY, _OPENAPI, text="synthesized",
    ),
    RuleInfo(
        "O4", "assistant content required unless tool_calls or function_call", SCHEMA,
        "Missing required parameter: '{oai}'.", _OPENAPI, text="adapted",
    ),
    RuleInfo(
        "O5", "tool_calls, when present, is non-empty", SCHEMA,
        _OAI_EMPTY_ARRAY, "https://github.com/openai/openai-python/issues/2061",
    ),
    RuleInfo(
        "O6", "tool_calls[].function.name is non-empty", SCHEMA,
        "Invalid '{oai}': empty string. Expected a string with minimum length 1, but got an empty string instead.",
        "https://github.com/continuedev/continue/issues/11645",
    ),
    RuleInfo(
        "O7", "a tool message follows an assistant message with tool_calls (or its sibling tools)", SEQUENCE,
        "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
        "https://github.com/camel-ai/camel/issues/3339",
    ),
    RuleInfo(
        "O8", "every tool_call id is answered by the tool messages right after", SEQUENCE,
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}",
        "https://github.com/BerriAI/litellm/issues/10083",
    ),
    RuleInfo(
        "O9", "a tool_call_id is one of the preceding assistant's tool_calls ids", SEQUENCE,
        "Invalid parameter: 'tool_call_id' of '{id}' not found in 'tool_calls' of previous message.",
        "https://github.com/dapr/dapr-agents/issues/145",
    ),
    RuleInfo(
        "O10", "o1-mini / o1-preview models reject the system and developer roles", SCHEMA,
        "Unsupported value: 'messages[{i}].role' does not support '{value}' with this model.",
        "https://github.com/BerriAI/litellm/issues/5671",
        # The developer role, in the same words: https://github.com/QuantumNous/new-api/issues/847
        more=("https://github.com/QuantumNous/new-api/issues/847",),
    ),
    RuleInfo(
        "O11", "image_url is an object {url}, not a bare URL string (gpt-4-vision-preview took one in 2023)",
        SCHEMA, "Invalid type for '{oai}': expected an object, but got a string instead.",
        "https://github.com/openai-php/client/issues/249",
    ),
    RuleInfo(
        "O12", "a content part type chatconform's schema of 2026-08-21 knows (a newer type, or a typo)", SCHEMA,
        "Invalid value: '{value}' at '{oai}': a content part type not known to chatconform's schema of 2026-08-21 "
        "(openai-openapi)", _OPENAPI, severity="warning", text="synthesized",
    ),
    RuleInfo(
        "O13", "every top-level key is a parameter of CreateChatCompletionRequest (2026-08-21)", SCHEMA,
        "Unrecognized request argument supplied: {value}",
        "https://github.com/xlinx/sd-webui-decadetw-auto-prompt-llm/issues/29",
    ),
    RuleInfo(
        "O14", "a function tool's name matches ^[a-zA-Z0-9_-]+$, at most 64 characters", SCHEMA,
        "Invalid 'tools[{i}].function.name': string does not match pattern. Expected a string that matches the "
        "pattern '^[a-zA-Z0-9_-]+$'.",
        "https://github.com/xinnan-tech/xiaozhi-esp32-server/issues/1466",
    ),
    RuleInfo(
        "O15", "a strict tool's parameters set additionalProperties: false on every object", SEQUENCE,
        O15, "https://github.com/Mirascope/mirascope/blob/41d433578653411dbff96c6eaca4fa869aafc931/typescript/"
             "tests/e2e/input/cassettes/strict-tool/openai_completions/handles-optional-properties-in-strict-mode.har",
    ),
    RuleInfo(
        "O16", "the named model takes the content kind (gpt-3.5-turbo and gpt-4 take no image)", CONTENT,
        "Invalid content type. image_url is only supported by certain models.",
        "https://github.com/browser-use/web-ui/issues/274",
    ),
)

LEFT_OUT: dict[str, str] = {}

MODEL_DEPENDENT: dict[str, ModelDependence] = {
    # gpt-4-vision-preview answered an image_url given as a bare string (dd-trace-py recorded a 200
    # on 2023-11-27); later models answer it with O11's error (2024-10).
    "O11": ModelDependence(
        families=(
            Family("gpt-4-vision-preview (2023)", re.compile(r"^gpt-4-vision-preview"), accepts=True,
                   evidence="https://github.com/DataDog/dd-trace-py/blob/3bb9ecda22830e3303b18b0ffa5abe7586aef6a7/"
                            "tests/contrib/openai/cassettes/v1/chat_completion_image_input.yaml",
                   date="2023-11-27"),
            Family("every later vision model", re.compile(r"^(gpt-|o[1-9]|chatgpt-)"), accepts=False,
                   evidence="https://github.com/openai-php/client/issues/249", date="2024-10"),
        ),
        unnamed="error",
        why="every OpenAI model still served wants an object",
    ),
}
