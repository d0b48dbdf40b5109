"""The langchain-anthropic adapter: the Messages body ChatAnthropic's invoke path builds and
the anthropic SDK serializes, unfixed, offline, and registered behind its extra."""

import base64
from importlib.metadata import version

import pytest

pytest.importorskip("langchain_anthropic")

from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from chatconform.adapters.langchain_anthropic import THINKING_ON, LangChainAnthropicAdapter
from chatconform.provider_schemas import validate
from tests.messages import PNG, weather_history
from tests.registration import project, registered

#: Sockets are blocked in every test here (the ``no_network`` fixture of conftest.py).
pytestmark = [pytest.mark.usefixtures("no_network"), pytest.mark.adapter]


@pytest.fixture(scope="module")
def adapter():
    return LangChainAnthropicAdapter()


def test_body_is_what_chat_anthropic_sends(adapter):
    body = adapter.to_payload(weather_history(), provider="anthropic", instructions="Be brief.")
    assert (body["model"], body["max_tokens"]) == ("claude-sonnet-4-5", 64000)
    # The instructions and the history's system prompt: two consecutive system messages, one system.
    assert body["system"] == [{"type": "text", "text": "Be brief."}, {"type": "text", "text": "You are a weather bot."}]
    user, call, result, answer = body["messages"]
    assert user == {"role": "user", "content": [
        {"type": "text", "text": "Weather here?"},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/sky.png"}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": base64.b64encode(PNG).decode()}}]}
    assert call == {"role": "assistant", "content": [
        {"type": "text", "text": "Let me check."},
        {"type": "tool_use", "name": "get_weather", "input": {"city": "Paris"}, "id": "call_1"}]}
    assert result == {"role": "user", "content": [
        {"type": "tool_result", "content": '{"temp_c": 21}', "tool_use_id": "call_1", "is_error": False}]}
    assert answer == {"role": "assistant", "content": "It is 21 degrees."}
    # Bound as an application binds a tool it does not constrain.
    assert body["tools"] == [{"name": "get_weather", "input_schema": {"type": "object", "additionalProperties": True}}]


def test_a_failed_result_keeps_is_error(adapter):
    failed = ToolReturnPart("get_weather", "timeout", "call_1", outcome="failed")
    body = adapter.to_payload(weather_history(failed), provider="anthropic")
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "content": "timeout", "tool_use_id": "call_1", "is_error": True}]
    assert body["system"] == "You are a weather bot."


def test_no_tools_without_calls(adapter):
    body = adapter.to_payload([ModelRequest(parts=[UserPromptPart("Hello")])], provider="anthropic")
    assert body == {"max_tokens": 64000, "messages": [{"role": "user", "content": "Hello"}],
                    "model": "claude-sonnet-4-5"}


def test_stopped_inside_the_sdk_before_sending(adapter, monkeypatch):
    """The SDK builds the request and the adapter's hook ends the call: the HTTP client's
    send is never reached (and sockets are blocked besides)."""
    def send(*args, **kwargs):
        raise AssertionError("the request was sent")

    monkeypatch.setattr(adapter.model._client._client, "send", send)
    assert adapter.to_payload(weather_history(), provider="anthropic")["messages"]


def test_anthropic_only(adapter):
    assert adapter.providers == frozenset({"anthropic"})
    with pytest.raises(ValueError, match="anthropic only"):
        adapter.to_payload(weather_history(), provider="bedrock-converse")


# -- thinking ------------------------------------------------------------------------------------

def thinking_history(*thinking):
    """A tool round whose call came with ``thinking``, then its result: the request a tool loop sends."""
    return [ModelRequest(parts=[UserPromptPart("Weather? (u1)")]),
            ModelResponse(parts=[*thinking, ToolCallPart("get_weather", {"city": "Paris"}, "c1")],
                          provider_name="anthropic"),
            ModelRequest(parts=[ToolReturnPart("get_weather", "sunny (r3)", "c1")])]


SIGNED = ThinkingPart("I should call (t2)", signature="c2lnbmVk", provider_name="anthropic")
REDACTED = ThinkingPart("", id="redacted_thinking", signature="cmVkYWN0ZWQ=", provider_name="anthropic")


def test_reasoning_sets_chat_anthropic_s_thinking(adapter):
    history = thinking_history(SIGNED)
    assert "thinking" not in adapter.to_payload(history, provider="anthropic")
    assert adapter.to_payload(history, provider="anthropic", reasoning=True)["thinking"] == THINKING_ON
    assert adapter.to_payload(history, provider="anthropic", reasoning=False)["thinking"] == {"type": "disabled"}
    assert adapter.to_payload(history, provider="anthropic", model="claude-opus-4-1")["model"] == "claude-opus-4-1"


