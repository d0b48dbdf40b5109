"""The OpenAI Chat Completions dialect: its bodies read back as turns (the turn view), and what it answers."""

from __future__ import annotations

from chatconform.provider_schemas import Turn, turn_view


def test_a_body_reads_back_as_turns():
    body = {
        "messages": [
            {"role": "developer", "content": "be brief"},
            {
                "role": "user",
                "content": [{"type": "text", "text": "Weather?"}, {"type": "image_url", "image_url": {"url": "u"}}],
            },
            {
                "role": "assistant",
                "content": "Let me check.",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}},
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "21C"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c2", "type": "custom", "custom": {"name": "grep", "input": "x"}}],
            },
            {"role": "tool", "tool_call_id": "c2", "name": "grep", "content": [{"type": "text", "text": "found"}]},
        ]
    }
    assert turn_view(body, "openai-chat") == [
        Turn("system", ("be brief",), (), (), "$.messages[0]"),
        Turn("user", ("Weather?",), (), (), "$.messages[1]", ("u",)),
        Turn("assistant", ("Let me check.",), (("c1", "get_weather"),), (), "$.messages[2]"),
        Turn("tool", ("21C",), (), (("c1", "get_weather"),), "$.messages[3]"),
        Turn("assistant", (), (("c2", "grep"),), (), "$.messages[4]"),
        Turn("tool", ("found",), (), (("c2", "grep"),), "$.messages[5]"),
    ]
    for provider in ("qwen-vllm", "glm", "mistral"):
        assert turn_view(body, provider) == turn_view(body, "openai-chat")


def test_an_error_carries_the_providers_code_for_a_rejected_body():
    from chatconform.dialects.openai_chat import DIALECT
    from chatconform.providers import get_provider

    glm, openai = get_provider("glm"), get_provider("openai-chat")
    assert DIALECT.error(400, "bad", glm).body["error"]["code"] == "1214"
    assert DIALECT.error(400, "bad", openai).body["error"] == {
        "message": "bad", "type": "invalid_request_error", "param": None, "code": None}
    assert DIALECT.error(500, "down", glm).body["error"]["code"] is None  # only a rejected body gets the code


def test_call_ids_are_the_providers_own_and_usage_ends_a_stream_when_asked():
    from chatconform.dialects.http import Context, Reply, ToolCall
    from chatconform.dialects.openai_chat import DIALECT
    from chatconform.providers import get_provider

    reply = Reply(tool_calls=(ToolCall("lookup", {}),))
    mistral = DIALECT.call_ids(reply, Context(get_provider("mistral"), "m", "conv", 1, False))
    assert len(mistral[0]) == 9 and mistral[0].isalnum()
    assert DIALECT.call_ids(reply, Context(get_provider("openai-chat"), "m", "conv", 1, False))[0].startswith("call_")
    assert DIALECT.include_usage({"stream_options": {"include_usage": True}})
    assert not DIALECT.include_usage({"stream": True})
    streamed = DIALECT.answer(Reply(), Context(get_provider("openai-chat"), "m", "conv", 1, True, include_usage=True))
    assert streamed.chunks is not None and b'"usage"' in streamed.chunks[-2]
    assert streamed.chunks[-1] == b"data: [DONE]\n\n"
