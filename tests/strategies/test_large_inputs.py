"""Large inputs are expanded from (seed, size): deterministic, valid, and the right size."""

import json

import pytest
from pydantic_ai.messages import (
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from chatconform.reference.payload import to_payload
from chatconform.reference.thread import UUID_NIL, extract_thread
from chatconform.strategies import expand_conversation, expand_history


def test_expand_conversation_is_deterministic_and_newest_first():
    rows = expand_conversation(seed=7, size=2_000)
    assert len(rows) == 2_000
    assert [r.id for r in rows] == [r.id for r in expand_conversation(seed=7, size=2_000)]
    assert [r.created_at for r in rows] == sorted((r.created_at for r in rows), reverse=True)
    ids = {r.id for r in rows}
    assert len(ids) == len(rows)
    assert all(not r.parent_message_id or r.parent_message_id in ids or r.parent_message_id == UUID_NIL
               for r in rows)
    assert extract_thread(rows)[0] is rows[0]


def test_expand_history_round_trips_and_answers_every_call():
    history = expand_history(seed=3, size=300)
    assert 300 <= len(history) <= 303
    assert isinstance(history[-1], ModelRequest)
    assert ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(history)) == history
    calls = [p.tool_call_id for m in history for p in m.parts if isinstance(p, ToolCallPart)]
    results = [p.tool_call_id for m in history for p in m.parts if isinstance(p, ToolReturnPart)]
    assert len(set(calls)) == len(calls) and sorted(calls) == sorted(results)


def _nested(depth: int):
    value: object = "leaf"
    for _ in range(depth):
        value = {"x": value}
    return value


def _history(args, result):
    return [ModelRequest([UserPromptPart("hi")]), ModelResponse([ToolCallPart("f", args, tool_call_id="c1")]),
            ModelRequest([ToolReturnPart("f", result, tool_call_id="c1")])]


@pytest.mark.parametrize("depth", [300, 5_000])
@pytest.mark.parametrize("provider", ["openai-chat", "anthropic"])
def test_arguments_nested_too_deeply_are_a_clear_error(depth, provider):
    # The error names the call and says what the serializer said, in brackets.
    with pytest.raises(ValueError, match=r"^the arguments of tool call 'c1' cannot be sent \([A-Za-z]+Error: .+\)$"):
        to_payload(_history(_nested(depth), "ok"), provider=provider)


def test_arguments_stored_as_json_too_deep_to_read_go_as_pydantic_ai_sends_them():
    body = to_payload(_history(json.dumps(_nested(300)), "ok"), provider="openai-chat")
    assert body["messages"][1]["tool_calls"][0]["function"]["arguments"].startswith('{"INVALID_JSON":')


def test_a_result_nested_too_deeply_is_a_clear_error():
    to_payload(_history({}, _nested(300)), provider="anthropic")  # Python's JSON takes 300 levels
    with pytest.raises(ValueError, match=r"^the result of tool call 'c1' is nested too deeply to send$"):
        to_payload(_history({}, _nested(5_000)), provider="anthropic")


def test_nesting_a_provider_takes_is_sent():
    args = _nested(120)
    body = to_payload(_history(args, "ok"), provider="anthropic")
    assert body["messages"][1]["content"][0]["input"] == args
