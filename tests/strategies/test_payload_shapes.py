"""Shapes the payload contract's histories must reach under the ``ci`` profile, counted over
the cases its derandomized search draws: each is one a real mapper breaks on."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from pydantic_ai.messages import (
    AudioUrl,
    BinaryContent,
    ModelRequest,
    ModelResponse,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
    VideoUrl,
)

from chatconform import run_conformance
from chatconform.errors import UnsendableContent
from chatconform.history import tool_pairing_problems
from chatconform.reference.payload import to_payload
from chatconform.strategies.histories import _cut_while_tools_ran, histories


def _unanswered(history) -> bool:
    return any(problem.endswith("is never answered") for problem in tool_pairing_problems(history))


def _audio_or_video(history) -> set[str]:
    """How the history holds audio and video: ``link``, ``bytes`` or both."""
    forms = set()
    for message in history:
        for part in message.parts:
            if isinstance(part, UserPromptPart) and not isinstance(part.content, str):
                for item in part.content:
                    if isinstance(item, (AudioUrl, VideoUrl)):
                        forms.add("link")
                    elif isinstance(item, BinaryContent) and item.media_type.split("/")[0] in ("audio", "video"):
                        forms.add("bytes")
    return forms


def _declined(history, provider: str) -> bool:
    try:
        to_payload(history, provider=provider)
    except UnsendableContent:
        return True
    return False


@pytest.mark.slow
def test_ci_payload_histories_reach_unanswered_calls_and_audio_or_video_by_link_only(monkeypatch):
    from tests.ci_stream import ci_cases

    cases = ci_cases("payload", monkeypatch)
    unanswered = [case for case in cases if _unanswered(case.history)]
    # A run cut off while its tools ran: the reference closes the calls, the Vercel AI SDK throws.
    # 12 of 100 when written, 3 since reasoning is laid over half the histories (its draws
    # reshape the stream); the unanswered-call fakes are still caught (tests/contracts/test_fakes.py).
    assert len(unanswered) >= 3, len(unanswered)
    linked = [case for case in cases if _audio_or_video(case.history) == {"link"}]
    assert len(linked) >= 3, len(linked)  # 7 of 100 when written
    # Links only, so the reference answers for Anthropic, which takes neither kind as bytes.
    assert not any(_declined(case.history, "anthropic") for case in linked)


@settings(max_examples=80, derandomize=True, database=None, deadline=None)
@given(histories(cut_tool_rounds=True, max_bulk_turns=0))
def test_a_cut_history_leaves_only_its_last_rounds_calls_without_a_result(history):
    problems = tool_pairing_problems(history)
    assert all(problem.endswith("is never answered") for problem in problems), problems
    if problems:
        responses = [i for i, m in enumerate(history) if isinstance(m, ModelResponse) and m.tool_calls]
        at = responses[-1]
        assert len(history) - at <= 2  # the calls' response, then maybe the results that finished
        open_ids = {call.tool_call_id for call in history[at].tool_calls}
        assert {p.split("tool call ")[1].split(" is")[0] for p in problems} <= open_ids
        if len(history) == at + 2:
            assert history[-1].state == "interrupted" and len(history[-1].parts) < len(history[at].tool_calls)


def test_a_history_is_cut_after_the_response_of_its_last_tool_round():
    calls = [ToolCallPart("get_weather", {"city": c}, f"call_{c}") for c in ("a", "b", "c")]
    results = [ToolReturnPart("get_weather", "sunny", f"call_{c}") for c in ("a", "b", "c")]
    history = [ModelRequest.user_text_prompt("Hi (u1)"), ModelResponse(parts=calls),
               ModelRequest(parts=[*results, UserPromptPart("And Rome? (u2)")]), ModelResponse(parts=[])]
    assert _cut_while_tools_ran(history, 0) == history[:2]
    cut = _cut_while_tools_ran(history, 5)  # 5 % 3: two of the three results finished
    assert cut[:2] == history[:2] and cut[2].parts == results[:2] and cut[2].state == "interrupted"
    assert _cut_while_tools_ran(history[:1], 1) == history[:1]  # no tool round: as it is


def test_some_drawn_histories_are_cut():
    cut = []

    @settings(max_examples=100, derandomize=True, database=None, deadline=None)
    @given(histories(cut_tool_rounds=True, max_bulk_turns=0))
    def draw(history):
        cut.append(_unanswered(history))

    draw()
    assert sum(cut) >= 5, sum(cut)


@pytest.mark.release
def test_the_payload_stream_is_the_same_for_one_provider_as_for_all(monkeypatch):
    """What lets ``tests.ci_stream`` draw the payload stream for one provider: the reference
    for all twelve draws the same cases, in the same order."""
    from chatconform.engine import search
    from tests.ci_stream import ci_cases

    one = ci_cases("payload", monkeypatch)
    monkeypatch.undo()
    judge, drawn = search._Pass.test, []

    def recording(self, case):
        if self.raise_for is None:
            drawn.append((self.variant, case))
        return judge(self, case)

    monkeypatch.setattr(search._Pass, "test", recording)
    run_conformance("reference", checks=["payload.no_crash"], profile="ci", in_process=True)
    variants = {variant for variant, _ in drawn}
    assert len(variants) == 12
    for variant in variants:
        assert [repr(case) for v, case in drawn if v == variant] == [repr(case) for case in one], variant
