"""boto3's bedrock-runtime against ``chatconform serve`` (``endpoint_url``, dummy credentials),
offline: a Converse tool round plain and streamed (ConverseStream's binary event stream), a
conversation that opens with the assistant rejected by both as the client's own
ValidationException with Bedrock's text, and a stream cut mid-way as an error."""

from __future__ import annotations

import json

import pytest

boto3 = pytest.importorskip("boto3", reason="needs boto3 (the pydantic-ai extra)")

from botocore.config import Config  # noqa: E402
from urllib3.exceptions import ProtocolError  # noqa: E402

from tests.serve.helpers import WEATHER_SCRIPT, conversation  # noqa: E402

pytestmark = pytest.mark.serve

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
TOOLS = {"tools": [{"toolSpec": {"name": "get_weather", "description": "The weather in a city.",
                                 "inputSchema": {"json": {"type": "object",
                                                          "properties": {"city": {"type": "string"}}}}}}]}


@pytest.fixture(scope="module")
def bedrock(server):
    return boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=server.base_url("bedrock-converse"),
                        aws_access_key_id="test", aws_secret_access_key="test",
                        config=Config(retries={"total_max_attempts": 1}, connect_timeout=5, read_timeout=10))


def test_a_tool_round(server, bedrock):
    server.script(WEATHER_SCRIPT)
    messages: list = [{"role": "user", "content": [{"text": "What is the weather in Paris? (bedrock)"}]}]
    first = bedrock.converse(modelId=MODEL, messages=messages, toolConfig=TOOLS)
    assert first["stopReason"] == "tool_use"
    content = first["output"]["message"]["content"]
    [use] = [block["toolUse"] for block in content if "toolUse" in block]
    assert use["name"] == "get_weather" and use["input"] == {"city": "Paris"}
    assert "reasoningContent" in content[0]
    messages.append(first["output"]["message"])
    messages.append({"role": "user", "content": [{"toolResult": {"toolUseId": use["toolUseId"],
                                                                 "content": [{"text": "sunny"}]}}]})
    second = bedrock.converse(modelId=MODEL, messages=messages, toolConfig=TOOLS)
    assert second["output"]["message"]["content"] == [{"text": "It is sunny in Paris."}]
    assert second["usage"]["totalTokens"] > 0
    judged = conversation(server, "What is the weather in Paris? (bedrock)")
    assert [(v.provider, v.model, v.turn, v.status, v.problems) for v in judged] == [
        ("bedrock-converse", MODEL, 1, 200, ()), ("bedrock-converse", MODEL, 2, 200, ())]


def _message(events) -> dict:
    """The assistant message a ConverseStream's events spell, as Converse would answer it."""
    blocks: dict[int, dict] = {}
    for event in events:
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            blocks[start["contentBlockIndex"]] = {"toolUse": dict(start["start"]["toolUse"], input="")}
        elif "contentBlockDelta" in event:
            delta, index = event["contentBlockDelta"]["delta"], event["contentBlockDelta"]["contentBlockIndex"]
            block = blocks.setdefault(index, {})
            if "toolUse" in delta:
                block["toolUse"]["input"] += delta["toolUse"]["input"]
            elif "text" in delta:
                block["text"] = block.get("text", "") + delta["text"]
            else:
                reasoning = block.setdefault("reasoningContent", {"reasoningText": {"text": ""}})["reasoningText"]
                reasoning["text"] += delta["reasoningContent"].get("text", "")
                reasoning.update({k: v for k, v in delta["reasoningContent"].items() if k == "signature"})
    for block in blocks.values():
        if "toolUse" in block:
            block["toolUse"]["input"] = json.loads(block["toolUse"]["input"])
    return {"role": "assistant", "content": [blocks[index] for index in sorted(blocks)]}


