"""The history strategy: valid by construction, round-trippable, and each knob does what it says."""

from __future__ import annotations

import itertools
import re
from datetime import timedelta

import pytest
from hypothesis import Phase, find, given, settings
from hypothesis.errors import InvalidArgument
from pydantic_ai.messages import (
    BinaryImage,
    CompactionPart,
    ImageUrl,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from chatconform.strategies.histories import histories, instructions

SETTINGS = settings(max_examples=60, derandomize=True, database=None, deadline=None)


def parts(history):
    return [part for message in history for part in message.parts]


def calls(history):
    return [part for part in parts(history) if isinstance(part, ToolCallPart)]


def texts(history):
    """Every text item of a history (the things a payload check looks for)."""
    out = []
    for part in parts(history):
        if isinstance(part, (SystemPromptPart, TextPart, ThinkingPart, RetryFeedbackPart, CompactionPart)):
            out.append(part.content)
        elif isinstance(part, UserPromptPart):
            items = [part.content] if isinstance(part.content, str) else part.content
            out.extend(item for item in items if isinstance(item, str))
        elif isinstance(part, ToolReturnPart) and isinstance(part.content, str) and part.outcome != "interrupted":
            out.append(part.content)
    return out


def unanswered(history):
    """Ids of calls not answered by the request right after their response."""
    missing = []
    for i, message in enumerate(history):
        if isinstance(message, ModelResponse):
            following = history[i + 1] if i + 1 < len(history) else None
            answered = ({p.tool_call_id for p in following.parts if isinstance(p, ToolReturnPart)}
                        if isinstance(following, ModelRequest) else set())
            missing += [c.tool_call_id for c in message.parts if isinstance(c, ToolCallPart)
                        and c.tool_call_id not in answered]
    return missing


@SETTINGS
@given(histories())
def test_json_round_trip(history):
    assert ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(history)) == history
    dumped = ModelMessagesTypeAdapter.dump_python(history, mode="json")
    assert ModelMessagesTypeAdapter.validate_python(dumped) == history


@SETTINGS
@given(histories(dangling_tail=True, ends_with_request=False, max_turns=3))
def test_round_trip_with_a_dangling_tail(history):
    assert ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(history)) == history


def ids_unique_per_response(history):
    """No response repeats an id (a later round may reuse one: reused_call_ids)."""
    return all(len(m.tool_calls) == len({c.tool_call_id for c in m.tool_calls})
               for m in history if isinstance(m, ModelResponse))


@SETTINGS
@given(histories())
def test_ids_unique_per_response_and_every_call_answered_once(history):
    ids = [call.tool_call_id for call in calls(history)]
    assert all(ids) and ids_unique_per_response(history)
    assert all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", i) for i in ids)  # every provider's id charset
    assert unanswered(history) == []
    returned = [p.tool_call_id for p in parts(history) if isinstance(p, ToolReturnPart)]
    assert sorted(returned) == sorted(ids)


TAG = re.compile(r"\((?:u|a|s|t|r|f|c)\d+\)")


@SETTINGS
@given(histories())
def test_every_text_is_tagged_once_or_blank(history):
    found = [text for text in texts(history) if text.strip()]
    assert len(found) == len(set(found))
    tags = [TAG.findall(text) for text in found]
    assert all(len(t) == 1 for t in tags), found
    assert len({t[0] for t in tags}) == len(tags)


@SETTINGS
@given(histories(odd_text=False))
def test_plain_text_is_short_and_trimmed(history):
    for text in texts(history):
        assert text == text.strip() and len(text) < 200 and "<" not in text


ODD_SHAPES = {
    "padded": lambda t: t != t.strip() and "\n" in t,
    "emoji-zwj": lambda t: "\u200d" in t,
    "combining": lambda t: "\u0301" in t,
    "long": lambda t: len(t) > 3000,
    "json": lambda t: t.startswith('{"role": "system"'),
    "chatml": lambda t: "<|im_start|>system" in t,
    "human": lambda t: t.startswith("Human:"),
    "assistant-marker": lambda t: t.startswith("\n\nAssistant:"),
    "system-frame": lambda t: "<system>obey</system>" in t,
    "tool-response-frame": lambda t: t.startswith("<tool_response>") and t.endswith("</tool_response>"),
    "thinking-frame": lambda t: "<thinking>" in t,
}


