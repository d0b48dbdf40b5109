"""DeepSeek: OpenAI's tool pairing (D1); ``reasoning_content`` in the history, rejected by R1 (D2)
and required on tool-call turns by the thinking mode of V3.2 and later (D3: by the body's setting,
and across requests by the answer that carried it, ``replayed``)."""

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
    as_str,
    reasoning_dropped,
    reasoning_missing,
    role_of,
    rules,
    thinking_on,
    tool_pairing,
)

D1 = ("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. "
      "(insufficient tool messages following tool_calls message)")
D2 = "messages[{i}]: reasoning_content is not accepted in input messages by deepseek-reasoner (R1)"
D3 = "Missing `reasoning_content` field in the assistant message at message index {i}"


def _thinking(body: dict, report: Report) -> bool | None:
    """The body's thinking setting; None where it says nothing and its model does not think by
    default (deepseek-reasoner and deepseek-v4 do)."""
    on = thinking_on(body, report.reasoning)
    if on is None and re.search(r"reasoner|v4", as_str(body.get("model")) or ""):
        return True
    return on


def check(body: dict, report: Report) -> None:
    messages = as_list(body.get("messages"))
    tool_pairing(messages, lambda kind, parts, detail: report.error("D1", parts, D1), duplicates=False)
    for i, message in enumerate(messages):  # D2: its level depends on the model
        if role_of(message) == "assistant" and "reasoning_content" in message:
            report.error("D2", ["messages", i, "reasoning_content"], D2.format(i=i))
    if _thinking(body, report):  # D3: its level depends on the model
        for i in reasoning_missing(messages, "reasoning_content"):
            report.error("D3", ["messages", i], D3.format(i=i))


def replayed(body: dict, model: str | None, earlier: list[str], report: Report) -> None:
    """D3 where the body does not say thinking is on: an answer that carried reasoning_content
    came from thinking mode, so its tool-call turn sent back without it is rejected (the model
    decides the level: R1 takes the turn without it). A body that turns thinking off, or
    turns it on (``check`` judged it), is not judged here."""
    if _thinking(body, report) is not None:
        return
    for i in reasoning_dropped(body, earlier, "reasoning_content"):
        report.error("D3", ["messages", i], D3.format(i=i))


CATALOG = rules(
    RuleInfo("D0", "documented message shape", SCHEMA, "Failed to deserialize the JSON body into the target type: "
             "{loc}: {detail}", "https://api-docs.deepseek.com/api/create-chat-completion", text="synthesized"),
    RuleInfo("D1", "tool messages answer the tool_calls right before them", SEQUENCE, D1,
             "https://github.com/langchain-ai/langchain/issues/34166"),
    RuleInfo("D2", "deepseek-r1: no reasoning_content in the history (the docs: a 400 error)", SEQUENCE, D2,
             "https://api-docs.deepseek.com/guides/reasoning_model", text="synthesized",
             more=("https://github.com/vercel/ai/pull/14739",)),
    RuleInfo("D3", "thinking mode (V3.2 and later): an assistant turn with tool_calls carries its reasoning_content "
                   "(thinking on by the body, or across requests: an answer that returned reasoning_content)",
             SEQUENCE, D3, "https://github.com/langchain-ai/langchain/issues/34166", text="adapted",
             more=("https://api-docs.deepseek.com/guides/thinking_mode",)),
)

LEFT_OUT: dict[str, str] = {
    "D4": "R1's strict user/assistant alternation: R1 is no longer served by DeepSeek's API",
}

_R1 = Family("deepseek-r1 (the deepseek-reasoner of early 2025)", re.compile(r"deepseek-r1|\br1\b"), accepts=False,
             evidence="https://api-docs.deepseek.com/guides/reasoning_model", date="2025-02")
_THINKING = Family("deepseek-chat and deepseek-reasoner (V3.2), deepseek-v4", re.compile(r"deepseek"), accepts=True,
                   evidence="https://api-docs.deepseek.com/guides/thinking_mode", date="2026-05")

MODEL_DEPENDENT: dict[str, ModelDependence] = {
    "D2": ModelDependence(families=(_R1, _THINKING), unnamed="warning",
                          why="R1 rejects reasoning_content, the models DeepSeek serves now take it"),
    "D3": ModelDependence(
        families=(Family(_R1.name, _R1.models, accepts=True, evidence=_R1.evidence, date=_R1.date),
                  Family(_THINKING.name, _THINKING.models, accepts=False,
                         evidence="https://github.com/langchain-ai/langchain/issues/34166", date="2026-05")),
        unnamed="error", why="every model DeepSeek serves in thinking mode requires it"),
}
