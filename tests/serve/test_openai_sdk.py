"""The openai SDK against ``chatconform serve``, offline: a tool round plain and streamed, the
OpenAI-style providers' rejections as the SDK's own BadRequestError with the provider's text,
a scripted 500 and a stream cut mid-way as errors."""

from __future__ import annotations

import json
import re

import pytest

openai = pytest.importorskip("openai", reason="needs the openai SDK (the pydantic-ai extra)")

from tests.serve.helpers import WEATHER_SCRIPT, conversation  # noqa: E402

pytestmark = pytest.mark.serve

TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "The weather in a city.",
                                           "parameters": {"type": "object",
                                                          "properties": {"city": {"type": "string"}}}}}]


def client(server, provider: str = "openai-chat"):
    return openai.OpenAI(base_url=server.base_url(provider), api_key="test", max_retries=0, timeout=10)


def _tool_round(messages: list, calls: list) -> None:
    messages.append({"role": "assistant", "content": None,
                     "tool_calls": [{"id": c.id, "type": "function",
                                     "function": {"name": c.function.name, "arguments": c.function.arguments}}
                                    for c in calls]})
    messages += [{"role": "tool", "tool_call_id": c.id, "content": "sunny"} for c in calls]


def test_a_tool_round_then_the_answer(server):
    server.script(WEATHER_SCRIPT)
    messages = [{"role": "user", "content": "What is the weather in Paris? (plain)"}]
    first = client(server).chat.completions.create(model="gpt-4o", messages=messages, tools=TOOLS)
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    [call] = choice.message.tool_calls
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"city": "Paris"}
    assert first.usage.total_tokens > 0
    _tool_round(messages, choice.message.tool_calls)
    second = client(server).chat.completions.create(model="gpt-4o", messages=messages, tools=TOOLS)
    assert second.choices[0].message.content == "It is sunny in Paris."
    messages += [{"role": "assistant", "content": second.choices[0].message.content},
                 {"role": "user", "content": "Thanks."}]
    third = client(server).chat.completions.create(model="gpt-4o", messages=messages)
    assert third.choices[0].message.content == "OK"  # past the script: the default reply
    judged = conversation(server, "What is the weather in Paris? (plain)")
    assert [(v.turn, v.status, v.problems) for v in judged] == [(1, 200, ()), (2, 200, ()), (3, 200, ())]


def test_a_streamed_tool_round(server):
    server.script(WEATHER_SCRIPT)
    messages = [{"role": "user", "content": "What is the weather in Paris? (stream)"}]
    calls: dict[int, dict] = {}
    for chunk in client(server).chat.completions.create(model="gpt-4o", messages=messages, tools=TOOLS,
                                                          stream=True, stream_options={"include_usage": True}):
        for choice in chunk.choices:
            for delta in choice.delta.tool_calls or ():
                call = calls.setdefault(delta.index, {"id": delta.id, "name": delta.function.name, "arguments": ""})
                call["arguments"] += delta.function.arguments or ""
    assert [(c["name"], json.loads(c["arguments"])) for c in calls.values()] == [("get_weather", {"city": "Paris"})]
    messages.append({"role": "assistant", "content": None, "tool_calls": [
        {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
        for c in calls.values()]})
    messages.append({"role": "tool", "tool_call_id": calls[0]["id"], "content": "sunny"})
    stream = client(server).chat.completions.create(model="gpt-4o", messages=messages, tools=TOOLS, stream=True)
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == "It is sunny in Paris."
    assert [v.stream for v in conversation(server, "What is the weather in Paris? (stream)")] == [True, True]


def test_parallel_calls_and_a_reused_id(server):
    server.script([{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "call_same"},
                                   {"name": "get_weather", "arguments": {"city": "Rome"}, "id": "call_same"}]}])
    reply = client(server).chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "Paris and Rome?"}], tools=TOOLS)
    calls = reply.choices[0].message.tool_calls
    assert [json.loads(c.function.arguments)["city"] for c in calls] == ["Paris", "Rome"]
    assert {c.id for c in calls} == {"call_same"}
    assert reply.choices[0].message.content is None


def test_mistral_call_ids_are_nine_letters_and_digits(server):
    server.script(WEATHER_SCRIPT)
    reply = client(server, "mistral").chat.completions.create(
        model="mistral-large-latest", messages=[{"role": "user", "content": "Weather? (mistral)"}], tools=TOOLS)
    assert re.fullmatch(r"[a-zA-Z0-9]{9}", reply.choices[0].message.tool_calls[0].id)


