"""The machinery every provider's rules module shares: defensive readers, the report, the
pending-tool-id tracker, strict alternation, OpenAI's tool pairing, and the catalog records.

Every check reads the body defensively: the schema has already reported malformed shapes, so
a message or block that cannot be read is skipped here, never raised on."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..problems import Problem, json_path

# --- defensive readers -------------------------------------------------------------------


def as_list(value: Any) -> list:
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def role_of(message: Any) -> str | None:
    return as_str(message.get("role")) if isinstance(message, dict) else None


def alias(mapping: dict, camel: str, snake: str) -> Any:
    """Gemini REST parses both the camelCase and the proto snake_case field name."""
    value = mapping.get(camel)
    return mapping.get(snake) if value is None else value


class Report:
    """Collects the sequence problems of one body for one provider; ``reasoning`` is the
    request's reasoning setting where the caller knows it (None: the body's own)."""

    def __init__(self, provider: str, reasoning: bool | None = None) -> None:
        self.provider = provider
        self.reasoning = reasoning
        self.problems: list[Problem] = []

    def error(self, rule: str, parts: list, message: str) -> None:
        self.problems.append(Problem(rule, json_path(parts), message, self.provider, "error", source="sequence"))

    def warning(self, rule: str, parts: list, message: str) -> None:
        self.problems.append(Problem(rule, json_path(parts), message, self.provider, "warning", source="sequence"))


# Strict user/assistant alternation: required by Bedrock Converse (B3, tool results travel in
# user turns); Anthropic combines a run of same-role turns instead, so there it is a warning (A4).
ALTERNATION_NEXT_ROLES: dict[str, frozenset[str]] = {
    "user": frozenset({"assistant"}),
    "assistant": frozenset({"user"}),
}


# --- primitive 2: the pending-tool-id tracker --------------------------------------------


class PendingCalls:
    """The tool-call ids one assistant turn opened (each with the index of the message that
    opened it) and which of them were answered."""

    __slots__ = ("answered", "opened")

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


def openai_call_ids(message: dict) -> list[str]:
    return [c["id"] for c in as_list(message.get("tool_calls")) if isinstance(c, dict) and isinstance(c.get("id"), str)]


def tool_pairing(messages: list, on_problem: Callable[[str, list, str], None], *, duplicates: bool) -> None:
    """OpenAI's pairing: tool messages directly after the assistant turn that called them.

    ``on_problem(kind, parts, detail)`` receives kind O7/O8/O9/"duplicate" so OpenAI and GLM
    can report the same findings under their own rule ids and texts.
    """
    pending: PendingCalls | None = None
    opened_at = 0
    for i, message in enumerate(messages):
        role = role_of(message)
        if role is None:
            continue
        if role == "tool":
            if pending is None:
                on_problem("O7", ["messages", i, "role"], "")
                continue
            call_id = as_str(message.get("tool_call_id"))
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
        if role == "assistant" and as_list(message.get("tool_calls")):
            ids = openai_call_ids(message)
            if duplicates and len(set(ids)) != len(ids):
                on_problem("duplicate", ["messages", i, "tool_calls"], "")
            pending, opened_at = PendingCalls.at(i, ids), i
    if pending is not None and pending.unanswered():
        on_problem("O8", ["messages", opened_at, "tool_calls"], ", ".join(pending.unanswered()))


# --- reasoning sent back ---------------------------------------------------------------------


def thinking_on(body: dict, said: bool | None) -> bool | None:
    """Whether the request asks for reasoning: what the caller says, else the body's own setting
    (Anthropic's, DeepSeek's and Kimi's ``thinking``, OpenRouter's ``reasoning``,
    ``reasoning_effort``); None where neither says."""
    if said is not None:
        return said
    thinking = body.get("thinking")
    if isinstance(thinking, dict):
        return thinking.get("type") in ("enabled", "adaptive")
    reasoning = body.get("reasoning")
    if isinstance(reasoning, dict):
        return reasoning.get("enabled") is not False and reasoning.get("effort") != "none"
    effort = body.get("reasoning_effort")
    return None if effort is None else effort != "none"


def reasoning_missing(messages: list, key: str) -> list[int]:
    """The index of each assistant message with tool calls that lacks ``key``."""
    return [i for i, message in enumerate(messages)
            if role_of(message) == "assistant" and as_list(message.get("tool_calls")) and key not in message]


# --- answers recorded before a request ----------------------------------------------------


def answer_values(text: str) -> list[Any]:
    """The JSON values of one recorded answer: the answer itself when it is one JSON value (a
    JSON array: its items), else the data of each server-sent event of its stream (data that
    is no JSON, OpenAI's ``[DONE]``, left out)."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        values = []
        for line in text.splitlines():
            if line.startswith("data:"):
                try:
                    values.append(json.loads(line[5:]))
                except (ValueError, RecursionError):
                    continue
        return values
    return value if isinstance(value, list) else [value]


#: The string fields of an OpenRouter reasoning detail a stream sends in pieces.
_DETAIL_PIECES = ("text", "summary", "data")


def _merge_details(pieces: list) -> list[dict]:
    """Streamed ``reasoning_details`` pieces put together: the pieces of one detail (its
    ``index``, else its place) have their text joined and their other fields kept."""
    merged: dict[Any, dict] = {}
    for n, piece in enumerate(pieces):
        if not isinstance(piece, dict):
            continue
        detail = merged.setdefault(piece.get("index", f"#{n}"), {})
        for key, value in piece.items():
            if key in _DETAIL_PIECES and isinstance(value, str):
                detail[key] = detail.get(key, "") + value
            elif value is not None:
                detail[key] = value
    return list(merged.values())


def chat_answer(text: str) -> dict:
    """The assistant message of one recorded chat completion: its ``choices[0].message``, or
    its stream's deltas put together (strings joined, ``reasoning_details`` merged, each tool
    call's id by its index)."""
    message: dict[str, Any] = {}
    calls: dict[Any, dict] = {}
    details: list = []
    for value in answer_values(text):
        choice = as_dict(next(iter(as_list(as_dict(value).get("choices"))), None))
        if isinstance(choice.get("message"), dict):
            return choice["message"]
        for key, part in as_dict(choice.get("delta")).items():
            if key == "tool_calls":
                for call in as_list(part):
                    slot = calls.setdefault(as_dict(call).get("index", len(calls)), {})
                    if isinstance(as_dict(call).get("id"), str):
                        slot["id"] = call["id"]
            elif key == "reasoning_details":
                details += as_list(part)
            elif isinstance(part, str) and key != "role":
                message[key] = message.get(key, "") + part
    if details:
        message["reasoning_details"] = _merge_details(details)
    if calls:
        message["tool_calls"] = list(calls.values())
    return message


def reasoning_dropped(body: dict, earlier: list[str], key: str) -> list[int]:
    """The index of each assistant message with tool calls that sends back, without ``key``, an
    answer that carried it (known by its tool-call ids)."""
    answers = [answered for answered in map(chat_answer, earlier) if key in answered]
    messages = as_list(body.get("messages"))
    return [i for i in reasoning_missing(messages, key)
            if any(same_chat_turn(messages[i], answered) for answered in answers)]


def same_chat_turn(message: dict, answered: dict) -> bool:
    """Whether an assistant message of a body is the answer ``answered`` sent back: they share
    a tool-call id, or (with no call) their text is the same and not empty."""
    ids = set(openai_call_ids(message))
    if ids or as_list(answered.get("tool_calls")):
        return bool(ids & set(openai_call_ids(answered)))
    text = as_str(message.get("content"))
    return bool(text) and text == as_str(answered.get("content"))


# --- the catalog records

#: Where a rule is checked (``RuleInfo.check``): the JSON Schema, the rules module, or both; or
#: the profile's table of the content each model family takes (``capabilities``).
SCHEMA, SEQUENCE, BOTH, CONTENT = "schema", "sequence", "schema+sequence", "content"


@dataclass(frozen=True)
class RuleInfo:
    id: str
    summary: str
    check: str  # "schema", "sequence", both ("schema+sequence"), or "content" (the model's content table)
    error: str  # the error text reported for the rule (a template: "{i}" = a message index, ...)
    source: str  # public evidence: provider docs, validator or SDK source, an issue or PR
    severity: str = "error"
    text: str = "verbatim"
    #: More public evidence, where one part of a rule has its own (a rule that joins
    #: several constraints of one block, each reported in a different place).
    more: tuple[str, ...] = ()

    @property
    def sources(self) -> tuple[str, ...]:
        return (self.source, *self.more)


def rules(*infos: RuleInfo) -> dict[str, RuleInfo]:
    return {info.id: info for info in infos}


#: The date of chatconform's model tables: a model named in a body and in no family of a
#: table is one the table does not know.
MODEL_TABLE_DATE = "2026-08"


@dataclass(frozen=True)
class Family:
    """Models of one provider that answer one body the same way, and the evidence that says how."""

    #: For people: ``"claude-3 (2024)"``.
    name: str
    #: The model ids of the family (searched, so a Bedrock id ``us.anthropic.claude-...`` is found).
    models: re.Pattern[str]
    #: Whether the family accepts the body (True) or answers it with the rule's error (False).
    accepts: bool
    #: A public source: a recorded exchange (repository, path, commit) or a report of the error.
    evidence: str
    #: When the evidence was seen (``YYYY-MM`` or ``YYYY-MM-DD``): rules of this kind change with
    #: model versions, so a verdict is only as current as its date.
    date: str


@dataclass(frozen=True)
class ModelDependence:
    """A rule whose verdict depends on the model: its families, oldest first.

    A model in a family gets that family's verdict. A model named but in no family is judged as
    the last family (the newest, for one line of models; for a table of vendors, the one most
    traffic goes to), as a warning that says the table does not know it. A body whose model is
    not named gets ``unnamed``: the verdict of the families still served, with ``why`` it holds.
    """

    families: tuple[Family, ...]
    #: The level when the model is not named: "error", "warning" or None (no problem).
    unnamed: str | None
    #: Why ``unnamed`` is what it is (the families still served agree, or they do not).
    why: str

    def family(self, model: str) -> Family | None:
        return next((family for family in self.families if family.models.search(model)), None)

    @property
    def newest(self) -> Family:
        return self.families[-1]

    @property
    def evidence(self) -> str:
        """The last family's evidence (the page links it)."""
        return self.newest.evidence