def blank_beside_content(history):
    """Blank items, each paired with whether it is the only content of its part/message."""
    found = []
    for message in history:
        for part in message.parts:
            if isinstance(part, (TextPart, ThinkingPart)) and not part.content.strip():
                found.append(("response" if isinstance(part, TextPart) else "thinking",
                              len(message.parts) > 1))
            elif (isinstance(part, UserPromptPart) and not isinstance(part.content, str)
                  and any(isinstance(i, str) and not i.strip() for i in part.content)):
                found.append(("prompt-item", len(part.content) > 1))
    return found


def test_odd_text_and_blank_items_are_reachable():
    seen: set[str] = set()

    @settings(max_examples=500, derandomize=True, database=None, deadline=None)
    @given(histories(max_bulk_turns=0))
    def search(history):
        for text in texts(history):
            seen.update(name for name, wanted in ODD_SHAPES.items() if wanted(text))
        for kind, beside in blank_beside_content(history):
            assert beside, kind  # never the only content
            seen.add("blank-" + kind)

    search()
    wanted = set(ODD_SHAPES) | {"blank-response", "blank-thinking", "blank-prompt-item"}
    assert wanted - seen == set()


@settings(max_examples=60, derandomize=True, database=None, deadline=None)
@given(histories(max_bulk_turns=300))
def test_bulk_histories_stay_valid(history):
    assert ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(history)) == history
    assert ids_unique_per_response(history) and unanswered(history) == []
    found = [text for text in texts(history) if text.strip()]
    assert len(found) == len(set(found))
    stamps = [m.timestamp for m in history]
    assert stamps == sorted(stamps)


@SETTINGS
@given(histories())
def test_timestamps_deterministic_utc_and_ordered(history):
    stamps = [m.timestamp for m in history]
    assert all(t is not None and t.utcoffset() == timedelta(0) for t in stamps)
    assert stamps == sorted(stamps)
    for message in history:
        for part in message.parts:
            if hasattr(part, "timestamp"):
                assert part.timestamp.tzinfo is not None


@SETTINGS
@given(histories(dangling_tail=True, ends_with_request=False))
def test_dangling_tail_ends_with_unanswered_calls(history):
    last = history[-1]
    assert isinstance(last, ModelResponse) and last.tool_calls
    assert unanswered(history) == [c.tool_call_id for c in last.tool_calls]


@SETTINGS
@given(histories(dangling_tail=True, ends_with_request=True))
def test_dangling_tail_with_the_interrupted_request_of_finished_results(history):
    response, request = history[-2], history[-1]
    assert isinstance(response, ModelResponse) and isinstance(request, ModelRequest)
    assert request.state == "interrupted"
    answered = {p.tool_call_id for p in request.parts}
    assert answered < {c.tool_call_id for c in response.tool_calls}


@SETTINGS
@given(histories(ends_with_request=True))
def test_ends_with_request(history):
    assert isinstance(history[-1], ModelRequest)


@SETTINGS
@given(histories(ends_with_request=False))
def test_ends_with_response(history):
    assert isinstance(history[-1], ModelResponse) and not history[-1].tool_calls


@SETTINGS
@given(histories(reused_call_ids=False))
def test_ids_unique_without_reuse(history):
    ids = [call.tool_call_id for call in calls(history)]
    assert len(ids) == len(set(ids))


@SETTINGS
@given(histories(system_prompts="none"))
def test_no_system_prompts(history):
    assert not any(isinstance(p, SystemPromptPart) for p in parts(history))


@SETTINGS
@given(histories(system_prompts="leading"))
def test_leading_system_prompts_only_at_the_start(history):
    kinds = [isinstance(p, SystemPromptPart) for p in parts(history)]
    assert kinds == sorted(kinds, reverse=True)  # all system parts before any other part


@pytest.mark.parametrize(
    ("knob", "forbidden"),
    [
        ("tools", lambda p: isinstance(p, (ToolCallPart, ToolReturnPart))),
        ("files", lambda p: isinstance(p, UserPromptPart) and not isinstance(p.content, str)),
        ("thinking", lambda p: isinstance(p, ThinkingPart)),
        ("summaries", lambda p: isinstance(p, CompactionPart)),
        ("retries", lambda p: isinstance(p, RetryFeedbackPart)
         or (isinstance(p, ToolReturnPart) and p.outcome == "retried")),
        ("interruptions", lambda p: isinstance(p, ToolReturnPart) and p.outcome == "interrupted"),
    ],
)
def test_switching_a_feature_off(knob, forbidden):
    @settings(max_examples=30, derandomize=True, database=None, deadline=None)
    @given(histories(**{knob: False}))
    def check(history):
        assert not any(forbidden(p) for p in parts(history))
        if knob == "interruptions":
            assert all(m.state == "complete" for m in history)

    check()


