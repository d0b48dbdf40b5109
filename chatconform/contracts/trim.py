"""The ``trim`` contract: ``trim(history, *, max_messages) -> history``.

A keep-recent history processor: the implementation keeps the newest messages within a
budget of ``max_messages``. The checks judge what a trimmed history must still be: the
newest part of the conversation and nothing else (the standing system prompt aside),
ending with the newest message, within the budget, with tool pairs whole and a user turn
first. The budgets are drawn so that a plain ``history[-max_messages:]`` starts where
trims broke (:mod:`chatconform.strategies.budgets`).

What counts is what a reader of the conversation sees (:func:`~chatconform.history.visible_items`),
so an implementation may copy messages or store them another way; the budget counts the
messages returned. Where no valid trim fits the budget, the reference keeps the smallest
valid one (:mod:`chatconform.reference.trim`), and ``trim.within_budget`` allows that much.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from chatconform.errors import NotApplicable, Violation
from chatconform.frame.contract import Case, Example
from chatconform.frame.history_contract import HistoryContract, check_same_items, register_pairs_intact
from chatconform.frame.lifecycle import Conversation, LifecycleStep, picked
from chatconform.history import Item, first_difference, history_problem, item_label, visible_items
from chatconform.lazy import pai
from chatconform.reference.compaction import standing_system_parts
from chatconform.reference.trim import USER_VOICED, trim, valid_starts
from chatconform.strategies import expand_history, trim_cases
from chatconform.strategies.lifecycles import Step

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage


@dataclass
class TrimCase(Case):
    history: list[ModelMessage]
    max_messages: int


def _budget(history: list[ModelMessage], pick: int) -> int:
    """A trim budget at ``len(history) - start`` for a valid start, or one below it: where a
    trim that adds the standing prompt on top of its budget is caught."""
    starts = [s for s in valid_starts(history) if s < len(history)] or [0]
    return max(1, len(history) - picked(pick // 2, starts) - (pick % 2))


def _trim(conversation: Conversation, step: Step) -> Any:
    """``trim`` to the budget the step's pick names."""
    history = conversation.history
    budget = _budget(history, step.pick)
    mine = conversation.call("trim", history, max_messages=budget)
    return conversation.record(mine, conversation.reference("trim", history, max_messages=budget))


class TrimContract(HistoryContract):
    name = "trim"
    method = "trim"
    signature = "trim(history, *, max_messages) -> history"
    crash_rationale = ("langchain-core trim_messages raised IndexError on an empty history with "
                       "include_system=True (https://github.com/langchain-ai/langchain/issues/26895): a "
                       "trim that raises on a first turn stops the agent before it starts")
    mutation_rationale = ("a trim that slices the caller's list in place (messages[:] = messages[-N:]) "
                          "evicts history other code still holds: one shared list trimmed for every chat "
                          "(https://github.com/FlintUA/MeshCenter/issues/7)")
    listing_order = 40
    case_type = TrimCase
    wire_fields: ClassVar[dict[str, Any]] = {"max_messages": {"type": "integer", "minimum": 1}}
    result_description = "The result of trim: the trimmed history, in the same JSON as the input history."
    reference_module = "chatconform.reference.trim"
    guard_tests = ("tests/contracts/test_trim.py",)
    lifecycle_steps = (LifecycleStep("trim", "trim to a budget (pick {pick})", order=50, picks=True, methods=("trim",),
                                     play=_trim),)

    def cases(self, variant):
        return trim_cases().map(lambda c: TrimCase(*c))

    def call(self, fn, case, variant):
        return fn(case.history, max_messages=case.max_messages)

    def reference(self, case, variant):
        return trim(case.history, max_messages=case.max_messages)

    def output_problem(self, output, case):
        return history_problem(output)

    # -- the benchmark hook ------------------------------------------------------------------
    def large_case(self, size: int, seed: int, variant: str | None) -> TrimCase:
        """About ``size`` messages from ``expand_history``, trimmed to a drawn fraction."""
        history = expand_history(seed, size)
        return TrimCase(history, max(1, int(len(history) * random.Random(seed).uniform(0.1, 0.9))))


CONTRACT = TrimContract()


# -- what the case and the result hold ---------------------------------------------------------

def _result_items(ex: Example) -> list[Item]:
    return ex.once("result_items", lambda: visible_items(ex.output))


def _input_items(ex: Example) -> list[Item]:
    return ex.case_once("input_items", lambda: visible_items(ex.case.history))


def _standing_items(ex: Example) -> list[Item]:
    return ex.case_once("standing", lambda: visible_items([pai.ModelRequest(standing_system_parts(ex.case.history))]))


def _standing_positions(ex: Example) -> list[int]:
    """Where each item of the standing system prompt is in the history's items, in order."""
    def compute() -> list[int]:
        first_response = next((i for i, m in enumerate(ex.case.history) if isinstance(m, pai.ModelResponse)),
                              len(ex.case.history))
        leading = visible_items(ex.case.history[:first_response])
        return [i for i, item in enumerate(leading) if item.kind == "system"]

    return ex.case_once("standing_positions", compute)


def _first_turn(items: list[Item]) -> Item | None:
    return next((item for item in items if item.kind != "system"), None)


# -- suffix_only -------------------------------------------------------------------------------

