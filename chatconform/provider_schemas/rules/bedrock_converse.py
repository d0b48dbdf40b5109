"""Bedrock Converse: strict alternation (B3), toolUse/toolResult pairing (B4), the last message (B8)."""

from __future__ import annotations

import re
from typing import Any

from .anthropic import A8, A9
from .common import (
    ALTERNATION_NEXT_ROLES,
    SCHEMA,
    SEQUENCE,
    Family,
    ModelDependence,
    PendingCalls,
    Report,
    RuleInfo,
    as_dict,
    as_list,
    as_str,
    role_of,
    rules,
)

B3 = (
    "A conversation must alternate between user and assistant roles. Make sure the conversation "
    "alternates between user and assistant roles and try again."
)
B4_COUNT = (
    "The number of toolResult blocks at messages.{i}.content exceeds the number of toolUse blocks of "
    "previous turn."
)
# Bedrock passes Claude's own pairing errors through with this prefix.
B4_UNKNOWN = "The model returned the following errors: " + A8
B4_MISSING = "The model returned the following errors: " + A9
B8 = "A conversation must end with a user message."


def _bedrock_ids(message: Any, member: str) -> list[tuple[int, str]]:
    """(block index, toolUseId) of the toolUse or toolResult blocks of a message."""
    if not isinstance(message, dict):
        return []
    out = []
    for j, block in enumerate(as_list(message.get("content"))):
        inner = as_dict(block).get(member)
        call_id = as_str(inner.get("toolUseId")) if isinstance(inner, dict) else None
        if call_id is not None:
            out.append((j, call_id))
    return out


def _report_missing(pending: PendingCalls, opened_at: int, report: Report) -> None:
    """B4: the toolUse ids of the message at ``opened_at`` that no toolResult answered."""
    missing = ", ".join(pending.unanswered())
    report.error("B4", ["messages", opened_at], B4_MISSING.format(i=opened_at, ids=missing))


def check(body: dict, report: Report) -> None:
    messages = as_list(body.get("messages"))
    previous: str | None = None  # B3
    for i, message in enumerate(messages):
        role = role_of(message)
        if role not in ALTERNATION_NEXT_ROLES:
            previous = None
            continue
        if previous is not None and role not in ALTERNATION_NEXT_ROLES[previous]:
            report.error("B3", ["messages", i, "role"], B3)
        previous = role

    # B4: an assistant turn opens its toolUse ids; the next message answers them all, and
    # holds no more toolResult blocks than there were toolUse blocks, nor unknown ids.
    pending, opened_at = PendingCalls(), 0
    for i, message in enumerate(messages):
        role = role_of(message)
        if role == "user":
            results = _bedrock_ids(message, "toolResult")
            if len(results) > len(pending.opened):
                report.error("B4", ["messages", i, "content"], B4_COUNT.format(i=i))
            for j, call_id in results:
                if pending.answer(call_id) == "unknown":
                    report.error("B4", ["messages", i, "content", j], B4_UNKNOWN.format(i=i, j=j, id=call_id))
        if pending.unanswered():
            _report_missing(pending, opened_at, report)
        pending = PendingCalls()
        if role == "assistant":
            pending, opened_at = PendingCalls.at(i, [call_id for _, call_id in _bedrock_ids(message, "toolUse")]), i
    if pending.unanswered():
        _report_missing(pending, opened_at, report)

    if messages and role_of(messages[-1]) == "assistant":  # B8
        report.warning("B8", ["messages", len(messages) - 1, "role"], B8)


_BEDROCK_API = "https://docs.aws.amazon.com/bedrock/latest/APIReference/"

