"""The run driver (every ending, read from what it captured), the reference persistence
policy, the persist case's JSON, and the contract's catches."""

import dataclasses
import re

import pytest
from hypothesis import given, settings
from hypothesis.errors import InvalidArgument
from pydantic_ai import DeferredToolRequests
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart

from chatconform import check_case, run_conformance
from chatconform.contracts.persist import CONTRACT, PersistCase, _continue, large_case
from chatconform.reference.persist import persist_run
from chatconform.strategies.histories import instructions
from chatconform.strategies.runs import ENDINGS, POINTS, Scenario, run_cases, run_scenario, scenarios
from tests.ci_stream import ci_cases

PREVIOUS = [ModelRequest([UserPromptPart("Hi (u1)")]), ModelResponse([TextPart("Hello (a1)")])]
INSTRUCTIONS = "Answer briefly. (instructions)"


def _play(ending, *, stream=False, point="before_start", rounds=(2,), last_calls=2, limit="tokens", chunks=1):
    return run_scenario(Scenario(previous=PREVIOUS, instructions=INSTRUCTIONS, stream=stream, rounds=rounds,
                                 ending=ending, point=point, last_calls=last_calls, limit=limit, chunks=chunks))


def _calls(message):
    return [p.tool_call_id for p in message.parts if isinstance(p, ToolCallPart)]


def _returns(message):
    return [p.tool_call_id for p in message.parts if isinstance(p, ToolReturnPart)]


# -- the driver: each ending, as the capture shows it ----------------------------------------

def _assert_cut(captured, cut, *, stream):
    """What a run cut from outside at ``cut`` leaves in its capture (2 calls in the last round)."""
    if cut == "before_start":
        assert captured == []
        return
    last, before = captured[-1], captured[-2]
    if cut == "before_response":
        if stream:  # the stream had begun: pydantic-ai keeps the empty response, interrupted
            assert isinstance(last, ModelResponse) and last.state == "interrupted" and last.parts == []
        else:
            assert isinstance(last, ModelRequest) and last.state == "complete" and _returns(last)
    elif cut == "mid_stream":
        assert isinstance(last, ModelResponse) and last.state == "interrupted"
        assert _calls(last) == ["call_1_0"]  # one chunk of the two calls came
    elif cut == "after_calls":
        assert isinstance(last, ModelResponse) and last.state == "complete"
        assert _calls(last) == ["call_1_0", "call_1_1"]
    elif cut == "in_tool":
        assert isinstance(last, ModelRequest) and last.state == "interrupted" and last.parts == []
        assert _calls(before) == ["call_1_0", "call_1_1"]
    elif cut == "after_results":
        assert isinstance(last, ModelRequest) and last.state == "interrupted"
        assert _returns(last) == ["call_1_0"]  # the sibling returned, the other call still ran
    else:
        raise AssertionError(cut)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("cut", POINTS)
def test_a_cancellation_leaves_what_pydantic_ai_wrote_at_that_point(cut, stream):
    if cut == "mid_stream" and not stream:
        pytest.skip("a cut mid-stream needs a stream")
    result = _play(f"cancel_{cut}", stream=stream)
    assert (result.outcome, result.stopped_by) == ("cancelled", "CancelledError")
    _assert_cut(result.captured, cut, stream=stream)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("point", POINTS)
def test_a_timeout_lands_at_each_point(point, stream):
    if point == "mid_stream" and not stream:
        pytest.skip("a cut mid-stream needs a stream")
    result = _play("timeout", stream=stream, point=point)
    assert (result.outcome, result.stopped_by) == ("timeout", "TimeoutError")
    _assert_cut(result.captured, point, stream=stream)


