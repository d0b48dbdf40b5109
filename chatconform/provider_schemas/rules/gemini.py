"""Gemini generateContent: function-call and function-response turn order (G6-G8, G11), the last turn (G10),
function declarations (G14, G15)."""

from __future__ import annotations

import json
import re
from typing import Any

from .common import (
    SCHEMA,
    SEQUENCE,
    Family,
    ModelDependence,
    Report,
    RuleInfo,
    alias,
    answer_values,
    as_dict,
    as_list,
    as_str,
    rules,
)

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
G14 = "Invalid JSON payload received. Unknown name \"{key}\" at '{where}': Cannot find field."
G14_LIST = ("Invalid JSON payload received. Unknown name \"type\" at '{where}': Proto field is not repeating, "
            "cannot start list.")
#: JSON Schema keywords a function declaration's ``parameters`` (an OpenAPI Schema object) has
#: no field for, each seen rejected (``parametersJsonSchema`` takes them).
_NOT_IN_SCHEMA = ("additionalProperties", "$schema", "const", "propertyNames")
G9 = ("Function call is missing a thought_signature in functionCall parts. This is required for tools to work "
      "correctly, and missing thought_signature may lead to degraded model performance. Additional data, function "
      "call `{name}` , position {position}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures "
      "for more details.")
G15 = ("* GenerateContentRequest.tools[{i}].function_declarations[{j}].name: Invalid function name. Must start with a "
       "letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.) or dashes (-), with a "
       "maximum length of 64.")
_FUNCTION_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.\-]{0,63}$")
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


_Turn = tuple[str | None, list[dict], list[dict]]


def _combined(turns: list[_Turn]) -> list[tuple[int, str | None, list[dict], list[dict]]]:
    """The turns with each run of consecutive function-response contents taken as one turn:
    gemini-2.5-flash answered three function-response contents in a row after one call turn
    of three calls (crewAI recorded it, 2026-02-18). Each turn carries the index of its first
    content. Nothing else is combined: no evidence says Gemini takes user text between calls
    and their responses, and a call turn right after a model turn is rejected (G6)."""
    out: list[tuple[int, str | None, list[dict], list[dict]]] = []
    for i, (kind, calls, responses) in enumerate(turns):
        if out and kind == "response" and out[-1][1] == "response":
            start, _, _, answered = out[-1]
            out[-1] = (start, "response", [], answered + responses)
            continue
        out.append((i, kind, calls, responses))
    return out


def _schema_faults(schema: Any, where: str, parts: list) -> list[tuple[list, str]]:
    """(path, message) of every JSON Schema keyword of ``schema`` Gemini's Schema has no field
    for, walked as Gemini names the places (``properties[0].value``)."""
    if not isinstance(schema, dict):
        return []
    found = [([*parts, key], G14.format(key=key, where=where)) for key in _NOT_IN_SCHEMA if key in schema]
    if isinstance(schema.get("type"), list):
        found.append(([*parts, "type"], G14_LIST.format(where=where)))
    for n, (name, sub) in enumerate(as_dict(schema.get("properties")).items()):
        found += _schema_faults(sub, f"{where}.properties[{n}].value", [*parts, "properties", name])
    if isinstance(schema.get("items"), dict):
        found += _schema_faults(schema["items"], f"{where}.items", [*parts, "items"])
    for n, sub in enumerate(as_list(alias(schema, "anyOf", "any_of"))):
        found += _schema_faults(sub, f"{where}.any_of[{n}]", [*parts, "anyOf", n])
    return found


def _declarations(body: dict, report: Report) -> None:
    """G14, G15: the function declarations of ``tools``."""
    for i, tool in enumerate(as_list(body.get("tools"))):
        key = "functionDeclarations" if "functionDeclarations" in as_dict(tool) else "function_declarations"
        for j, declaration in enumerate(as_list(as_dict(tool).get(key))):
            declaration = as_dict(declaration)
            name = as_str(declaration.get("name"))
            if name is not None and not _FUNCTION_NAME.match(name):
                report.error("G15", ["tools", i, key, j, "name"], G15.format(i=i, j=j))
            if "parameters" in declaration:
                where = f"tools[{i}].function_declarations[{j}].parameters"
                for parts, message in _schema_faults(declaration["parameters"], where,
                                                     ["tools", i, key, j, "parameters"]):
                    report.error("G14", parts, message)


def _answer_parts(text: str) -> list[dict]:
    """The parts of a recorded generateContent answer: one JSON object, a JSON array of them,
    or a server-sent-event stream of them."""
    return [part for chunk in answer_values(text) for candidate in as_list(as_dict(chunk).get("candidates"))
            for part in as_list(as_dict(as_dict(candidate).get("content")).get("parts")) if isinstance(part, dict)]


def _call_key(call: dict) -> str:
    return json.dumps([call.get("name"), call.get("args")], sort_keys=True, default=str)


