"""The anthropic SDK against ``chatconform serve``, offline: a tool round with thinking, plain and
streamed, a tool result no tool_use opened rejected as the SDK's BadRequestError with
Anthropic's text, and a stream cut mid-way as an error."""

from __future__ import annotations

import pytest

anthropic = pytest.importorskip("anthropic", reason="needs the anthropic SDK (the pydantic-ai extra)")

from tests.serve.helpers import WEATHER_SCRIPT, conversation  # noqa: E402

pytestmark = pytest.mark.serve

TOOLS = [{"name": "get_weather", "description": "The weather in a city.",
          "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]
MODEL = "claude-sonnet-4-5"


def client(server):
    return anthropic.Anthropic(base_url=server.base_url("anthropic"), api_key="test", max_retries=0, timeout=10)


def _answer_tools(messages: list, content: list) -> None:
    messages.append({"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in content]})
    messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": b.id, "content": "sunny"}
                                                 for b in content if b.type == "tool_use"]})


def test_a_tool_round_with_thinking(server):
    server.script(WEATHER_SCRIPT)
    messages: list = [{"role": "user", "content": "What is the weather in Paris? (anthropic)"}]
    first = client(server).messages.create(model=MODEL, max_tokens=256, messages=messages, tools=TOOLS)
    assert first.stop_reason == "tool_use"
    assert [b.type for b in first.content] == ["thinking", "tool_use"]
    assert first.content[1].input == {"city": "Paris"}
    _answer_tools(messages, first.content)
    second = client(server).messages.create(model=MODEL, max_tokens=256, messages=messages, tools=TOOLS)
    assert second.stop_reason == "end_turn" and second.content[0].text == "It is sunny in Paris."
    judged = conversation(server, "What is the weather in Paris? (anthropic)")
    assert [(v.provider, v.turn, v.status, v.problems) for v in judged] == [("anthropic", 1, 200, ()),
                                                                            ("anthropic", 2, 200, ())]


def test_a_streamed_tool_round(server):
    server.script(WEATHER_SCRIPT)
    messages: list = [{"role": "user", "content": "What is the weather in Paris? (anthropic stream)"}]
    with client(server).messages.stream(model=MODEL, max_tokens=256, messages=messages, tools=TOOLS) as stream:
        first = stream.get_final_message()
    assert [b.type for b in first.content] == ["thinking", "tool_use"]
    assert first.content[0].thinking == WEATHER_SCRIPT[0]["thinking"]
    assert first.content[1].input == {"city": "Paris"}
    _answer_tools(messages, first.content)
    with client(server).messages.stream(model=MODEL, max_tokens=256, messages=messages, tools=TOOLS) as stream:
        text = "".join(stream.text_stream)
    assert text == "It is sunny in Paris."
    assert [v.stream for v in conversation(server, "What is the weather in Paris? (anthropic stream)")] == [True, True]


def test_a_tool_result_that_answers_no_tool_use_is_rejected(server):
    server.script([])
    with pytest.raises(anthropic.BadRequestError, match="unexpected `tool_use_id` found in `tool_result` blocks"):
        client(server).messages.create(model=MODEL, max_tokens=64, messages=[
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_gone", "content": "sunny"},
                                         {"type": "text", "text": "And now? (orphan)"}]}])
    verdict = server.verdicts[-1]
    assert verdict.status == 400 and [p.rule for p in verdict.problems if p.severity == "error"] == ["A8"]


def test_a_stream_cut_mid_way_reaches_the_client_as_an_error(server):
    server.script([{"text": "A long answer that the connection drops in the middle of.", "cut_stream_after": 3}])
    # the SDK passes httpx's own error through while it reads a stream
    stream = client(server).messages.stream(model=MODEL, max_tokens=64,
                                            messages=[{"role": "user", "content": "Cut me off (anthropic)."}])
    with pytest.raises(Exception, match="peer closed connection without sending complete message body"), stream as s:
        s.get_final_message()


def test_count_tokens_and_models_answer_not_judged(server):
    """``GET /v1/models`` is OpenAI's path too: the SDK's ``anthropic-version`` header picks
    Anthropic's answer."""
    before = len(server.verdicts)
    sdk = client(server)
    counted = sdk.messages.count_tokens(model="claude-sonnet-4-5",
                                        messages=[{"role": "user", "content": "How many tokens?"}])
    assert counted.input_tokens > 0
    assert [m.id for m in sdk.models.list()] == ["chatconform-serve"]
    assert sdk.models.retrieve("claude-sonnet-4-5").id == "claude-sonnet-4-5"
    assert [(v.provider, v.route, v.served) for v in server.verdicts[before:]] == [
        ("anthropic", "/v1/messages/count_tokens", "not judged"), ("anthropic", "/v1/models", "not judged"),
        ("anthropic", "/v1/models/claude-sonnet-4-5", "not judged")]


THINKING_ON = {"type": "enabled", "budget_tokens": 1024}


def _thinking_round(server, text: str) -> tuple[list, list]:
    """The first request of a thinking tool round (thinking on), and its answer's blocks."""
    server.script(WEATHER_SCRIPT)
    messages: list = [{"role": "user", "content": text}]
    first = client(server).messages.create(model=MODEL, max_tokens=2048, messages=messages, tools=TOOLS,
                                           thinking=THINKING_ON)
    return messages, first.content


def test_a_thinking_block_sent_back_as_returned_is_judged_clean(server):
    text = "What is the weather in Paris? (anthropic thinking kept)"
    messages, content = _thinking_round(server, text)
    _answer_tools(messages, content)
    second = client(server).messages.create(model=MODEL, max_tokens=2048, messages=messages, tools=TOOLS,
                                            thinking=THINKING_ON)
    assert second.content[0].text == "It is sunny in Paris."
    assert [(v.status, v.problems) for v in conversation(server, text)] == [(200, ()), (200, ())]


def test_a_thinking_block_sent_back_changed_is_rejected_as_anthropic_rejects_it(server):
    """The server knows the thinking it returned: a client that rewrites it (trimmed, summarised)
    meets Anthropic's 400 for the latest assistant message of a tool round (A23)."""
    text = "What is the weather in Paris? (anthropic thinking changed)"
    messages, content = _thinking_round(server, text)
    _answer_tools(messages, content)
    messages[1]["content"][0]["thinking"] += " (edited)"
    with pytest.raises(anthropic.BadRequestError, match=r"messages\.1\.content\.0: `thinking` or `redacted_thinking` "
                                                          r"blocks in the latest assistant message cannot be modified"):
        client(server).messages.create(model=MODEL, max_tokens=2048, messages=messages, tools=TOOLS,
                                       thinking=THINKING_ON)
    verdict = conversation(server, text)[-1]
    assert verdict.status == 400 and [p.rule for p in verdict.problems] == ["A23"]
