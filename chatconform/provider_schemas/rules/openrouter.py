"""OpenRouter: OpenAI's tool pairing (P1); with reasoning on, a Gemini model behind it needs the
``reasoning_details`` of each tool-call turn back (P2)."""

from __future__ import annotations

import re

from .common import (
    SCHEMA,
    SEQUENCE,
    Family,
    ModelDependence,
    Report,
    RuleInfo,
    as_list,
    reasoning_missing,
    rules,
    thinking_on,
    tool_pairing,
)

P1 = "tool messages must answer the tool_calls of the assistant message right before them"
P2 = "Gemini models require OpenRouter reasoning details to be preserved in each request (messages[{i}])"


def check(body: dict, report: Report) -> None:
    messages = as_list(body.get("messages"))
    tool_pairing(messages, lambda kind, parts, detail: report.error("P1", parts, P1), duplicates=False)
    if thinking_on(body, report.reasoning):  # P2: its level depends on the model
        for i in reasoning_missing(messages, "reasoning_details"):
            report.error("P2", ["messages", i], P2.format(i=i))


CATALOG = rules(
    RuleInfo("P0", "documented message shape", SCHEMA, "{loc}: {detail}",
             "https://openrouter.ai/docs/api/reference/overview", text="synthesized"),
    RuleInfo("P1", "tool messages answer the tool_calls right before them", SEQUENCE, P1,
             "https://openrouter.ai/docs/features/tool-calling", text="synthesized"),
    RuleInfo("P2", "with reasoning on, a Gemini model gets the reasoning_details of each tool-call turn back", SEQUENCE,
             P2, "https://github.com/microsoft/agent-framework/issues/2947", text="adapted",
             more=("https://github.com/pydantic/pydantic-ai/issues/3658",)),
)

LEFT_OUT: dict[str, str] = {}

MODEL_DEPENDENT: dict[str, ModelDependence] = {
    "P2": ModelDependence(
        families=(
            Family("Gemini models (google/gemini-*)", re.compile(r"gemini"), accepts=False,
                   evidence="https://github.com/microsoft/agent-framework/issues/2947", date="2025-12"),
            Family("every other model behind OpenRouter", re.compile(r"."), accepts=True,
                   evidence="https://openrouter.ai/docs/use-cases/reasoning-tokens", date="2026-05"),
        ),
        unnamed="warning", why="Gemini models reject the body, the others answer it",
    ),
}