def _suffix_mismatch(items: list[Item], history: list[Item]) -> tuple[int, Item | None, Item] | None:
    """Where ``items`` stops being the end of ``history``: (index in items, the history's
    item there or None, the item found), or None when it is a suffix."""
    offset = len(history) - len(items)
    for index, item in enumerate(items):
        expected = history[offset + index] if offset + index >= 0 else None
        if expected != item:
            return index, expected, item
    return None


@CONTRACT.check(
    "suffix_only",
    title="the result is the end of the history (the standing system prompt may be kept in front)",
    rationale="a trim that keeps the first message on top of the last N (history[:1] + history[-(N-1):]) "
              "keeps the whole list, and the first message twice, when N is 1: history[-0:] is everything "
              "(https://github.com/ziatdinovmax/SciLink/pull/514); a trim must not invent, repeat or reorder "
              "what the model reads",
)
def suffix_only(ex: Example) -> None:
    items, history, standing = _result_items(ex), _input_items(ex), _standing_items(ex)
    mismatch = _suffix_mismatch(items, history)
    if mismatch is None:
        return
    common = first_difference(items, standing)
    if common and _suffix_mismatch(items[common:], history) is None:
        # The standing prompt (or its start) in front of a suffix: allowed where the suffix
        # no longer holds it, else it is there twice.
        offset = len(history) - len(items) + common
        if offset > _standing_positions(ex)[common - 1]:
            return
        raise Violation("the standing system prompt is kept in front of a part of the history that still holds it",
                        expected="the system prompt once", actual=[item_label(i) for i in items[:common]])
    index, expected, found = mismatch
    raise Violation(f"item {index} of the result ({item_label(found)!r}) is not where the end of the history has it",
                    expected=item_label(expected) if expected else "nothing: the result holds more than the history",
                    actual=item_label(found))


# -- keeps_latest ------------------------------------------------------------------------------

@CONTRACT.check(
    "keeps_latest",
    title="the result ends with the newest message of the history",
    rationale="a trim that finds no legal start in its window returned an empty history, dropping the turn "
              "in progress (https://github.com/HKUDS/nanobot/pull/4229); langchain-core trim_messages with "
              "start_on='human' does the same when the newest human message is outside the window",
)
def keeps_latest(ex: Example) -> None:
    newest = next((items for message in reversed(ex.case.history) if (items := visible_items([message]))), None)
    if newest is None:
        raise NotApplicable("no message of the history holds anything a reader sees")
    items = _result_items(ex)
    if items[len(items) - len(newest):] != newest:
        raise Violation("the newest message of the history is not the end of the result",
                        expected=[item_label(i) for i in newest[-3:]],
                        actual=[item_label(i) for i in items[-3:]] or "an empty result")


# -- within_budget -----------------------------------------------------------------------------

@CONTRACT.check(
    "within_budget",
    title="at most max_messages messages (or, where no valid trim fits, no more than the smallest valid one)",
    rationale="a trim whose arithmetic gives history[-0:] for a small cap returns the whole history "
              "(https://github.com/ziatdinovmax/SciLink/pull/514); the budget is what keeps the request "
              "inside the model's context window",
)
def within_budget(ex: Example) -> None:
    budget = ex.case.max_messages
    smallest = ex.case_once("smallest", lambda: len(trim(ex.case.history, max_messages=1)))
    allowed = max(budget, smallest)
    if len(ex.output) > allowed:
        note = "" if allowed == budget else f" (the smallest valid trim has {smallest})"
        raise Violation(f"the result has {len(ex.output)} messages for max_messages={budget}{note}",
                        expected=f"at most {allowed}", actual=len(ex.output))


# -- pairs_intact ------------------------------------------------------------------------------

register_pairs_intact(
    CONTRACT,
    rationale="pydantic-ai issue #2050: a history processor slicing messages[-N:] keeps a tool return "
              "without its call (https://github.com/pydantic/pydantic-ai/issues/2050); OpenAI answers "
              "\"messages with role 'tool' must be a response to a preceding message with 'tool_calls'\"",
)


# -- user_led ----------------------------------------------------------------------------------

@CONTRACT.check(
    "user_led",
    title="system prompts aside, the result opens with a user prompt or a summary",
    rationale="langchain-core trim_messages keeps whatever the window starts with, a ToolMessage or an "
              "AIMessage (https://github.com/langchain-ai/langchain/issues/33245); GLM rejects user-less "
              "arrays (1214) and Gemini a function call that does not follow a user turn",
)
def user_led(ex: Example) -> None:
    opening = _first_turn(_input_items(ex))
    if opening is None or opening.kind not in USER_VOICED:
        raise NotApplicable("the history itself does not open with a user turn")
    first = _first_turn(_result_items(ex))
    if first is None or first.kind not in USER_VOICED:
        raise Violation("the result does not open with a user turn",
                        expected="a user prompt or a summary", actual=item_label(first) if first else "no turn")


# -- matches_reference -------------------------------------------------------------------------

@CONTRACT.check(
    "matches_reference",
    title="the same visible items as the reference's result, in the same order",
    rationale="the reference policy (the longest suffix within the budget that starts at a user turn and "
              "splits no tool pair, the standing prompt kept) is the one answer every provider accepts",
)
def matches_reference(ex: Example) -> None:
    check_same_items(visible_items(ex.reference), _result_items(ex))
