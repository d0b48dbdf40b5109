"""The pydantic-ai adapter: offline, the real shape per provider, faithful to pydantic-ai's
own output (its bugs included), registered, and skipped with one line when not installed."""

import asyncio
import base64
import copy
import importlib.util
import json
import sys
import tomllib
from importlib.metadata import EntryPoint, version
from pathlib import Path

import pytest
from pydantic_ai.messages import (
    ImageUrl,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from chatconform.adapters import pydantic_ai as adapter_module
from chatconform.adapters.pydantic_ai import PydanticAIAdapter
from chatconform.cli import main
from chatconform.errors import MissingDependency
from chatconform.provider_schemas import turn_view
from chatconform.providers import PROVIDER_IDS
from chatconform.runner import discovery, loading

ROOT = Path(__file__).resolve().parents[2]


#: Sockets are blocked in every test here (the ``no_network`` fixture of conftest.py).
pytestmark = pytest.mark.usefixtures("no_network")


@pytest.fixture(scope="module")
def adapter():
    return PydanticAIAdapter()


def weather_history(request_parts=None):
    """System + user; a text and a call; its result; an answer; a new question."""
    return [
        ModelRequest(parts=[SystemPromptPart("You are a weather bot."), UserPromptPart("Weather in Paris?")]),
        ModelResponse(parts=[TextPart("Let me check."), ToolCallPart("get_weather", {"city": "Paris"}, "call_1")],
                      model_name="m"),
        ModelRequest(parts=request_parts or [ToolReturnPart("get_weather", {"temp_c": 21}, "call_1")]),
        ModelResponse(parts=[TextPart("It is 21 degrees.")], model_name="m"),
        ModelRequest(parts=[UserPromptPart("And tomorrow?")]),
    ]


def shape(body, provider):
    """(role, texts, call ids, result ids) per turn, through the suite's own turn view."""
    return [(t.role, list(t.texts), [i for i, _ in t.tool_calls], [i for i, _ in t.tool_results])
            for t in turn_view(body, provider)]


def test_declares_name_version_and_every_provider(adapter):
    assert adapter.name == "pydantic-ai"
    assert adapter.version == version("pydantic-ai-slim")
    assert set(adapter.providers) == set(PROVIDER_IDS)


@pytest.mark.parametrize("provider", ["openai-chat", "qwen-vllm", "glm"])
def test_openai_style_bodies(adapter, provider):
    body = adapter.to_payload(weather_history(), provider=provider, instructions="Be concise.")
    assert list(body) == ["messages"]
    roles = [m["role"] for m in body["messages"]]
    assistant = body["messages"][roles.index("assistant")]
    assert assistant["tool_calls"] == [{"id": "call_1", "type": "function",
                                        "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]
    assert body["messages"][roles.index("tool")] == {"role": "tool", "tool_call_id": "call_1",
                                                     "content": '{"temp_c":21}'}
    if provider == "qwen-vllm":  # VLLMProvider's Qwen profile merges leading system messages
        assert roles[:2] == ["system", "user"]
        assert body["messages"][0]["content"] == "You are a weather bot.\n\nBe concise."
    else:  # a system message per part
        assert roles[:3] == ["system", "system", "user"]
    assert roles[-4:] == ["assistant", "tool", "assistant", "user"]


def test_mistral_body_rewrites_ids_for_call_and_result(adapter):
    body = adapter.to_payload(weather_history(), provider="mistral")
    messages = body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "assistant", "user"]
    call_id = messages[2]["tool_calls"][0]["id"]
    assert len(call_id) == 9 and call_id.isalnum() and messages[3]["tool_call_id"] == call_id
    assert messages[2]["content"] == [{"text": "Let me check.", "type": "text"}]


def test_anthropic_body(adapter):
    body = adapter.to_payload(weather_history(), provider="anthropic", instructions="Be concise.")
    assert body["system"] == [{"type": "text", "text": "You are a weather bot."},
                              {"type": "text", "text": "Be concise."}]
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user", "assistant", "user"]
    assert body["messages"][1]["content"][1] == {"id": "call_1", "type": "tool_use", "name": "get_weather",
                                                 "input": {"city": "Paris"}}
    result = body["messages"][2]["content"][0]
    assert (result["type"], result["tool_use_id"], result["is_error"]) == ("tool_result", "call_1", False)
    assert "system" not in adapter.to_payload(weather_history()[1:], provider="anthropic")


def test_gemini_body_is_the_api_json(adapter):
    body = adapter.to_payload(weather_history(), provider="gemini")
    assert body["systemInstruction"]["parts"][-1] == {"text": "You are a weather bot."}
    contents = body["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user", "model", "user"]
    call = contents[1]["parts"][1]
    assert call["functionCall"] == {"id": "call_1", "name": "get_weather", "args": {"city": "Paris"}}
    assert isinstance(call["thoughtSignature"], str)  # bytes in the SDK, base64 on the wire
    assert contents[2]["parts"] == [{"functionResponse": {"id": "call_1", "name": "get_weather",
                                                          "response": {"temp_c": 21}}}]


def test_bedrock_body_has_system_and_tool_config(adapter):
    body = adapter.to_payload(weather_history(), provider="bedrock-converse")
    assert body["system"] == [{"text": "You are a weather bot."}]
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user", "assistant", "user"]
    assert body["messages"][1]["content"][1] == {"toolUse": {"toolUseId": "call_1", "name": "get_weather",
                                                             "input": {"city": "Paris"}}}
    assert body["messages"][2]["content"][0]["toolResult"]["toolUseId"] == "call_1"
    assert [t["toolSpec"]["name"] for t in body["toolConfig"]["tools"]] == ["get_weather"]
    # pydantic-ai sends an empty system list when there is no system text
    assert adapter.to_payload(weather_history()[1:], provider="bedrock-converse")["system"] == []


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_bodies_are_json_and_the_input_is_left_alone(adapter, provider):
    history = weather_history()
    before = copy.deepcopy(history)
    body = adapter.to_payload(history, provider=provider)
    assert json.loads(json.dumps(body)) == body
    assert history == before


# -- faithful: pydantic-ai's own order, bugs included ---------------------------------------------

USER_BEFORE_RESULTS = [UserPromptPart("hurry"), ToolReturnPart("get_weather", "sunny", "call_1")]


@pytest.mark.parametrize("provider", ["openai-chat", "qwen-vllm", "glm", "mistral"])
def test_user_text_before_results_is_sent_before_them(adapter, provider):
    """pydantic-ai sorts results first only when it merges two requests; one stored request
    that holds user text before the results goes out in that order (OpenAI rejects it)."""
    body = adapter.to_payload(weather_history(USER_BEFORE_RESULTS)[:3], provider=provider)
    assert [t[0] for t in shape(body, provider)][-3:] == ["assistant", "user", "tool"]


#: Where each block dialect puts the blocks of the last turn, and the key of a result block.
BLOCKS = {"anthropic": ("messages", "content", "tool_result"),
          "gemini": ("contents", "parts", "functionResponse"),
          "bedrock-converse": ("messages", "content", "toolResult")}


@pytest.mark.parametrize("provider", list(BLOCKS))
def test_user_text_before_results_in_one_user_turn(adapter, provider):
    """The block dialects get one user turn: the text block first, then the result (Anthropic
    wants results first; Gemini reads a text + functionResponse content as model-authored,
    pydantic-ai #4210)."""
    body = adapter.to_payload(weather_history(USER_BEFORE_RESULTS)[:3], provider=provider)
    turns, blocks, result_key = BLOCKS[provider]
    last = body[turns][-1]
    assert last["role"] == "user"
    assert last[blocks][0]["text"] == "hurry"
    assert result_key in last[blocks][1] or last[blocks][1].get("type") == result_key
    assert len(last[blocks]) == 2


def test_mistral_keeps_a_mid_conversation_system_prompt_in_place(adapter):
    history = weather_history([ToolReturnPart("get_weather", "sunny", "call_1"),
                               SystemPromptPart("Answer in French from now on.")])
    roles = [t[0] for t in shape(adapter.to_payload(history, provider="mistral"), "mistral")]
    assert roles[3:5] == ["tool", "system"]


@pytest.mark.parametrize("provider", ["gemini", "bedrock-converse"])
def test_a_file_url_is_not_downloaded(adapter, provider):
    """Gemini and Bedrock download a URL to send its bytes; offline, stand-in bytes take its place."""
    history = [ModelRequest(parts=[UserPromptPart(["Look:", ImageUrl("https://example.com/cat.png")])])]
    body = adapter.to_payload(history, provider=provider)  # raises NetworkBlocked if it downloads
    turn = turn_view(body, provider)[-1]
    [data] = turn.media
    assert base64.urlsafe_b64decode(data) == b"offline stand-in for https://example.com/cat.png"


def test_callable_from_a_running_event_loop(adapter):
    async def inside_a_loop():
        return adapter.to_payload(weather_history(), provider="anthropic")

    assert asyncio.run(inside_a_loop())["messages"][0]["role"] == "user"


# -- registration and loading ------------------------------------------------------------------

def test_registered_as_an_entry_point_behind_its_extra():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    target = project["entry-points"]["chatconform.implementations"]["pydantic-ai"]
    impl = discovery.wrap(EntryPoint("pydantic-ai", target, discovery.GROUP).load(), "pydantic-ai")
    assert (impl.name, impl.contracts(), impl.options["providers"]) == (
        "pydantic-ai", ["payload", "persist", "sanitize", "repair", "serde"], frozenset(PROVIDER_IDS))
    extras = project["optional-dependencies"]
    assert any(d.startswith("pydantic-ai-slim[") for d in extras["pydantic-ai"])
    assert {"pydantic-ai", "harness", "langchain"} <= set(extras["all"][0].partition("[")[2].rstrip("]").split(","))
    assert not any(d.startswith("pydantic-ai-slim==") for d in project["dependencies"])


def test_missing_sdk_is_one_line_naming_the_extra(monkeypatch):
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "boto3" else real_find_spec(name, *a))
    spec = importlib.util.spec_from_file_location("chatconform_pai_copy", adapter_module.__file__)
    with pytest.raises(MissingDependency) as caught:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    message = str(caught.value)
    assert "\n" not in message and "boto3" in message and "chatconform[pydantic-ai]" in message


@pytest.fixture
def broken_adapter(tmp_path, monkeypatch):
    """A registered implementation whose libraries are missing, beside the reference."""
    (tmp_path / "needs_more.py").write_text(
        "from chatconform.errors import MissingDependency\n"
        "raise MissingDependency(\"the needs-more adapter needs somesdk: pip install 'chatconform[more]'\")\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "needs_more", raising=False)
    eps = {"reference": EntryPoint("reference", "chatconform.reference:ReferenceImplementation", discovery.GROUP),
           "needs-more": EntryPoint("needs-more", "needs_more:Adapter", discovery.GROUP)}
    monkeypatch.setattr(loading, "registered", lambda: eps)


def test_default_run_skips_an_adapter_that_cannot_load(broken_adapter, capsys):
    assert main(["run", "--contract", "thread", "--check", "thread.reaches_root", "--examples", "3"]) == 0
    captured = capsys.readouterr()
    notes = [line for line in captured.err.splitlines() if "needs-more" in line]
    assert notes == ["skipped implementation 'needs-more': the needs-more adapter needs somesdk: "
                     "pip install 'chatconform[more]'"]
    assert "reference" in captured.out


def test_default_run_loads_the_reference_first_then_every_installed_adapter(monkeypatch):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = project["entry-points"]["chatconform.implementations"]
    monkeypatch.setattr(loading, "registered", lambda: {
        name: EntryPoint(name, target, discovery.GROUP) for name, target in sorted(declared.items())})
    notes = []
    assert [impl.name for impl in discovery.load_installed(notes.append)] == [
        "reference", "langchain-anthropic", "langchain-aws", "langchain-core", "langchain-deepseek",
        "langchain-google-genai", "langchain-groq", "langchain-openai", "openai-agents", "pydantic-ai",
        "pydantic-ai-harness"]
    assert notes == []


def test_naming_an_adapter_that_cannot_load_is_a_config_error(broken_adapter, capsys):
    assert main(["run", "--impl", "needs-more", "--contract", "thread", "--examples", "3"]) == 2
    assert "chatconform[more]" in capsys.readouterr().err


# -- a short conformance run -----------------------------------------------------------------

def test_short_payload_run_has_no_engine_errors(short_run):
    short_run(PydanticAIAdapter, "payload", examples=3)


def test_short_persist_run_has_no_engine_errors(short_run):
    short_run(PydanticAIAdapter, "persist", examples=3)


def test_persist_run_stores_the_capture_as_pydantic_ai_leaves_it(adapter):
    """The deviations its expected failures name, on the capture of a run cancelled after calls."""
    from chatconform.strategies.runs import Scenario, run_scenario

    result = run_scenario(Scenario(previous=[], instructions="Be brief.", ending="cancel_after_calls"))
    stored = adapter.persist_run(result.previous, result.captured, result.outcome)
    assert stored == result.captured and stored is not result.captured
    assert stored[0].instructions == "Be brief." and stored[-1].state == "complete" and stored[-1].tool_calls
    assert set(adapter.expected_failures) >= {"persist.no_instructions", "persist.interrupted_marker",
                                              "persist.continuable", "persist.matches_reference"}
    previous = result.captured[:1]
    assert adapter.persist_run(previous, [], "cancelled") == previous


# -- serde: dump/load through ModelMessagesTypeAdapter -------------------------------------------

def test_dump_and_load_are_the_type_adapters_own(adapter):
    from pydantic import ValidationError
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    history = weather_history()
    data = adapter.dump(history)
    assert data == ModelMessagesTypeAdapter.dump_json(history)
    assert adapter.load(data) == history == adapter.load(data.decode())
    with pytest.raises(ValidationError):
        adapter.load(data[:-1])
