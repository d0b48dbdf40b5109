"""The reference ``repair``: a history every call of which is answered exactly once.

Providers reject a tool call without its result and a result without its call (Anthropic
"tool_use ids were found without tool_result blocks", OpenAI "No tool call found for
function call output"), and pydantic-ai refuses a new prompt after a response whose calls
are unanswered ("Cannot provide a new user prompt when the message history contains
unprocessed tool calls", https://github.com/pydantic/pydantic-ai/pull/6319). A history
that was cancelled, crashed, hand-edited or sent back by a client is repaired with the
rules of pydantic-ai's ``repair_messages``, answering the last response too:

- Results are matched to calls by one walk in order: a result answers the oldest open
  call with its id, from an earlier response. A call whose id a later response uses
  again while it is open can no longer be answered (a later result answers the newer
  call), so it is left open. Calls with the same id in one response are answered in
  turn.
- A result that answers no open call is dropped: an orphan (its id was never called
  before it) and a second answer to a call alike, since a provider rejects both
  (Anthropic "each tool_use must have a single result",
  https://github.com/QwenLM/qwen-code/pull/8163). pydantic-ai keeps the second answer.
  A request emptied by this is dropped, unless it is the last message.
- Each call left open gets a result synthesized as pydantic-ai synthesizes it:
  ``ToolReturnPart(outcome='interrupted', content=INTERRUPTED_TOOL_RETURN_CONTENT,
  metadata={SYNTHESIZED_TOOL_RETURN_METADATA_KEY: True})`` with the call's name, id and
  kind, timestamped with its response (so repairing again changes nothing). They go
  after the results in the request that follows the response, in the order of the
  calls; when a response follows directly, or the history ends, into a new request.
- Nothing else changes: no message is merged and no part moves. (pydantic-ai also merges
  adjacent requests, moving their results ahead of other parts; the checks accept that.)

Native calls and results, which the provider pairs inside one response, are left alone.
Two passes over the history (three when some result answers no call), so the time is linear in its size.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeGuard

from chatconform.lazy import pai

if TYPE_CHECKING:
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        RetryPromptPart,
        ToolCallPart,
        ToolReturnPart,
    )

CONTRACT_METHODS = ("repair",)


def is_result(part: object) -> TypeGuard[ToolReturnPart | RetryPromptPart]:
    """A result that answers a call: a ``ToolReturnPart``, or a legacy ``RetryPromptPart``
    naming a tool (one without is feedback on the whole response)."""
    return isinstance(part, pai.ToolReturnPart) or (isinstance(part, pai.RetryPromptPart)
                                                    and part.tool_name is not None)


@dataclass
class Matching:
    """How the results of a history answer its calls (see :func:`match_calls`)."""

    #: Response index -> its calls left unanswered, in the order of the response.
    unanswered: dict[int, list[ToolCallPart]] = field(default_factory=dict)
    #: (message index, part index) of results answering no open call, whose id was called before.
    second_answers: list[tuple[int, int]] = field(default_factory=list)
    #: (message index, part index) of results whose id no earlier call has.
    orphans: list[tuple[int, int]] = field(default_factory=list)


def match_calls(history: Sequence[ModelMessage]) -> Matching:
    """Match results to calls in one walk (the rules in the module docstring).

    Only the calls still open are held, by id: a long history whose calls are answered
    keeps that table small. A result that answers nothing is sorted into orphans and
    second answers afterwards, by one more pass that looks only for the ids of those few.
    """
    found = Matching()
    open_calls: dict[str, deque[tuple[int, int, ToolCallPart]]] = {}
    left_open: list[tuple[int, int, ToolCallPart]] = []
    unmatched: list[tuple[int, int, str]] = []
    for index, message in enumerate(history):
        for k, part in enumerate(message.parts):
            if isinstance(message, pai.ModelResponse):
                if not isinstance(part, pai.ToolCallPart):
                    continue
                pending = open_calls.get(part.tool_call_id)
                if pending is None:
                    open_calls[part.tool_call_id] = deque([(index, k, part)])
                    continue
                if pending[-1][0] != index:
                    left_open.extend(pending)  # a later response took the id over
                    pending.clear()
                pending.append((index, k, part))
            elif is_result(part):
                pending = open_calls.get(part.tool_call_id)
                if pending is None:
                    unmatched.append((index, k, part.tool_call_id))
                    continue
                pending.popleft()
                if not pending:
                    del open_calls[part.tool_call_id]
    for pending in open_calls.values():
        left_open.extend(pending)
    for index, _, call in sorted(left_open, key=lambda entry: entry[:2]):
        found.unanswered.setdefault(index, []).append(call)
    if unmatched:
        first_call = _first_calls(history, {tool_call_id for _, _, tool_call_id in unmatched})
        for index, k, tool_call_id in unmatched:
            called_before = first_call.get(tool_call_id, len(history)) < index
            (found.second_answers if called_before else found.orphans).append((index, k))
    return found


def _first_calls(history: Sequence[ModelMessage], ids: set[str]) -> dict[str, int]:
    """The index of the first response that calls each of ``ids``."""
    first: dict[str, int] = {}
    for index, message in enumerate(history):
        if isinstance(message, pai.ModelResponse):
            for part in message.parts:
                if isinstance(part, pai.ToolCallPart) and part.tool_call_id in ids:
                    first.setdefault(part.tool_call_id, index)
    return first


def _with_results(request: ModelRequest, results: list[ToolReturnPart]) -> ModelRequest:
    """``request`` with ``results`` after its own results (at the front when it has none)."""
    parts = list(request.parts)
    at = next((k + 1 for k in range(len(parts) - 1, -1, -1) if is_result(parts[k])), 0)
    return replace(request, parts=[*parts[:at], *results, *parts[at:]])


class Repairer:
    """The rules, one method per step (a fake changes one by overriding it)."""

    def match(self, history: Sequence[ModelMessage]) -> Matching:
        return match_calls(history)

    def to_drop(self, matching: Matching) -> list[tuple[int, int]]:
        """(message, part) of the results to drop: second answers and orphans."""
        return [*matching.second_answers, *matching.orphans]

    def synthesized(self, call: ToolCallPart, response: ModelResponse) -> ToolReturnPart:
        """The result a call that never got one is given."""
        return pai.ToolReturnPart(
            tool_name=call.tool_name, content=pai.INTERRUPTED_TOOL_RETURN_CONTENT, tool_call_id=call.tool_call_id,
            tool_kind=call.tool_kind, metadata={pai.SYNTHESIZED_TOOL_RETURN_METADATA_KEY: True},
            timestamp=response.timestamp, outcome="interrupted",
        )

    def repair(self, history: Sequence[ModelMessage]) -> list[ModelMessage]:
        matching = self.match(history)
        dropped: dict[int, set[int]] = {}
        for index, k in self.to_drop(matching):
            dropped.setdefault(index, set()).add(k)
        out: list[ModelMessage] = []
        owed: list[ToolReturnPart] = []
        last = len(history) - 1
        for index, message in enumerate(history):
            if isinstance(message, pai.ModelResponse):
                if owed:
                    out.append(pai.ModelRequest(parts=owed))
                out.append(message)
                owed = [self.synthesized(call, message) for call in matching.unanswered.get(index, ())]
                continue
            if index in dropped:
                parts = [p for k, p in enumerate(message.parts) if k not in dropped[index]]
                if not parts and index != last:
                    continue
                message = replace(message, parts=parts)
            if owed:
                message = _with_results(message, owed)
                owed = []
            out.append(message)
        if owed:
            out.append(pai.ModelRequest(parts=owed))
        return out


_RULES = Repairer()


def repair(history: Sequence[ModelMessage]) -> list[ModelMessage]:
    """The history with every call answered once and every result answering a call."""
    return _RULES.repair(history)