FEATURES = {
    "retried": lambda h: any(isinstance(p, ToolReturnPart) and p.outcome == "retried" for p in parts(h)),
    "retry-feedback": lambda h: any(isinstance(p, RetryFeedbackPart) for p in parts(h)),
    "summary": lambda h: any(isinstance(p, CompactionPart) for p in parts(h)),
    "both-image-kinds": lambda h: any(
        isinstance(p, UserPromptPart) and not isinstance(p.content, str)
        and any(isinstance(i, BinaryImage) for i in p.content) and any(isinstance(i, ImageUrl) for i in p.content)
        for p in parts(h)),
    "interrupted-calls": lambda h: any(isinstance(m, ModelResponse) and m.state == "interrupted" and m.tool_calls
                                       for m in h),
    "thinking-only-response": lambda h: any(isinstance(m, ModelResponse) and m.parts
                                            and all(isinstance(p, ThinkingPart) for p in m.parts) for m in h),
    "parallel-calls": lambda h: any(isinstance(m, ModelResponse) and len(m.tool_calls) > 1 for m in h),
    "empty-response": lambda h: any(isinstance(m, ModelResponse) and not m.parts for m in h),
    "mid-conversation-system": lambda h: any(
        isinstance(m, ModelRequest) and any(isinstance(p, SystemPromptPart) for p in m.parts) for m in h[2:]),
    # a user message typed while tools ran, stored ahead of their results
    "steer-before-results": lambda h: any(
        isinstance(m, ModelRequest) and len(m.parts) > 1 and isinstance(m.parts[0], UserPromptPart)
        and isinstance(m.parts[1], ToolReturnPart) for m in h),
    # a later round reusing an earlier round's id (servers that restart their count)
    "reused-call-id": lambda h: len({c.tool_call_id for c in calls(h)}) < len(calls(h)),
    # ids of the lengths id rules trip on: Mistral's 9 alphanumerics, one more, 64 characters
    "id-9-alphanumerics": lambda h: any(re.fullmatch(r"[a-zA-Z0-9]{9}", c.tool_call_id) for c in calls(h)),
    "id-10-alphanumerics": lambda h: any(re.fullmatch(r"[a-zA-Z0-9]{10,}", c.tool_call_id) for c in calls(h)),
    "id-64-characters": lambda h: any(len(c.tool_call_id) == 64 for c in calls(h)),
    # harness layout with the first prompt summarized away and the kept tail mid-turn
    "summary-led-tail": lambda h: any(
        isinstance(a, ModelRequest) and isinstance(a.parts[0], CompactionPart) and isinstance(b, ModelResponse)
        for a, b in itertools.pairwise(h)) and not any(isinstance(p, UserPromptPart)
                                                             for m in h[:2] for p in m.parts),
}


def test_features_are_reachable():
    """Every shape the payload checks depend on comes up within a CI-sized run."""
    seen: set[str] = set()

    @settings(max_examples=200, derandomize=True, database=None, deadline=None)
    @given(histories())
    def search(history):
        seen.update(name for name, wanted in FEATURES.items() if name not in seen and wanted(history))

    search()
    assert set(FEATURES) - seen == set()


def test_features_are_reachable_inside_a_bulk_section():
    """A bulk section plays the drawn turns' code with a seeded chooser: with every feature
    on, everything a drawn turn can hold comes up after the first few messages. Played
    directly (no Hypothesis search), so it does not depend on which examples a search meets."""
    from chatconform.strategies.choices import Bulk, SeededChooser
    from chatconform.strategies.histories import _FEATURES, _Config, _Run

    cfg = _Config(min_turns=1, max_turns=1, system_prompts="anywhere", tools=True, files=True, thinking=True,
                  summaries=True, retries=True, interruptions=True, dangling_tail=False, ends_with_request=True,
                  max_tool_rounds=3, max_parallel_calls=3, max_bulk_turns=200, odd_text=True,
                  reused_call_ids=False)
    seen: set[str] = set()
    for seed in range(3):
        run = _Run(SeededChooser(seed), cfg, dict.fromkeys(_FEATURES, True), Bulk(seed, 150))
        history = run.play()
        assert len(history) > 200
        seen.update(name for name, wanted in FEATURES.items() if wanted(history[20:]))
    drawn_once = {"reused-call-id", "id-9-alphanumerics", "id-10-alphanumerics", "id-64-characters"}  # per run
    assert set(FEATURES) - {"summary-led-tail", "summary"} - drawn_once - seen == set()


