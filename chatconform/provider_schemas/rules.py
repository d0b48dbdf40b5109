"""Sequence rules: the provider rules JSON Schema cannot express (listed in docs/provider-rules.md).

They relate two messages (role order, a tool call and its answer), need the last message, or
order blocks inside one message. Four primitives cover them all: a role-transition table per
provider (M1, B3, A4, G6/G7), a pending-tool-id tracker (O7-O9, Z2, M4/M5, A8/A9, B4; G8 counts
parts), last-message rules (M2, M3, A10, A11, G10, B8) and in-message ordering (A9: tool_result
blocks first).

Every check reads the body defensively: the schema has already reported malformed shapes, so
a message or block that cannot be read is skipped here, never raised on.
"""

from __future__ import annotations

from typing import Any, Callable

from .problems import GLM_1214, Problem, json_path

# --- defensive readers -------------------------------------------------------------------


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _role(message: Any) -> str | None:
    return _str(message.get("role")) if isinstance(message, dict) else None


def _alias(mapping: dict, camel: str, snake: str) -> Any:
    """Gemini REST parses both the camelCase and the proto snake_case field name."""
    value = mapping.get(camel)
    return mapping.get(snake) if value is None else value


class _Report:
    """Collects the sequence problems of one body for one provider."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.problems: list[Problem] = []

    def error(self, rule: str, parts: list, message: str) -> None:
        self.problems.append(Problem(rule, json_path(parts), message, self.provider, "error", source="sequence"))

    def warning(self, rule: str, parts: list, message: str) -> None:
        self.problems.append(Problem(rule, json_path(parts), message, self.provider, "warning", source="sequence"))


# --- primitive 1: role-transition tables (previous role -> roles allowed next) ----------

# Mistral hosted API (M1). mistral-common allows tool -> user since #218 (2026-04-27), but the
# hosted API still rejected it in 2026-05..08 reports, so the hosted matrix is used.
MISTRAL_NEXT_ROLES: dict[str, frozenset[str]] = {
    "system": frozenset({"user", "assistant", "system"}),
    "user": frozenset({"assistant", "system", "user"}),
    "assistant": frozenset({"assistant", "user", "tool"}),
    "tool": frozenset({"assistant", "tool"}),
}

# Strict user/assistant alternation: required by Bedrock Converse (B3, tool results travel in
# user turns); Anthropic combines a run of same-role turns instead, so there it is a warning (A4).
ALTERNATION_NEXT_ROLES: dict[str, frozenset[str]] = {
    "user": frozenset({"assistant"}),
    "assistant": frozenset({"user"}),
}

# Gemini (G6, G7) over turn kinds rather than roles: a function-call turn may only follow a
# user turn or a function-response turn; a function-response turn only a function-call turn.
# Keyed by the current kind: the kinds allowed just before it (None = first turn).
GEMINI_ALLOWED_BEFORE: dict[str, frozenset[str | None]] = {
    "call": frozenset({"user", "response"}),
    "response": frozenset({"call"}),
}


# --- primitive 2: the pending-tool-id tracker --------------------------------------------


class PendingCalls:
    """The tool-call ids one assistant turn opened (each with the index of the message that
    opened it) and which of them were answered."""

    __slots__ = ("opened", "answered")

    def __init__(self, opened: dict[str, int] | None = None) -> None:
        self.opened: dict[str, int] = opened or {}
        self.answered: set[str] = set()

    @classmethod
    def at(cls, index: int, ids: list[str]) -> PendingCalls:
        return cls(dict.fromkeys(ids, index))

    def answer(self, call_id: str) -> str:
        """Close ``call_id``: "ok", "unknown" (never opened) or "duplicate" (closed before)."""
        if call_id not in self.opened:
            return "unknown"
        if call_id in self.answered:
            return "duplicate"
        self.answered.add(call_id)
        return "ok"

    def unanswered(self) -> list[str]:
        return [call_id for call_id in self.opened if call_id not in self.answered]


def _openai_call_ids(message: dict) -> list[str]:
    return [c["id"] for c in _list(message.get("tool_calls")) if isinstance(c, dict) and isinstance(c.get("id"), str)]


# --- OpenAI-compatible dialects ----------------------------------------------------------

O7 = "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"
O8 = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)
O9 = "Invalid parameter: 'tool_call_id' of '{id}' not found in 'tool_calls' of previous message."


def _tool_pairing(messages: list, on_problem: Callable[[str, list, str], None], *, duplicates: bool) -> None:
    """OpenAI's pairing: tool messages directly after the assistant turn that called them.

    ``on_problem(kind, parts, detail)`` receives kind O7/O8/O9/"duplicate" so OpenAI and GLM
    can report the same findings under their own rule ids and texts.
    """
    pending: PendingCalls | None = None
    opened_at = 0
    for i, message in enumerate(messages):
        role = _role(message)
        if role is None:
            continue
        if role == "tool":
            if pending is None:
                on_problem("O7", ["messages", i, "role"], "")
                continue
            call_id = _str(message.get("tool_call_id"))
            if call_id is None:
                continue  # the schema reports the missing id
            status = pending.answer(call_id)
            if status == "unknown":
                on_problem("O9", ["messages", i, "tool_call_id"], call_id)
            elif status == "duplicate" and duplicates:
                on_problem("duplicate", ["messages", i, "tool_call_id"], call_id)
            continue
        if pending is not None and pending.unanswered():
            on_problem("O8", ["messages", opened_at, "tool_calls"], ", ".join(pending.unanswered()))
        pending = None
        if role == "assistant" and _list(message.get("tool_calls")):
            ids = _openai_call_ids(message)
            if duplicates and len(set(ids)) != len(ids):
                on_problem("duplicate", ["messages", i, "tool_calls"], "")
            pending, opened_at = PendingCalls.at(i, ids), i
    if pending is not None and pending.unanswered():
        on_problem("O8", ["messages", opened_at, "tool_calls"], ", ".join(pending.unanswered()))


def _openai(body: dict, report: _Report) -> None:
    texts = {"O7": O7, "O8": O8, "O9": O9}

    def on_problem(kind: str, parts: list, detail: str) -> None:
        report.error(kind, parts, texts[kind].format(ids=detail, id=detail))

    _tool_pairing(_list(body.get("messages")), on_problem, duplicates=False)


def _glm(body: dict, report: _Report) -> None:
    # Z2: OpenAI's pairing plus duplicate tool-call ids, all answered with error 1214.
    _tool_pairing(
        _list(body.get("messages")),
        lambda kind, parts, detail: report.error("Z2", parts, GLM_1214),
        duplicates=True,
    )


def _qwen(body: dict, report: _Report) -> None:
    """Every Qwen3.5 template guard (Q1-Q5) is a schema rule; the template checks no pairing."""


# --- Mistral -------------------------------------------------------------------------------


M4 = "Not the same number of function calls and responses"


def _mistral(body: dict, report: _Report) -> None:
    messages = _list(body.get("messages"))
    last = len(messages) - 1

    previous: str | None = None  # M1
    for i, message in enumerate(messages):
        role = _role(message)
        if role not in MISTRAL_NEXT_ROLES:
            continue
        if previous is not None and role not in MISTRAL_NEXT_ROLES[previous]:
            report.error("M1", ["messages", i, "role"], f"Unexpected role '{role}' after role '{previous}'")
        previous = role

    # M2: the validator only rejects a final assistant message without prefix (a final system
    # message passes), so the text always ends in "assistant".
    if last > 0 and _role(messages[last]) == "assistant" and messages[last].get("prefix") is not True:
        report.error(
            "M2",
            ["messages", last, "role"],
            "Expected last role User or Tool (or Assistant with prefix True) for serving but got assistant",
        )

    for i, message in enumerate(messages):  # M3
        if i != last and _role(message) == "assistant" and message.get("prefix") is True:
            report.error("M3", ["messages", i, "prefix"], "Assistant message with prefix True must be last message")

    # M4/M5 (validator V11+): an assistant message opens its calls; tool messages answer them
    # until the next assistant message, which (like the end, when serving) needs none pending.
    pending: PendingCalls | None = None
    opened_at = 0
    for i, message in enumerate(messages):
        role = _role(message)
        if role == "tool":
            call_id = _str(message.get("tool_call_id"))
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
            for j, call in enumerate(_list(message.get("tool_calls"))):
                call_id = _str(_dict(call).get("id"))
                if call_id is None:
                    continue
                if call_id in ids:
                    report.error("M5", ["messages", i, "tool_calls", j, "id"], f"Duplicate tool call id {call_id} in assistant message")
                ids.append(call_id)
            pending, opened_at = PendingCalls.at(i, ids), i
    if pending is not None and pending.unanswered():
        report.error("M4", ["messages", opened_at, "tool_calls"], M4)


# --- Anthropic -----------------------------------------------------------------------------

A2 = "messages.{i}.role: Input should be 'user' or 'assistant'"
# Only these models accept role "system" inside messages (mid-conversation system blocks).
SYSTEM_ROLE_MODELS = ("claude-opus-4-8",)
A4 = 'messages: roles must alternate between "user" and "assistant", but found multiple "{role}" roles in a row'
A5 = 'messages: first message must use the "user" role'
A6 = "messages.{i}: all messages must have non-empty content except for the optional final assistant message"
A8 = (
    "messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. "
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
)
A9 = (
    "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. "
    "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
)
A10 = "messages: final assistant content cannot end with trailing whitespace"
A11 = "This model does not support assistant message prefill. The conversation must end with a user message."


def _blocks(message: dict, i: int) -> list[tuple[int, int | None, Any]]:
    """(message index, block index, block) of a message; string content is one text block."""
    content = message.get("content")
    if isinstance(content, str):
        return [(i, None, {"type": "text", "text": content})]
    return [(i, j, block) for j, block in enumerate(_list(content))]


def _block_type(block: Any) -> str | None:
    return _str(block.get("type")) if isinstance(block, dict) else None


def _report_a9(pending: PendingCalls, report: _Report) -> None:
    missing = pending.unanswered()
    if missing:
        i = pending.opened[missing[0]]
        report.error("A9", ["messages", i], A9.format(i=i, ids=", ".join(missing)))


def _anthropic(body: dict, report: _Report) -> None:
    messages = _list(body.get("messages"))
    last = len(messages) - 1

    first_role = _role(messages[0]) if messages else None
    if first_role is not None and first_role != "user":
        report.warning("A5", ["messages", 0, "role"], A5)

    # Consecutive same-role messages are combined by the API (A4: a warning); the pairing
    # rules then apply to the combined turns.
    turns: list[tuple[str, list[tuple[int, int | None, Any]]]] = []
    for i, message in enumerate(messages):
        role = _role(message)
        if role is None:
            continue
        previous = turns[-1][0] if turns else None
        allowed = ALTERNATION_NEXT_ROLES.get(previous or "")
        if allowed is not None and role in ALTERNATION_NEXT_ROLES and role not in allowed:
            report.warning("A4", ["messages", i, "role"], A4.format(role=role))
            turns[-1][1].extend(_blocks(message, i))
        else:
            turns.append((role, _blocks(message, i)))

    for i, message in enumerate(messages):  # A6, the assistant half (user half: schema)
        if i != last and _role(message) == "assistant" and message.get("content") in ("", []):
            report.error("A6", ["messages", i, "content"], A6.format(i=i))

    # A8/A9: an assistant turn opens its tool_use ids; the next turn must start with a
    # tool_result for each (results after another block do not count), and may hold no result
    # for an id the previous turn did not open.
    pending = PendingCalls()
    for role, blocks in turns:
        if role == "user":
            leading = True
            for i, j, block in blocks:
                if _block_type(block) != "tool_result":
                    leading = False
                    continue
                call_id = _str(block.get("tool_use_id"))
                if call_id is None:
                    continue
                if call_id not in pending.opened:
                    report.error("A8", ["messages", i, "content", j], A8.format(i=i, j=j, id=call_id))
                elif leading:
                    pending.answer(call_id)
        _report_a9(pending, report)
        pending = PendingCalls()
        if role == "assistant":
            for i, _, block in blocks:
                call_id = _str(block.get("id")) if _block_type(block) == "tool_use" else None
                if call_id is not None:
                    pending.opened.setdefault(call_id, i)
    _report_a9(pending, report)

    model = _str(body.get("model")) or ""
    if not model.startswith(SYSTEM_ROLE_MODELS):  # A2, the model-gated half (the enum is schema)
        for i, message in enumerate(messages):
            if _role(message) == "system":
                report.error("A2", ["messages", i, "role"], A2.format(i=i))

    if last >= 0 and _role(messages[last]) == "assistant":  # A11: its level depends on the model
        report.error("A11", ["messages", last, "role"], A11)

    if last >= 0 and _role(messages[last]) == "assistant":  # A10
        content = messages[last].get("content")
        if isinstance(content, str) and content[-1:].isspace():
            report.error("A10", ["messages", last, "content"], A10)
        elif isinstance(content, list) and content:
            block = content[-1]
            text = _str(block.get("text")) if _block_type(block) == "text" else None
            if text and text[-1].isspace():
                report.error("A10", ["messages", last, "content", len(content) - 1, "text"], A10)


# --- Gemini --------------------------------------------------------------------------------

G6 = "Please ensure that function call turn comes immediately after a user turn or after a function response turn."
G7 = "Please ensure that function response turn comes immediately after a function call turn."
G8 = (
    "Please ensure that the number of function response parts is equal to the number of function call "
    "parts of the function call turn."
)
G10 = "Please ensure that multiturn requests ends with a user role or a function response."
# Vertex's answer to a content mixing function responses with other parts: the text after
# them is read as a model turn (https://github.com/Prism-Shadow/agenthub/pull/189,
# https://github.com/deepnoodle-ai/dive/pull/287); the Gemini API answers gemini-3.5-flash
# with an empty response (https://github.com/pydantic/pydantic-ai/issues/4210).
G11 = "Requests ending with a model turn are not supported."


def _gemini_turn(content: Any) -> tuple[str | None, list[dict], list[dict]]:
    """(kind, functionCall payloads, functionResponse payloads); kind None if unreadable.

    Kinds: "model" (plain model turn), "call" (model turn with function calls), "user",
    "response" (user turn with function responses). A missing role means "user".
    """
    if not isinstance(content, dict):
        return None, [], []
    role = content.get("role", "user")
    if role not in ("user", "model"):
        return None, [], []
    parts = [p for p in _list(content.get("parts")) if isinstance(p, dict)]
    calls = [c for p in parts if isinstance(c := _alias(p, "functionCall", "function_call"), dict)]
    responses = [r for p in parts if isinstance(r := _alias(p, "functionResponse", "function_response"), dict)]
    if role == "model":
        return ("call" if calls else "model"), calls, []
    return ("response" if responses else "user"), [], responses


def _gemini(body: dict, report: _Report) -> None:
    contents = _list(body.get("contents"))
    turns = [_gemini_turn(content) for content in contents]
    for i, (kind, calls, responses) in enumerate(turns):
        if kind is None:
            continue
        previous = turns[i - 1][0] if i > 0 else None
        if i > 0 and previous is None:
            continue  # the turn before could not be read: no verdict on the order
        if kind == "call" and previous not in GEMINI_ALLOWED_BEFORE["call"]:
            report.error("G6", ["contents", i], G6)
        if kind == "response" and previous not in GEMINI_ALLOWED_BEFORE["response"]:
            report.error("G7", ["contents", i], G7)
        if previous == "call":  # G8: the turn after a call turn answers every call
            opened = turns[i - 1][1]
            if len(responses) != len(opened):
                report.error("G8", ["contents", i], G8)
            else:
                call_ids = [_str(c.get("id")) for c in opened]
                answer_ids = [_str(r.get("id")) for r in responses]
                if all(call_ids) and all(answer_ids) and sorted(call_ids) != sorted(answer_ids):  # type: ignore[type-var]
                    report.error("G8", ["contents", i], G8)
        if kind == "response":  # G11: function responses travel alone in their content
            parts = _list(contents[i].get("parts"))
            if any(isinstance(p, dict) and _alias(p, "functionResponse", "function_response") is None
                   for p in parts):
                report.error("G11", ["contents", i], G11)
    if turns and turns[-1][0] in ("model", "call"):
        report.warning("G10", ["contents", len(turns) - 1], G10)


# --- Bedrock Converse ------------------------------------------------------------------------

B3 = (
    "A conversation must alternate between user and assistant roles. Make sure the conversation "
    "alternates between user and assistant roles and try again."
)
B4_COUNT = "The number of toolResult blocks at messages.{i}.content exceeds the number of toolUse blocks of previous turn."
# Bedrock passes Claude's own pairing errors through with this prefix.
B4_UNKNOWN = "The model returned the following errors: " + A8
B4_MISSING = "The model returned the following errors: " + A9
B8 = "A conversation must end with a user message."


def _bedrock_ids(message: Any, member: str) -> list[tuple[int, str]]:
    """(block index, toolUseId) of the toolUse or toolResult blocks of a message."""
    if not isinstance(message, dict):
        return []
    out = []
    for j, block in enumerate(_list(message.get("content"))):
        inner = _dict(block).get(member)
        call_id = _str(inner.get("toolUseId")) if isinstance(inner, dict) else None
        if call_id is not None:
            out.append((j, call_id))
    return out


def _bedrock(body: dict, report: _Report) -> None:
    messages = _list(body.get("messages"))
    previous: str | None = None  # B3
    for i, message in enumerate(messages):
        role = _role(message)
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
        role = _role(message)
        if role == "user":
            results = _bedrock_ids(message, "toolResult")
            if len(results) > len(pending.opened):
                report.error("B4", ["messages", i, "content"], B4_COUNT.format(i=i))
            for j, call_id in results:
                if pending.answer(call_id) == "unknown":
                    report.error("B4", ["messages", i, "content", j], B4_UNKNOWN.format(i=i, j=j, id=call_id))
        if pending.unanswered():
            report.error("B4", ["messages", opened_at], B4_MISSING.format(i=opened_at, ids=", ".join(pending.unanswered())))
        pending = PendingCalls()
        if role == "assistant":
            pending, opened_at = PendingCalls.at(i, [call_id for _, call_id in _bedrock_ids(message, "toolUse")]), i
    if pending.unanswered():
        report.error("B4", ["messages", opened_at], B4_MISSING.format(i=opened_at, ids=", ".join(pending.unanswered())))

    if messages and _role(messages[-1]) == "assistant":  # B8
        report.warning("B8", ["messages", len(messages) - 1, "role"], B8)


_CHECKS: dict[str, Callable[[dict, _Report], None]] = {
    "openai-chat": _openai,
    "qwen-vllm": _qwen,
    "glm": _glm,
    "mistral": _mistral,
    "anthropic": _anthropic,
    "gemini": _gemini,
    "bedrock-converse": _bedrock,
}


def sequence_problems(body: dict, provider: str) -> list[Problem]:
    """The sequence-rule problems of one request body (an object; the provider is known)."""
    report = _Report(provider)
    _CHECKS[provider](body, report)
    return report.problems
