"""The reference trim policy, the budget strategy, and the contract's catches."""

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import (
    CompactionPart,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryInfo,
    SystemPromptPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from chatconform.contracts import get_contract
from chatconform.history import tool_pairing_problems, visible_items
from chatconform.reference.compaction import standing_system_parts
from chatconform.reference.trim import trim, valid_starts
from chatconform.strategies import budgets, histories, trim_cases
from chatconform.strategies.budgets import budget_points, trim_starts
from chatconform.strategies.cuts import late_result_tail
from tests.ci_stream import ci_cases
from tests.messages import SYSTEM, answer, user


def tool_round(call_id: str) -> list:
    return [ModelResponse([ToolCallPart("run_job", {"job": call_id}, call_id)]),
            ModelRequest([ToolReturnPart("run_job", f"done ({call_id})", call_id)])]


def kinds(history) -> list[str]:
    return [f"{i.kind}:{i.value}" for i in visible_items(history)]


# -- bad input --------------------------------------------------------------------------------

@pytest.mark.parametrize("max_messages", [0, -1, True, 1.0, "2", None])
def test_a_budget_that_is_not_a_positive_int_is_refused_by_value(max_messages):
    with pytest.raises(ValueError, match=re.escape(f"max_messages={max_messages!r} is not a message budget: "
                                                   "it must be an int of at least 1")):
        trim([user("Hi (u1)")], max_messages=max_messages)


def test_the_reference_implementation_offers_trim():
    from chatconform.reference import ReferenceImplementation

    assert ReferenceImplementation().trim is trim


def test_the_empty_history_trims_to_empty():
    assert trim([], max_messages=1) == []


# -- the policy -------------------------------------------------------------------------------

def test_a_history_within_the_budget_comes_back_whole_as_a_new_list():
    history = [user("Hi (u1)"), answer("Hello (a2)")]
    result = trim(history, max_messages=2)
    assert result == history and result is not history
    assert all(a is b for a, b in zip(result, history, strict=False))


def test_the_start_moves_back_to_the_user_turn_that_opened_a_tool_round():
    history = [user("Q1 (u1)"), answer("A1 (a2)"), user("Q2 (u3)"), *tool_round("c1"), answer("A2 (a4)")]
    # history[-4:] would open with the call, history[-3:] with its orphaned result.
    assert trim(history, max_messages=4) == history[2:]
    assert valid_starts(history) == [0, 2]


def test_when_nothing_fits_the_newest_user_turn_is_kept_whole_over_the_budget():
    history = [user("Q1 (u1)"), answer("A1 (a2)"), user("Q2 (u3)"), *tool_round("c1"), *tool_round("c2"),
               answer("A2 (a4)")]
    result = trim(history, max_messages=2)
    assert result == history[2:] and len(result) == 6
    assert tool_pairing_problems(result) == []


def test_a_far_pair_keeps_the_whole_agentic_tail():
    history = [user("Run the jobs (u1)"), *late_result_tail(100, rounds=5)]
    assert valid_starts(history) == [0]
    assert trim(history, max_messages=3) == history


def test_the_standing_prompt_is_re_added_in_front_and_counts_against_the_budget():
    history = [ModelRequest([SYSTEM, UserPromptPart("Q1 (u2)")]), answer("A1 (a3)"), user("Q2 (u4)"),
               answer("A2 (a5)")]
    result = trim(history, max_messages=3)
    assert len(result) == 3 and result[1:] == history[2:]
    assert result[0].parts == [SYSTEM] and result[0].parts[0] is not SYSTEM
    assert trim(history, max_messages=2) == result  # kept even when it takes the budget over


def test_a_standing_prompt_in_its_own_request_before_the_kept_turn():
    history = [ModelRequest([SYSTEM]), user("Q1 (u2)"), answer("A1 (a3)"), user("Q2 (u4)"), answer("A2 (a5)")]
    expected = [f"system:{SYSTEM.content}", "user:Q2 (u4)", "assistant:A2 (a5)"]
    assert kinds(trim(history, max_messages=3)) == kinds(trim(history, max_messages=4)) == expected
    assert trim(history, max_messages=5) == history


def test_a_mid_conversation_system_prompt_is_conversation_and_may_be_cut():
    mid = SystemPromptPart("Use metric units. (s9)")
    history = [user("Q1 (u1)"), answer("A1 (a2)"), ModelRequest([mid]), user("Q2 (u3)"), answer("A2 (a4)")]
    assert trim(history, max_messages=2) == history[3:]
    # A request that holds the system prompt beside the user's text is a valid start.
    joined = [user("Q1 (u1)"), answer("A1 (a2)"), ModelRequest([mid, UserPromptPart("Q2 (u3)")]), answer("A2 (a4)")]
    assert trim(joined, max_messages=2) == joined[2:]


def test_a_summary_opens_a_valid_start():
    history = [user("Q1 (u1)"), answer("A1 (a2)"), ModelRequest([CompactionPart("Summary so far. (c3)")]),
               answer("A2 (a4)")]
    assert trim(history, max_messages=2) == history[2:]


def test_user_text_stored_before_tool_results_is_not_a_start():
    calls = ModelResponse([ToolCallPart("run_job", {}, "c1")])
    history = [user("Q1 (u1)"), calls,
               ModelRequest([UserPromptPart("Also this (u2)"), ToolReturnPart("run_job", "done (r3)", "c1")]),
               answer("A (a4)")]
    assert valid_starts(history) == [0]


def test_a_start_after_a_tool_round_and_one_before_retry_feedback():
    feedback = ModelRequest([RetryFeedbackPart("Return a number. (f5)",
                                               retry=RetryInfo(cause="no_output", attempt=1, max_retries=2))])
    history = [user("Q1 (u1)"), *tool_round("c1"), answer("A1 (a2)"), user("Q2 (u3)"), answer("A2 (a4)"),
               feedback, answer("42 (a6)")]
    assert valid_starts(history) == [0, 4]  # after the round; not at the feedback (no user voice)
    assert trim(history, max_messages=4) == history[4:]


def test_edges_of_the_start_search():
    """Pinned where generated cases rarely go: a start at index 1, at the newest message,
    after an empty response, after a system-only newest request."""
    assert trim([user("Q0 (u0)"), user("Q1 (u1)"), answer("A (a2)")], max_messages=2)[0].parts[0].content == "Q1 (u1)"
    newest = [user("Q1 (u1)"), answer("A1 (a2)"), user("Q2 (u3)")]
    assert trim(newest, max_messages=1) == newest[2:]
    empty = [user("Q1 (u1)"), ModelResponse([]), user("Q2 (u2)"), answer("A2 (a3)")]
    assert trim(empty, max_messages=3) == empty[2:]  # not the empty response, though it fits
    ends_in_system = [user("Q1 (u1)"), answer("A1 (a2)"), ModelRequest([SystemPromptPart("Be brief. (s3)")])]
    assert valid_starts(ends_in_system) == [0]


def test_only_the_leading_requests_hold_the_standing_prompt():
    mid = SystemPromptPart("Use metric units. (s9)")
    history = [user("Q1 (u1)"), answer("A1 (a2)"), ModelRequest([mid, UserPromptPart("Q2 (u3)")]), answer("A2 (a4)"),
               user("Q3 (u5)"), answer("A3 (a6)"), user("Q4 (u7)"), answer("A4 (a8)")]
    assert trim(history, max_messages=4) == history[4:]  # no head is owed for the mid-conversation prompt
    late = [user("Q0 (u0)"), ModelRequest([SYSTEM, UserPromptPart("Q1 (u1)")]), answer("A1 (a2)"), user("Q2 (u3)"),
            answer("A2 (a4)")]
    assert trim(late, max_messages=4) == late[1:]  # starting at the prompt's own request owes no head


def test_the_input_is_not_mutated():
    history = [ModelRequest([SYSTEM, UserPromptPart("Q1 (u2)")]), answer("A1 (a3)"), user("Q2 (u4)")]
    before = [m.parts[:] for m in history]
    trim(history, max_messages=1)
    assert [m.parts for m in history] == before


@settings(max_examples=60, deadline=None)
@given(trim_cases())
def test_trim_cases_are_valid_and_the_reference_result_is_a_valid_trim(case):
    history, max_messages = case
    assert max_messages >= 1 and tool_pairing_problems(history) == []
    result = trim(history, max_messages=max_messages)
    assert tool_pairing_problems(result) == []
    assert len(result) <= max(max_messages, len(trim(history, max_messages=1)))
    if history:
        assert visible_items(result)[-1] == visible_items(history)[-1]


def brute_force_trim(history, max_messages):
    """The policy read straight from docs/contracts/trim.md, one candidate start at a time."""
    if len(history) <= max_messages:
        return list(history)

    def valid(start):
        tail = history[start:]
        first = next((i for i in visible_items(tail) if i.kind != "system"), None)
        return start == 0 or (isinstance(tail[0], ModelRequest) and not tool_pairing_problems(tail)
                              and first is not None and first.kind in ("user", "summary"))

    def result(start):
        standing = standing_system_parts(history, start)
        return [*([ModelRequest(standing)] if standing else []), *history[start:]]

    starts = [s for s in range(len(history)) if valid(s)]
    return next((result(s) for s in starts if len(result(s)) <= max_messages), result(starts[-1]))


@settings(max_examples=150, deadline=None)
@given(histories(max_bulk_turns=0, max_turns=6).flatmap(lambda h: st.tuples(st.just(h), budgets(h))))
def test_the_reference_is_the_brute_force_policy(case):
    history, max_messages = case
    expected = brute_force_trim(history, max_messages)
    result = trim(history, max_messages=max_messages)
    assert len(result) == len(expected) and visible_items(result) == visible_items(expected)


# -- the budget strategy ----------------------------------------------------------------------

def test_budget_points_make_a_slice_start_inside_each_pair_and_after_the_last_user():
    history = [user("Go (u1)"), *late_result_tail(100, rounds=5)]
    points = budget_points(history)
    n = len(history)
    assert n - 2 in points  # history[-N:] starts right after the far pair's call
    assert n - 1 in points  # right after the last user message
    assert {1, 2, n, n + 1} <= set(points) and min(points) >= 1


def test_trim_starts_are_the_reference_valid_starts():
    history = [ModelRequest([SYSTEM]), user("Q1 (u1)"), *tool_round("c1"), answer("A1 (a2)"),
               ModelRequest([SYSTEM]), user("Q2 (u3)"), *late_result_tail(100, rounds=2)]
    assert trim_starts(history) == valid_starts(history) == [0, 1, 5, 6]  # 5: a system prompt, then Q2
    assert trim_starts([]) == valid_starts([]) == []


@pytest.mark.slow
def test_ci_budgets_are_filled_by_the_suffix_from_a_start_before_the_last(monkeypatch):
    """A budget of exactly len(history) - start, for a valid start after the standing system
    prompt and before the last: a trim that counts the suffix alone and then puts the prompt
    back in front is one over it. And one below, where the suffix from that start no longer fits."""
    exact, below, first = 0, 0, 0
    for case in ci_cases("trim", monkeypatch):
        n, starts = len(case.history), valid_starts(case.history)
        leading = itertools.takewhile(lambda m: isinstance(m, ModelRequest), case.history)
        standing = next((i for i, m in enumerate(leading) if any(isinstance(p, SystemPromptPart) for p in m.parts)),
                        None)
        if standing is None or n <= case.max_messages:
            continue
        hits = [i for i, s in enumerate(starts[:-1]) if s > standing and case.max_messages == n - s]
        exact += bool(hits)
        first += bool(hits) and hits[0] == 1
        below += any(s > standing and case.max_messages == n - s - 1 for s in starts)
    assert exact >= 8 and below >= 20 and exact - first >= 4, (exact, below, first)


# -- the contract -----------------------------------------------------------------------------

def test_a_case_loads_back_from_its_json_and_a_bad_one_is_named():
    contract = get_contract("trim")
    case = contract.case_from_json({"history": [{"kind": "request", "parts": [
        {"part_kind": "user-prompt", "content": "Hi (u1)"}]}], "max_messages": 1})
    assert contract.case_from_json(contract.case_to_json(case)) == case
    with pytest.raises(ValueError, match="needs 'max_messages'"):
        contract.case_from_json({"history": []})


def test_suffix_only_allows_the_standing_prompt_in_front_once():
    from chatconform.engine import evaluate_case
    from chatconform.runner.discovery import wrap

    class PromptOnTop:
        name, version = "prompt-on-top", "1"

        def trim(self, history, *, max_messages):
            return [ModelRequest([SYSTEM]), *history[-max_messages + 1:]]

    contract = get_contract("trim")
    history = [ModelRequest([SYSTEM, UserPromptPart("Q1 (u2)")]), answer("A1 (a3)"), user("Q2 (u4)"), answer("A2 (a5)")]

    def suffix_failure(max_messages):
        evaluation = evaluate_case(wrap(PromptOnTop), contract, contract.case_type(history, max_messages), None,
                                   timeout=5, only=frozenset({"trim.suffix_only"}))
        return [f.message for f in evaluation.failures]

    assert suffix_failure(3) == []  # [system] + [Q2, A2]: the prompt was cut off, so it may come back
    assert suffix_failure(5) == ["the standing system prompt is kept in front of a part of the history that "
                                 "still holds it"]


def test_the_benchmark_hooks_build_a_case_of_about_the_size_asked():
    contract = get_contract("trim")
    case = contract.large_case(1_000, seed=3, variant=None)
    assert 1_000 <= len(case.history) <= 1_010 and 1 <= case.max_messages < len(case.history)
    assert contract.large_case(1_000, seed=3, variant=None) == case
    assert contract.floor(case, None) is None


def test_keep_last_n_is_caught_on_the_issue_2050_shape():
    """[user] [call] [result] [answer] trimmed to 2: the slice opens with the orphaned result."""
    from chatconform.engine import evaluate_case
    from chatconform.fakes.trim import KeepLastN
    from chatconform.runner.discovery import wrap

    contract = get_contract("trim")
    case = contract.case_type([user("Q (u1)"), *tool_round("c1"), answer("A (a2)")], 2)
    evaluation = evaluate_case(wrap(KeepLastN), contract, case, None, timeout=5)
    failed = {f.check: f.message for f in evaluation.failures}
    assert set(failed) == {"trim.pairs_intact", "trim.user_led", "trim.matches_reference"}
    assert failed["trim.pairs_intact"].startswith("message 0: tool result c1 has no earlier call")
