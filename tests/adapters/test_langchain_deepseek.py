"""The langchain-deepseek adapter: the body ChatDeepSeek's invoke path builds and the openai SDK
serializes, unfixed, offline, with the request's model and reasoning setting, and registered
behind its extra."""

import json
from importlib.metadata import version

import pytest

pytest.importorskip("langchain_deepseek")

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from chatconform.adapters._langchain_chat import sent_body
from chatconform.adapters.langchain_deepseek import LangChainDeepSeekAdapter
from chatconform.provider_schemas import validate
from tests.registration import project, registered

#: Sockets are blocked in every test here (the ``no_network`` fixture of conftest.py).
pytestmark = [pytest.mark.usefixtures("no_network"), pytest.mark.adapter]


@pytest.fixture(scope="module")
def adapter():
    return LangChainDeepSeekAdapter()


def tool_round(*thinking):
    return [ModelRequest(parts=[UserPromptPart("Weather? (u1)")]),
            ModelResponse(parts=[*thinking, ToolCallPart("get_weather", {"city": "Paris"}, "c1")],
                          provider_name="deepseek"),
            ModelRequest(parts=[ToolReturnPart("get_weather", "sunny (r3)", "c1")])]


def test_body_is_what_chat_deepseek_sends(adapter):
    body = adapter.to_payload(tool_round(), provider="deepseek", instructions="Be brief.")
    assert (body["model"], body["stream"]) == ("deepseek-chat", False)
    assert body["messages"] == [
        {"content": "Be brief.", "role": "system"},
        {"content": "Weather? (u1)", "role": "user"},
        {"content": None, "role": "assistant", "tool_calls": [
            {"type": "function", "id": "c1", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
        {"content": "sunny (r3)", "role": "tool", "tool_call_id": "c1"}]
    assert body["tools"] == [{"type": "function", "function": {
        "name": "get_weather", "parameters": {"type": "object", "additionalProperties": True}}}]


def test_model_and_reasoning_as_an_application_sets_them(adapter):
    history = tool_round()
    assert adapter.to_payload(history, provider="deepseek", reasoning=True)["model"] == "deepseek-reasoner"
    assert "thinking" not in adapter.to_payload(history, provider="deepseek", reasoning=True)
    named = adapter.to_payload(history, provider="deepseek", model="deepseek-v4-pro", reasoning=False)
    assert (named["model"], named["thinking"]) == ("deepseek-v4-pro", {"type": "disabled"})


def test_stopped_inside_the_sdk_before_sending(adapter, monkeypatch):
    def send(*args, **kwargs):
        raise AssertionError("the request was sent")

    monkeypatch.setattr(adapter.model.root_client._client, "send", send)
    assert adapter.to_payload(tool_round(), provider="deepseek")["messages"]


def test_deepseek_only(adapter):
    with pytest.raises(ValueError, match="deepseek only"):
        adapter.to_payload(tool_round(), provider="openai-chat")


# -- the expected failures, as ChatDeepSeek has them (docs/adapters.md) ---------------------------

def test_reasoning_content_is_never_sent_back(adapter):
    """D3: neither a reasoning block nor additional_kwargs['reasoning_content'] (where
    ChatDeepSeek stores what DeepSeek returns) reaches the body."""
    body = adapter.to_payload(tool_round(ThinkingPart("I should call (t2)", provider_name="deepseek")),
                              provider="deepseek", reasoning=True)
    assert "reasoning_content" not in body["messages"][1]
    assert [p.rule for p in validate(body, "deepseek")] == ["D3"]
    held = AIMessage(content="", additional_kwargs={"reasoning_content": "I should call (t2)"},
                     tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "c1", "type": "tool_call"}],
                     response_metadata={"model_provider": "deepseek"})
    sent = json.loads(sent_body(adapter.configured(None, True), [HumanMessage("Weather? (u1)"), held,
                                                                  ToolMessage("sunny (r3)", tool_call_id="c1")]))
    assert "reasoning_content" not in sent["messages"][1]


def test_texts_of_one_answer_run_together(adapter):
    history = [ModelRequest(parts=[UserPromptPart("Hello (u1)")]),
               ModelResponse(parts=[TextPart("Done. (a2)"), TextPart("Done. (a3)")]),
               ModelRequest(parts=[UserPromptPart("More (u4)")])]
    assert adapter.to_payload(history, provider="deepseek")["messages"][1]["content"] == "Done. (a2)Done. (a3)"


def test_a_call_left_without_a_result_is_sent_unanswered(adapter):
    """D1: a run cut while its tools ran; ChatDeepSeek sends the call as the history holds it."""
    cut = [ModelRequest(parts=[UserPromptPart("Weather? (u1)")]),
           ModelResponse(parts=[ToolCallPart("get_weather", {"city": "Paris"}, "c1"),
                                ToolCallPart("get_weather", {"city": "Rome"}, "c2")]),
           ModelRequest(parts=[ToolReturnPart("get_weather", "sunny (r3)", "c1")])]
    assert "D1" in {p.rule for p in validate(adapter.to_payload(cut, provider="deepseek"), "deepseek")}


# -- registration and a short run --------------------------------------------------------------

def test_registered_as_an_entry_point_behind_its_extra():
    impl = registered("langchain-deepseek")
    assert (impl.name, impl.contracts(), impl.options["providers"]) == (
        "langchain-deepseek", ["payload"], frozenset({"deepseek"}))
    assert impl.version == version("langchain-deepseek")
    assert "langchain-deepseek" in project()["optional-dependencies"]["all"][0]


def test_short_payload_run_has_no_engine_errors(short_run):
    short_run(LangChainDeepSeekAdapter, "payload")
