"""The ``payload`` contract: ``to_payload(history, *, provider, instructions=None) -> dict``.

Run once per provider the implementation declares. Every dialect is read through one
turn view (role, texts, tool calls, tool results), so the checks are written once.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st
from pydantic import ValidationError
from pydantic_ai.messages import (
    CompactionPart,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from chatconform.conformance.contracts import Contract, Example
from chatconform.conformance.registry import ConfigError, Violation
from chatconform.provider_schemas import PROVIDERS, turn_view, validate
from chatconform.reference.payload import to_payload
from chatconform.strategies.histories import histories, instructions


@dataclass
class PayloadCase:
    history: list[ModelMessage]
    instructions: str | None = None


def _history_json(history: list[ModelMessage]) -> Any:
    """JSON for people to read: fields left at None are omitted (they load back as None)."""
    return ModelMessagesTypeAdapter.dump_python(history, mode="json", exclude_none=True)


class PayloadContract(Contract):
    name = "payload"
    method = "to_payload"
    signature = "to_payload(history, *, provider, instructions=None) -> dict"
    crash_rationale = ("dify-agent raised UnexpectedModelBehavior on history parts it did not "
                       "map; a mapper that raises takes the whole agent run down")
    mutation_rationale = ("pydantic-ai ModelRequest.__post_init__ mutates a parts list passed in; "
                          "a mapper that edits the stored history corrupts what is persisted")
    # Run once per provider: half the profile's budget each still covers 3.5x in all.
    examples_scale = 0.5

    def variants(self, impl):
        return [p for p in PROVIDERS if p in impl.providers]

    def skip_reason(self, impl):
        unknown = sorted(set(impl.providers) - set(PROVIDERS))
        if unknown:
            raise ConfigError(f"{impl.spec} declares unknown provider(s) {', '.join(unknown)}; "
                              f"known: {', '.join(PROVIDERS)}")
        if not impl.providers:
            return f"{impl.name} declares no providers (set .providers to the ids it maps to)"
        return None

    def cases(self, variant):
        return st.builds(PayloadCase, histories(), instructions())

    def call(self, fn, case, variant):
        return fn(case.history, provider=variant, instructions=case.instructions)

    def fingerprint(self, case):
        return ModelMessagesTypeAdapter.dump_json(case.history), case.instructions

    def copy_case(self, case):
        return PayloadCase(ModelMessagesTypeAdapter.validate_json(
            ModelMessagesTypeAdapter.dump_json(case.history)), case.instructions)

    def reference(self, case, variant):
        return to_payload(case.history, provider=variant, instructions=case.instructions)

    def output_problem(self, output):
        if not isinstance(output, dict):
            return f"returned {type(output).__name__}, expected a request body (dict)"
        try:
            json.dumps(output)
        except (TypeError, ValueError) as exc:
            return f"the request body is not JSON-serializable ({exc})"
        return None

    def case_to_json(self, case):
        return {"history": _history_json(case.history), "instructions": case.instructions}

    def case_from_json(self, data):
        if not isinstance(data, dict) or "history" not in data:
            raise ValueError('a payload case is {"history": [...], "instructions": ...}')
        try:
            history = ModelMessagesTypeAdapter.validate_python(data["history"])
        except ValidationError as exc:
            raise ValueError(f"history is not a pydantic-ai message list: {exc}") from None
        return PayloadCase(history, data.get("instructions"))

    def size(self, case):
        return len(case.history)


CONTRACT = PayloadContract()


# -- what the history holds ------------------------------------------------------------------

def _user_texts(part: UserPromptPart) -> list[str]:
    if isinstance(part.content, str):
        return [part.content]
    return [item for item in part.content if isinstance(item, str)]


def _history_items(history: list[ModelMessage]) -> list[tuple[str, str]]:
    """Non-system content in order: ("text", text) and ("call", tool name)."""
    items: list[tuple[str, str]] = []
    for message in history:
        for part in message.parts:
            if isinstance(part, UserPromptPart):
                items += [("text", t) for t in _user_texts(part) if t.strip()]
            elif isinstance(part, CompactionPart) and isinstance(message, ModelRequest):
                if part.content and part.content.strip():
                    items.append(("text", part.content))
            elif isinstance(part, TextPart) and isinstance(message, ModelResponse):
                if part.content.strip():
                    items.append(("text", part.content))
            elif isinstance(part, ToolCallPart):
                items.append(("call", part.tool_name))
    return items


def _system_texts(case: PayloadCase) -> list[str]:
    texts = [p.content for m in case.history if isinstance(m, ModelRequest)
             for p in m.parts if isinstance(p, SystemPromptPart) and p.content.strip()]
    if case.instructions and case.instructions.strip():
        texts.append(case.instructions)
    return texts


def _results(history: list[ModelMessage]) -> Counter:
    return Counter(p.tool_name for m in history if isinstance(m, ModelRequest)
                   for p in m.parts if isinstance(p, ToolReturnPart))


def _turns(ex: Example):
    return ex.once("turns", lambda: turn_view(ex.output, ex.variant))


def _result_names(turns) -> Counter:
    """Tool results by tool name, the name taken from the matching call when it is absent."""
    names = {call_id: name for t in turns for call_id, name in t.tool_calls}
    return Counter(name or names.get(call_id, "") for t in turns for call_id, name in t.tool_results)


# -- checks ------------------------------------------------------------------------------------

def _problems(ex: Example, source: str) -> None:
    problems = ex.once("problems", lambda: validate(ex.output, ex.variant))
    found = [p for p in problems if p.source == source and p.severity == "error"]
    if found:
        first = found[0]
        raise Violation(f"{first.rule} at {first.path}: {first.message}"
                        + (f" (and {len(found) - 1} more)" if len(found) > 1 else ""),
                        expected="no problems",
                        actual=[f"{p.rule} {p.path}: {p.message}" for p in found[:5]])


@CONTRACT.check(
    "schema_valid",
    title="the body matches the provider's request schema",
    rationale="provider 400s on shape: OpenAI 'Invalid value for content: expected a string, got "
              "null', Gemini 'contents.parts must not be empty', Bedrock blank text blocks",
)
def schema_valid(ex: Example) -> None:
    _problems(ex, "schema")


@CONTRACT.check(
    "provider_rules",
    title="the provider's sequence rules hold (role order, tool ids, last message)",
    rationale="Qwen3.5+/vLLM 'System message must be at the beginning.', GLM 1214, Bedrock "
              "'A conversation must alternate between user and assistant roles', Mistral role order",
)
def provider_rules(ex: Example) -> None:
    _problems(ex, "sequence")


@CONTRACT.check(
    "system_first",
    title="at most one system message, and only at index 0",
    rationale="dify PR #39136: instructions spliced after the leading system block; a sort-only "
              "fix (dify PR #39372) still sends two system messages, which Qwen rejects",
)
def system_first(ex: Example) -> None:
    turns = _turns(ex)
    where = [t.path for t in turns if t.role == "system"]
    if len(where) > 1 or (where and turns[0].role != "system"):
        raise Violation(f"system content at {', '.join(where)}", expected="one system message first",
                        actual=[t.role for t in turns])


@CONTRACT.check(
    "user_led",
    title="the first non-system turn is a user turn when the history has user-voiced content",
    rationale="GLM 1214 'The messages parameter is illegal' after compaction: a summary sent as "
              "system left no user message (CLAI provider_bound_summary fix)",
)
def user_led(ex: Example) -> None:
    voiced = any(isinstance(p, (UserPromptPart, CompactionPart))
                 for m in ex.case.history if isinstance(m, ModelRequest) for p in m.parts)
    if not voiced:
        return
    first = next((t for t in _turns(ex) if t.role != "system"), None)
    if first is None or first.role != "user":
        raise Violation("the payload does not lead with a user turn",
                        expected="user", actual=first.role if first else "no turn at all")


@CONTRACT.check(
    "tool_pairing",
    title="every tool call is answered once, right after it, and every result has its call",
    rationale="OpenAI 'messages with role tool must be a response to a preceding message with "
              "tool_calls'; Anthropic 'tool_use ids were found without tool_result blocks "
              "immediately after'",
)
def tool_pairing(ex: Example) -> None:
    pending: dict[str, str] = {}  # call id -> path of its call
    seen_calls: set[str] = set()
    answered: set[str] = set()
    for turn in _turns(ex):
        for call_id, _ in turn.tool_results:
            if call_id not in seen_calls:
                raise Violation(f"tool result {call_id} at {turn.path} has no earlier call")
            if call_id in answered:
                raise Violation(f"tool call {call_id} is answered twice (again at {turn.path})")
            answered.add(call_id)
            pending.pop(call_id, None)
        if pending and not turn.tool_results:
            call_id, path = next(iter(pending.items()))
            raise Violation(f"tool call {call_id} ({path}) is not answered before {turn.path}",
                            expected="its result next", actual=turn.role)
        if pending and turn.tool_calls:
            raise Violation(f"new tool calls at {turn.path} while {', '.join(pending)} are open")
        for call_id, _ in turn.tool_calls:
            if call_id in seen_calls:
                raise Violation(f"tool call id {call_id} is used twice (again at {turn.path})")
            seen_calls.add(call_id)
            pending[call_id] = turn.path
    if pending:
        raise Violation(f"tool calls never answered: {', '.join(pending)}")


def _payload_stream(ex: Example) -> tuple[str, list[str]]:
    """All non-system text of the payload as one string, and its tool calls by name."""
    def compute():
        turns = _turns(ex)
        text = "\n".join(s for t in turns if t.role != "system" for s in t.texts)
        return text, [name for t in turns for _, name in t.tool_calls]

    return ex.once("stream", compute)


@CONTRACT.check(
    "order_preserved",
    title="non-system content keeps its order",
    rationale="dify-agent PR #39136 contract: all non-system messages keep their relative order; "
              "a reordered history answers questions that were never asked last",
)
def order_preserved(ex: Example) -> None:
    text, calls = _payload_stream(ex)
    cursor, call_cursor = 0, 0
    for kind, value in ex.once("items", lambda: _history_items(ex.case.history)):
        if kind == "text":
            found = text.find(value, cursor)
            if found < 0:
                if text.find(value) >= 0:
                    raise Violation(f"{value!r} comes earlier than it should", expected="history order")
                continue  # lost content is payload.nothing_lost's finding
            cursor = found + len(value)
        else:
            try:
                call_cursor = calls.index(value, call_cursor) + 1
            except ValueError:
                if value in calls:
                    raise Violation(f"tool call {value} is out of order", expected="history order",
                                    actual=calls) from None


@CONTRACT.check(
    "nothing_lost",
    title="every system text, user text, assistant text, tool call and result is sent",
    rationale="dify-agent merge of list-typed system content dropped it; mappers that drop "
              "empty-looking turns lose the user's words",
)
def nothing_lost(ex: Example) -> None:
    turns = _turns(ex)
    system = "\n".join(s for t in turns if t.role == "system" for s in t.texts)
    text, calls = _payload_stream(ex)
    for value in _system_texts(ex.case):
        if value not in system:
            raise Violation(f"system text {value!r} is not in the system message")
    items = ex.once("items", lambda: _history_items(ex.case.history))
    for kind, value in items:
        if kind == "text" and value not in text:
            raise Violation(f"{value!r} is missing from the payload")
    want, have = Counter(v for k, v in items if k == "call"), Counter(calls)
    if want - have:
        raise Violation("tool calls missing", expected=dict(want), actual=dict(have))
    results_want, results_have = _results(ex.case.history), _result_names(turns)
    if results_want - results_have:
        raise Violation("tool results missing", expected=dict(results_want), actual=dict(results_have))


def _shape(turns) -> list[tuple]:
    return [(t.role, tuple(t.texts), tuple(n for _, n in t.tool_calls), len(t.tool_results))
            for t in turns]


@CONTRACT.check(
    "matches_reference",
    title="the same turns as the reference (roles, texts, tool calls; ids may differ)",
    rationale="the reference policy (dify PR #39136 merge, summary as user, interrupted results "
              "for dangling calls) is what every provider accepts",
)
def matches_reference(ex: Example) -> None:
    expected = _shape(turn_view(ex.reference, ex.variant))
    actual = _shape(_turns(ex))
    if expected != actual:
        first = next((i for i, (a, b) in enumerate(zip(expected, actual)) if a != b),
                     min(len(expected), len(actual)))
        raise Violation(f"the turns differ from the reference at turn {first}",
                        expected=[list(s) for s in expected[first:first + 3]],
                        actual=[list(s) for s in actual[first:first + 3]])
