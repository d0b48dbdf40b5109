"""Gemini generateContent: function-call and function-response turn order (G6-G8, G11), the last turn (G10)."""

from __future__ import annotations

from typing import Any

from .common import SCHEMA, SEQUENCE, Report, RuleInfo, alias, as_list, as_str, rules

# Gemini (G6, G7) over turn kinds rather than roles: a function-call turn may only follow a
# user turn or a function-response turn; a function-response turn only a function-call turn.
# Keyed by the current kind: the kinds allowed just before it (None = first turn).
GEMINI_ALLOWED_BEFORE: dict[str, frozenset[str | None]] = {
    "call": frozenset({"user", "response"}),
    "response": frozenset({"call"}),
}


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
    parts = [p for p in as_list(content.get("parts")) if isinstance(p, dict)]
    calls = [c for p in parts if isinstance(c := alias(p, "functionCall", "function_call"), dict)]
    responses = [r for p in parts if isinstance(r := alias(p, "functionResponse", "function_response"), dict)]
    if role == "model":
        return ("call" if calls else "model"), calls, []
    return ("response" if responses else "user"), [], responses


def check(body: dict, report: Report) -> None:
    contents = as_list(body.get("contents"))
    turns = [_gemini_turn(content) for content in contents]
    for i, (kind, _, responses) in enumerate(turns):
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
                call_ids = [as_str(c.get("id")) for c in opened]
                answer_ids = [as_str(r.get("id")) for r in responses]
                if all(call_ids) and all(answer_ids) and sorted(call_ids) != sorted(answer_ids):  # type: ignore[type-var]
                    report.error("G8", ["contents", i], G8)
        if kind == "response":  # G11: function responses travel alone in their content
            parts = as_list(contents[i].get("parts"))
            if any(isinstance(p, dict) and alias(p, "functionResponse", "function_response") is None
                   for p in parts):
                report.error("G11", ["contents", i], G11)
    if turns and turns[-1][0] in ("model", "call"):
        report.warning("G10", ["contents", len(turns) - 1], G10)


_GENAI_TYPES = "https://github.com/googleapis/python-genai/blob/main/google/genai/types.py"

CATALOG = rules(
    RuleInfo(
        "G0", "request shape (python-genai Content/Part)", SCHEMA,
        "* GenerateContentRequest.{gloc}: {detail}", _GENAI_TYPES, text="synthesized",
    ),
    RuleInfo(
        "G1", "systemInstruction is a Content", SCHEMA,
        "* GenerateContentRequest.{gloc}: {detail}", _GENAI_TYPES, text="synthesized",
    ),
    RuleInfo(
        "G2", "contents present and non-empty", SCHEMA,
        "* GenerateContentRequest.contents: contents is not specified",
        "https://github.com/googleapis/js-genai/issues/912",
    ),
    RuleInfo(
        "G3", "role is user or model", SCHEMA,
        "Please use a valid role: user, model.", "https://github.com/BerriAI/litellm/pull/22046",
    ),
    RuleInfo(
        "G4", "parts present and non-empty", SCHEMA,
        "* GenerateContentRequest.{gloc}: contents.parts must not be empty.",
        "https://github.com/egoist/chatwise-releases/issues/250",
    ),
    RuleInfo(
        "G5", "a part sets exactly one data member", SCHEMA,
        "* GenerateContentRequest.{gloc}.data: required oneof field 'data' must have one initialized field",
        "https://github.com/boldsoftware/sketch/issues/68",
    ),
    RuleInfo(
        "G6", "a function-call turn follows a user or function-response turn", SEQUENCE,
        "Please ensure that function call turn comes immediately after a user turn or after a function "
        "response turn.",
        "https://github.com/google-gemini/gemini-cli/issues/11814",
    ),
    RuleInfo(
        "G7", "a function-response turn follows a function-call turn", SEQUENCE,
        "Please ensure that function response turn comes immediately after a function call turn.",
        "https://github.com/langchain-ai/langchain/issues/27799",
    ),
    RuleInfo(
        "G8", "the turn after a function-call turn answers every call (count, ids)", SEQUENCE,
        "Please ensure that the number of function response parts is equal to the number of function call "
        "parts of the function call turn.",
        "https://github.com/google-gemini/gemini-cli/issues/4217",
    ),
    RuleInfo(
        "G10", "the request ends with a user turn", SEQUENCE,
        "Please ensure that multiturn requests ends with a user role or a function response.",
        "https://github.com/songquanpeng/one-api/issues/836", severity="warning",
    ),
    RuleInfo(
        "G11", "a content holding function responses holds nothing else (no text, no inline data)", SEQUENCE,
        "Requests ending with a model turn are not supported.",
        "https://github.com/Prism-Shadow/agenthub/pull/189",
    ),
    RuleInfo(
        "G12", "a text part of a user or model turn is not empty", SCHEMA,
        "Unable to submit request because it has an empty text parameter. Add a value to the parameter and try "
        "again.",
        "https://github.com/google-gemini/deprecated-generative-ai-python/issues/697",
    ),
)

LEFT_OUT: dict[str, str] = {
    "G9": "Gemini 3 thought signatures: needs to know which turns the current model produced",
}
