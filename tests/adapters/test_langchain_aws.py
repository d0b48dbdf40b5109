"""The langchain-aws adapter: the Converse body ChatBedrockConverse's invoke path builds and
botocore validates and serializes, unfixed, offline, and registered behind its extra."""

import base64
from importlib.metadata import version

import pytest

pytest.importorskip("langchain_aws")

from pydantic_ai.messages import (
    ImageUrl,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from chatconform.adapters.langchain_aws import LangChainAWSAdapter
from tests.messages import PNG, weather_history
from tests.registration import project, registered

#: Sockets are blocked in every test here (the ``no_network`` fixture of conftest.py).
pytestmark = [pytest.mark.usefixtures("no_network"), pytest.mark.adapter]


@pytest.fixture(scope="module")
def adapter():
    return LangChainAWSAdapter()


def without_image_url(history):
    """The weather history without its image URL (Converse takes images as bytes only)."""
    prompt = history[0].parts[1]
    prompt.content = [item for item in prompt.content if not isinstance(item, ImageUrl)]
    return history


def test_body_is_what_chat_bedrock_converse_sends(adapter):
    body = adapter.to_payload(without_image_url(weather_history()), provider="bedrock-converse",
                              instructions="Be brief.")
    # The instructions and the history's system prompt, merged by langchain-aws's merge_message_runs.
    assert body["system"] == [{"text": "Be brief.\nYou are a weather bot."}]
    user, call, result, answer = body["messages"]
    assert user == {"role": "user", "content": [
        {"text": "Weather here?"},
        {"image": {"format": "png", "source": {"bytes": base64.b64encode(PNG).decode()}}}]}
    assert call == {"role": "assistant", "content": [
        {"text": "Let me check."},
        {"toolUse": {"toolUseId": "call_1", "input": {"city": "Paris"}, "name": "get_weather"}}]}
    assert result == {"role": "user", "content": [
        {"toolResult": {"content": [{"text": '{"temp_c": 21}'}], "toolUseId": "call_1", "status": "success"}}]}
    assert answer == {"role": "assistant", "content": [{"text": "It is 21 degrees."}]}
    # Bound as an application binds a tool it does not constrain; langchain-aws names its description.
    assert body["toolConfig"] == {"tools": [{"toolSpec": {
        "name": "get_weather", "inputSchema": {"json": {"type": "object", "additionalProperties": True}},
        "description": "get_weather"}}]}
    assert body["inferenceConfig"] == {}
    assert "modelId" not in body  # it travels in the URL


def test_a_failed_result_keeps_status_error(adapter):
    failed = ToolReturnPart("get_weather", "timeout", "call_1", outcome="failed")
    body = adapter.to_payload(without_image_url(weather_history(failed)), provider="bedrock-converse")
    assert body["messages"][2]["content"] == [
        {"toolResult": {"content": [{"text": "timeout"}], "toolUseId": "call_1", "status": "error"}}]


def test_an_image_url_is_langchain_aws_s_own_error(adapter):
    """Converse takes image bytes (or an S3 location); langchain-aws raises on a URL block,
    and the adapter lets it through (the suite reports the refusal as a warning)."""
    with pytest.raises(ValueError, match="Image data only supported through in-line base64 format"):
        adapter.to_payload(weather_history(), provider="bedrock-converse")


def test_not_fixed_up_as_langchain_aws_sends_it(adapter):
    """docs/adapters.md: blank text becomes '.', user text shares the results' turn, a reused id is sent twice."""
    answered = [ModelRequest(parts=[UserPromptPart("Hello (u1)")]), ModelResponse(parts=[TextPart("Done. (a2)")])]
    blank = adapter.to_payload([*answered, ModelRequest(parts=[UserPromptPart("  \n")])],
                               provider="bedrock-converse", instructions=" ")
    assert (blank["system"], blank["messages"][2]["content"]) == ([{"text": "."}], [{"text": "."}])
    call = ModelResponse(parts=[ToolCallPart("get_weather", {"city": "Paris"}, "c1")])
    history = [ModelRequest(parts=[UserPromptPart("Weather? (u1)")]), call,
               ModelRequest(parts=[UserPromptPart("Also Berlin (u2)"),
                                   ToolReturnPart("get_weather", "sunny (r3)", "c1")]),
               call, ModelRequest(parts=[ToolReturnPart("get_weather", "rain (r5)", "c1")])]
    sent = adapter.to_payload(history, provider="bedrock-converse")["messages"]
    assert [list(block) for block in sent[2]["content"]] == [["text"], ["toolResult"]]
    assert [m["content"][0]["toolUse"]["toolUseId"] for m in sent if m["role"] == "assistant"] == ["c1", "c1"]


def test_no_tool_config_without_calls(adapter):
    body = adapter.to_payload([ModelRequest(parts=[UserPromptPart("Hello")])], provider="bedrock-converse")
    assert body == {"messages": [{"role": "user", "content": [{"text": "Hello"}]}], "system": [],
                    "inferenceConfig": {}}


def test_stopped_after_botocore_built_the_request(adapter, monkeypatch):
    """botocore validates, serializes and signs; the adapter's before-send handler ends the
    call, so the endpoint's HTTP session never sends (and sockets are blocked besides)."""
    endpoint = adapter.model.client._endpoint

    def send(*args, **kwargs):
        raise AssertionError("the request was sent")

    monkeypatch.setattr(endpoint, "_send", send)
    assert adapter.to_payload([ModelRequest(parts=[UserPromptPart("Hello")])], provider="bedrock-converse")
    assert adapter.model.client.meta.config.parameter_validation is True


def test_bedrock_converse_only(adapter):
    assert adapter.providers == frozenset({"bedrock-converse"})
    assert adapter.models == {"bedrock-converse": "us.anthropic.claude-sonnet-4-5-20250929-v1:0"}
    with pytest.raises(ValueError, match="bedrock-converse only"):
        adapter.to_payload(weather_history(), provider="anthropic")


# -- registration and a short run --------------------------------------------------------------

def test_registered_as_an_entry_point_behind_its_extra():
    impl = registered("langchain-aws")
    assert (impl.name, impl.contracts(), impl.options["providers"]) == (
        "langchain-aws", ["payload"], frozenset({"bedrock-converse"}))
    assert impl.version == version("langchain-aws")
    assert "langchain-aws" in project()["optional-dependencies"]["all"][0]


def test_short_payload_run_has_no_engine_errors(short_run):
    short_run(LangChainAWSAdapter, "payload")