def replayed(body: dict, model: str | None, earlier: list[str], report: Report) -> None:
    """G9: Gemini 3 wants each function call of the current turn sent back with the
    thoughtSignature its answer gave it. The current turn is every content after the last
    user content that holds text; a call is known by its name and arguments."""
    if not model or not re.search(r"(^|/)gemini-[3-9]", model):
        return
    signed = {_call_key(call): True for text in earlier for part in _answer_parts(text)
              if isinstance(call := alias(part, "functionCall", "function_call"), dict)
              and alias(part, "thoughtSignature", "thought_signature")}
    contents = as_list(body.get("contents"))
    start = max((i for i, content in enumerate(contents)
                 if as_dict(content).get("role", "user") == "user"
                 and any("text" in as_dict(part) for part in as_list(as_dict(content).get("parts")))), default=-1)
    position = 0
    for i in range(start + 1, len(contents)):
        if as_dict(contents[i]).get("role") != "model":
            continue
        for j, part in enumerate(as_list(as_dict(contents[i]).get("parts"))):
            call = alias(as_dict(part), "functionCall", "function_call")
            if not isinstance(call, dict):
                continue
            position += 1
            if _call_key(call) in signed and not alias(as_dict(part), "thoughtSignature", "thought_signature"):
                report.error("G9", ["contents", i, "parts", j],
                             G9.format(name=as_str(call.get("name")) or "", position=position))


def check(body: dict, report: Report) -> None:
    _declarations(body, report)
    contents = as_list(body.get("contents"))
    turns = [_gemini_turn(content) for content in contents]
    combined = _combined(turns)
    for n, (i, kind, _, responses) in enumerate(combined):
        if kind is None:
            continue
        previous = combined[n - 1][1] if n > 0 else None
        if n > 0 and previous is None:
            continue  # the turn before could not be read: no verdict on the order
        if kind == "call" and previous not in GEMINI_ALLOWED_BEFORE["call"]:
            report.error("G6", ["contents", i], G6)
        if kind == "response" and previous not in GEMINI_ALLOWED_BEFORE["response"]:
            report.error("G7", ["contents", i], G7)
        if previous == "call":  # G8: the turn after a call turn answers every call
            opened = combined[n - 1][2]
            if len(responses) != len(opened):
                report.error("G8", ["contents", i], G8)
            else:
                call_ids = [as_str(c.get("id")) for c in opened]
                answer_ids = [as_str(r.get("id")) for r in responses]
                if all(call_ids) and all(answer_ids) and sorted(call_ids) != sorted(answer_ids):  # type: ignore[type-var]
                    report.error("G8", ["contents", i], G8)
    for i, (kind, _, _) in enumerate(turns):
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
        "G9", "gemini-3: a function call of the current turn carries the thoughtSignature its answer gave it "
        "(recorded traffic: the answers before the request)", SEQUENCE,
        G9, "https://github.com/langgenius/dify-official-plugins/issues/2088", text="adapted",
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
        "G13", "a Part field chatconform's schema of 2026-08-21 knows (a newer field, or a stray key)", SCHEMA,
        "* GenerateContentRequest.{gloc}: a Part field not known to chatconform's schema of 2026-08-21 "
        "(python-genai): {value}",
        _GENAI_TYPES, severity="warning", text="synthesized",
    ),
    RuleInfo(
        "G14", "a function declaration's parameters use only the fields of Gemini's Schema (no additionalProperties, "
        "$schema, const, propertyNames, no list of types)", SEQUENCE,
        G14, "https://github.com/BerriAI/litellm/issues/14330",
        more=("https://github.com/zed-industries/zed/issues/44875", "https://github.com/zed-industries/zed/issues/53919"),
    ),
    RuleInfo(
        "G15", "a function name starts with a letter or _, then letters, digits, _ . -, at most 64", SEQUENCE,
        G15, "https://github.com/google-gemini/gemini-cli/issues/5333",
    ),
    RuleInfo(
        "G12", "a text part of a user or model turn is not empty", SCHEMA,
        "Unable to submit request because it has an empty text parameter. Add a value to the parameter and try "
        "again.",
        "https://github.com/google-gemini/deprecated-generative-ai-python/issues/697",
    ),
)

LEFT_OUT: dict[str, str] = {}

MODEL_DEPENDENT: dict[str, ModelDependence] = {
    # An empty text part: rejected from 2024-11 to 2025-03 (gemini-2.0-flash-exp and older,
    # "This is new ... as of this morning", then "it is fixed"); answered by gemini-2.5-flash
    # (Mirascope's cassette, 2025-12-04) and gemini-3 (llm-gemini's, 2025-12-19).
    "G12": ModelDependence(
        families=(
            Family("gemini-2.0 and older", re.compile(r"(^|/)gemini-(1\.|2\.0|pro\b|pro-vision)"), accepts=False,
                   evidence="https://github.com/google-gemini/deprecated-generative-ai-js/issues/361", date="2025-02"),
            Family("gemini-2.5 and gemini-3", re.compile(r"(^|/)gemini-(2\.5|[3-9])"), accepts=True,
                   evidence="https://github.com/simonw/llm-gemini/blob/2a8c855abf701766555b866efe7c80f9a7e27bcf/"
                            "tests/cassettes/test_gemini/test_tools_with_gemini_3_thought_signatures.yaml",
                   date="2025-12-19"),
        ),
        unnamed=None,
        why="every Gemini family still served takes an empty text part",
    ),
}
