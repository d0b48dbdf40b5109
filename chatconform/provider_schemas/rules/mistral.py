"""Hosted Mistral: role order (M1), the last message (M2, M3), call/result counts and ids (M4, M5)."""

from __future__ import annotations

from .common import SCHEMA, SEQUENCE, PendingCalls, Report, RuleInfo, as_dict, as_list, as_str, role_of, rules

# Mistral hosted API (M1). mistral-common allows tool -> user since #218 (2026-04-27), but the
# hosted API still rejected it in 2026-05..08 reports, so the hosted matrix is used.
MISTRAL_NEXT_ROLES: dict[str, frozenset[str]] = {
    "system": frozenset({"user", "assistant", "system"}),
    "user": frozenset({"assistant", "system", "user"}),
    "assistant": frozenset({"assistant", "user", "tool"}),
    "tool": frozenset({"assistant", "tool"}),
}


M4 = "Not the same number of function calls and responses"


def check(body: dict, report: Report) -> None:
    messages = as_list(body.get("messages"))
    last = len(messages) - 1

    previous: str | None = None  # M1
    for i, message in enumerate(messages):
        role = role_of(message)
        if role not in MISTRAL_NEXT_ROLES:
            continue
        if previous is not None and role not in MISTRAL_NEXT_ROLES[previous]:
            report.error("M1", ["messages", i, "role"], f"Unexpected role '{role}' after role '{previous}'")
        previous = role

    # M2: the validator only rejects a final assistant message without prefix (a final system
    # message passes), so the text always ends in "assistant".
    if last > 0 and role_of(messages[last]) == "assistant" and messages[last].get("prefix") is not True:
        report.error(
            "M2",
            ["messages", last, "role"],
            "Expected last role User or Tool (or Assistant with prefix True) for serving but got assistant",
        )

    for i, message in enumerate(messages):  # M3
        if i != last and role_of(message) == "assistant" and message.get("prefix") is True:
            report.error("M3", ["messages", i, "prefix"], "Assistant message with prefix True must be last message")

    # M4/M5 (validator V11+): an assistant message opens its calls; tool messages answer them
    # until the next assistant message, which (like the end, when serving) needs none pending.
    pending: PendingCalls | None = None
    opened_at = 0
    for i, message in enumerate(messages):
        role = role_of(message)
        if role == "tool":
            call_id = as_str(message.get("tool_call_id"))
            if call_id is None:
                continue  # M6 (schema)
            status = pending.answer(call_id) if pending is not None else "unknown"
            if status != "ok":
                word = "Duplicate" if status == "duplicate" else "Unexpected"
                report.error("M5", ["messages", i, "tool_call_id"], f"{word} tool call id {call_id} in tool results")
        elif role == "assistant":
            if pending is not None and pending.unanswered():
                report.error("M4", ["messages", opened_at, "tool_calls"], M4)
            ids: list[str] = []
            for j, call in enumerate(as_list(message.get("tool_calls"))):
                call_id = as_str(as_dict(call).get("id"))
                if call_id is None:
                    continue
                if call_id in ids:
                    report.error("M5", ["messages", i, "tool_calls", j, "id"],
                                 f"Duplicate tool call id {call_id} in assistant message")
                ids.append(call_id)
            pending, opened_at = PendingCalls.at(i, ids), i
    if pending is not None and pending.unanswered():
        report.error("M4", ["messages", opened_at, "tool_calls"], M4)


_MISTRAL_VALIDATOR = (
    "https://github.com/mistralai/mistral-common/blob/main/src/mistral_common/protocol/instruct/validator.py"
)

CATALOG = rules(
    RuleInfo(
        "M0", "request shape; function names match ^[a-zA-Z0-9_-]{1,64}$", SCHEMA,
        "Function name was {value} but must be a-z, A-Z, 0-9, or contain underscores and dashes, "
        "with a maximum length of 64.",
        _MISTRAL_VALIDATOR, text="synthesized",
    ),
    RuleInfo(
        "M1", "role order (hosted API matrix: tool -> user rejected)", SEQUENCE,
        "Unexpected role '{role}' after role '{previous}'",
        "https://github.com/datapizza-labs/datapizza-ai/issues/98",
    ),
    RuleInfo(
        "M2", "a final assistant message (of two or more) needs prefix: true", SEQUENCE,
        "Expected last role User or Tool (or Assistant with prefix True) for serving but got assistant",
        "https://github.com/huggingface/smolagents/issues/757",
    ),
    RuleInfo(
        "M3", "prefix: true only on the last message", SEQUENCE,
        "Assistant message with prefix True must be last message", _MISTRAL_VALIDATOR,
    ),
    RuleInfo(
        "M4", "as many tool messages as tool calls, before the next assistant and at the end", SEQUENCE,
        "Not the same number of function calls and responses", _MISTRAL_VALIDATOR,
    ),
    RuleInfo(
        "M5", "tool result ids expected and unique; call ids unique in a message", SEQUENCE,
        "Duplicate tool call id {call_id} in assistant message", _MISTRAL_VALIDATOR,
    ),
    RuleInfo(
        "M6", "tool call ids ^[a-zA-Z0-9]{9}$ and defined", SCHEMA,
        "Tool call id was {value} but must be a-z, A-Z, 0-9, with a length of 9.", _MISTRAL_VALIDATOR,
    ),
    RuleInfo(
        "M8", "non-empty; a single message is user or system; system has content", SCHEMA,
        "Conversation must have at least one message", _MISTRAL_VALIDATOR,
    ),
)

LEFT_OUT: dict[str, str] = {
    "M7": "content XOR tool_calls applies to tokenizer v1-v3 models only",
    "M9": "legacy 2024 error text; the same bodies are reported by M1 and M5",
}
