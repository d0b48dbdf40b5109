"""Large inputs are expanded from (seed, size): deterministic, valid, and the right size."""

from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, ToolCallPart, ToolReturnPart

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
