"""The reference repair policy, and what the repair contract's checks catch."""

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from pydantic_ai.messages import (
    INTERRUPTED_TOOL_RETURN_CONTENT,
    SYNTHESIZED_TOOL_RETURN_METADATA_KEY,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from chatconform import check_case
from chatconform.contracts import get_contract
from chatconform.history import history_to_json
from chatconform.reference.repair import match_calls, repair
from chatconform.strategies import hostile_histories

AT = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
LATER = datetime(2026, 1, 5, 9, 5, tzinfo=UTC)


def _user(text: str) -> ModelRequest:
    return ModelRequest([UserPromptPart(text, timestamp=AT)])


def _calls(*ids: str, at=AT) -> ModelResponse:
    return ModelResponse([ToolCallPart("get_weather", {"city": "Paris"}, i) for i in ids], timestamp=at)


def _result(call_id: str, text: str = "sunny") -> ToolReturnPart:
    return ToolReturnPart("get_weather", text, call_id, timestamp=AT)


def _synth(call_id: str, at=AT) -> ToolReturnPart:
    return ToolReturnPart("get_weather", INTERRUPTED_TOOL_RETURN_CONTENT, call_id, timestamp=at,
                          metadata={SYNTHESIZED_TOOL_RETURN_METADATA_KEY: True}, outcome="interrupted")


def _case(history) -> dict:
    return {"history": history_to_json(history)}


# -- the policy -------------------------------------------------------------------------------

def test_calls_left_at_the_end_are_answered_in_a_new_request_in_call_order():
    history = [_user("Hi (u1)"), _calls("c2", "c1", at=LATER)]
    assert repair(history) == [*history, ModelRequest([_synth("c2", LATER), _synth("c1", LATER)])]


def test_a_call_unanswered_mid_history_is_answered_after_the_results_of_the_next_request():
    stop = UserPromptPart("stop (u2)", timestamp=AT)
    history = [_user("Hi (u1)"), _calls("c1", "c2"), ModelRequest([_result("c2"), stop]),
               ModelResponse([TextPart("ok (a1)")], timestamp=AT)]
    out = repair(history)
    assert out[2].parts == [_result("c2"), _synth("c1"), stop]
    assert out[:2] == history[:2] and out[3] is history[3]


def test_a_call_followed_directly_by_a_response_gets_a_request_between():
    history = [_user("Hi (u1)"), _calls("c1"), ModelResponse([TextPart("ok (a1)")], timestamp=AT)]
    assert repair(history) == [*history[:2], ModelRequest([_synth("c1")]), history[2]]


def test_orphans_and_second_answers_go_and_a_request_emptied_mid_history_with_them():
    history = [_user("Hi (u1)"), ModelRequest([_result("c1", "early")]), _calls("c1"),
               ModelRequest([_result("c1"), _result("c1", "again")]), ModelResponse([TextPart("ok")], timestamp=AT),
               ModelRequest([_result("c9")])]
    out = repair(history)
    assert out == [history[0], history[2], ModelRequest([_result("c1")]), history[4], ModelRequest([])]


def test_a_call_late_answered_keeps_its_late_result():
    history = [_user("Hi (u1)"), _calls("c1"), _user("wait (u2)"), ModelResponse([TextPart("ok")], timestamp=AT),
               ModelRequest([_result("c1")])]
    assert repair(history) == history


def test_an_id_reused_while_open_leaves_the_first_call_to_be_synthesized():
    history = [_user("Hi (u1)"), _calls("c1"), _user("again (u2)"), _calls("c1", at=LATER),
               ModelRequest([_result("c1")])]
    out = repair(history)
    assert out[2].parts == [_synth("c1"), UserPromptPart("again (u2)", timestamp=AT)]
    assert out[3:] == history[3:]


def test_repeated_ids_in_one_response_are_answered_in_turn():
    history = [_user("Hi (u1)"), _calls("c1", "c1"), ModelRequest([_result("c1")])]
    assert repair(history)[2].parts == [_result("c1"), _synth("c1")]


def test_repeated_ids_in_one_response_answer_the_first_call_first():
    calls = ModelResponse([ToolCallPart("get_weather", {"city": "Paris"}, "c1"), ToolCallPart("get_time", {}, "c1")],
                          timestamp=AT)
    out = repair([_user("Hi (u1)"), calls, ModelRequest([_result("c1")])])
    assert [(part.tool_name, part.outcome) for part in out[2].parts] == [("get_weather", "success"),
                                                                          ("get_time", "interrupted")]


def test_calls_a_later_response_left_open_are_answered_in_its_order_even_with_an_id_taken_over():
    # y was first called earlier: the later response's calls are still answered x, then y.
    asked = ModelRequest([UserPromptPart("again (u2)", timestamp=AT), UserPromptPart("and again (u3)", timestamp=AT)])
    history = [_user("Hi (u1)"), _calls("y"), asked, _calls("x", "y", at=LATER)]
    out = repair(history)
    assert out[2].parts == [_synth("y"), *asked.parts]  # at the front of a request without results
    assert out[4] == ModelRequest([_synth("x", LATER), _synth("y", LATER)])


@pytest.mark.filterwarnings("ignore:`RetryPromptPart` is deprecated")  # stored histories still hold it
def test_a_retry_prompt_naming_the_tool_answers_its_call_and_one_without_does_not():
    named = RetryPromptPart("bad arguments", tool_name="get_weather", tool_call_id="c1", timestamp=AT)
    answered = [_user("Hi (u1)"), _calls("c1"), ModelRequest([named])]
    assert repair(answered) == answered
    unnamed = RetryPromptPart("try again", tool_call_id="c1", timestamp=AT)
    out = repair([_user("Hi (u1)"), _calls("c1"), ModelRequest([unnamed])])
    assert out[2].parts == [_synth("c1"), unnamed]


def test_native_calls_and_results_are_left_alone():
    native = [NativeToolCallPart("web_search", {}, "n1"), NativeToolReturnPart("web_search", "found", "n1",
                                                                                timestamp=AT)]
    history = [_user("Hi (u1)"), ModelResponse([*native, NativeToolCallPart("web_search", {}, "n2")], timestamp=AT)]
    assert repair(history) == history


# -- properties ------------------------------------------------------------------------------

@settings(max_examples=30, derandomize=True, database=None, deadline=None)
@given(hostile_histories(max_bulk_turns=60))
def test_the_reference_pairs_everything_is_idempotent_and_leaves_its_input_alone(history):
    before = history_to_json(history)
    once = repair(history)
    matching = match_calls(once)
    assert not matching.unanswered and not matching.orphans and not matching.second_answers
    assert repair(once) == once
    assert history_to_json(history) == before


def test_large_case_and_floor():
    contract = get_contract("repair")
    case = contract.large_case(1_000, 3, None)
    assert case == contract.large_case(1_000, 3, None) and 1_000 <= len(case.history) <= 1_100
    assert contract.floor(case, None) is None
    assert match_calls(case.history).orphans and not match_calls(repair(case.history)).orphans


# -- the checks on minimal cases ----------------------------------------------------------------

def test_continuable_runs_a_real_agent_and_catches_a_last_response_left_open():
    history = [_user("Hi (u1)"), _calls("c1")]
    check_case("reference", "repair.continuable", _case(history))
    with pytest.raises(AssertionError, match="unprocessed tool calls"):
        check_case("chatconform.fakes.repair:LeavesLastResponse", "repair.continuable", _case(history))


def test_answers_twice_is_caught_on_a_late_result():
    history = [_user("Hi (u1)"), _calls("c1"), _user("wait (u2)"), ModelResponse([TextPart("ok")], timestamp=AT),
               ModelRequest([_result("c1")])]
    with pytest.raises(AssertionError, match="a second time"):
        check_case("chatconform.fakes.repair:AnswersTwice", "repair.every_call_answered_once", _case(history))


def test_order_preserved_accepts_results_moved_ahead_of_user_text_but_not_across_a_response():
    class MergesRequests:
        name, version = "merges", "0"

        def repair(self, history):
            out = []
            for message in repair(history):
                if out and isinstance(message, ModelRequest) and isinstance(out[-1], ModelRequest):
                    parts = [*out[-1].parts, *message.parts]
                    out[-1] = ModelRequest(sorted(parts, key=lambda p: not isinstance(p, ToolReturnPart)))
                else:
                    out.append(message)
            return out

    history = [_user("Hi (u1)"), _calls("c1"), _user("also (u2)"), ModelRequest([_result("c1")])]
    check_case(MergesRequests, "repair.order_preserved", _case(history))
    with pytest.raises(AssertionError, match=r"repair.order_preserved"):
        check_case("chatconform.fakes.repair:DropsLateCalls", "repair.order_preserved",
                   _case([*history[:3], ModelResponse([TextPart("ok")], timestamp=AT), history[3]]))