def test_a_streamed_tool_round(server, bedrock):
    server.script(WEATHER_SCRIPT)
    messages: list = [{"role": "user", "content": [{"text": "What is the weather in Paris? (bedrock stream)"}]}]
    first = list(bedrock.converse_stream(modelId=MODEL, messages=messages, toolConfig=TOOLS)["stream"])
    assert [next(iter(e)) for e in first] == ["messageStart", "contentBlockDelta", "contentBlockDelta",
                                              "contentBlockStop", "contentBlockStart", "contentBlockDelta",
                                              "contentBlockStop", "messageStop", "metadata"]
    assert first[-2] == {"messageStop": {"stopReason": "tool_use"}}
    message = _message(first)
    assert message["content"][0]["reasoningContent"]["reasoningText"]["text"] == WEATHER_SCRIPT[0]["thinking"]
    use = message["content"][1]["toolUse"]
    assert use["name"] == "get_weather" and use["input"] == {"city": "Paris"}
    messages.append(message)
    messages.append({"role": "user", "content": [{"toolResult": {"toolUseId": use["toolUseId"],
                                                                 "content": [{"text": "sunny"}]}}]})
    second = list(bedrock.converse_stream(modelId=MODEL, messages=messages, toolConfig=TOOLS)["stream"])
    assert _message(second)["content"] == [{"text": "It is sunny in Paris."}]
    assert second[-1]["metadata"]["usage"]["totalTokens"] > 0
    judged = conversation(server, "What is the weather in Paris? (bedrock stream)")
    assert [(v.route, v.stream, v.turn, v.status, v.problems) for v in judged] == [
        (f"/model/{MODEL}/converse-stream", True, turn, 200, ()) for turn in (1, 2)]


@pytest.mark.parametrize("operation", ["converse", "converse_stream"])
def test_a_conversation_that_opens_with_the_assistant_is_rejected(server, bedrock, operation):
    server.script([])
    with pytest.raises(bedrock.exceptions.ValidationException,
                       match="A conversation must start with a user message") as caught:
        getattr(bedrock, operation)(modelId=MODEL, messages=[
            {"role": "assistant", "content": [{"text": "Hello."}]},
            {"role": "user", "content": [{"text": f"Hi (bedrock {operation})"}]}])
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_a_scripted_throttle_and_a_cut_stream(server, bedrock):
    server.script([{"status": 429, "message": "Too many requests, slow down"},
                   {"text": "A long answer that the connection drops in the middle of.", "cut_stream_after": 2}])
    messages = [{"role": "user", "content": [{"text": "Busy? (bedrock stream)"}]}]
    with pytest.raises(bedrock.exceptions.ThrottlingException, match="Too many requests, slow down"):
        bedrock.converse_stream(modelId=MODEL, messages=messages)
    seen = []
    with pytest.raises(ProtocolError, match="Response ended prematurely"):  # botocore passes urllib3's through
        for event in bedrock.converse_stream(modelId=MODEL, messages=messages)["stream"]:
            seen.append(event)
    assert [next(iter(e)) for e in seen] == ["messageStart", "contentBlockDelta"]


def test_invoke_model_answers_in_the_models_shape_not_judged(server, bedrock):
    before = len(server.verdicts)
    claude = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 16,
              "messages": [{"role": "user", "content": "Hi (invoke)"}]}
    answer = json.loads(bedrock.invoke_model(modelId=MODEL, body=json.dumps(claude))["body"].read())
    assert answer["content"] == [{"type": "text", "text": "OK"}] and answer["stop_reason"] == "end_turn"
    nova = {"messages": [{"role": "user", "content": [{"text": "Hi (invoke)"}]}]}
    answer = json.loads(bedrock.invoke_model(modelId="amazon.nova-lite-v1:0", body=json.dumps(nova))["body"].read())
    assert answer["output"]["message"]["content"] == [{"text": "OK"}]
    assert [(v.provider, v.served) for v in server.verdicts[before:]] == [("bedrock-converse", "not judged")] * 2
