"""The reference compaction policy, the cut strategy, and the contract's catches."""

import re

import pytest
from hypothesis import given, settings
from pydantic_ai.messages import (
    CompactionPart,
    ModelRequest,
    ModelResponse,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from chatconform import run_conformance
from chatconform.history import SUMMARY_METADATA_KEY, history_from_json, tool_pairing_problems, visible_items
from chatconform.reference.compaction import SUMMARY_FRAME, compact, safe_cut
from chatconform.strategies import compaction_cases
from chatconform.strategies.cuts import PAIRING_WINDOW, cut_points, late_result_tail
from tests.ci_stream import ci_cases
from tests.messages import SYSTEM, answer, user


def _summary_parts(history) -> list[CompactionPart]:
    return [p for m in history for p in m.parts if isinstance(p, CompactionPart)]


# -- bad input --------------------------------------------------------------------------------

@pytest.mark.parametrize("cut", [-1, 3, True, 1.0, "1", None])
def test_a_cut_outside_the_history_is_refused_by_value(cut):
    history = [ModelRequest([SYSTEM, UserPromptPart("Hi (u2)")]), answer("Hello (a3)")]
    with pytest.raises(ValueError, match=re.escape(f"cut={cut!r}") + ".*0..2"):
        compact(history, cut=cut, summary="s")


@pytest.mark.parametrize("summary", ["", "  \n\t", None])
def test_an_empty_or_blank_summary_is_refused_by_value(summary):
    with pytest.raises(ValueError, match=re.escape(f"summary={summary!r}")):
        compact([user("Hi (u1)")], cut=1, summary=summary)


# -- the policy -------------------------------------------------------------------------------

def test_empty_tail_leaves_the_system_prompt_and_the_summary_as_user():
    history = [ModelRequest([SYSTEM, UserPromptPart("Hi (u2)")]), answer("Hello (a3)")]
    result = compact(history, cut=len(history), summary="They said hello.")
    assert [type(m) for m in result] == [ModelRequest, ModelRequest]
    assert result[0].parts == [SYSTEM] and result[0].parts[0] is not SYSTEM  # a copy
    (part,) = result[1].parts
    assert isinstance(part, CompactionPart)
    assert part.content == f"{SUMMARY_FRAME}\n\nThey said hello."
    assert part.metadata == {SUMMARY_METADATA_KEY: True}


def test_a_second_compaction_replaces_the_first_summary():
    first = compact([ModelRequest([SYSTEM]), user("Q1 (u2)"), answer("A1 (a3)"), user("Q2 (u4)"),
                     answer("A2 (a5)")], cut=3, summary="first summary")
    second = compact([*first, user("Q3 (u6)"), answer("A3 (a7)")], cut=len(first) + 1,
                     summary="second summary")
    (summary,) = _summary_parts(second)
    assert summary.content.endswith("second summary") and "first summary" not in summary.content
    assert [i.kind for i in visible_items(second)] == ["system", "summary", "assistant"]


def test_the_cut_moves_back_to_keep_a_far_pair():
    tail = late_result_tail(100, rounds=5)  # the first response's late call is answered 9 messages later
    history = [ModelRequest([SYSTEM, UserPromptPart("Run the jobs (u1)")]), *tail]
    late_call, late_result = 1, 1 + 2 * 5 - 1
    assert late_result - late_call > PAIRING_WINDOW
    cut = late_call + 3
    assert safe_cut(history, cut) == late_call
    result = compact(history, cut=cut, summary="s")
    assert tool_pairing_problems(result) == []
    assert result[2:] == history[late_call:]


def test_the_standing_prompt_is_not_added_again_when_it_is_in_the_tail():
    history = [ModelRequest([SYSTEM]), user("Q1 (u2)"), answer("A1 (a3)")]
    result = compact(history, cut=0, summary="nothing yet")
    assert [i.kind for i in visible_items(result)] == ["summary", "system", "user", "assistant"]


def test_parallel_calls_are_kept_with_their_results():
    calls = [ToolCallPart("get_weather", {"city": "Paris"}, "c1"), ToolCallPart("get_weather", {"city": "Oslo"}, "c2")]
    history = [user("Weather? (u1)"), ModelResponse(calls),
               ModelRequest([ToolReturnPart("get_weather", "sunny (r2)", tool_call_id="c2"),
                             ToolReturnPart("get_weather", "rain (r3)", tool_call_id="c1")]),
               answer("Sunny and rain. (a4)")]
    assert compact(history, cut=2, summary="s")[1:] == history[1:]


def test_the_input_is_not_mutated():
    history = [ModelRequest([SYSTEM, UserPromptPart("Hi (u2)")]), answer("Hello (a3)")]
    before = [m.parts[:] for m in history]
    compact(history, cut=1, summary="s")
    assert [m.parts for m in history] == before


# -- the cut strategy -------------------------------------------------------------------------

def test_cut_points_lead_with_the_far_pair_and_the_last_user_message():
    history = [user("Go (u1)"), *late_result_tail(100, rounds=5)]
    points = cut_points(history)
    assert points[:4] == [3, 4, 5, 2]  # inside the far pair (call 1, result 10), then right after the call
    assert 1 in points and len(history) in points and 0 in points


def test_any_call_of_the_tail_batch_may_be_the_late_one():
    for width, late in [(2, 0), (2, 1), (3, 2), (4, 1)]:
        tail = late_result_tail(100, rounds=4, width=width, late=late)
        batch = [p.tool_call_id for p in tail[0].parts]
        assert len(batch) == width and tool_pairing_problems([user("Go (u1)"), *tail]) == []
        answered_at = {p.tool_call_id: i for i, m in enumerate(tail) for p in m.parts
                       if isinstance(p, ToolReturnPart)}
        assert [answered_at[c] for c in batch] == [7 if i == late else 1 for i in range(width)]
    with pytest.raises(ValueError, match="late=2"):
        late_result_tail(100, rounds=1, width=2, late=2)


def _splits_a_later_call_of_a_batch(history, cut) -> bool:
    """Whether ``cut`` falls between a parallel batch's call other than the first and its
    result, with the batch's first call answered before the cut."""
    answered_at = {p.tool_call_id: i for i, m in enumerate(history) if isinstance(m, ModelRequest)
                   for p in m.parts if isinstance(p, ToolReturnPart)}
    batches = [[p.tool_call_id for p in m.parts if isinstance(p, ToolCallPart)] for m in history[:cut]]
    return any(len(calls) > 1 and answered_at.get(calls[0], len(history)) < cut
               and any(answered_at.get(c, -1) >= cut for c in calls[1:]) for calls in batches)


@pytest.mark.slow
def test_ci_cuts_split_a_later_call_of_a_batch_from_its_late_result(monkeypatch):
    """A compaction that pairs only each batch's first call passes unless a cut does this."""
    cases = ci_cases("compaction", monkeypatch)
    assert sum(_splits_a_later_call_of_a_batch(c.history, c.cut) for c in cases) >= 10


@settings(max_examples=60)
@given(compaction_cases())
def test_compaction_cases_are_valid_and_the_reference_keeps_pairs(case):
    history, cut, summary = case
    assert 0 <= cut <= len(history) and summary.strip()
    assert tool_pairing_problems(history) == []
    assert tool_pairing_problems(compact(history, cut=cut, summary=summary)) == []


# -- whole searches ---------------------------------------------------------------------------

@pytest.mark.release  # how small a shrunk case is
@pytest.mark.slow
def test_system_role_summary_shrinks_to_the_glm_shape():
    """One user message, at most a short assistant/tool tail, the cut right after the user."""
    (verdict,) = run_conformance("chatconform.fakes.compaction:SystemRoleSummary",
                                 checks=["compaction.user_led"], timeout=2)
    assert verdict.status == "fail"
    case = verdict.failures[0].case
    history = history_from_json(case["history"], "history")
    assert len(history) <= 4
    users = [i for i, m in enumerate(history) if any(isinstance(p, UserPromptPart) for p in m.parts)]
    assert len(users) == 1 and case["cut"] == users[0] + 1
    assert "the reference to_payload" in verdict.message


@pytest.mark.slow
def test_system_role_summary_with_a_tail_shrinks_to_user_then_tail():
    """The empty tail is the smallest failure (a payload of the summary alone); among cuts
    that keep a tail, the smallest is the GLM report's shape: one user message, an
    assistant/tool tail, the cut right after the user message."""
    from hypothesis import find, settings

    from chatconform.contracts import get_contract
    from chatconform.engine import evaluate_case
    from chatconform.fakes.compaction import SystemRoleSummary
    from chatconform.runner.discovery import wrap

    contract, fake = get_contract("compaction"), wrap(SystemRoleSummary)

    def fails_with_a_tail(case) -> bool:
        if case.cut >= len(case.history):
            return False
        evaluation = evaluate_case(fake, contract, case, None, timeout=5, only=frozenset({"compaction.user_led"}))
        return any(f.check == "compaction.user_led" for f in evaluation.failures)

    case = find(contract.cases(None), fails_with_a_tail,
                settings=settings(max_examples=2000, derandomize=True, database=None, deadline=None))
    kinds = [m.kind for m in case.history]
    users = [i for i, m in enumerate(case.history) if any(isinstance(p, UserPromptPart) for p in m.parts)]
    assert users == [0] and case.cut == 1, (kinds, case.cut)
    assert kinds[1] == "response" and len(kinds) <= 4, kinds  # the tail: assistant turns and tool results
