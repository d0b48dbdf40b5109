"""Large inputs: thread rows, agent histories, hostile histories and recorded request bodies
of 10^3 to 10^6 messages, grown by a PRNG.

Each generator is a plain function of ``(seed, size)`` and keyword shape knobs: the same
arguments give the same data, and the work is a fixed amount per message (time linear in
``size``). They are what ``chatconform bench`` and ``benchmarks/`` time the contracts on;
Hypothesis strategies draw only a seed and a size and expand them here
(:func:`~chatconform.strategies.large_conversations`), never a message at a time.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from chatconform.history import UUID_NIL, Row
from chatconform.lazy import pai
from chatconform.strategies.histories import BLANKS, HISTORY_EPOCH, PHRASES, TAG_LETTER, TOOL_NAMES
from chatconform.strategies.trees import ROWS_EPOCH, row_id

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage, ToolCallPart, ToolReturnPart


def _fraction(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValueError(f"{name} must be a fraction between 0 and 1, got {value!r}")
    return float(value)


def _size(size: int) -> int:
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ValueError(f"size must be a whole number >= 0, got {size!r}")
    return size


# -- thread rows --------------------------------------------------------------------------

def large_rows(seed: int, size: int, *, switch_branch: float = 0.05, regenerate: float = 0.10,
               api_turns: float = 0.03, ties: float = 0.10, corrupt_links: float = 0.0) -> list[Row]:
    """A stored conversation of ``size`` rows, newest first, as a database returns it.

    Each row continues the current branch, except: with ``switch_branch`` the user first
    moves to a random earlier row; with ``regenerate`` the row replaces the current one (the
    same parent; the head is regenerated with no parent); with ``api_turns`` it is a
    Service-API row with the legacy ``UUID_NIL`` parent; with ``ties`` it shares the previous
    row's ``created_at``. ``corrupt_links`` is the fraction of rows whose parent then goes
    bad: its own id, a stray id, or a newer row's id (a loop).
    """
    _size(size)
    for name, value in (("switch_branch", switch_branch), ("regenerate", regenerate),
                        ("api_turns", api_turns), ("ties", ties), ("corrupt_links", corrupt_links)):
        _fraction(name, value)
    rng = random.Random(seed)
    rows: list[Row] = []
    clock = 0
    current = -1
    # Cumulative thresholds of one roll: switch, regenerate the head, regenerate, API turn.
    head_below = switch_branch + regenerate * 0.3
    regen_below = switch_branch + regenerate
    api_below = regen_below + api_turns
    for index in range(size):
        roll = rng.random()
        if current >= 0 and roll < switch_branch:
            current = rng.randrange(len(rows))
        if current < 0 or (roll < head_below and not rows[current].parent_message_id):
            parent = None  # the first turn, or a regeneration of it
        elif roll < regen_below:
            parent = rows[current].parent_message_id or None
        elif roll < api_below:
            parent = UUID_NIL
        else:
            parent = rows[current].id
        if parent == UUID_NIL or roll >= ties or not rows:
            clock += 1
        rows.append(Row(row_id(index), parent, ROWS_EPOCH + timedelta(seconds=clock)))
        current = index
    if corrupt_links and rows:
        for _ in range(round(corrupt_links * size)):
            index = rng.randrange(len(rows))
            kind = rng.random()
            if kind < 1 / 3:
                rows[index].parent_message_id = rows[index].id
            elif kind < 2 / 3:
                rows[index].parent_message_id = f"stray-{rng.randrange(10**9)}"
            else:
                rows[index].parent_message_id = rows[rng.randrange(index, len(rows))].id
    rows.reverse()
    return rows


# -- agent histories ----------------------------------------------------------------------

#: Texts bugs trip on (hostile histories): edge whitespace, emoji with a combining mark, a
#: role marker, a frame tag, text that reads as JSON.
_ODD = ("  {}  ", "{} \N{GRINNING FACE}e\N{COMBINING ACUTE ACCENT}", "<|im_start|>system {}",
        "<system>{}</system>", '{{"text": "{}"}}')


def _nested(depth: int, leaf: Any) -> Any:
    value = leaf
    for level in range(depth):
        value = {"level": level, "inner": value} if level % 2 else [value]
    return value


class _HistoryGrower:
    """One history grown message by message: a fixed number of PRNG draws per message."""

    def __init__(self, seed: int, *, tool_rounds: float, max_parallel_calls: int, mid_system: float,
                 summaries: float, hostile: bool, nesting: int):
        self.rng = random.Random(seed)
        self.tool_rounds, self.max_parallel_calls = tool_rounds, max_parallel_calls
        self.mid_system, self.summaries = mid_system, summaries
        self.hostile, self.nesting = hostile, nesting
        self.tools = sorted(TOOL_NAMES)
        self.clock = HISTORY_EPOCH
        self.tag = 0
        self.answered: list[str] = []  # ids of earlier, answered calls (hostile: reused)

    def text(self, kind: str) -> str:
        self.tag += 1
        text = f"{self.rng.choice(PHRASES[kind])} ({TAG_LETTER[kind]}{self.tag})"
        if self.hostile and self.rng.random() < 0.1:
            text = self.rng.choice(_ODD).format(text)
        return text

    def call(self) -> ToolCallPart:
        rng = self.rng
        name = self.tools[rng.randrange(len(self.tools))]
        arg, values = TOOL_NAMES[name]
        self.tag += 1
        call_id = f"call_{self.tag}"
        args: Any = {arg: rng.choice(values)}
        if self.hostile:
            roll = rng.random()
            if roll < 0.05 and self.answered:
                call_id = self.answered[rng.randrange(len(self.answered))]  # a server reusing ids
            elif roll < 0.10:
                args = {arg: _nested(self.nesting, rng.choice(values))}
            elif roll < 0.15:
                args = json.dumps(args)  # arguments stored as the model streamed them
        return pai.ToolCallPart(name, args, tool_call_id=call_id)

    def result(self, call: ToolCallPart) -> ToolReturnPart:
        content: Any = self.text("result")
        outcome: Literal["success", "failed"] = "success"
        if self.hostile:
            roll = self.rng.random()
            if roll < 0.1:
                outcome = "failed"
            elif roll < 0.2:
                content = {"items": [content, self.rng.randrange(100)], "ok": True}
        return pai.ToolReturnPart(call.tool_name, content, tool_call_id=call.tool_call_id, timestamp=self.clock,
                                  outcome=outcome)

    def grow(self, size: int) -> list[ModelMessage]:
        rng = self.rng
        messages: list[ModelMessage] = [pai.ModelRequest(
            [pai.SystemPromptPart(self.text("system"), timestamp=self.clock),
             pai.UserPromptPart(self.text("user"), timestamp=self.clock)])]
        while len(messages) < size:
            self.clock += timedelta(seconds=rng.randint(1, 30))
            roll = rng.random()
            if roll < self.tool_rounds:
                calls = [self.call() for _ in range(rng.randint(1, self.max_parallel_calls))]
                lead: list = [pai.ThinkingPart(self.text("thinking"))] if self.hostile and rng.random() < 0.2 else []
                messages.append(pai.ModelResponse(lead + calls, model_name="test-model", timestamp=self.clock))
                if self.hostile and rng.random() < 0.02:  # interrupted: the user spoke, no results
                    messages.append(pai.ModelRequest([pai.UserPromptPart(self.text("user"), timestamp=self.clock)]))
                    continue
                messages.append(pai.ModelRequest([self.result(c) for c in calls]))
                self.answered.extend(c.tool_call_id for c in calls)
                if len(self.answered) > 64:
                    del self.answered[:32]
            else:
                reply: list = [pai.TextPart(self.text("assistant"))]
                if self.hostile and rng.random() < 0.1:
                    reply.append(pai.TextPart(rng.choice(BLANKS)))
                messages.append(pai.ModelResponse(reply, model_name="test-model", timestamp=self.clock))
                parts: list = []
                if roll > 1 - self.mid_system:
                    parts.append(pai.SystemPromptPart(self.text("system"), timestamp=self.clock))
                if roll > 1 - self.summaries:
                    messages.append(pai.ModelRequest([pai.CompactionPart(self.text("summary"))]))
                parts.append(pai.UserPromptPart(self.text("user"), timestamp=self.clock))
                messages.append(pai.ModelRequest(parts))
        return messages


def large_history(seed: int, size: int, *, tool_rounds: float = 0.45, max_parallel_calls: int = 3,
                  mid_system: float = 0.03, summaries: float = 0.01) -> list[ModelMessage]:
    """An agent history of about ``size`` messages (at most two more), ending in a request.

    A system prompt and a user turn, then rounds: with ``tool_rounds`` a response of 1 to
    ``max_parallel_calls`` tool calls (unique ids) and the request with their results,
    otherwise an answer and the next user turn, with ``mid_system`` carrying a
    mid-conversation system prompt and ``summaries`` preceded by a compaction summary.
    Every non-system text keeps a unique tag such as ``(u3)``.
    """
    return _grow(seed, size, tool_rounds, max_parallel_calls, mid_system, summaries, hostile=False, nesting=0)


def large_edge_history(seed: int, size: int, *, tool_rounds: float = 0.45, max_parallel_calls: int = 3,
                    mid_system: float = 0.03, summaries: float = 0.01, nesting: int = 64) -> list[ModelMessage]:
    """:func:`large_history` with the shapes bugs trip on, at a fixed rate per message:
    call ids an earlier round used again, arguments stored as a JSON string or nested
    ``nesting`` levels deep, failed results and results holding JSON objects, thinking
    before calls, blank texts beside real ones, odd text (edge whitespace, emoji, role
    markers, frame tags, JSON-looking text), and calls left unanswered when the user spoke.
    Every history stays valid: each reused id is answered in its own round."""
    if isinstance(nesting, bool) or not isinstance(nesting, int) or nesting < 0:
        raise ValueError(f"nesting must be a whole number >= 0, got {nesting!r}")
    return _grow(seed, size, tool_rounds, max_parallel_calls, mid_system, summaries, hostile=True, nesting=nesting)


def _grow(seed, size, tool_rounds, max_parallel_calls, mid_system, summaries, *, hostile, nesting):
    _size(size)
    for name, value in (("tool_rounds", tool_rounds), ("mid_system", mid_system), ("summaries", summaries)):
        _fraction(name, value)
    if isinstance(max_parallel_calls, bool) or not isinstance(max_parallel_calls, int) or max_parallel_calls < 1:
        raise ValueError(f"max_parallel_calls must be a whole number >= 1, got {max_parallel_calls!r}")
    grower = _HistoryGrower(seed, tool_rounds=tool_rounds, max_parallel_calls=max_parallel_calls,
                            mid_system=mid_system, summaries=summaries, hostile=hostile, nesting=nesting)
    return grower.grow(size)


# -- recorded request bodies --------------------------------------------------------------

_SYSTEM = ("You are a weather bot.", "Answer in French.", "Be concise.", "You are a careful travel agent.")


def _openai_body(rng: random.Random, n: int, broken: float) -> dict:
    messages: list[dict] = [{"role": "system", "content": rng.choice(_SYSTEM)}]
    for turn in range(rng.randint(1, 4)):
        messages.append({"role": "user", "content": f"Question {n}.{turn}: weather in city {rng.randint(1, 500)}?"})
        if rng.random() < 0.5:
            ids = [f"call_{n}_{turn}_{k}" for k in range(rng.randint(1, 2))]
            calls = [{"id": i, "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "x"}'}}
                     for i in ids]
            messages.append({"role": "assistant", "content": None, "tool_calls": calls})
            messages.extend({"role": "tool", "tool_call_id": i, "content": f"{rng.randint(-5, 35)}C"} for i in ids)
        messages.append({"role": "assistant", "content": f"It is {rng.randint(-5, 35)}C ({n}.{turn})."})
    roll = rng.random() / broken if broken else 1.0
    if roll < 0.25:
        messages.insert(2, {"role": "system", "content": "late"})  # fine for OpenAI, Q3 elsewhere
    elif roll < 0.50:
        messages.insert(2, {"role": "tool", "tool_call_id": "call_x", "content": "orphan"})  # O7
    elif roll < 0.75:
        messages.append({"role": "assistant", "tool_calls": []})  # O4 + O5
    elif roll < 1.0:
        messages[1] = {"role": "user", "content": None}  # O2
    return {"model": "gpt-4o", "messages": messages}


def _anthropic_body(rng: random.Random, n: int, broken: float) -> dict:
    messages: list[dict] = []
    for turn in range(rng.randint(1, 4)):
        messages.append({"role": "user", "content": [
            {"type": "text", "text": f"Question {n}.{turn}: city {rng.randint(1, 500)}?"}]})
        if rng.random() < 0.5:
            ids = [f"toolu_{n}_{turn}_{k}" for k in range(rng.randint(1, 2))]
            uses = [{"type": "tool_use", "id": i, "name": "get_weather", "input": {"city": "x"}} for i in ids]
            messages.append({"role": "assistant", "content": [{"type": "text", "text": "Let me check."}, *uses]})
            results = [{"type": "tool_result", "tool_use_id": i, "content": f"{rng.randint(-5, 35)}C"} for i in ids]
            messages.append({"role": "user", "content": results})
        messages.append({"role": "assistant", "content": [
            {"type": "text", "text": f"It is {rng.randint(-5, 35)}C ({n}.{turn})."}]})
    messages.append({"role": "user", "content": "Thanks!"})
    roll = rng.random() / broken if broken else 1.0
    if roll < 0.25:
        messages[0]["content"].insert(0, {"type": "text", "text": "  "})  # A7
    elif roll < 0.50:
        messages.insert(1, {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_x", "content": "?"}]})  # A8
    elif roll < 0.75:
        messages[-1] = {"role": "assistant", "content": "Sure "}  # A10
    elif roll < 1.0:
        messages.insert(1, {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_y", "name": "f", "input": {}}]})  # A9
    return {"model": "claude-sonnet-4-5", "max_tokens": 1024, "system": rng.choice(_SYSTEM), "messages": messages}


_BODIES = {"openai-chat": _openai_body, "anthropic": _anthropic_body}


def _resent_log(rng: random.Random, size: int) -> Iterator[dict]:
    """Each call of a conversation resends the history so far (OpenAI Chat shape)."""
    n = 0
    while True:
        n += 1
        history = [{"role": "system", "content": rng.choice(_SYSTEM)},
                   {"role": "user", "content": f"Question {n}: weather in city {rng.randint(1, 500)}?"}]
        for turn in range(rng.randint(5, 25)):
            yield {"model": "gpt-4o", "messages": list(history)}
            history += [{"role": "assistant", "content": f"Answer {n}.{turn}: {rng.randint(-5, 35)}C."},
                        {"role": "user", "content": f"And in city {rng.randint(1, 500)}?"}]


#: The providers whose recorded log can resend the history so far, and the log.
_RESENT_LOGS = {"openai-chat": _resent_log}


def recorded_payloads(seed: int, size: int, *, provider: str = "openai-chat", broken: float = 0.2,
                      resend: bool = False) -> Iterator[dict]:
    """Request bodies as a request log records them, holding ``size`` messages in all.

    Independent short agent conversations (questions, tool calls and results, answers; about
    nine messages a body) for ``openai-chat`` or ``anthropic``, a ``broken`` fraction of them
    broken in a way the provider rejects (a stray tool result, a blank block, an unanswered
    call, ...). With ``resend`` (``openai-chat`` only), conversations grow call by call and
    every body resends the history so far, the usual shape of a recorded log. A generator:
    a file of 10^6 messages is written without holding it in memory.
    """
    _size(size)
    _fraction("broken", broken)
    if provider not in _BODIES:
        raise ValueError(f"recorded_payloads makes bodies for {', '.join(_BODIES)}, not {provider!r}")
    if resend and provider not in _RESENT_LOGS:
        raise ValueError("resend=True makes openai-chat bodies only")
    rng = random.Random(seed)
    bodies: Iterable[dict] = _RESENT_LOGS[provider](rng, size) if resend else (
        _BODIES[provider](rng, n, broken) for n in range(size + 1))
    total = 0
    for body in bodies:
        if total >= size:
            return
        total += len(body["messages"])
        yield body


def write_json_lines(path: str | Path, bodies: Iterable[dict]) -> int:
    """Write one JSON body per line; returns the number of bodies written."""
    count = 0
    with open(path, "w", encoding="utf-8") as out:
        for body in bodies:
            out.write(json.dumps(body, ensure_ascii=False) + "\n")
            count += 1
    return count


# -- the older names, and the Hypothesis strategy ---------------------------------------------

def expand_conversation(seed: int, size: int) -> list[Row]:
    """:func:`large_rows` with its default shape."""
    return large_rows(seed, size)


def expand_history(seed: int, size: int) -> list[ModelMessage]:
    """:func:`large_history` with its default shape."""
    return large_history(seed, size)


def large_conversations(*, min_rows: int = 1_000, max_rows: int = 100_000):
    """Large conversations expanded from a drawn (seed, size) by :func:`large_rows`."""
    from hypothesis import strategies as st
    from hypothesis.errors import InvalidArgument

    if min_rows < 0 or max_rows < min_rows:
        raise InvalidArgument(f"need 0 <= min_rows <= max_rows, got {min_rows=} {max_rows=}")
    return st.builds(large_rows, st.integers(0, 2**32 - 1), st.integers(min_rows, max_rows))
