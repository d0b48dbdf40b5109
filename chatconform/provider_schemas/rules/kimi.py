"""Kimi (Moonshot): OpenAI's tool pairing (K1); with thinking on, an assistant turn with tool
calls carries its ``reasoning_content`` (K2: by the body's setting, and across requests by the
answer that carried it, ``replayed``)."""

from __future__ import annotations

import re

from .common import (
    SCHEMA,
    SEQUENCE,
    Report,
    RuleInfo,
    as_list,
    as_str,
    reasoning_dropped,
    reasoning_missing,
    rules,
    thinking_on,
    tool_pairing,
)

K1 = "Invalid request: tool messages must answer the tool_calls of the assistant message right before them"
K2 = "thinking is enabled but reasoning_content is missing in assistant tool call message at index {i}"


def _thinking(body: dict, report: Report) -> bool | None:
    """The body's thinking setting; None where it says nothing and its model is no thinking
    model (those think whatever the body says)."""
    on = thinking_on(body, report.reasoning)
    if on is None and re.search(r"thinking", as_str(body.get("model")) or ""):
        return True
    return on


def check(body: dict, report: Report) -> None:
    messages = as_list(body.get("messages"))
    tool_pairing(messages, lambda kind, parts, detail: report.error("K1", parts, K1), duplicates=False)
    if _thinking(body, report):
        for i in reasoning_missing(messages, "reasoning_content"):
            report.error("K2", ["messages", i], K2.format(i=i))


def replayed(body: dict, model: str | None, earlier: list[str], report: Report) -> None:
    """K2 where the body does not say thinking is on (kimi-k2.5 thinks by default): an answer
    that carried reasoning_content was thought, so its tool-call turn sent back without it is
    rejected. A body that turns thinking off, or on (``check`` judged it), is not judged here."""
    if _thinking(body, report) is not None:
        return
    for i in reasoning_dropped(body, earlier, "reasoning_content"):
        report.error("K2", ["messages", i], K2.format(i=i))


CATALOG = rules(
    RuleInfo("K0", "documented message shape", SCHEMA, "Invalid request: {loc}: {detail}",
             "https://platform.moonshot.ai/docs/api/chat", text="synthesized"),
    RuleInfo("K1", "tool messages answer the tool_calls right before them", SEQUENCE, K1,
             "https://platform.moonshot.ai/docs/api/tool-use", text="synthesized"),
    RuleInfo("K2", "with thinking on, an assistant turn with tool_calls carries reasoning_content (\"\" when none; "
                   "across requests: an answer that returned reasoning_content was thought)",
             SEQUENCE, K2, "https://github.com/bytedance/deer-flow/issues/3043"),
)

LEFT_OUT: dict[str, str] = {}