@pytest.mark.parametrize("stream", [False, True])
def test_success_ends_in_a_text_answer(stream):
    result = _play("success", stream=stream)
    assert (result.outcome, result.stopped_by, type(result.output)) == ("success", "returned", str)
    last = result.captured[-1]
    assert isinstance(last, ModelResponse) and last.state == "complete" and not last.tool_calls and last.text


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("last_calls", [1, 2])
def test_deferred_ends_with_the_ask_human_call_open(stream, last_calls):
    result = _play("deferred", stream=stream, last_calls=last_calls)
    assert result.outcome == "deferred" and isinstance(result.output, DeferredToolRequests)
    assert [c.tool_name for c in result.output.calls] == ["ask_human"]
    response = next(m for m in reversed(result.captured) if isinstance(m, ModelResponse))
    assert _calls(response)[-1] == f"call_1_{last_calls - 1}"
    answered = {i for m in result.captured for i in _returns(m)}
    assert f"call_1_{last_calls - 1}" not in answered
    assert all(m.state == "complete" for m in result.captured)
    if last_calls == 2:  # the sibling ran: its result is the last, complete request
        assert _returns(result.captured[-1]) == ["call_1_0"]


@pytest.mark.parametrize("stream", [False, True])
def test_a_model_error_stops_the_run(stream):
    result = _play("model_error", stream=stream, chunks=1)
    assert (result.outcome, result.stopped_by) == ("failure", "RuntimeError")
    last = result.captured[-1]
    if stream:  # broke off after one chunk: the partial response, interrupted
        assert isinstance(last, ModelResponse) and last.state == "interrupted" and _calls(last) == ["call_1_0"]
    else:
        assert isinstance(last, ModelRequest) and _returns(last) == ["call_0_0", "call_0_1"]


@pytest.mark.parametrize("stream", [False, True])
def test_a_tool_error_leaves_the_interrupted_request_of_the_results_so_far(stream):
    result = _play("tool_error", stream=stream)
    assert (result.outcome, result.stopped_by) == ("failure", "RuntimeError")
    last = result.captured[-1]
    assert isinstance(last, ModelRequest) and last.state == "interrupted" and _returns(last) == ["call_1_0"]


@pytest.mark.parametrize("stream", [False, True])
def test_a_token_limit_keeps_the_response_that_crossed_it_interrupted(stream):
    result = _play("usage_limit", stream=stream, limit="tokens")
    assert (result.outcome, result.stopped_by) == ("failure", "UsageLimitExceeded")
    last = result.captured[-1]
    assert isinstance(last, ModelResponse) and last.state == "interrupted" and _calls(last) == ["call_1_0", "call_1_1"]


def test_a_request_limit_stops_the_run_before_the_next_request():
    result = _play("usage_limit", limit="requests", rounds=(1, 2))
    assert (result.outcome, result.stopped_by) == ("failure", "UsageLimitExceeded")
    assert sum(isinstance(m, ModelResponse) for m in result.captured[len(PREVIOUS):]) == 2
    assert _returns(result.captured[-1]) == ["call_1_0", "call_1_1"]


def test_the_driver_is_deterministic_and_leaves_the_previous_history_alone():
    before = [dataclasses.replace(m) for m in PREVIOUS]
    first, second = _play("cancel_after_results", stream=True), _play("cancel_after_results", stream=True)
    assert first.captured == second.captured
    assert before == PREVIOUS and first.previous is PREVIOUS
    assert first.captured[:2] == PREVIOUS  # the stored history leads the capture


def test_run_instructions_are_on_the_captured_requests():
    captured = _play("success").captured
    assert {m.instructions for m in captured[len(PREVIOUS):] if isinstance(m, ModelRequest)} == {INSTRUCTIONS}


@settings(max_examples=30, deadline=None)
@given(run_cases(max_rounds=1))
def test_generated_runs_end_as_their_outcome_says(result):
    stopped = {"success": "returned", "deferred": "returned", "cancelled": "CancelledError",
               "timeout": "TimeoutError"}
    assert result.stopped_by == stopped.get(result.outcome, result.stopped_by)
    if result.outcome == "failure":
        assert result.stopped_by in ("RuntimeError", "UsageLimitExceeded")
    assert bool(result.captured) == (result.scenario.cut_at != "before_start")


