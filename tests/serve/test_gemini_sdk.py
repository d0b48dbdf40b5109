"""google-genai against ``chatconform serve`` (``http_options`` base_url), offline: a function
call round plain and streamed (SSE), an empty text part rejected as the SDK's ClientError
with Gemini's text, and a stream cut mid-way as an error."""

from __future__ import annotations

import pytest

genai = pytest.importorskip("google.genai", reason="needs google-genai (the pydantic-ai extra)")

from google.genai import errors, types  # noqa: E402

from tests.serve.helpers import WEATHER_SCRIPT, conversation  # noqa: E402

pytestmark = pytest.mark.serve

MODEL = "gemini-2.5-flash"
TOOLS = [types.Tool(function_declarations=[types.FunctionDeclaration(
    name="get_weather", description="The weather in a city.",
    parameters=types.Schema(type=types.Type.OBJECT, properties={"city": types.Schema(type=types.Type.STRING)}))])]


@pytest.fixture(scope="module")
def gemini(server):
    """One client for the module (a client closes its connections when it is collected)."""
    return genai.Client(api_key="test", http_options=types.HttpOptions(base_url=server.base_url("gemini"),
                                                                       timeout=10_000))


def _answer_call(contents: list, content: types.Content) -> None:
    contents.append(content)
    contents.append(types.Content(role="user", parts=[types.Part.from_function_response(
        name=p.function_call.name, response={"weather": "sunny"}) for p in content.parts if p.function_call]))


def test_a_function_call_round(server, gemini):
    server.script(WEATHER_SCRIPT)
    config = types.GenerateContentConfig(tools=TOOLS)
    contents = [types.Content(role="user", parts=[types.Part(text="What is the weather in Paris? (gemini)")])]
    first = gemini.models.generate_content(model=MODEL, contents=contents, config=config)
    assert first.function_calls[0].name == "get_weather" and first.function_calls[0].args == {"city": "Paris"}
    assert first.candidates[0].content.parts[0].thought is True
    _answer_call(contents, first.candidates[0].content)
    second = gemini.models.generate_content(model=MODEL, contents=contents, config=config)
    assert second.text == "It is sunny in Paris."
    assert second.usage_metadata.total_token_count > 0
    judged = conversation(server, "What is the weather in Paris? (gemini)")
    assert [(v.provider, v.model, v.turn, v.status, v.problems) for v in judged] == [
        ("gemini", MODEL, 1, 200, ()), ("gemini", MODEL, 2, 200, ())]


def test_a_streamed_function_call_round(server, gemini):
    server.script(WEATHER_SCRIPT)
    config = types.GenerateContentConfig(tools=TOOLS)
    contents = [types.Content(role="user", parts=[types.Part(text="What is the weather in Paris? (gemini stream)")])]
    chunks = list(gemini.models.generate_content_stream(model=MODEL, contents=contents, config=config))
    parts = [p for c in chunks for p in c.candidates[0].content.parts]
    calls = [p.function_call for p in parts if p.function_call]
    assert [(c.name, c.args) for c in calls] == [("get_weather", {"city": "Paris"})]
    _answer_call(contents, types.Content(role="model", parts=parts))
    text = "".join(c.text or "" for c in gemini.models.generate_content_stream(
        model=MODEL, contents=contents, config=config))
    assert text == "It is sunny in Paris."
    judged = conversation(server, "What is the weather in Paris? (gemini stream)")
    assert [(v.stream, v.status, v.problems) for v in judged] == [(True, 200, ()), (True, 200, ())]


def test_an_empty_text_part_is_rejected(server, gemini):
    # By gemini-2.0 and older (G12 by model): gemini-2.5 and 3 were recorded taking one.
    server.script([])
    contents = [types.Content(role="user", parts=[types.Part(text="Hello (gemini empty)")]),
                types.Content(role="model", parts=[types.Part(text="")]),
                types.Content(role="user", parts=[types.Part(text="Again?")])]
    with pytest.raises(errors.ClientError, match="empty text parameter") as caught:
        gemini.models.generate_content(model="gemini-2.0-flash", contents=contents)
    assert caught.value.code == 400 and caught.value.status == "INVALID_ARGUMENT"


def test_a_stream_cut_mid_way_reaches_the_client_as_an_error(server, gemini):
    server.script([{"text": "A long answer that the connection drops in the middle of.", "cut_stream_after": 1}])
    # google-genai passes httpx's own error through while it reads a stream
    with pytest.raises(Exception, match="peer closed connection without sending complete message body"):
        list(gemini.models.generate_content_stream(model=MODEL, contents="Cut me off (gemini)."))


def test_count_tokens_embeddings_and_models_answer_not_judged(server, gemini):
    before = len(server.verdicts)
    assert gemini.models.count_tokens(model=MODEL, contents="How many tokens?").total_tokens > 0
    embedded = gemini.models.embed_content(model="text-embedding-004", contents=["same", "same", "other"])
    vectors = [e.values for e in embedded.embeddings]
    assert len(vectors) == 3 and vectors[0] == vectors[1] != vectors[2]
    assert gemini.models.get(model=MODEL).name == f"models/{MODEL}"
    assert [m.name for m in gemini.models.list()] == ["models/chatconform-serve"]
    served = [(v.provider, v.method, v.served, v.status) for v in server.verdicts[before:]]
    assert served == [("gemini", method, "not judged", 200) for method in ("POST", "POST", "GET", "GET")]
