"""The langchain-google-genai adapter: the generateContent body ChatGoogleGenerativeAI builds
through google-genai's converter, unfixed, offline (no download, no socket), and registered
behind its extra."""

import json
import tomllib
from importlib.metadata import EntryPoint, version
from pathlib import Path

import pytest

pytest.importorskip("langchain_google_genai")

from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from chatconform.adapters.langchain_google_genai import LangChainGoogleGenAIAdapter
from chatconform.runner import discovery
from tests.messages import weather_history

ROOT = Path(__file__).resolve().parents[2]

#: Sockets are blocked in every test here (the ``no_network`` fixture of conftest.py).
pytestmark = [pytest.mark.usefixtures("no_network"), pytest.mark.adapter]


@pytest.fixture(scope="module")
def adapter():
    return LangChainGoogleGenAIAdapter()


def test_body_is_the_generate_content_request(adapter):
    body = adapter.to_payload(weather_history(), provider="gemini", instructions="Be brief.")
    assert set(body) == {"contents", "systemInstruction", "tools", "safetySettings", "generationConfig"}
    # The instructions first, then the history's system prompt, both in the system slot.
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}, {"text": "You are a weather bot."}]}
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user", "model"]
    text, url_image, bytes_image = body["contents"][0]["parts"]
    assert text == {"text": "Weather here?"}
    # The URL is "downloaded" into stand-in bytes (the library sends every URL inline).
    assert url_image["inlineData"]["mime_type"] == "image/png"
    assert json.loads(json.dumps(url_image)) == url_image
    assert bytes_image == {"inlineData": {"data": "iVBORw0KGgoAAAAAAAAAAA==", "mime_type": "image/png"}}
    assert body["contents"][1]["parts"] == [{"text": "Let me check."},
                                            {"functionCall": {"args": {"city": "Paris"}, "name": "get_weather"}}]
    assert body["contents"][2]["parts"] == [{"functionResponse": {"name": "get_weather",
                                                                  "response": {"temp_c": 21}}}]
    assert body["tools"] == [{"functionDeclarations": [{"name": "get_weather"}]}]
    assert json.loads(json.dumps(body)) == body


def test_a_failed_result_goes_out_without_the_error_key(adapter):
    """ToolMessage.status="error" is not read by langchain-google-genai: the failure is sent as
    a plain output (the expected failure payload.error_flag_kept), not fixed up here."""
    failed = ToolReturnPart("get_weather", "timeout", "call_1", outcome="failed")
    body = adapter.to_payload(weather_history(failed), provider="gemini")
    assert body["contents"][2]["parts"] == [{"functionResponse": {"name": "get_weather",
                                                                  "response": {"output": "timeout"}}}]


def test_deviations_as_the_library_has_them(adapter):
    """docs/adapters.md's minimal cases of the expected failures, as sent."""
    hello = ModelRequest(parts=[UserPromptPart("Hello")])
    empty = adapter.to_payload([hello, ModelResponse(parts=[]), hello], provider="gemini")
    assert empty["contents"][1] == {"parts": [{"text": ""}], "role": "model"}
    late_system = adapter.to_payload([ModelRequest(parts=[UserPromptPart("Hello"), SystemPromptPart("Be brief.")])],
                                     provider="gemini")
    assert "systemInstruction" not in late_system and late_system["contents"] == [
        {"parts": [{"text": "Hello"}], "role": "user"}]
    call = ModelResponse(parts=[ToolCallPart("get_weather", {"city": "Paris"}, "call_2")])
    reused = [hello, call, ModelRequest(parts=[ToolReturnPart("get_weather", "sunny (r3)", "call_2")]),
              call, ModelRequest(parts=[ToolReturnPart("get_weather", "rain (r5)", "call_2")])]
    contents = adapter.to_payload(reused, provider="gemini")["contents"]
    responses = [c["parts"] for c in contents if c["role"] == "user"][1:]
    assert responses == [[{"functionResponse": {"name": "get_weather", "response": {"output": "sunny (r3)"}}}]] * 2


def test_no_download_and_the_loader_is_untouched_outside(adapter):
    from langchain_google_genai._image_utils import ImageBytesLoader

    body = adapter.to_payload(weather_history(), provider="gemini")
    assert body["contents"][0]["parts"][1]["inlineData"]["data"]  # stand-in bytes, no socket opened
    with pytest.raises(Exception, match=r"network access attempted|Connection|resolve"):
        ImageBytesLoader()._bytes_from_url("https://example.com/sky.png")


def test_gemini_only(adapter):
    assert adapter.providers == frozenset({"gemini"})
    with pytest.raises(ValueError, match="gemini only"):
        adapter.to_payload(weather_history(), provider="openai-chat")


def test_registered_as_an_entry_point_behind_its_extra():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    target = project["entry-points"]["chatconform.implementations"]["langchain-google-genai"]
    impl = discovery.wrap(EntryPoint("langchain-google-genai", target, discovery.GROUP).load(),
                          "langchain-google-genai")
    assert (impl.name, impl.contracts(), impl.options["providers"]) == (
        "langchain-google-genai", ["payload"], frozenset({"gemini"}))
    assert impl.version == version("langchain-google-genai")
    extras = project["optional-dependencies"]
    assert any(r.startswith("langchain-google-genai") for r in extras["langchain-google-genai"])
    assert "langchain-google-genai" in extras["all"][0]


def test_short_payload_run_has_no_engine_errors(short_run):
    short_run(LangChainGoogleGenAIAdapter, "payload")
