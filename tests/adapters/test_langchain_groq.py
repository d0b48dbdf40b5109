"""The langchain-groq adapter: the body ChatGroq's invoke path builds and the groq SDK
serializes, unfixed, offline, with the request's model and reasoning setting, and registered
behind its extra."""

from importlib.metadata import version

import pytest

pytest.importorskip("langchain_groq")

from pydantic_ai.messages import ModelRequest, ModelResponse, ThinkingPart, ToolCallPart, ToolReturnPart, UserPromptPart

from chatconform.adapters.langchain_groq import LangChainGroqAdapter
from chatconform.provider_schemas import validate
from tests.registration import project, registered

#: Sockets are blocked in every test here (the ``no_network`` fixture of conftest.py).
pytestmark = [pytest.mark.usefixtures("no_network"), pytest.mark.adapter]


@pytest.fixture(scope="module")
def adapter():
    return LangChainGroqAdapter()


def tool_round(*thinking):
    return [ModelRequest(parts=[UserPromptPart("Weather? (u1)")]),
            ModelResponse(parts=[*thinking, ToolCallPart("get_weather", {"city": "Paris"}, "c1")]),
            ModelRequest(parts=[ToolReturnPart("get_weather", "sunny (r3)", "c1")])]


def test_body_is_what_chat_groq_sends(adapter):
    body = adapter.to_payload(tool_round(), provider="groq", instructions="Be brief.")
    assert (body["model"], body["stream"], body["reasoning_effort"]) == ("openai/gpt-oss-120b", False, None)
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather? (u1)"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"type": "function", "id": "c1", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
        {"role": "tool", "content": "sunny (r3)", "tool_call_id": "c1"}]
    assert body["tools"] == [{"type": "function", "function": {
        "name": "get_weather", "parameters": {"type": "object", "additionalProperties": True}}}]


def test_reasoning_is_chat_groq_s_reasoning_effort(adapter):
    assert adapter.to_payload(tool_round(), provider="groq", reasoning=True)["reasoning_effort"] == "medium"
    assert adapter.to_payload(tool_round(), provider="groq", reasoning=False)["reasoning_effort"] == "low"


def test_no_reasoning_goes_back(adapter):
    """R2: ChatGroq keeps an assistant message's text blocks only, so reasoning Groq would reject
    is not sent, whichever provider returned it."""
    for producer in ("deepseek", "anthropic", None):
        thought = ThinkingPart("I should call (t2)", signature="c2ln" if producer == "anthropic" else None,
                               provider_name=producer)
        body = adapter.to_payload(tool_round(thought), provider="groq", reasoning=True)
        assert set(body["messages"][1]) == {"role", "content", "tool_calls"}
        assert validate(body, "groq") == []


def test_stopped_inside_the_sdk_before_sending(adapter, monkeypatch):
    def send(*args, **kwargs):
        raise AssertionError("the request was sent")

    monkeypatch.setattr(adapter.model.client._client._client, "send", send)
    assert adapter.to_payload(tool_round(), provider="groq")["messages"]


def test_groq_only(adapter):
    with pytest.raises(ValueError, match="groq only"):
        adapter.to_payload(tool_round(), provider="openai-chat")


# -- the expected failures, as ChatGroq has them (docs/adapters.md) -------------------------------

def test_a_call_left_without_a_result_is_sent_unanswered(adapter):
    """R1: a run cut while its tools ran; ChatGroq sends the call as the history holds it."""
    cut = [ModelRequest(parts=[UserPromptPart("Weather? (u1)")]),
           ModelResponse(parts=[ToolCallPart("get_weather", {"city": "Paris"}, "c1"),
                                ToolCallPart("get_weather", {"city": "Rome"}, "c2")]),
           ModelRequest(parts=[ToolReturnPart("get_weather", "sunny (r3)", "c1")])]
    assert "R1" in {p.rule for p in validate(adapter.to_payload(cut, provider="groq"), "groq")}


def test_user_text_before_the_results_is_sent_between_call_and_result(adapter):
    typed = [ModelRequest(parts=[UserPromptPart("Weather? (u1)")]),
             ModelResponse(parts=[ToolCallPart("get_weather", {"city": "Paris"}, "c1")]),
             ModelRequest(parts=[UserPromptPart("Also Rome (u3)"), ToolReturnPart("get_weather", "sunny (r4)", "c1")])]
    body = adapter.to_payload(typed, provider="groq")
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user", "tool"]
    assert "R1" in {p.rule for p in validate(body, "groq")}


# -- registration and a short run --------------------------------------------------------------

def test_registered_as_an_entry_point_behind_its_extra():
    impl = registered("langchain-groq")
    assert (impl.name, impl.contracts(), impl.options["providers"]) == (
        "langchain-groq", ["payload"], frozenset({"groq"}))
    assert impl.version == version("langchain-groq")
    assert "langchain-groq" in project()["optional-dependencies"]["all"][0]


def test_short_payload_run_has_no_engine_errors(short_run):
    short_run(LangChainGroqAdapter, "payload")
