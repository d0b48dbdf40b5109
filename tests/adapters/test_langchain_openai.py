"""The langchain-openai adapter: the body ChatOpenAI puts on the wire for each provider, built
by its own request path and the openai SDK's serializer, unfixed, offline (no socket, no
tracing), and registered behind its extra."""

import importlib.util
import json
from importlib.metadata import version

import pytest

pytest.importorskip("langchain_openai")

from langchain_core.messages import SystemMessage
from langchain_core.tracers import langchain as langchain_tracer
from langchain_openai import ChatOpenAI
from openai._utils import maybe_transform
from openai.types.chat import completion_create_params
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

import chatconform.adapters.langchain_openai as adapter_module
from chatconform.adapters._langchain_chat import bound, history_messages
from chatconform.adapters.langchain_openai import LangChainOpenAIAdapter
from chatconform.errors import MissingDependency
from tests.messages import weather_history as one_call_history
from tests.registration import project, registered

#: Sockets are blocked in every test here (the ``no_network`` fixture of conftest.py).
pytestmark = [pytest.mark.usefixtures("no_network"), pytest.mark.adapter]

#: The Chat Completions providers (the Responses API's body is tested apart).
PROVIDERS = {"openai-chat": "gpt-4o", "qwen-vllm": "Qwen/Qwen3.5-35B-A3B", "glm": "glm-4.7"}
ALL_PROVIDERS = {**PROVIDERS, "openai-responses": "gpt-5"}


@pytest.fixture(scope="module")
def adapter():
    return LangChainOpenAIAdapter()


def weather_history():
    """The shared weather history (text, an image by URL and as bytes, a call and its
    result), then a second call whose result failed."""
    *head, last = one_call_history()
    return [*head,
            ModelResponse(parts=[ToolCallPart("get_forecast", {"city": "Paris"}, "call_2")]),
            ModelRequest(parts=[ToolReturnPart("get_forecast", "upstream timeout", "call_2", outcome="failed")]),
            last]


