"""The ``repair`` contract: ``repair(history) -> history`` that a new prompt can continue.

The input is a history as cancellations, crashes, hand edits and clients leave it
(:func:`~chatconform.strategies.hostile_histories`): calls unanswered at the end or in
the middle, results for ids never called or placed before their call, calls answered
twice, call ids used again. The checks judge that the result pairs every call with
exactly one result and every result with a call, marks what it invented, keeps what it
was given in order, is a fixed point, and is accepted by a real pydantic-ai ``Agent``
with a new prompt. The rules are the reference's (:mod:`chatconform.reference.repair`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from chatconform.errors import NotApplicable, Violation
from chatconform.frame.contract import Example
from chatconform.frame.history_contract import HistoryTransformContract, check_fixed_point
from chatconform.frame.lifecycle import Conversation, LifecycleStep
from chatconform.history import and_more, describe_at, first_difference, fresh_lists, list_difference
from chatconform.lazy import pai
from chatconform.reference.repair import is_result, match_calls, repair
from chatconform.strategies.hostile import expand_hostile_history, hostile_histories
from chatconform.strategies.lifecycles import Step

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage


def _repair(conversation: Conversation, step: Step) -> Any:
    """``repair`` before the next prompt."""
    history = conversation.history
    return conversation.record(conversation.call("repair", history), conversation.reference("repair", history))


class RepairContract(HistoryTransformContract):
    name = "repair"
    method = "repair"
    signature = "repair(history) -> history"
    crash_rationale = ("a repair that raises on the broken histories it exists for leaves the conversation "
                       "stuck: the next prompt fails as before (atomic: 'Deleting tool call ... would leave "
                       "tool result ... orphaned', https://github.com/bastani-inc/atomic/issues/1300)")
    mutation_rationale = ("a repair that edits the history in place rewrites the stored conversation the "
                          "caller may still hold or persist, synthesized results included")
    listing_order = 45
    #: Each case also runs a pydantic-ai agent (``continuable``): half the profile's cases.
    examples_scale = 0.5
    result_description = "The result of repair: the repaired history, in the same JSON as the input history."
    reference_module = "chatconform.reference.repair"
    guard_tests = ("tests/contracts/test_repair.py",)
    lifecycle_steps = (LifecycleStep("repair", "repair before the next prompt", order=60, methods=("repair",),
                                     play=_repair),)

    def transform(self, history):
        return repair(history)

    def histories(self):
        return hostile_histories(system_voice=False, file_urls=False, uploaded_files=False, metadata=False)

    def expand(self, seed, size):
        return expand_hostile_history(seed, size)


CONTRACT = RepairContract()


def _matching(ex: Example):
    return ex.once("matching", lambda: match_calls(ex.output))


def _part(history: Sequence[ModelMessage], where: tuple[int, int]) -> Any:
    return history[where[0]].parts[where[1]]


# -- pairing -----------------------------------------------------------------------------

@CONTRACT.check(
    "every_call_answered_once",
    title="every tool call of the result is answered by exactly one later result",
    rationale="providers reject a call without its result ('tool_use ids were found without tool_result "
              "blocks') and a call answered twice (Anthropic 'each tool_use must have a single result', "
              "https://github.com/QwenLM/qwen-code/pull/8163; a stub injected beside a real result, "
              "https://github.com/NousResearch/hermes-agent/pull/58362)",
)
def every_call_answered_once(ex: Example) -> None:
    matching = _matching(ex)
    for index, calls in matching.unanswered.items():
        call = calls[0]
        raise Violation(f"the call {call.tool_name} ({call.tool_call_id}) in message {index} is never answered"
                        + and_more(sum(map(len, matching.unanswered.values())), "unanswered call"),
                        expected="one result per call", actual="no result")
    if matching.second_answers:
        where = matching.second_answers[0]
        part = _part(ex.output, where)
        raise Violation(f"message {where[0]} answers the call {part.tool_call_id} a second time",
                        expected="one result per call", actual=repr(part)[:300])


@CONTRACT.check(
    "no_orphan_results",
    title="every result of the result answers a call made before it",
    rationale="a result without an earlier call is rejected ('No tool call found for function call output', "
              "Anthropic 'unexpected tool_use_id found in tool_result blocks'); pydantic-ai drops them "
              "(https://github.com/pydantic/pydantic-ai/pull/6319)",
)
def no_orphan_results(ex: Example) -> None:
    orphans = _matching(ex).orphans
    if orphans:
        part = _part(ex.output, orphans[0])
        raise Violation(f"message {orphans[0][0]} holds a result for {part.tool_call_id}, which no earlier "
                        f"call has" + and_more(orphans, "orphan result"),
                        expected="no orphan result", actual=repr(part)[:300])


# -- what was invented ---------------------------------------------------------------------

def _request_parts(history: Sequence[ModelMessage]) -> list[tuple[int, int, Any]]:
    return [(i, k, p) for i, m in enumerate(history) if isinstance(m, pai.ModelRequest) for k, p in enumerate(m.parts)]


class _Pool:
    """Parts to match others against by value (``==``), each matched once; bucketed by a
    cheap key so matching a long history stays linear."""

    def __init__(self, parts) -> None:
        self.buckets: dict[tuple, list] = {}
        for part in parts:
            self.buckets.setdefault(self.key(part), []).append(part)

    @staticmethod
    def key(part: Any) -> tuple:
        return type(part).__name__, getattr(part, "tool_call_id", None), getattr(part, "timestamp", None)

    def take(self, part: Any) -> bool:
        bucket = self.buckets.get(self.key(part), [])
        for i, candidate in enumerate(bucket):
            if candidate == part:
                del bucket[i]
                return True
        return False

    def left(self) -> list:
        return [part for bucket in self.buckets.values() for part in bucket]


def _new_results(ex: Example) -> list[tuple[int, int, Any]]:
    """Results of the result that the input does not hold (compared by value)."""
    def compute():
        given = _Pool(p for _, _, p in _request_parts(ex.case.history) if is_result(p))
        return [(i, k, p) for i, k, p in _request_parts(ex.output) if is_result(p) and not given.take(p)]
    return ex.once("new_results", compute)


@CONTRACT.check(
    "synthesized_marked_interrupted",
    title="every result the repair wrote says the call was interrupted and is marked as synthesized",
    rationale="a made-up result sent as a success tells the model its tool ran; pydantic-ai writes "
              "outcome='interrupted', the fixed interrupted text and the "
              "'pydantic_ai_synthesized_tool_return' marker (its SYNTHESIZED_TOOL_RETURN_METADATA_KEY, "
              "https://github.com/pydantic/pydantic-ai/pull/6319)",
)
def synthesized_marked_interrupted(ex: Example) -> None:
    new = _new_results(ex)
    if not new:
        raise NotApplicable("the repair wrote no result")
    for index, _, part in new:
        marked = isinstance(part.metadata, dict) and part.metadata.get(pai.SYNTHESIZED_TOOL_RETURN_METADATA_KEY) is True
        if not (getattr(part, "outcome", None) == "interrupted" and marked
                and part.content == pai.INTERRUPTED_TOOL_RETURN_CONTENT):
            raise Violation(f"the result for {part.tool_call_id} in message {index} is not the input's and is not "
                            "marked as an interrupted, synthesized result",
                            expected={"outcome": "interrupted", "content": pai.INTERRUPTED_TOOL_RETURN_CONTENT,
                                      "metadata": {pai.SYNTHESIZED_TOOL_RETURN_METADATA_KEY: True}},
                            actual=repr(part)[:300])


# -- idempotent --------------------------------------------------------------------------

@CONTRACT.check(
    "idempotent",
    title="repairing the result again changes nothing",
    rationale="pydantic-ai repairs the history before every model request; a repair that changes a "
              "repaired history again churns the provider's prompt-cache prefix every turn "
              "(https://github.com/pydantic/pydantic-ai/pull/6319)",
)
def idempotent(ex: Example) -> None:
    check_fixed_point(ex)


# -- order_preserved ---------------------------------------------------------------------------

def _streams(history: Sequence[ModelMessage], keep) -> tuple[list, list[tuple[int, bool, Any]]]:
    """(response parts in order; request parts kept by ``keep(i, k, part)`` as (response parts
    before it, whether it is a result, the part)), the second sorted so that only what
    crosses a response, or swaps within its own kind, changes it."""
    responses: list = []
    requests: list[tuple[int, bool, Any]] = []
    for i, message in enumerate(history):
        for k, part in enumerate(message.parts):
            if isinstance(message, pai.ModelResponse):
                responses.append(part)
            elif keep(i, k, part):
                requests.append((len(responses), is_result(part), part))
    requests.sort(key=lambda item: item[:2])
    return responses, requests


@CONTRACT.check(
    "order_preserved",
    title="everything the input holds is kept in order (only results that answer no call may go)",
    rationale="a repair that drops a real result, or moves content across a model turn, changes what "
              "the model saw and did (CopilotKit/OpenBot PR #333 review: a call answered after a later "
              "user message had its real result dropped, https://github.com/CopilotKit/OpenBot/pull/333); "
              "results may move ahead of other request parts, as pydantic-ai merges adjacent requests",
)
def order_preserved(ex: Example) -> None:
    given = match_calls(ex.case.history)
    droppable = {*given.second_answers, *given.orphans}
    before_resp, before_req = _streams(ex.case.history, lambda i, k, p: (i, k) not in droppable)
    if len(before_resp) != sum(len(m.parts) for m in ex.output if isinstance(m, pai.ModelResponse)) \
            or before_resp != [p for m in ex.output if isinstance(m, pai.ModelResponse) for p in m.parts]:
        after_resp = [p for m in ex.output if isinstance(m, pai.ModelResponse) for p in m.parts]
        first = first_difference(before_resp, after_resp)
        raise Violation("the response parts differ from the input's: "
                        + list_difference(before_resp, after_resp, "response part"),
                        expected=describe_at(before_resp, first, 300), actual=describe_at(after_resp, first, 300))
    pool = _Pool(part for _, _, part in before_req)
    _, after_req = _streams(ex.output, lambda i, k, part: pool.take(part))
    lost = pool.left()
    if lost:
        raise Violation(f"a request part of the input is missing (or changed): {repr(lost[0])[:300]}"
                        + and_more(lost, "missing part"),
                        expected="kept", actual="missing")
    moved = next((i for i, (a, b) in enumerate(zip(before_req, after_req, strict=False)) if a != b), None)
    if moved is not None:
        raise Violation(f"a request part moved across a model response or past another of its kind: "
                        f"{repr(after_req[moved][2])[:300]}",
                        expected=f"after {before_req[moved][0]} response parts",
                        actual=f"after {after_req[moved][0]} response parts")


# -- continuable -----------------------------------------------------------------------------

_NEW_PROMPT = "Thanks. One more question (continuable)"
#: How many final messages of a long result the agent is given.
_TAIL = 64


def _tail(history: list[ModelMessage]) -> list[ModelMessage]:
    """The result from its first request among the last :data:`_TAIL` messages on.

    What an agent refuses a new prompt for lies at the end (the calls of the last
    response, a suspended response); its own clean-up drops results whose calls were cut
    off. An agent run is linear in the history, so a result of thousands of messages is
    judged on its tail.
    """
    start = max(0, len(history) - _TAIL)
    while start > 0 and not isinstance(history[start], pai.ModelRequest):
        start -= 1
    return history[start:]


@lru_cache(maxsize=1)
def _agent():
    from pydantic_ai import Agent
    from pydantic_ai.models.function import FunctionModel

    return Agent(FunctionModel(lambda messages, info: pai.ModelResponse([pai.TextPart("Sure.")])))


@CONTRACT.check(
    "continuable",
    title="a pydantic-ai Agent accepts the result as message_history with a new prompt",
    rationale="what repair is for: pydantic-ai refuses a new prompt after unanswered calls ('Cannot provide a "
              "new user prompt when the message history contains unprocessed tool calls', "
              "https://github.com/alchemiststudiosDOTai/tunacode/issues/258, "
              "https://github.com/pydantic/pydantic-ai-harness/pull/976)",
)
def continuable(ex: Example) -> None:
    last = ex.output[-1] if ex.output else None
    if isinstance(last, pai.ModelResponse) and last.state == "suspended":
        raise NotApplicable("the history ends with a suspended response, which only a resume continues")
    try:
        result = _agent().run_sync(_NEW_PROMPT, message_history=fresh_lists(_tail(ex.output)))
    except Exception as exc:
        raise Violation(f"the agent refused the repaired history: {type(exc).__name__}: {str(exc)[:300]}",
                        expected="a run that answers", actual=type(exc).__name__) from None
    if result.output != "Sure.":
        raise Violation("the agent run did not reach the model's answer", expected="Sure.", actual=result.output)


# -- matches_reference -------------------------------------------------------------------------

def _blocks(history: Sequence[ModelMessage]) -> list[tuple[str, list, list]]:
    """The history as runs of same-kind messages: a run of responses as its parts; a run of
    requests as its results and its other parts. Where message boundaries fall inside a run,
    and whether results come ahead of other parts, are the implementation's choice."""
    blocks: list[tuple[str, list, list]] = []
    for message in history:
        if not blocks or blocks[-1][0] != message.kind:
            blocks.append((message.kind, [], []))
        for part in message.parts:
            (blocks[-1][1] if is_result(part) or message.kind == "response" else blocks[-1][2]).append(part)
    return blocks


def _block_text(block: tuple[str, list, list]) -> str:
    """A run as a failure message names it: its kind and its parts, a result by its call id."""
    kind, first, rest = block

    def part(p: Any) -> str:
        call_id = getattr(p, "tool_call_id", None)
        return f"{type(p).__name__}({call_id})" if call_id else type(p).__name__

    return f"{kind}s: {', '.join(map(part, [*first, *rest])) or 'no parts'}"


@CONTRACT.check(
    "matches_reference",
    title="the same parts as the reference's result, in the same runs of requests and responses",
    rationale="the rules leave one answer up to where request boundaries fall: what is dropped, what is "
              "synthesized and where; pydantic-ai's repair_messages keeps second answers to a call",
)
def matches_reference(ex: Example) -> None:
    expected, actual = _blocks(ex.reference), _blocks(ex.output)
    if expected != actual:
        first = first_difference(expected, actual)
        raise Violation("the result differs from the reference in its runs of same-kind messages: "
                        + list_difference(expected, actual, "run", show=_block_text),
                        expected=describe_at(expected, first), actual=describe_at(actual, first))
