"""Qwen3.5+ on vLLM: every chat-template guard (Q1-Q5) is a schema rule."""

from __future__ import annotations

from .common import SCHEMA, Report, RuleInfo, rules


def check(body: dict, report: Report) -> None:
    """Every Qwen3.5 template guard (Q1-Q5) is a schema rule; the template checks no pairing."""


_QWEN_TEMPLATE = "https://huggingface.co/Qwen/Qwen3.5-27B/blob/main/chat_template.jinja"

CATALOG = rules(
    RuleInfo(
        "Q0", "OpenAI-compatible request shape vLLM parses", SCHEMA,
        "Invalid request at '{oai}': {detail}",
        "https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html", text="synthesized",
    ),
    RuleInfo("Q1", "messages is non-empty", SCHEMA, "No messages provided.", _QWEN_TEMPLATE),
    RuleInfo(
        "Q2", "a user message that is not only a <tool_response> wrapper", SCHEMA,
        "No user query found in messages.", _QWEN_TEMPLATE,
    ),
    RuleInfo(
        "Q3", "a system message only at index 0", SCHEMA,
        "System message must be at the beginning.", "https://github.com/vllm-project/vllm/issues/41114",
    ),
    RuleInfo("Q4", "roles are system, user, assistant, tool", SCHEMA, "Unexpected message role.", _QWEN_TEMPLATE),
    RuleInfo(
        "Q5", "content types; no images or videos in the system message", SCHEMA,
        "System message cannot contain images.", _QWEN_TEMPLATE,
    ),
)

LEFT_OUT: dict[str, str] = {}