def test_anthropic_thinking_comes_back_as_chat_anthropic_returned_it(adapter):
    body = adapter.to_payload(thinking_history(SIGNED, REDACTED), provider="anthropic", reasoning=True)
    assert body["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "I should call (t2)", "signature": "c2lnbmVk"},
        {"type": "redacted_thinking", "data": "cmVkYWN0ZWQ="},
        {"type": "tool_use", "name": "get_weather", "input": {"city": "Paris"}, "id": "c1"}]
    assert validate(body, "anthropic") == []


def test_another_provider_s_reasoning_is_dropped_and_thinking_left_on(adapter):
    """A20: the last tool-call turn's reasoning came from elsewhere; _format_messages drops the
    reasoning block, and the request still turns thinking on."""
    foreign = ThinkingPart("I should call (t2)", provider_name="deepseek")
    history = thinking_history(foreign)
    history[1] = ModelResponse(parts=history[1].parts, provider_name="deepseek")
    body = adapter.to_payload(history, provider="anthropic", reasoning=True)
    assert [block["type"] for block in body["messages"][1]["content"]] == ["tool_use"]
    assert [p.rule for p in validate(body, "anthropic")] == ["A20"]


def test_thinking_cut_before_its_signature_is_sent_unsigned(adapter):
    """A21: ChatAnthropic sends a thinking block with no signature as it holds it (the ci
    stream draws one only beside a second system prompt, where ChatAnthropic raises first)."""
    cut = ThinkingPart("I should call (t2)", provider_name="anthropic")
    body = adapter.to_payload(thinking_history(cut), provider="anthropic", reasoning=True)
    assert body["messages"][1]["content"][0] == {"type": "thinking", "thinking": "I should call (t2)"}
    assert "A21" in {p.rule for p in validate(body, "anthropic")}


# -- the expected failures, as ChatAnthropic has them (docs/adapters.md) --------------------------

def test_a_later_system_prompt_is_langchain_anthropic_s_own_error(adapter):
    history = [ModelRequest(parts=[SystemPromptPart("s1"), UserPromptPart("u2"), SystemPromptPart("s3")])]
    with pytest.raises(ValueError, match="Received multiple non-consecutive system messages"):
        adapter.to_payload(history, provider="anthropic")


def test_blank_text_as_chat_anthropic_sends_it(adapter):
    answered = [ModelRequest(parts=[UserPromptPart("Hello (u1)")]), ModelResponse(parts=[TextPart("Done. (a2)")])]
    blank = adapter.to_payload([*answered, ModelRequest(parts=[UserPromptPart("  \n")])], provider="anthropic")
    assert blank["messages"][2] == {"role": "user", "content": "  \n"}  # A7
    blocks = adapter.to_payload([*answered, ModelRequest(parts=[UserPromptPart(["\n\n"])])], provider="anthropic")
    assert blocks["messages"][2] == {"role": "user", "content": []}  # A6
    instructions = adapter.to_payload(weather_history(), provider="anthropic", instructions=" ")
    assert instructions["system"][0] == {"type": "text", "text": " "}  # A7


def test_user_text_merged_ahead_of_the_results_and_a_reused_id_kept(adapter):
    call = ModelResponse(parts=[ToolCallPart("get_weather", {"city": "Paris"}, "c1")])
    typed_while_running = [ModelRequest(parts=[UserPromptPart("Weather? (u1)")]), call,
                           ModelRequest(parts=[UserPromptPart("Also Berlin (u2)"),
                                               ToolReturnPart("get_weather", "sunny (r3)", "c1")])]
    merged = adapter.to_payload(typed_while_running, provider="anthropic")["messages"][2]["content"]
    assert [block["type"] for block in merged] == ["text", "tool_result"]  # A9
    reused = [ModelRequest(parts=[UserPromptPart("Weather? (u1)")]), call,
              ModelRequest(parts=[ToolReturnPart("get_weather", "sunny (r3)", "c1")]), call,
              ModelRequest(parts=[ToolReturnPart("get_weather", "rain (r5)", "c1")])]
    sent = adapter.to_payload(reused, provider="anthropic")["messages"]
    assert [m["content"][0]["id"] for m in sent if m["role"] == "assistant"] == ["c1", "c1"]  # A15


# -- registration and a short run --------------------------------------------------------------

def test_registered_as_an_entry_point_behind_its_extra():
    impl = registered("langchain-anthropic")
    assert (impl.name, impl.contracts(), impl.options["providers"]) == (
        "langchain-anthropic", ["payload"], frozenset({"anthropic"}))
    assert impl.version == version("langchain-anthropic")
    assert "langchain-anthropic" in project()["optional-dependencies"]["all"][0]


def test_short_payload_run_has_no_engine_errors(short_run):
    short_run(LangChainAnthropicAdapter, "payload")
