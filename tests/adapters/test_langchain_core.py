"""The langchain-core adapter: the converter (message by message, and a round trip on
generated histories), the body convert_to_openai_messages builds, unfixed, offline, and
registered behind its extra."""

import copy
import json
import tomllib
from importlib.metadata import EntryPoint, version
from pathlib import Path

import pytest

pytest.importorskip("langchain_core")

from hypothesis import HealthCheck, given, settings
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from pydantic_ai.messages import (
    CompactionPart,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryInfo,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from chatconform.adapters.langchain_core import LangChainCoreAdapter, from_langchain, to_langchain
from chatconform.history import Item, visible_items
from chatconform.runner import discovery
from chatconform.strategies import histories
from tests.messages import weather_history

ROOT = Path(__file__).resolve().parents[2]


#: Sockets are blocked in every test here (the ``no_network`` fixture of conftest.py).
pytestmark = pytest.mark.usefixtures("no_network")


@pytest.fixture(scope="module")
def adapter():
    return LangChainCoreAdapter()


# -- the converter ------------------------------------------------------------------------------

def test_converts_part_by_part():
    messages = to_langchain(weather_history())
    assert [type(m) for m in messages] == [SystemMessage, HumanMessage, AIMessage, ToolMessage, AIMessage]
    human = messages[1].content
    assert human[0] == {"type": "text", "text": "Weather here?"}
    assert human[1] == {"type": "image", "source_type": "url", "url": "https://example.com/sky.png"}
    assert human[2]["type"] == "image" and human[2]["mime_type"] == "image/png"
    call = messages[2]
    assert call.content == "Let me check."
    assert [(c["name"], c["args"], c["id"]) for c in call.tool_calls] == [("get_weather", {"city": "Paris"}, "call_1")]
    tool = messages[3]
    assert (tool.tool_call_id, tool.name, tool.status, json.loads(tool.content)) == \
        ("call_1", "get_weather", "success", {"temp_c": 21})


@pytest.mark.parametrize("outcome", ["failed", "retried"])
def test_a_failed_result_is_an_error_tool_message(outcome):
    result = ToolReturnPart("get_weather", "timeout", "call_1", outcome=outcome)
    assert to_langchain(weather_history(result))[3].status == "error"


def test_summary_feedback_and_thinking():
    history = [ModelRequest(parts=[CompactionPart(content="the gist"),
                                   RetryFeedbackPart("fix the JSON", retry=RetryInfo(cause="validation_error",
                                                                                     attempt=1, max_retries=2))]),
               ModelResponse(parts=[ThinkingPart("hmm"), TextPart("ok")])]
    summary, feedback, answer = to_langchain(history)
    assert (type(summary), summary.content) == (HumanMessage, "the gist")
    assert (type(feedback), feedback.content) == (HumanMessage, "fix the JSON")
    assert answer.content == [{"type": "reasoning", "reasoning": "hmm"}, {"type": "text", "text": "ok"}]


def _as_langchain_sees_it(items):
    """Visible items with the kinds LangChain has: a summary or feedback is user text, and a
    failed result is a result (its flag is the status, checked above)."""
    return [Item("user", i.value) if i.kind in ("summary", "feedback") else i for i in items]


def _calls_after_texts(history):
    """Each response's calls after its texts: an AIMessage holds its text and its calls apart."""
    out = []
    for message in history:
        if isinstance(message, ModelResponse):
            calls = [p for p in message.parts if isinstance(p, ToolCallPart)]
            message = ModelResponse(parts=[p for p in message.parts if p not in calls] + calls)
        out.append(message)
    return out


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(histories(files=True, thinking=True, summaries=True, retries=True))
def test_round_trip_keeps_every_visible_item(history):
    before = copy.deepcopy(history)
    back = from_langchain(to_langchain(history))
    assert visible_items(back) == _as_langchain_sees_it(visible_items(_calls_after_texts(history)))
    assert history == before


# -- the body --------------------------------------------------------------------------------------

def test_body_is_convert_to_openai_messages_output(adapter):
    body = adapter.to_payload(weather_history(), provider="openai-chat", instructions="Be brief.")
    assert list(body) == ["messages"]
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "system", "user", "assistant", "tool", "assistant"]
    assert body["messages"][0]["content"] == "Be brief."
    assert body["messages"][2]["content"][1] == {"type": "image_url",
                                                 "image_url": {"url": "https://example.com/sky.png"}}
    assert body["messages"][3]["tool_calls"][0]["function"] == {"name": "get_weather",
                                                                "arguments": '{"city": "Paris"}'}
    assert json.loads(json.dumps(body)) == body


def test_not_fixed_up_the_error_flag_and_reasoning_as_langchain_sends_them(adapter):
    """convert_to_openai_messages drops ToolMessage.status and passes reasoning blocks through;
    the body keeps both as they come (the checks judge them)."""
    failed = ToolReturnPart("get_weather", "timeout", "call_1", outcome="failed")
    body = adapter.to_payload(weather_history(failed), provider="openai-chat")
    assert body["messages"][3] == {"role": "tool", "tool_call_id": "call_1", "name": "get_weather",
                                   "content": "timeout"}
    thinking = [ModelRequest(parts=[UserPromptPart("hi")]), ModelResponse(parts=[ThinkingPart("hmm"), TextPart("ok")])]
    assert adapter.to_payload(thinking, provider="openai-chat")["messages"][1]["content"][0]["type"] == "reasoning"


