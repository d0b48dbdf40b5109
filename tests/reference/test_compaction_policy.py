"""The reference compaction policy pinned by hand where the generated cases leave it free:
exact refusals, the stored summary's exact shape, and a cut that must move twice."""

from __future__ import annotations

import pytest
from pydantic_ai.messages import (
    CompactionPart,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from chatconform.history import SUMMARY_METADATA_KEY
from chatconform.reference.compaction import SUMMARY_FRAME, compact, safe_cut, standing_system_parts


def user(text: str) -> ModelRequest:
    return ModelRequest([UserPromptPart(text)])


def call(call_id: str) -> ModelResponse:
    return ModelResponse([ToolCallPart("run_job", {"job": call_id}, call_id)])


def answer(call_id: str) -> ModelRequest:
    return ModelRequest([ToolReturnPart("run_job", f"done {call_id}", tool_call_id=call_id)])


TWO = [ModelRequest([SystemPromptPart("Be brief. (s1)"), UserPromptPart("Hi (u2)")]),
       ModelResponse([TextPart("Hello (a3)")])]


# -- refusals name the value, in full words ------------------------------------------------------
def test_a_bad_cut_is_refused_with_the_whole_message():
    with pytest.raises(ValueError) as refused:
        compact(TWO, cut=3, summary="s")
    assert str(refused.value) == ("cut=3 is not an index into the history: it must be an int in 0..2 "
                                  "(the history has 2 messages)")


def test_a_blank_summary_is_refused_with_the_whole_message():
    with pytest.raises(ValueError) as refused:
        compact(TWO, cut=1, summary=" ")
    assert str(refused.value) == "summary=' ' is empty or blank: persisting it would lose the summarized messages"


# -- the stored summary ---------------------------------------------------------------------------
def test_the_summary_is_stored_in_exactly_this_shape():
    assert SUMMARY_FRAME == "Summary of the conversation so far:"
    result = compact(TWO, cut=2, summary="They greeted each other.")
    assert [[(type(part).__name__, part.content, getattr(part, "metadata", None)) for part in message.parts]
            for message in result] == [
        [("SystemPromptPart", "Be brief. (s1)", None)],
        [("CompactionPart", "Summary of the conversation so far:\n\nThey greeted each other.",
          {SUMMARY_METADATA_KEY: True})],
    ]
    assert all(isinstance(message, ModelRequest) for message in result)


def test_no_standing_prompt_means_no_system_request():
    history = [user("Hi (u1)"), ModelResponse([TextPart("Hello (a2)")]), user("Bye (u3)")]
    result = compact(history, cut=2, summary="They greeted each other.")
    assert [type(part) for message in result for part in message.parts] == [CompactionPart, UserPromptPart]
    assert result[1:] == history[2:]


# -- the cut ---------------------------------------------------------------------------------------
# Call a (index 1) is answered at 4 and call b (3) at 6: a cut at 5 splits b, and moving it to 3
# splits a, so it must move again, to 1.
CHAINED = [user("Start both jobs (u1)"), call("a"), user("And the other one (u3)"), call("b"), answer("a"),
           ModelResponse([TextPart("a is done (a6)")]), answer("b"), ModelResponse([TextPart("both done (a8)")])]


def test_a_cut_moves_again_when_its_first_move_splits_another_pair():
    assert safe_cut(CHAINED, 5) == 1
    assert compact(CHAINED, cut=5, summary="s")[1:] == CHAINED[1:]


@pytest.mark.parametrize("cut", [0, 1, 7, 8])
def test_a_cut_that_splits_nothing_stays(cut):
    assert safe_cut(CHAINED, cut) == cut


def test_the_standing_prompt_is_the_system_parts_before_the_first_response():
    history = [ModelRequest([SystemPromptPart("one (s1)")]), ModelRequest([SystemPromptPart("two (s2)"),
                                                                             UserPromptPart("Hi (u3)")]),
               ModelResponse([TextPart("Hello (a4)")]), ModelRequest([SystemPromptPart("late (s5)")])]
    assert [p.content for p in standing_system_parts(history)] == ["one (s1)", "two (s2)"]
    assert [p.content for p in standing_system_parts(history, 1)] == ["one (s1)"]
    assert [p.content for p in standing_system_parts(history[:2])] == ["one (s1)", "two (s2)"]


def test_a_result_whose_call_is_not_in_the_history_moves_nothing():
    history = [answer("gone"), user("Hi (u2)"), call("a"), answer("a"), ModelResponse([TextPart("done (a5)")])]
    assert [safe_cut(history, cut) for cut in range(len(history) + 1)] == [0, 1, 2, 2, 4, 5]
