"""boto3's bedrock-runtime against ``chatconform serve`` (``endpoint_url``, dummy credentials),
offline: a Converse tool round, and a conversation that opens with the assistant rejected as
the client's own ValidationException with Bedrock's text."""

from __future__ import annotations

import pytest

boto3 = pytest.importorskip("boto3", reason="needs boto3 (the pydantic-ai extra)")

from botocore.config import Config  # noqa: E402

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
                        config=Config(retries={"max_attempts": 1}, connect_timeout=5, read_timeout=10))


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


def test_a_conversation_that_opens_with_the_assistant_is_rejected(server, bedrock):
    server.script([])
    with pytest.raises(bedrock.exceptions.ValidationException,
                       match="A conversation must start with a user message") as caught:
        bedrock.converse(modelId=MODEL, messages=[{"role": "assistant", "content": [{"text": "Hello."}]},
                                                  {"role": "user", "content": [{"text": "Hi (bedrock)"}]}])
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
