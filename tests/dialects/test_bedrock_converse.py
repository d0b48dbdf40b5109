"""The Bedrock Converse dialect: its bodies read back as turns (the turn view), and what it answers."""

from __future__ import annotations

from chatconform.provider_schemas import Turn, turn_view


def test_a_body_reads_back_as_turns():
    body = {
        "system": [{"text": "be brief"}, {"cachePoint": {"type": "default"}}],
        "messages": [
            {"role": "user", "content": [{"text": "Weather?"}]},
            {
                "role": "assistant",
                "content": [
                    {"text": "Checking."},
                    {"toolUse": {"toolUseId": "b1", "name": "get_weather", "input": {}}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"toolResult": {"toolUseId": "b1", "content": [{"text": "21C"}, {"json": {"c": 21}}]}},
                    {"cachePoint": {"type": "default"}},
                ],
            },
            {"role": "assistant", "content": [{"text": "21C."}]},
        ],
    }
    assert turn_view(body, "bedrock-converse") == [
        Turn("system", ("be brief",), (), (), "$.system"),
        Turn("user", ("Weather?",), (), (), "$.messages[0]"),
        Turn("assistant", ("Checking.",), (("b1", "get_weather"),), (), "$.messages[1]"),
        Turn("tool", ("21C",), (), (("b1", "get_weather"),), "$.messages[2]"),
        Turn("assistant", ("21C.",), (), (), "$.messages[3]"),
    ]


def test_the_route_names_the_model_and_the_stream_and_an_error_names_the_exception():
    from chatconform.dialects.bedrock_converse import DIALECT
    from chatconform.dialects.http import RouteCall
    from chatconform.providers import get_provider

    plain, stream = DIALECT.routes
    assert DIALECT.route(plain, {"model_id": "nova"}, {}) == RouteCall(model="nova", stream=False)
    assert DIALECT.route(stream, {"model_id": "nova"}, {}) == RouteCall(model="nova", stream=True)
    error = DIALECT.error(429, "slow down", get_provider("bedrock-converse"))
    assert (error.status, error.body, dict(error.headers)) == (
        429, {"message": "slow down"}, {"x-amzn-ErrorType": "ThrottlingException"})


def test_an_image_link_goes_as_text_as_the_dialect_declares():
    from chatconform.dialects.base import Image, Text, Turn
    from chatconform.dialects.bedrock_converse import DIALECT
    from chatconform.providers import get_provider
    from chatconform.reference.payload import PayloadMapper

    turn = Turn("user", [Text("see"), Image("image/png", url="https://example.com/a.png")])
    body = DIALECT.render(PayloadMapper(), get_provider("bedrock-converse"), None, [turn])
    assert body["messages"][0]["content"] == [{"text": "see"}, {"text": "https://example.com/a.png"}]
    assert not DIALECT.takes_image_links  # what links_sent_as_text reads
