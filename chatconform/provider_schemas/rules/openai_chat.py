"""OpenAI Chat Completions: tool messages pair with the assistant turn right before them (O7-O9)."""

from __future__ import annotations

from .common import SCHEMA, SEQUENCE, Report, RuleInfo, as_list, rules, tool_pairing

O7 = "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"
O8 = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)
O9 = "Invalid parameter: 'tool_call_id' of '{id}' not found in 'tool_calls' of previous message."


def check(body: dict, report: Report) -> None:
    texts = {"O7": O7, "O8": O8, "O9": O9}

    def on_problem(kind: str, parts: list, detail: str) -> None:
        report.error(kind, parts, texts[kind].format(ids=detail, id=detail))

    tool_pairing(as_list(body.get("messages")), on_problem, duplicates=False)


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
        "O10", "o1-mini / o1-preview models reject the system role", SCHEMA,
        "Unsupported value: 'messages[{i}].role' does not support 'system' with this model.",
        "https://github.com/BerriAI/litellm/issues/5671",
    ),
)

LEFT_OUT: dict[str, str] = {}