CATALOG = rules(
    RuleInfo(
        "B0", "request shape (Bedrock Runtime Converse)", SCHEMA,
        "1 validation error detected: Value at '{loc}' failed to satisfy constraint: {detail}",
        _BEDROCK_API + "API_runtime_Converse.html", text="synthesized",
    ),
    RuleInfo(
        "B1", "role is user or assistant; a content block sets exactly one member", SCHEMA,
        "The ContentBlock object at {loc} must set exactly one member.",
        _BEDROCK_API + "API_runtime_ContentBlock.html", text="synthesized",
    ),
    RuleInfo(
        "B2", "the conversation starts with a user message", SCHEMA,
        "A conversation must start with a user message. Try again with a conversation that starts with a "
        "user message.",
        "https://github.com/langgenius/dify/issues/12340",
    ),
    RuleInfo(
        "B3", "user and assistant alternate", SEQUENCE,
        "A conversation must alternate between user and assistant roles. Make sure the conversation "
        "alternates between user and assistant roles and try again.",
        "https://github.com/langchain-ai/langchain-aws/issues/130",
    ),
    RuleInfo(
        "B4", "toolResult blocks answer the previous turn's toolUse blocks, all of them", SEQUENCE,
        "The number of toolResult blocks at messages.{i}.content exceeds the number of toolUse blocks of "
        "previous turn.",
        "https://github.com/langgenius/dify-official-plugins/issues/765", text="adapted",
    ),
    RuleInfo(
        "B5", "no text blocks next to toolResult blocks in a turn", SCHEMA,
        "messages.{i}.content: Conversation blocks and tool result blocks cannot be provided in the same turn.",
        "https://github.com/langchain-ai/langchain-aws/issues/141",
    ),
    RuleInfo(
        "B6", "toolConfig defined when the history holds toolUse or toolResult", SCHEMA,
        "The toolConfig field must be defined when using toolUse and toolResult content blocks.",
        "https://github.com/vxcontrol/pentagi/pull/196",
    ),
    RuleInfo(
        "B7", "no blank text, no empty content, a text block next to a document", SCHEMA,
        "The text field in the ContentBlock object at messages.{i}.content.{j} is blank. Add text to the "
        "text field, and try again.",
        "https://github.com/OpenHands/OpenHands/issues/5339",
        # A document block needs a text block beside it, in its own words:
        # "A text block must be included when using documents."
        more=("https://github.com/BerriAI/litellm/pull/36499", "https://github.com/archestra-ai/archestra/pull/4220"),
    ),
    RuleInfo(
        "B9", "a tool's name, declared or called, matches [a-zA-Z0-9_-]+, at most 64 characters", SCHEMA,
        "1 validation error detected: Value '{value}' at 'toolConfig.tools.{i}.member.toolSpec.name' failed to "
        "satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+",
        "https://github.com/aws-samples/remote-swe-agents/pull/457",
        # A name replayed in a toolUse block is held to the same pattern:
        more=("https://github.com/openclaw/openclaw/pull/12949",),
    ),
    RuleInfo(
        "B8", "the conversation ends with a user message", SEQUENCE,
        "A conversation must end with a user message.",
        "https://github.com/microsoft/semantic-kernel/issues/10281", severity="warning", text="synthesized",
    ),
)

LEFT_OUT: dict[str, str] = {}

_B5_EVIDENCE = "https://github.com/pydantic/pydantic-ai/pull/6098"  # live Converse tests per model family

MODEL_DEPENDENT: dict[str, ModelDependence] = {
    "B5": ModelDependence(
        families=(
            Family("Claude, Nova and Qwen", re.compile(r"(^|[.:/])(anthropic\.claude|amazon\.nova|qwen\.)"),
                   accepts=True, evidence=_B5_EVIDENCE, date="2026-06"),
            Family("Llama and Mistral", re.compile(r"(^|[.:/])(meta\.llama|mistral\.)"), accepts=False,
                   evidence=_B5_EVIDENCE, date="2026-06"),
        ),
        unnamed="warning",
        why="Converse models differ: Claude, Nova and Qwen take text beside a toolResult, Llama and Mistral do not",
    ),
    # Titan Text took two user messages in a row (openllmetry recorded a 200 from
    # amazon.titan-text-express-v1 on 2025-08-19); Claude on Bedrock rejects them.
    "B3": ModelDependence(
        families=(
            Family("Titan Text", re.compile(r"(^|[.:/])amazon\.titan-text"), accepts=True,
                   evidence="https://github.com/traceloop/openllmetry/blob/93429cfb9767e6b51db6cb35f6b70f758117669a/"
                            "packages/opentelemetry-instrumentation-bedrock/tests/traces/cassettes/test_guardrails/"
                            "test_guardrail_converse.yaml",
                   date="2025-08-19"),
            Family("Claude", re.compile(r"(^|[.:/])anthropic\.claude"), accepts=False,
                   evidence="https://github.com/microsoft/semantic-kernel/issues/10281", date="2025-01"),
        ),
        unnamed="error",
        why="the Claude models most Converse conversations go to reject it",
    ),
}