def test_no_messages_merged(adapter):
    history = [ModelRequest(parts=[UserPromptPart("one")]), ModelRequest(parts=[UserPromptPart("two")])]
    assert [m["content"] for m in adapter.to_payload(history, provider="openai-chat")["messages"]] == ["one", "two"]


def test_openai_chat_only(adapter):
    assert adapter.providers == frozenset({"openai-chat"})
    with pytest.raises(ValueError, match="openai-chat only"):
        adapter.to_payload(weather_history(), provider="anthropic")


# -- registration and a short run --------------------------------------------------------------

def test_registered_as_an_entry_point_behind_its_extra():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    target = project["entry-points"]["chatconform.implementations"]["langchain-core"]
    impl = discovery.wrap(EntryPoint("langchain-core", target, discovery.GROUP).load(), "langchain-core")
    assert (impl.name, impl.contracts(), impl.options["providers"]) == (
        "langchain-core", ["payload", "trim"], frozenset({"openai-chat"}))
    assert impl.version == version("langchain-core")
    extras = project["optional-dependencies"]
    assert extras["langchain"] == ["langchain-core>=0.3"]
    assert "langchain" in extras["all"][0]


def test_short_payload_run_has_no_engine_errors(short_run):
    short_run(LangChainCoreAdapter, "payload")


# -- trim: trim_messages, mapped back to the parts it kept ----------------------------------------

def test_trim_keeps_what_trim_messages_keeps_as_the_input_s_own_parts(adapter):
    history = weather_history()
    history = [*history, ModelRequest(parts=[UserPromptPart("And tomorrow?")]),
               ModelResponse(parts=[TextPart("Rain.")])]
    # LangChain sees [system, human, ai, tool, ai, human, ai]: the last 3 open on the human message.
    result = adapter.trim(history, max_messages=3)
    assert result[1:] == history[-2:] and all(a is b for a, b in zip(result[1:], history[-2:], strict=False))
    assert result[0].parts == [history[0].parts[0]]  # the system part alone, from the first request
    assert adapter.trim(history, max_messages=20) == history


def test_trim_deviations_as_trim_messages_has_them(adapter):
    """docs/adapters.md's minimal cases of the expected failures."""
    system_and_user = [ModelRequest(parts=[SystemPromptPart("Be brief. (s1)"), UserPromptPart("Hello (u2)")])]
    assert [type(p) for m in adapter.trim(system_and_user, max_messages=1) for p in m.parts] == [SystemPromptPart]
    calls = ModelResponse(parts=[ToolCallPart("get_weather", {}, "c1")])
    typed_while_running = [ModelRequest(parts=[UserPromptPart("Weather? (u1)")]), calls,
                           ModelRequest(parts=[UserPromptPart("Also Berlin (u2)"),
                                               ToolReturnPart("get_weather", "sunny (r3)", "c1")])]
    kept = adapter.trim(typed_while_running, max_messages=2)
    assert [type(p) for m in kept for p in m.parts] == [UserPromptPart, ToolReturnPart]  # c1's result, no call
    agentic_tail = [ModelRequest(parts=[UserPromptPart("Go (u1)")]), calls,
                    ModelRequest(parts=[ToolReturnPart("get_weather", "sunny (r2)", "c1")]),
                    ModelResponse(parts=[TextPart("Done. (a3)")])]
    assert adapter.trim(agentic_tail, max_messages=3) == []


def test_anthropic_thinking_is_held_as_chat_anthropic_returns_it():
    """Signed, redacted and cut (no signature) blocks, the answer stamped as Anthropic's; and back."""
    response = ModelResponse(parts=[
        ThinkingPart("hmm", signature="c2ln", provider_name="anthropic"),
        ThinkingPart("", id="redacted_thinking", signature="cmVk", provider_name="anthropic"),
        ThinkingPart("cut", provider_name="anthropic"), TextPart("ok")], provider_name="anthropic")
    (message,) = to_langchain([response])
    assert message.content == [{"type": "thinking", "thinking": "hmm", "signature": "c2ln"},
                               {"type": "redacted_thinking", "data": "cmVk"},
                               {"type": "thinking", "thinking": "cut"}, {"type": "text", "text": "ok"}]
    assert message.response_metadata == {"model_provider": "anthropic"}
    (back,) = from_langchain([message])
    assert [(p.content, p.signature, p.id) for p in back.parts if isinstance(p, ThinkingPart)] == [
        ("hmm", "c2ln", None), ("", "cmVk", "redacted_thinking"), ("cut", None, None)]
    # Another provider's reasoning stays a LangChain reasoning block, the answer unstamped.
    (other,) = to_langchain([ModelResponse(parts=[ThinkingPart("hmm", provider_name="deepseek")])])
    assert (other.content, other.response_metadata) == ([{"type": "reasoning", "reasoning": "hmm"}], {})
