"""The OpenAI Responses dialect: its bodies read back as turns, what the reference sends of
OpenAI's reasoning, what a route asks for, its answers (plain and streamed) and its error body."""

from __future__ import annotations

import json

from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from chatconform.dialects.http import Context, Reply, RouteCall, ToolCall
from chatconform.dialects.openai_responses import DIALECT, ENCRYPTED_CONTENT, output_items
from chatconform.provider_schemas import Turn, replay_problems, validate
from chatconform.provider_schemas.turns import turn_view
from chatconform.providers import get_provider
from chatconform.reference.payload import to_payload

PROVIDER = "openai-responses"


def test_a_body_reads_back_as_turns():
    body = {
        "instructions": "be brief",
        "input": [
            {"role": "developer", "content": "use metric"},
            {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "Weather?"}, {"type": "input_image", "image_url": "https://x/a.png"}]},
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
            {"role": "assistant", "content": [{"type": "output_text", "text": "Let me check."}]},
            {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{}"},
            {"type": "function_call", "call_id": "c2", "name": "get_time", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "21C"},
            {"type": "function_call_output", "call_id": "c2", "output": '{"error": "no clock"}'},
            {"type": "item_reference", "id": "msg_9"},
            {"role": "user", "content": "Thanks"},
        ],
    }
    assert turn_view(body, PROVIDER) == [
        Turn("system", ("be brief",), (), (), "$.instructions"),
        Turn("system", ("use metric",), (), (), "$.input[0]"),
        Turn("user", ("Weather?",), (), (), "$.input[1]", ("https://x/a.png",)),
        Turn("assistant", ("Let me check.",), (("c1", "get_weather"), ("c2", "get_time")), (), "$.input[2]",
             reasoning=('{"encrypted_content":"gAAA","id":"rs_1","summary":[],"type":"reasoning"}',)),
        Turn("tool", ("21C", '{"error": "no clock"}'), (), (("c1", "get_weather"), ("c2", "get_time")),
             "$.input[6]", error_results=(1,)),
        Turn("user", ("Thanks",), (), (), "$.input[9]"),
    ]
    assert turn_view({"input": "Just text"}, PROVIDER) == [Turn("user", ("Just text",), (), (), "$.input")]


HISTORY = [
    ModelRequest(parts=[SystemPromptPart("Be brief"), UserPromptPart("Weather?")]),
    ModelResponse(parts=[ThinkingPart("Look it up", id="rs_1", signature="ENC", provider_name="openai"),
                         ThinkingPart("in Paris", id="rs_1", provider_name="openai"),
                         ToolCallPart("get_weather", {"city": "Paris"}, "c1")]),
    ModelRequest(parts=[ToolReturnPart("get_weather", "sunny", "c1")]),
    # Cancelled while reasoning: nothing followed the reasoning item.
    ModelResponse(parts=[ThinkingPart("Hmm", id="rs_2", signature="ENC2", provider_name="openai")]),
    ModelRequest(parts=[UserPromptPart("And tomorrow?")]),
    # Another provider's thinking, and OpenAI's without its encrypted content.
    ModelResponse(parts=[ThinkingPart("claude thought", signature="sig", provider_name="anthropic"),
                         ThinkingPart("no content", id="rs_3", provider_name="openai"), TextPart("Rain.")]),
]