@settings(max_examples=40, derandomize=True, database=None, deadline=None)
@given(histories(min_turns=2, max_turns=3, tools=False, summaries=False, max_bulk_turns=0))
def test_turn_bounds(history):
    prompts = [m for m in history if isinstance(m, ModelRequest)
               and any(isinstance(p, UserPromptPart) for p in m.parts)]
    assert 2 <= len(prompts) <= 3


def test_simplest_draw_is_one_user_prompt():
    # Hypothesis tries the simplest choice sequence first (and shrinks toward it): every
    # draw at its simplest must give the minimal history, a single user prompt.
    first = []

    @settings(max_examples=1, derandomize=True, database=None, deadline=None, phases=[Phase.generate])
    @given(histories())
    def record(history):
        first.append(history)

    record()
    minimal = first[0]
    assert len(minimal) == 1 and isinstance(minimal[0], ModelRequest)
    assert [type(p) for p in minimal[0].parts] == [UserPromptPart]
    assert isinstance(minimal[0].parts[0].content, str)


def test_shrinks_to_a_minimal_tool_round():
    found = find(histories(max_turns=2), lambda h: any(isinstance(m, ModelResponse) and m.tool_calls for m in h),
                 settings=settings(database=None, derandomize=True))
    assert [type(m) for m in found] == [ModelRequest, ModelResponse, ModelRequest]
    assert len(found[1].parts) == 1 and len(found[2].parts) == 1


@SETTINGS
@given(instructions())
def test_instructions(value):
    assert value is None or not value.strip() or (value.strip() == value and "(instructions)" in value)


def test_blank_instructions_are_reachable_and_can_be_switched_off():
    assert find(instructions(), lambda v: v is not None and v != "" and not v.strip()) in (" ", "  \n", "\n\n", "\t")

    @SETTINGS
    @given(instructions(blank=False))
    def check(value):
        assert value is None or value.strip()

    check()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"min_turns": 0},
        {"min_turns": 3, "max_turns": 2},
        {"max_turns": 1.5},
        {"system_prompts": "sometimes"},
        {"tools": "yes"},
        {"dangling_tail": True, "tools": False},
        {"max_parallel_calls": 0},
        {"max_tool_rounds": -1},
        {"max_bulk_turns": -1},
        {"max_bulk_turns": 2.5},
        {"odd_text": "yes"},
        {"reused_call_ids": 1},
    ],
)
def test_bad_knobs_raise_invalid_argument(kwargs):
    with pytest.raises(InvalidArgument):
        histories(**kwargs).example()


def test_spans_share_one_strategy_and_leave_nothing_pending():
    """Every span draws the same strategy (a new one per span made cycles that held the
    history being drawn), nested spans get their own plays, and a draw that stops before it
    reaches the play leaves none behind for the next span."""
    from hypothesis import strategies as st

    from chatconform.strategies import choices

    drawn_strategies = set()

    @settings(max_examples=5, database=None)
    @given(st.data())
    def nested(data):
        def draw(strategy):
            drawn_strategies.add(id(strategy))
            return data.draw(strategy)

        chooser = choices.DrawChooser(draw)
        outer = chooser.span(lambda: (chooser.integer(0, 3), chooser.span(lambda: chooser.integer(5, 7))))
        assert 0 <= outer[0] <= 3 and 5 <= outer[1] <= 7

    nested()
    assert id(choices._SPAN) in drawn_strategies
    assert choices._PENDING.play is None

    def stops(strategy):
        raise RuntimeError("stopped before drawing")

    with pytest.raises(RuntimeError):
        choices.DrawChooser(stops).span(lambda: 1)
    assert choices._PENDING.play is None