def test_a_system_message_after_the_first_is_rejected_by_qwen_on_vllm(server):
    server.script([])
    with pytest.raises(openai.BadRequestError, match=re.escape("System message must be at the beginning.")) as caught:
        client(server, "qwen-vllm").chat.completions.create(model="Qwen/Qwen3.5-27B", messages=[
            {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi (qwen)"},
            {"role": "system", "content": "Summary of earlier turns."}])
    assert caught.value.status_code == 400
    [verdict] = conversation(server, "Hi (qwen)")
    assert verdict.status == 400 and verdict.answered == "rejected" and [p.rule for p in verdict.problems] == ["Q3"]


def test_a_body_without_a_user_message_is_rejected_by_glm_with_1214(server):
    server.script([])
    for base in (server.base_url("glm"), f"{server.root}/glm/api/paas/v4"):
        glm = openai.OpenAI(base_url=base, api_key="test", max_retries=0, timeout=10)
        with pytest.raises(openai.BadRequestError, match="The messages parameter is illegal") as caught:
            glm.chat.completions.create(model="glm-4.6", messages=[{"role": "system", "content": "A summary."}])
        assert caught.value.code == "1214"


def test_a_scripted_server_error(server):
    server.script([{"status": 503, "message": "overloaded, try later"}])
    with pytest.raises(openai.InternalServerError, match="overloaded, try later"):
        client(server).chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "Busy?"}])


def test_a_stream_cut_mid_way_reaches_the_client_as_an_error(server):
    server.script([{"text": "A long answer that the connection drops in the middle of.", "cut_stream_after": 2}])
    stream = client(server).chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "Cut me off."}], stream=True)
    seen = []
    with pytest.raises(openai.APIConnectionError):
        for chunk in stream:
            seen.append(chunk)
    assert 0 < len(seen) <= 2  # the chunks before the cut arrived, the end never did


def test_a_plain_body_cut_reaches_the_client_as_an_error(server):
    server.script([{"cut_stream_after": 0}])
    with pytest.raises(openai.APIConnectionError):
        client(server).chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "Drop it."}])


def test_the_routes_besides_the_chat_answer_and_are_recorded_not_judged(server):
    """The model list, one model, embeddings (base64, as the SDK asks by default, and floats)
    and a legacy completion parse in the SDK; each is recorded as not judged."""
    before = len(server.verdicts)
    sdk = client(server)
    assert [m.id for m in sdk.models.list()] == ["chatconform-serve"]
    assert sdk.models.retrieve("gpt-4o").id == "gpt-4o"
    coded = sdk.embeddings.create(model="text-embedding-3-small", input=["same", "same", "other"])
    vectors = [d.embedding for d in coded.data]
    assert len(vectors) == 3 and len(vectors[0]) == 64 and vectors[0] == vectors[1] != vectors[2]
    floats = sdk.embeddings.create(model="e", input="same", encoding_format="float", dimensions=8)
    assert len(floats.data[0].embedding) == 8
    assert sdk.completions.create(model="gpt-3.5-turbo-instruct", prompt="Say OK").choices[0].text == "OK"
    streamed = sdk.completions.create(model="gpt-3.5-turbo-instruct", prompt="Say OK", stream=True)
    assert "".join(c.choices[0].text for c in streamed) == "OK"
    mistral = client(server, "mistral")
    assert [m.id for m in mistral.models.list()] == ["chatconform-serve"]
    served = [(v.provider, v.method, v.route, v.served, v.status) for v in server.verdicts[before:]]
    assert served == [
        ("openai-chat", "GET", "/v1/models", "not judged", 200),
        ("openai-chat", "GET", "/v1/models/gpt-4o", "not judged", 200),
        ("openai-chat", "POST", "/v1/embeddings", "not judged", 200),
        ("openai-chat", "POST", "/v1/embeddings", "not judged", 200),
        ("openai-chat", "POST", "/v1/completions", "not judged", 200),
        ("openai-chat", "POST", "/v1/completions", "not judged", 200),
        ("mistral", "GET", "/mistral/v1/models", "not judged", 200)]


def test_a_route_the_server_lacks_is_the_providers_404_and_recorded(server, capfd):
    before = len(server.verdicts)
    with pytest.raises(openai.NotFoundError, match="chatconform serve does not serve POST /v1/images/generations"):
        client(server).images.generate(prompt="a cat")
    assert "no route for POST /v1/images/generations" in capfd.readouterr().err
    [verdict] = server.verdicts[before:]
    assert (verdict.provider, verdict.served, verdict.status) == ("openai-chat", "no route", 404)


def _reasoning_round(server, provider: str, model: str, text: str):
    """The first request of a tool round with thinking, and its answer's message."""
    server.script(WEATHER_SCRIPT)
    messages = [{"role": "user", "content": text}]
    first = client(server, provider).chat.completions.create(model=model, messages=messages, tools=TOOLS)
    return messages, first.choices[0].message