@pytest.mark.slow
def test_ci_runs_often_carry_instructions_on_several_requests(monkeypatch):
    """A store that strips the instructions of the first request only passes a run with one
    request: the ci stream must hold dozens of runs with two or more."""
    carrying = [sum(isinstance(m, ModelRequest) and bool((m.instructions or "").strip()) for m in case.captured)
                for case in ci_cases("persist", monkeypatch)]
    assert sum(count >= 2 for count in carrying) >= 40, carrying


@settings(max_examples=30)
@given(instructions(blank=False, absent=False))
def test_instructions_without_absent_or_blank_are_text(text):
    assert text.strip().endswith("(instructions)")


def test_bad_scenarios_and_knobs_are_refused_by_name():
    with pytest.raises(ValueError, match="ending='crashed'"):
        Scenario(previous=[], ending="crashed")
    with pytest.raises(ValueError, match="stream=True"):
        Scenario(previous=[], ending="cancel_mid_stream")
    with pytest.raises(ValueError, match="last_calls >= 2"):
        Scenario(previous=[], ending="cancel_after_results", last_calls=1)
    with pytest.raises(InvalidArgument, match="endings="):
        scenarios(endings=("nope",)).example()
    with pytest.raises(InvalidArgument, match="max_calls"):
        scenarios(max_calls=1).example()


# -- the reference policy --------------------------------------------------------------------

def _with_instructions(messages):
    return [dataclasses.replace(m, instructions=INSTRUCTIONS) if isinstance(m, ModelRequest) else m
            for m in messages]


CALLS = ModelResponse([ToolCallPart("lookup", {"n": 0}, "c1")])
CAPTURED = _with_instructions([*PREVIOUS, ModelRequest([UserPromptPart("Go (u2)")]), CALLS])


@pytest.mark.parametrize("outcome", ["failure", "cancelled", "timeout"])
def test_an_unfinished_run_ending_in_calls_is_stored_interrupted_without_instructions(outcome):
    stored = persist_run(PREVIOUS, CAPTURED, outcome)
    assert [m.parts for m in stored] == [m.parts for m in CAPTURED]
    assert stored[-1].state == "interrupted" and CAPTURED[-1].state == "complete"  # a copy is marked
    assert all(m.instructions is None for m in stored if isinstance(m, ModelRequest))
    assert all(m.instructions == INSTRUCTIONS for m in CAPTURED if isinstance(m, ModelRequest))


@pytest.mark.parametrize("outcome", ["success", "deferred"])
def test_a_finished_run_keeps_its_open_calls_open(outcome):
    assert persist_run(PREVIOUS, CAPTURED, outcome)[-1].state == "complete"


def test_an_empty_capture_keeps_the_previous_history_as_a_new_list():
    stored = persist_run(PREVIOUS, [], "cancelled")
    assert stored == PREVIOUS and stored is not PREVIOUS


def test_states_pydantic_ai_wrote_are_kept():
    cut = [*PREVIOUS, dataclasses.replace(CALLS, state="interrupted")]
    assert persist_run([], cut, "cancelled")[-1] is cut[-1]
    tail = [*PREVIOUS, CALLS, ModelRequest([], state="interrupted")]
    assert persist_run([], tail, "failure") == tail


@pytest.mark.parametrize("outcome", ["", "crashed", None, "Success", ["success"]])
def test_an_unknown_outcome_is_refused_by_value(outcome):
    expected = re.escape(f"outcome={outcome!r} is not one of success, deferred, failure, cancelled, timeout")
    with pytest.raises(ValueError, match=f"^{expected}$"):
        persist_run(PREVIOUS, CAPTURED, outcome)


def test_messages_without_instructions_are_the_captures_own():
    captured = [*PREVIOUS, *CAPTURED[2:]]
    stored = persist_run([], captured, "success")
    assert [a is b for a, b in zip(stored, captured, strict=False)] == [True, True, False, True]


