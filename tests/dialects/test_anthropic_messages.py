"""The Anthropic Messages dialect: its bodies read back as turns (the turn view), and what it answers."""

from __future__ import annotations

from chatconform.provider_schemas import Turn, turn_view


def test_a_body_reads_back_as_turns():
    body = {
        "system": [{"type": "text", "text": "be brief"}, {"type": "text", "text": "be kind"}],
        "messages": [
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                    {"type": "text", "text": "Checking."},
                    {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {}},
                    {"type": "tool_use", "id": "t2", "name": "get_time", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "21C"}]},
                    {"type": "tool_result", "tool_use_id": "t2", "content": "noon"},
                ],
            },
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t3", "name": "get_weather", "input": {}}]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t3", "content": "22C"},
                    {"type": "text", "text": "And tomorrow?"},
                ],
            },
        ],
    }
    assert turn_view(body, "anthropic") == [
        Turn("system", ("be brief", "be kind"), (), (), "$.system"),
        Turn("user", ("Weather?",), (), (), "$.messages[0]"),
        Turn("assistant", ("Checking.",), (("t1", "get_weather"), ("t2", "get_time")), (), "$.messages[1]",
             reasoning=('{"signature":"sig","thinking":"hmm","type":"thinking"}',)),
        Turn("tool", ("21C", "noon"), (), (("t1", "get_weather"), ("t2", "get_time")), "$.messages[2]"),
        Turn("assistant", (), (("t3", "get_weather"),), (), "$.messages[3]"),
        Turn("user", ("22C", "And tomorrow?"), (), (("t3", "get_weather"),), "$.messages[4]"),
    ]
    assert turn_view({"system": "be brief", "messages": []}, "anthropic") == [
        Turn("system", ("be brief",), (), (), "$.system")
    ]


def test_a_stream_is_named_events_and_an_error_names_its_type():
    from chatconform.dialects.anthropic_messages import DIALECT
    from chatconform.dialects.http import Context, Reply
    from chatconform.providers import get_provider

    profile = get_provider("anthropic")
    streamed = DIALECT.answer(Reply(text="hi"), Context(profile, "m", "conv", 1, True))
    assert streamed.chunks is not None and streamed.media_type == "text/event-stream"
    assert [c.split(b"\n", 1)[0] for c in streamed.chunks][::len(streamed.chunks) - 1] == [
        b"event: message_start", b"event: message_stop"]
    assert DIALECT.error(529, "busy", profile).body == {
        "type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