def _sent_back(message, **fields) -> dict:
    """The assistant message as a client sends it back: its calls, and the fields given."""
    return {"role": "assistant", "content": None, **fields,
            "tool_calls": [{"id": c.id, "type": "function",
                            "function": {"name": c.function.name, "arguments": c.function.arguments}}
                           for c in message.tool_calls]}


@pytest.mark.parametrize("provider, model, missing, rule", [
    ("deepseek", "deepseek-chat", "Missing `reasoning_content` field in the assistant message at message index 1",
     "D3"),
    ("kimi", "kimi-k2.5", "thinking is enabled but reasoning_content is missing in assistant tool call message "
                          "at index 1", "K2"),
])
def test_reasoning_content_sent_back_or_dropped(server, provider, model, missing, rule):
    """DeepSeek's thinking mode and Kimi's thinking models answer with reasoning_content, which
    their tool-call turn needs back: dropped, the request is answered 400 with the provider's text
    (D3, K2, known from the answer: the body does not say thinking is on)."""
    text = f"What is the weather in Paris? ({provider} reasoning)"
    messages, message = _reasoning_round(server, provider, model, text)
    reasoning = message.model_extra["reasoning_content"]
    assert reasoning == WEATHER_SCRIPT[0]["thinking"]
    result = {"role": "tool", "tool_call_id": message.tool_calls[0].id, "content": "sunny"}
    kept = [*messages, _sent_back(message, reasoning_content=reasoning), result]
    answer = client(server, provider).chat.completions.create(model=model, messages=kept, tools=TOOLS)
    assert answer.choices[0].message.content == "It is sunny in Paris."
    with pytest.raises(openai.BadRequestError, match=re.escape(missing)):
        client(server, provider).chat.completions.create(
            model=model, messages=[*messages, _sent_back(message), result], tools=TOOLS)
    judged = conversation(server, text)
    assert [(v.status, [p.rule for p in v.problems]) for v in judged] == [(200, []), (200, []), (400, [rule])]


def test_openrouter_reasoning_details_sent_back_unchanged_or_changed(server):
    """OpenRouter answers with reasoning_details; a Gemini model behind it rejects its tool-call
    turn when they come back changed (P3)."""
    model = "google/gemini-3-pro-preview"
    text = "What is the weather in Paris? (openrouter reasoning details)"
    messages, message = _reasoning_round(server, "openrouter", model, text)
    [detail] = message.model_extra["reasoning_details"]
    assert detail["type"] == "reasoning.text" and detail["format"] == "google-gemini-v1" and detail["signature"]
    result = {"role": "tool", "tool_call_id": message.tool_calls[0].id, "content": "sunny"}
    kept = [*messages, _sent_back(message, reasoning_details=[detail]), result]
    answer = client(server, "openrouter").chat.completions.create(model=model, messages=kept, tools=TOOLS)
    assert answer.choices[0].message.content == "It is sunny in Paris."
    changed = [*messages, _sent_back(message, reasoning_details=[detail | {"text": "edited"}]), result]
    with pytest.raises(openai.BadRequestError, match="Gemini models require OpenRouter reasoning details to be "
                                                     "preserved in each request"):
        client(server, "openrouter").chat.completions.create(model=model, messages=changed, tools=TOOLS)
    assert [p.rule for p in conversation(server, text)[-1].problems] == ["P3"]


@pytest.mark.parametrize("provider, model, field", [
    ("openai-chat", "gpt-4o", None), ("qwen-vllm", "Qwen/Qwen3-8B", "reasoning_content"),
    ("glm", "glm-4.6", "reasoning_content"), ("kimi", "kimi-k2-thinking", "reasoning_content"),
    ("groq", "openai/gpt-oss-120b", "reasoning"),
])
def test_each_host_answers_thinking_in_its_own_field_or_not_at_all(server, provider, model, field):
    """A scripted reply with thinking reaches the client as the host returns reasoning: OpenAI's
    Chat Completions returns none (a field it never sends would be echoed back and judged),
    Groq's is ``reasoning``; streamed as one delta, or no delta at all."""
    fields = {"reasoning_content", "reasoning", "reasoning_details"}
    _, message = _reasoning_round(server, provider, model, f"What is the weather in Paris? ({provider} field)")
    extra = message.model_extra or {}
    assert {k for k in fields if extra.get(k) is not None} == ({field} if field else set())
    if field:
        assert extra[field] == WEATHER_SCRIPT[0]["thinking"]
    server.script(WEATHER_SCRIPT)
    chunks = client(server, provider).chat.completions.create(
        model=model, messages=[{"role": "user", "content": f"Weather? ({provider} stream)"}], tools=TOOLS, stream=True)
    streamed = [k for c in chunks for k in fields if (c.choices and (c.choices[0].delta.model_extra or {}).get(k))]
    assert streamed == ([field] if field else [])
