"""Groq: OpenAI's tool pairing (R1); its closed message schema rejects any reasoning field on an
assistant message of the history, whatever the model (R2, in the schema)."""

from __future__ import annotations

from .common import SCHEMA, SEQUENCE, Report, RuleInfo, as_list, rules, tool_pairing

R1 = "'messages' : tool messages must answer the tool_calls of the assistant message right before them"
R2 = ("'messages.{i}' : for 'role:assistant' the following must be satisfied[('messages.{i}' : property "
      "'reasoning_content' is unsupported)]")


def check(body: dict, report: Report) -> None:
    tool_pairing(as_list(body.get("messages")), lambda kind, parts, detail: report.error("R1", parts, R1),
                 duplicates=False)


CATALOG = rules(
    RuleInfo("R0", "documented message shape", SCHEMA, "'{loc}' : {detail}",
             "https://console.groq.com/docs/api-reference#chat-create", text="synthesized"),
    RuleInfo("R1", "tool messages answer the tool_calls right before them", SEQUENCE, R1,
             "https://console.groq.com/docs/tool-use", text="synthesized"),
    RuleInfo("R2", "no reasoning field (reasoning_content, reasoning) on an assistant message, any model", SCHEMA, R2,
             "https://github.com/janhq/jan/issues/8136",
             more=("https://github.com/NousResearch/hermes-agent/issues/11089", "https://github.com/vercel/ai/issues/8056")),
)

LEFT_OUT: dict[str, str] = {}
