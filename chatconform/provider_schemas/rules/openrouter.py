"""OpenRouter: OpenAI's tool pairing (P1); with reasoning on, a Gemini model behind it needs the
``reasoning_details`` of each tool-call turn back (P2); across requests, the details an answer
returned come back unchanged (P3 for a Gemini model's tool-call turn, else P4, ``replayed``)."""

from __future__ import annotations

import re

from .common import (
    SCHEMA,
    SEQUENCE,
    Family,
    ModelDependence,
    Report,
    RuleInfo,
    as_dict,
    as_list,
    chat_answer,
    reasoning_missing,
    role_of,
    rules,
    same_chat_turn,
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



P3 = ("Gemini models require OpenRouter reasoning details to be preserved in each request (messages[{i}]: the "
      "reasoning_details returned with these tool calls came back changed or dropped)")
P4 = ("messages[{i}].reasoning_details: the reasoning_details OpenRouter returned with this message came back changed "
      "or dropped (the model behind it may reason afresh, or its provider reject the turn)")
_GEMINI = re.compile(r"gemini")


def _detail_key(detail: object) -> tuple:
    """What a reasoning detail must bring back unchanged: its kind, text, data and signature."""
    detail = as_dict(detail)
    return tuple(detail.get(key) for key in ("type", "text", "summary", "data", "signature"))


def replayed(body: dict, model: str | None, earlier: list[str], report: Report) -> None:
    """P3 and P4: an assistant message that sends back an answer carrying reasoning_details
    (known by its tool-call ids or its text) carries each detail unchanged. A Gemini model
    rejects a tool-call turn without them (P3); no rejection is documented for the others
    (P4, a warning). A tool-call turn with no details while the body asks for reasoning is
    P2's, judged by ``check``."""
    answers = [answered for answered in map(chat_answer, earlier) if as_list(answered.get("reasoning_details"))]
    if not answers:
        return
    on = thinking_on(body, report.reasoning)
    for i, message in enumerate(as_list(body.get("messages"))):
        if role_of(message) != "assistant":
            continue
        answered = next((a for a in answers if same_chat_turn(message, a)), None)
        if answered is None:
            continue
        calls = bool(as_list(message.get("tool_calls")))
        if on and calls and "reasoning_details" not in message:
            continue
        sent = {_detail_key(d) for d in as_list(message.get("reasoning_details"))}
        if all(_detail_key(d) in sent for d in answered["reasoning_details"]):
            continue
        if calls and model and _GEMINI.search(model):
            report.error("P3", ["messages", i], P3.format(i=i))
        else:
            report.warning("P4", ["messages", i], P4.format(i=i))


CATALOG = rules(
    RuleInfo("P0", "documented message shape", SCHEMA, "{loc}: {detail}",
             "https://openrouter.ai/docs/api/reference/overview", text="synthesized"),
    RuleInfo("P1", "tool messages answer the tool_calls right before them", SEQUENCE, P1,
             "https://openrouter.ai/docs/features/tool-calling", text="synthesized"),
    RuleInfo("P2", "with reasoning on, a Gemini model gets the reasoning_details of each tool-call turn back", SEQUENCE,
             P2, "https://github.com/microsoft/agent-framework/issues/2947", text="adapted",
             more=("https://github.com/pydantic/pydantic-ai/issues/3658",)),
    RuleInfo("P3", "a Gemini model: the reasoning_details an answer returned with tool calls come back unchanged on "
                   "that message (serve and recorded traffic: the answers before the request)", SEQUENCE,
             P3, "https://github.com/microsoft/agent-framework/issues/2947", text="adapted",
             more=("https://github.com/pydantic/pydantic-ai/issues/3658",)),
    RuleInfo("P4", "another model: the reasoning_details an answer returned come back unchanged on that message "
                   "(OpenRouter asks for it; no rejection is documented)", SEQUENCE,
             P4, "https://openrouter.ai/docs/use-cases/reasoning-tokens", severity="warning", text="synthesized"),
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