@pytest.mark.parametrize("outcome", ["failure", "cancelled", "timeout"])
def test_an_unfinished_run_without_open_calls_at_its_end_is_stored_as_captured(outcome):
    results = ModelRequest([ToolReturnPart("lookup", "r (r1)", tool_call_id="c1")])
    answered = [*PREVIOUS, CALLS, results]  # stopped by a request limit after the results
    assert persist_run([], answered, outcome) == answered
    text = [*PREVIOUS, ModelRequest([UserPromptPart("Go (u2)")]), ModelResponse([TextPart("Done (a2)")])]
    assert persist_run([], text, outcome) == text  # a complete answer with no calls is not marked


def test_the_stored_history_continues_where_the_capture_would_not():
    """The real error the marker prevents, from the real capture of a run cancelled after calls."""
    captured = _play("cancel_after_calls").captured
    with pytest.raises(UserError, match="unprocessed tool calls"):
        _continue(captured, "cancelled")
    _continue(persist_run(PREVIOUS, captured, "cancelled"), "cancelled")
    deferred = _play("deferred", last_calls=1).captured
    _continue(persist_run(PREVIOUS, deferred, "deferred"), "deferred")


# -- the case's JSON, replay, and the benchmark hook ------------------------------------------

def test_a_case_round_trips_through_json_and_replays():
    result = _play("cancel_after_calls")
    case = PersistCase(result.previous, result.captured, result.outcome, INSTRUCTIONS, "cancel_after_calls")
    data = CONTRACT.case_to_json(case)
    assert CONTRACT.case_from_json(data) == case
    check_case("reference", "persist.interrupted_marker", data)
    with pytest.raises(AssertionError, match=r"persist.interrupted_marker"):
        check_case("chatconform.fakes.persist:NoInterruptedMarker", "persist.interrupted_marker", data)


@pytest.mark.parametrize(("patch", "message"), [
    ({"outcome": "done"}, "outcome='done' is not one of"),
    ({"ending": "crash"}, "'ending'='crash'"),
    ({"instructions": 3}, "'instructions' must be a string"),
    ({"captured": {}}, "captured must be a JSON array"),
])
def test_a_bad_case_is_refused_with_what_is_wrong(patch, message):
    data = {**CONTRACT.case_to_json(PersistCase(PREVIOUS, [], "cancelled")), **patch}
    with pytest.raises(ValueError, match=message):
        CONTRACT.case_from_json(data)


def test_the_large_case_is_a_cancelled_run_the_reference_stores_whole():
    case = large_case(2_000, seed=7)
    assert 1_900 <= len(case.captured) <= 2_100 and case.previous == case.captured[:len(case.previous)]
    stored = persist_run(case.previous, case.captured, case.outcome)
    assert len(stored) == len(case.captured) and stored[-1].state == "interrupted"
    assert not any(isinstance(m, ModelRequest) and m.instructions for m in stored)
    assert large_case(2_000, seed=7) == case
    CONTRACT.floor(case, None)


# -- the contract's catches ------------------------------------------------------------------

@pytest.mark.slow
def test_the_missing_marker_is_shrunk_to_a_run_cancelled_after_its_calls():
    verdicts = run_conformance("chatconform.fakes.persist:NoInterruptedMarker",
                               checks=["persist.interrupted_marker"], profile="ci", examples=40)
    (failure,) = verdicts[0].failures
    assert failure.shrunk and failure.case["outcome"] in ("cancelled", "timeout", "failure")
    assert failure.case["captured"][-1]["kind"] == "response" and len(failure.case["captured"]) <= 3


def test_every_ending_is_listed_once():
    assert len(set(ENDINGS)) == len(ENDINGS) == 12


def test_stores_the_error_fails_only_by_its_exception_object():
    """The fake's feedback part, its exception written as text, is a part pydantic-ai loads: the
    fake fails by the exception object it stores, not by a retry cause pydantic-ai refuses."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter, RetryFeedbackPart

    from chatconform.fakes.persist import StoresTheError

    run = _play("model_error")
    stored = StoresTheError().persist_run(PREVIOUS, run.captured, run.outcome)
    feedback = [p for m in stored for p in m.parts if isinstance(p, RetryFeedbackPart)]
    assert feedback, "the fake records the failed run"
    loaded = ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(stored, fallback=repr))
    assert len(loaded) == len(stored)