def expected_messages():
    data_url = "data:image/png;base64,iVBORw0KGgoAAAAAAAAAAA=="
    return [
        {"content": "Be brief.", "role": "system"},
        {"content": "You are a weather bot.", "role": "system"},
        {"content": [{"type": "text", "text": "Weather here?"},
                     {"type": "image_url", "image_url": {"url": "https://example.com/sky.png"}},
                     {"type": "image_url", "image_url": {"url": data_url}}], "role": "user"},
        {"content": "Let me check.", "role": "assistant",
         "tool_calls": [{"type": "function", "id": "call_1",
                         "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
        {"content": '{"temp_c": 21}', "role": "tool", "tool_call_id": "call_1"},
        {"content": None, "role": "assistant",
         "tool_calls": [{"type": "function", "id": "call_2",
                         "function": {"name": "get_forecast", "arguments": '{"city": "Paris"}'}}]},
        # The ToolMessage's status="error" is dropped; the failure text is what is sent.
        {"content": "upstream timeout", "role": "tool", "tool_call_id": "call_2"},
        {"content": "It is 21 degrees.", "role": "assistant"},
    ]


# -- the body ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_the_weather_body_for_each_provider(adapter, provider):
    body = adapter.to_payload(weather_history(), provider=provider, instructions="Be brief.")
    open_object = {"type": "object", "additionalProperties": True}
    assert body == {
        "model": PROVIDERS[provider],
        "stream": False,
        "messages": expected_messages(),
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": open_object}},
                  {"type": "function", "function": {"name": "get_forecast", "parameters": open_object}}],
    }


def test_the_body_is_chatopenai_s_payload_through_the_sdk_s_transform(adapter):
    """The same JSON as ChatOpenAI's own payload put through the openai SDK's transform of
    ``create(**params)``: what the adapter returns is the wire form of both steps."""
    history = weather_history()
    model = bound(ChatOpenAI(model="gpt-4o", api_key="dummy"), history)
    messages = history_messages(history, "Be brief.")
    assert messages[0] == SystemMessage("Be brief.")
    payload = model.bound._get_request_payload(messages, **model.kwargs)
    transformed = maybe_transform(payload, completion_create_params.CompletionCreateParamsNonStreaming)
    body = adapter.to_payload(history, provider="openai-chat", instructions="Be brief.")
    assert body == json.loads(json.dumps(transformed))


def test_without_calls_no_tools_are_bound_and_empty_instructions_add_nothing(adapter):
    history = [ModelRequest(parts=[UserPromptPart("hi")])]
    assert adapter.to_payload(history, provider="glm", instructions="") == {
        "model": "glm-4.7", "stream": False, "messages": [{"content": "hi", "role": "user"}]}


def test_not_fixed_up_an_answer_of_thinking_alone_is_sent_as_empty_content(adapter):
    """ChatOpenAI drops reasoning blocks, and an AIMessage that held nothing else goes out as
    ``content: []`` (the expected payload.schema_valid failure, O3)."""
    history = [ModelRequest(parts=[UserPromptPart("hi")]), ModelResponse(parts=[ThinkingPart("hmm")]),
               ModelRequest(parts=[UserPromptPart("and?")])]
    assert adapter.to_payload(history, provider="openai-chat")["messages"][1] == {"content": [], "role": "assistant"}


def test_the_provider_is_checked(adapter):
    with pytest.raises(ValueError, match="not 'anthropic'"):
        adapter.to_payload(weather_history(), provider="anthropic")


# -- offline -----------------------------------------------------------------------------------------

def test_no_socket_and_no_tracing_even_when_the_environment_asks_for_it(adapter, monkeypatch):
    """Every connection and name lookup raises here (``no_network``); LangSmith tracing set
    in the environment would start a tracer that posts runs from a thread of its own."""
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    monkeypatch.setenv("LANGSMITH_API_KEY", "dummy")
    tracers = []
    original = langchain_tracer.LangChainTracer.__init__

    def counted(self, *args, **kwargs):
        tracers.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(langchain_tracer.LangChainTracer, "__init__", counted)
    body = adapter.to_payload(weather_history(), provider="qwen-vllm")
    assert body["model"] == "Qwen/Qwen3.5-35B-A3B" and tracers == []


def test_stopped_inside_the_sdk_before_sending(adapter, monkeypatch):
    """The SDK builds the request and the adapter's hook ends the call: the HTTP client's
    send is never reached (and sockets are blocked besides)."""
    def send(*args, **kwargs):
        raise AssertionError("the request was sent")

    for provider in PROVIDERS:
        monkeypatch.setattr(adapter.model(provider).root_client._client, "send", send)
    for provider in PROVIDERS:
        assert adapter.to_payload(weather_history(), provider=provider)["messages"]


def test_the_responses_body_sends_openai_reasoning_back_and_drops_a_call_whose_id_came_before(adapter):
    """``use_responses_api=True``: OpenAI's reasoning goes back as its item (id, encrypted
    content), and a call reusing an earlier round's id is left out (an expected failure)."""
    history = [ModelRequest(parts=[UserPromptPart("hi")]),
               ModelResponse(parts=[ThinkingPart("plan", id="rs_1", signature="enc", provider_name="openai"),
                                    ToolCallPart("get_weather", {"city": "Paris"}, "c1")], provider_name="openai"),
               ModelRequest(parts=[ToolReturnPart("get_weather", "sunny", "c1")]),
               ModelResponse(parts=[ToolCallPart("search_docs", {"q": "x"}, "c1")]),
               ModelRequest(parts=[ToolReturnPart("search_docs", "found", "c1")])]
    body = adapter.to_payload(history, provider="openai-responses")
    assert body["model"] == "gpt-5"
    assert body["input"][1] == {"id": "rs_1", "encrypted_content": "enc", "type": "reasoning",
                                "summary": [{"type": "summary_text", "text": "plan"}]}
    assert [item.get("name") for item in body["input"] if item.get("type") == "function_call"] == ["get_weather"]


# -- registration and loading --------------------------------------------------------------------

def test_registered_as_an_entry_point_behind_its_extra():
    impl = registered("langchain-openai")
    assert (impl.name, impl.contracts(), impl.options["providers"]) == (
        "langchain-openai", ["payload"], frozenset(ALL_PROVIDERS))
    assert impl.options["models"] == ALL_PROVIDERS
    assert impl.version == version("langchain-openai")
    extras = project()["optional-dependencies"]
    assert any(d.startswith("langchain-openai>=") for d in extras["langchain-openai"])
    assert "langchain-openai" in extras["all"][0]


def test_missing_library_is_one_line_naming_the_extra(monkeypatch):
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "langchain_openai" else real_find_spec(name, *a))
    spec = importlib.util.spec_from_file_location("chatconform_lco_copy", adapter_module.__file__)
    with pytest.raises(MissingDependency) as caught:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    message = str(caught.value)
    assert "\n" not in message and "langchain-openai" in message and "chatconform[langchain-openai]" in message


def test_short_payload_run_has_no_engine_errors(short_run):
    short_run(LangChainOpenAIAdapter, "payload")