def test_the_reference_replays_openais_reasoning_with_its_following_item_and_stores_nothing():
    body = to_payload(HISTORY, provider=PROVIDER, model="gpt-5", reasoning=True)
    assert body["instructions"] == "Be brief" and body["store"] is False and body["include"] == [ENCRYPTED_CONTENT]
    assert body["input"] == [
        {"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
        {"type": "reasoning", "id": "rs_1", "encrypted_content": "ENC", "summary": [
            {"type": "summary_text", "text": "Look it up"}, {"type": "summary_text", "text": "in Paris"}]},
        {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": '{"city":"Paris"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
        {"role": "user", "content": [{"type": "input_text", "text": "And tomorrow?"}]},
        {"role": "assistant", "content": "Rain."},
    ]
    assert validate(body, PROVIDER) == []


def test_reasoning_is_replayed_only_with_the_requests_reasoning_on():
    for reasoning in (None, False):
        body = to_payload(HISTORY, provider=PROVIDER, model="gpt-5", reasoning=reasoning)
        assert "include" not in body and not [item for item in body["input"] if item.get("type") == "reasoning"]


def test_a_history_without_openai_reasoning_asks_for_no_encrypted_content():
    body = to_payload(HISTORY[:1], provider=PROVIDER, instructions="Answer in French")
    assert body == {"instructions": "Be brief\n\nAnswer in French", "store": False,
                    "input": [{"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]}]}


def _context(*, stream: bool, include: bool = True) -> Context:
    request = {"include": [ENCRYPTED_CONTENT]} if include else {}
    return Context(get_provider(PROVIDER), "gpt-5", "c0ffee", 2, stream, request=request)


REPLY = Reply(text="Sunny in Paris, checking more.", thinking="The user wants weather",
              tool_calls=(ToolCall("get_weather", {"city": "Paris"}, id="call_9"),))


def test_an_answer_holds_reasoning_text_and_calls_in_the_sdks_shape():
    from openai.types.responses import Response

    body = DIALECT.answer(REPLY, _context(stream=False)).body
    response = Response.model_validate(body)
    kinds = [item.type for item in response.output]
    assert kinds == ["reasoning", "message", "function_call"]
    assert response.output[0].encrypted_content and response.output[2].call_id == "call_9"
    assert response.output_text == "Sunny in Paris, checking more."
    hidden = DIALECT.answer(REPLY, _context(stream=False, include=False)).body
    assert hidden["output"][0]["encrypted_content"] is None  # only when `include` asks for it


def test_a_stream_is_the_sdks_events_and_ends_with_the_whole_response():
    from openai.types.responses import ResponseStreamEvent
    from pydantic import TypeAdapter

    chunks = DIALECT.answer(REPLY, _context(stream=True)).chunks
    assert chunks
    events = [TypeAdapter(ResponseStreamEvent).validate_python(json.loads(chunk.split(b"data: ", 1)[1]))
              for chunk in chunks]
    kinds = [event.type for event in events]
    assert kinds[:2] == ["response.created", "response.in_progress"] and kinds[-1] == "response.completed"
    for kind in ("response.output_item.added", "response.output_text.delta",
                 "response.function_call_arguments.delta", "response.output_item.done",
                 "response.reasoning_summary_text.delta"):
        assert kind in kinds
    assert [e.sequence_number for e in events] == list(range(len(events)))
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == REPLY.text and len(events[-1].response.output) == 3


def test_a_route_reads_the_stream_from_the_body_and_an_error_is_openais():
    assert DIALECT.route("/v1/responses", {}, {}) == RouteCall()
    answer = DIALECT.error(400, "No tool output found for function call c1.", get_provider(PROVIDER))
    assert answer.status == 400 and answer.body["error"]["message"] == "No tool output found for function call c1."
    assert answer.body["error"]["type"] == "invalid_request_error"


def test_an_item_returned_after_reasoning_comes_back_with_it():
    """X7, across requests: the function call the API returned after its reasoning item, sent
    back by its id without that reasoning item; the same call without its id is a new item."""
    answer = json.dumps({"output": output_items(REPLY, _context(stream=False))})
    call = output_items(REPLY, _context(stream=False))[2]
    dropped = {"input": [{"role": "user", "content": "Weather?"}, call,
                         {"type": "function_call_output", "call_id": "call_9", "output": "sunny"}]}
    (problem,) = replay_problems(dropped, PROVIDER, None, [answer])
    reasoning = output_items(REPLY, _context(stream=False))[0]["id"]
    assert (problem.rule, problem.path, problem.message) == (
        "X7", "$.input[1]",
        f"Item '{call['id']}' of type 'function_call' was provided without its required 'reasoning' item: "
        f"'{reasoning}'.")
    kept = {"input": [dropped["input"][0], output_items(REPLY, _context(stream=False))[0], *dropped["input"][1:]]}
    assert replay_problems(kept, PROVIDER, None, [answer]) == []
    anonymous = {"input": [dropped["input"][0], {k: v for k, v in call.items() if k != "id"}, dropped["input"][2]]}
    assert replay_problems(anonymous, PROVIDER, None, [answer]) == []


def test_of_two_reasoning_items_in_a_row_only_the_one_before_the_text_is_sent():
    history = [ModelRequest(parts=[UserPromptPart("Weather?")]),
               ModelResponse(parts=[ThinkingPart("first", id="rs_a", signature="EA", provider_name="openai"),
                                    ThinkingPart("second", id="rs_b", signature="EB", provider_name="openai"),
                                    TextPart("Sunny.")])]
    body = to_payload(history, provider=PROVIDER, model="gpt-5", reasoning=True)
    assert [item.get("id") for item in body["input"] if item.get("type") == "reasoning"] == ["rs_b"]
    assert validate(body, PROVIDER) == []


def test_audio_sent_as_input_audio_is_read_as_sent():
    """The reference sends no audio on this API, but a mapper that sends ``input_audio`` has
    not lost it: payload.nothing_lost reads it as the bytes it holds."""
    body = {"model": "gpt-5", "input": [{"role": "user", "content": [
        {"type": "input_text", "text": "Listen (u1)"},
        {"type": "input_audio", "input_audio": {"data": "UklGRiQAAABXQVZF", "format": "wav"}}]}]}
    (turn,) = turn_view(body, PROVIDER)
    assert turn.media == ("UklGRiQAAABXQVZF",) and turn.inline == (0,)
