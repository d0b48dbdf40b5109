"""The openai-agents adapter: the converter to the SDK's input items (part by part, and a round
trip on generated histories), the body OpenAIChatCompletionsModel builds from them, unfixed,
offline, and registered behind its extra."""

import copy
import json
import tomllib
from importlib.metadata import EntryPoint, version
from pathlib import Path

import pytest

pytest.importorskip("agents")

from hypothesis import HealthCheck, given, settings
from pydantic_ai.messages import (
    CompactionPart,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryInfo,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from chatconform.adapters.openai_agents import OpenAIAgentsAdapter, from_input_items, to_input_items
from chatconform.history import Item, visible_items
from chatconform.runner import discovery
from chatconform.strategies import histories
from tests.messages import weather_history

ROOT = Path(__file__).resolve().parents[2]
FAKE_ID = "__fake_id__"

#: Sockets are blocked in every test here (the ``no_network`` fixture of conftest.py).
pytestmark = [pytest.mark.usefixtures("no_network"), pytest.mark.adapter]


@pytest.fixture(scope="module")
def adapter():
    return OpenAIAgentsAdapter()


# -- the converter ------------------------------------------------------------------------------

def test_converts_part_by_part():
    system, user, message, call, output, answer = to_input_items(weather_history())
    assert system == {"role": "system", "content": "You are a weather bot."}
    assert user == {"role": "user", "content": [
        {"type": "input_text", "text": "Weather here?"},
        {"type": "input_image", "image_url": "https://example.com/sky.png", "detail": "auto"},
        {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgoAAAAAAAAAAA==", "detail": "auto"}]}
    assert message == {"id": FAKE_ID, "type": "message", "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": "Let me check.", "annotations": [], "logprobs": []}]}
    assert call == {"id": FAKE_ID, "type": "function_call", "call_id": "call_1", "name": "get_weather",
                    "arguments": '{"city":"Paris"}'}
    # A dict the tool returned, stringified as the SDK stores a tool's return value.
    assert output == {"type": "function_call_output", "call_id": "call_1", "output": "{'temp_c': 21}"}
    assert answer["content"][0]["text"] == "It is 21 degrees."


def test_summary_feedback_thinking_and_a_failed_result():
    history = [ModelRequest(parts=[CompactionPart(content="the gist"),
                                   RetryFeedbackPart("fix the JSON", retry=RetryInfo(cause="validation_error",
                                                                                     attempt=1, max_retries=2))]),
               ModelResponse(parts=[ThinkingPart("hmm"), TextPart("ok"), TextPart("more")])]
    summary, feedback, reasoning, message = to_input_items(history)
    assert (summary, feedback) == ({"role": "user", "content": "the gist"}, {"role": "user", "content": "fix the JSON"})
    assert reasoning == {"id": FAKE_ID, "type": "reasoning", "summary": [{"type": "summary_text", "text": "hmm"}]}
    assert [c["text"] for c in message["content"]] == ["ok", "more"]
    failed = ToolReturnPart("get_weather", "Tool failed: timeout", "call_1", outcome="failed")
    assert to_input_items(weather_history(failed))[4]["output"] == "Tool failed: timeout"


def _as_agents_see_it(items):
    """Visible items with the kinds the SDK has: a summary or feedback is user text."""
    return [Item("user", i.value) if i.kind in ("summary", "feedback") else i for i in items]


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(histories(files=True, thinking=True, summaries=True, retries=True))
def test_round_trip_keeps_every_visible_item_in_order(history):
    before = copy.deepcopy(history)
    back = from_input_items(to_input_items(history))
    assert visible_items(back) == _as_agents_see_it(visible_items(history))
    assert history == before


# -- the body --------------------------------------------------------------------------------------

def test_body_is_the_chat_completions_request(adapter):
    body = adapter.to_payload(weather_history(), provider="openai-chat", instructions="Be brief.")
    assert list(body) == ["model", "messages", "store", "tools"]
    assert body["model"] == "gpt-4o" and body["store"] is True
    assert [m["role"] for m in body["messages"]] == ["system", "system", "user", "assistant", "tool", "assistant"]
    assert body["messages"][0] == {"content": "Be brief.", "role": "system"}
    assert body["messages"][2]["content"][1] == {"type": "image_url", "image_url": {
        "url": "https://example.com/sky.png", "detail": "auto"}}
    assert body["messages"][3] == {"role": "assistant", "content": "Let me check.", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]}
    assert body["messages"][4] == {"role": "tool", "tool_call_id": "call_1", "content": "{'temp_c': 21}"}
    assert body["tools"] == [{"type": "function", "function": {
        "name": "get_weather", "description": "", "parameters": {"type": "object", "additionalProperties": True},
        "strict": False}}]
    assert json.loads(json.dumps(body)) == body


def test_no_instructions_no_tools(adapter):
    body = adapter.to_payload([ModelRequest(parts=[UserPromptPart("Hello")])], provider="openai-chat")
    assert body == {"model": "gpt-4o", "messages": [{"role": "user", "content": "Hello"}], "store": True}


def test_deviations_as_the_sdk_has_them(adapter):
    """docs/adapters.md's minimal cases of the expected failures, as sent."""
    hello = ModelRequest(parts=[UserPromptPart("Hello")])
    split = [hello, ModelResponse(parts=[TextPart("a"), ToolCallPart("t", {}, "c1"), TextPart("b")]),
             ModelRequest(parts=[ToolReturnPart("t", "r", "c1")])]
    assert [(m["role"], "tool_calls" in m) for m in adapter.to_payload(split, provider="openai-chat")["messages"]] == [
        ("user", False), ("assistant", True), ("assistant", False), ("tool", False)]
    typed_while_running = [hello, ModelResponse(parts=[ToolCallPart("t", {}, "c1")]),
                           ModelRequest(parts=[UserPromptPart("Also Berlin"), ToolReturnPart("t", "r", "c1")])]
    roles = [m["role"] for m in adapter.to_payload(typed_while_running, provider="openai-chat")["messages"]]
    assert roles == ["user", "assistant", "user", "tool"]


def test_openai_chat_and_responses_only(adapter):
    assert adapter.providers == frozenset({"openai-chat", "openai-responses"})
    with pytest.raises(ValueError, match="openai-chat and openai-responses only"):
        adapter.to_payload(weather_history(), provider="gemini")


def test_responses_path_sends_openai_reasoning_with_its_encrypted_content_and_leaves_out_another_models(adapter):
    """The default Responses model: OpenAI's reasoning item goes back with its id and encrypted
    content; another model's reasoning (stored with its provider_data) is left out by the SDK."""
    history = [ModelRequest(parts=[UserPromptPart("hi")]),
               ModelResponse(parts=[ThinkingPart("plan", id="rs_1", signature="enc", provider_name="openai"),
                                    ToolCallPart("t", {}, "c1")], provider_name="openai"),
               ModelRequest(parts=[ToolReturnPart("t", "r", "c1")]),
               ModelResponse(parts=[ThinkingPart("other", signature="sig", provider_name="anthropic"),
                                    TextPart("done")], provider_name="anthropic")]
    body = adapter.to_payload(history, provider="openai-responses", instructions="Be brief.")
    assert body["instructions"] == "Be brief."
    reasoning = [item for item in body["input"] if item.get("type") == "reasoning"]
    assert reasoning == [{"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "plan"}],
                          "encrypted_content": "enc"}]
    assert [item.get("type", item.get("role")) for item in body["input"]] == [
        "user", "reasoning", "function_call", "function_call_output", "message"]


def test_called_from_a_running_loop(adapter):
    import asyncio

    async def inside():
        return adapter.to_payload(weather_history(), provider="openai-chat")

    assert asyncio.run(inside())["messages"][0]["role"] == "system"


# -- registration and a short run --------------------------------------------------------------

def test_registered_as_an_entry_point_behind_its_extra():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    target = project["entry-points"]["chatconform.implementations"]["openai-agents"]
    impl = discovery.wrap(EntryPoint("openai-agents", target, discovery.GROUP).load(), "openai-agents")
    assert (impl.name, impl.contracts(), impl.options["providers"]) == (
        "openai-agents", ["payload"], frozenset({"openai-chat", "openai-responses"}))
    assert impl.version == version("openai-agents")
    extras = project["optional-dependencies"]
    assert any(r.startswith("openai-agents") for r in extras["openai-agents"])
    assert "openai-agents" in extras["all"][0]


def test_short_payload_run_has_no_engine_errors(short_run):
    short_run(OpenAIAgentsAdapter, "payload")
