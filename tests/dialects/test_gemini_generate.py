"""The Gemini generateContent dialect: its bodies read back as turns (the turn view), and what it answers."""

from __future__ import annotations

from chatconform.provider_schemas import Turn, turn_view


def test_a_body_reads_back_as_turns():
    body = {
        "systemInstruction": {"parts": [{"text": "be brief"}]},
        "contents": [
            {"role": "user", "parts": [{"text": "Weather?"}]},
            {
                "role": "model",
                "parts": [
                    {"text": "thinking...", "thought": True},
                    {"text": "Checking."},
                    {"functionCall": {"name": "get_weather", "args": {}, "id": "g1"}, "thoughtSignature": "c2ln"},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"function_response": {"name": "get_weather", "response": {"result": "21C", "n": 1}, "id": "g1"}},
                ],
            },
            {
                "parts": [
                    {"functionResponse": {"name": "get_weather", "response": {"output": ["a", {"b": "c"}]}}},
                    {"text": "thanks"},
                ],
            },
        ],
    }
    assert turn_view(body, "gemini") == [
        Turn("system", ("be brief",), (), (), "$.systemInstruction"),
        Turn("user", ("Weather?",), (), (), "$.contents[0]"),
        Turn("assistant", ("Checking.",), (("g1", "get_weather"),), (), "$.contents[1]",
             reasoning=('{"on":"functionCall","thoughtSignature":"c2ln"}',)),
        Turn("tool", ("21C",), (), (("g1", "get_weather"),), "$.contents[2]"),
        Turn("user", ("a", "c", "thanks"), (), (("", "get_weather"),), "$.contents[3]"),
    ]
    snake = {"system_instruction": {"parts": [{"text": "be brief"}]}, "contents": []}
    assert turn_view(snake, "gemini") == [Turn("system", ("be brief",), (), (), "$.system_instruction")]


def test_the_route_names_the_model_and_the_method():
    from chatconform.dialects.gemini_generate import DIALECT
    from chatconform.dialects.http import Answer, RouteCall

    path = DIALECT.routes[0]
    assert DIALECT.route(path, {"model": "g", "method": "streamGenerateContent"}, {"alt": "sse"}) == RouteCall(
        model="g", stream=True, sse=True)
    assert DIALECT.route(path, {"model": "g", "method": "generateContent"}, {}) == RouteCall(
        model="g", stream=False, sse=False)
    assert DIALECT.route(path, {"model": "g", "method": "countTokens"}, {}) == RouteCall(
        model="g", stream=False, judged=False)  # answered by canned, not judged
    unknown = DIALECT.route(path, {"model": "g", "method": "generateAnswer"}, {})
    assert isinstance(unknown, Answer) and unknown.status == 404
    assert unknown.body["error"]["status"] == "NOT_FOUND"


def test_a_stream_without_sse_is_one_json_array_of_chunks():
    from chatconform.dialects.gemini_generate import DIALECT
    from chatconform.dialects.http import Context, Reply
    from chatconform.providers import get_provider

    answer = DIALECT.answer(Reply(text="x" * 40), Context(get_provider("gemini"), "m", "conv", 1, True, sse=False))
    assert answer.chunks is None and isinstance(answer.body, list) and len(answer.body) == 3
    assert answer.body[-1]["candidates"][0]["finishReason"] == "STOP"
