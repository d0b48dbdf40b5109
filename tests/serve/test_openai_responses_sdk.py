"""The openai SDK's ``client.responses.create`` against ``chatconform serve``, offline: a tool
round with reasoning replayed statelessly (plain and streamed), continued by
``previous_response_id``, and the API's rejections as the SDK's BadRequestError: a returned
call sent back without its reasoning item (X7), an unknown previous response (X8); and the OpenAI
Agents SDK's default model (OpenAIResponsesModel) in a two-turn tool conversation with reasoning,
clean, and with its reasoning items dropped, rejected."""

from __future__ import annotations

import pytest

openai = pytest.importorskip("openai", reason="needs the openai SDK (the pydantic-ai extra)")

from tests.serve.helpers import WEATHER_SCRIPT, conversation  # noqa: E402

pytestmark = pytest.mark.serve

TOOLS = [{"type": "function", "name": "get_weather", "description": "The weather in a city.",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]
PROVIDER = "openai-responses"


def client(server):
    return openai.OpenAI(base_url=server.base_url(PROVIDER), api_key="test", max_retries=0, timeout=10)


def _items(response) -> list[dict]:
    """A response's output as the input items a client sends back (what the SDK docs show)."""
    return [item.model_dump(exclude_none=True) for item in response.output]


def _output(call) -> dict:
    return {"type": "function_call_output", "call_id": call["call_id"], "output": "sunny"}


def test_a_stateless_tool_round_with_reasoning(server):
    server.script(WEATHER_SCRIPT)
    text = "What is the weather in Paris? (responses)"
    items: list = [{"role": "user", "content": text}]
    first = client(server).responses.create(model="gpt-5", input=items, tools=TOOLS, store=False,
                                            include=["reasoning.encrypted_content"])
    assert [item.type for item in first.output] == ["reasoning", "function_call"]
    assert first.output[0].encrypted_content and first.output[1].name == "get_weather"
    items += _items(first)
    items.append(_output(items[-1]))
    second = client(server).responses.create(model="gpt-5", input=items, tools=TOOLS, store=False,
                                             include=["reasoning.encrypted_content"])
    assert second.output_text == "It is sunny in Paris."
    assert [(v.turn, v.status, v.problems) for v in conversation(server, text)] == [(1, 200, ()), (2, 200, ())]


def test_a_streamed_tool_round(server):
    server.script(WEATHER_SCRIPT)
    text = "What is the weather in Paris? (responses, streamed)"
    items: list = [{"role": "user", "content": text}]
    events = list(client(server).responses.create(model="gpt-5", input=items, tools=TOOLS, stream=True,
                                                  store=False, include=["reasoning.encrypted_content"]))
    kinds = [event.type for event in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert "response.function_call_arguments.delta" in kinds and "response.output_item.done" in kinds
    items += _items(events[-1].response)
    items.append(_output(items[-1]))
    with client(server).responses.stream(model="gpt-5", input=items, tools=TOOLS, store=False) as stream:
        final = stream.get_final_response()
    assert final.output_text == "It is sunny in Paris."
    assert [(v.turn, v.stream, v.status) for v in conversation(server, text)] == [(1, True, 200), (2, True, 200)]


def test_previous_response_id_continues_the_servers_own_response(server):
    server.script(WEATHER_SCRIPT)
    text = "What is the weather in Paris? (continued)"
    first = client(server).responses.create(model="gpt-5", input=text, tools=TOOLS)
    call = _items(first)[-1]
    second = client(server).responses.create(model="gpt-5", previous_response_id=first.id, input=[_output(call)],
                                             tools=TOOLS)
    assert second.output_text == "It is sunny in Paris." and second.previous_response_id == first.id
    # Judged as the API reads it: the stored response's items, then the output; one conversation.
    assert [(v.turn, v.status) for v in conversation(server, text)] == [(1, 200), (2, 200)]
    with pytest.raises(openai.BadRequestError, match=r"No tool output found for function call"):
        client(server).responses.create(model="gpt-5", previous_response_id=first.id, input="And tomorrow?")
    with pytest.raises(openai.BadRequestError) as unknown:
        client(server).responses.create(model="gpt-5", previous_response_id="resp_unknown", input="Hi")
    assert unknown.value.body["message"] == "Previous response with id 'resp_unknown' not found."


def test_a_stored_free_response_cannot_be_continued(server):
    server.script([])
    first = client(server).responses.create(model="gpt-5", input="Hello (not stored)", store=False)
    with pytest.raises(openai.BadRequestError, match=f"Previous response with id '{first.id}' not found."):
        client(server).responses.create(model="gpt-5", previous_response_id=first.id, input="Again")


def test_a_returned_call_sent_back_without_its_reasoning_item_is_rejected(server):
    """The bug of openai-agents-python #1660 and vercel/ai #7099: the function call the API
    returned goes back with its id, the reasoning item before it dropped."""
    server.script(WEATHER_SCRIPT)
    text = "What is the weather in Paris? (reasoning dropped)"
    first = client(server).responses.create(model="gpt-5", input=text, tools=TOOLS)
    reasoning, call = _items(first)
    dropped = [{"role": "user", "content": text}, call, _output(call)]
    with pytest.raises(openai.BadRequestError) as rejected:
        client(server).responses.create(model="gpt-5", input=dropped, tools=TOOLS)
    assert rejected.value.body["message"] == (
        f"Item '{call['id']}' of type 'function_call' was provided without its required 'reasoning' item: "
        f"'{reasoning['id']}'.")
    verdicts = conversation(server, text)
    assert [(v.status, [p.rule for p in v.problems]) for v in verdicts] == [(200, []), (400, ["X7"])]


def test_input_tokens_are_counted_and_recorded_as_not_judged(server):
    counted = client(server).responses.input_tokens.count(model="gpt-5", input="How many tokens? (counted)")
    assert counted.object == "response.input_tokens" and counted.input_tokens > 0
    last = server.verdicts[-1]
    assert (last.provider, last.route, last.status, last.served) == (
        PROVIDER, "/v1/responses/input_tokens", 200, "not judged")


#: Two turns of the Agents SDK test: each a call with reasoning, then the answer.
AGENT_SCRIPT = [*WEATHER_SCRIPT,
                {"thinking": "Now Rome.", "tool_calls": [{"name": "get_weather", "arguments": {"city": "Rome"}}]},
                {"text": "It is sunny in Rome too."}]


def _agent_turns(server, first: str, *, keep_reasoning: bool) -> list:
    """The OpenAI Agents SDK's default model (``OpenAIResponsesModel``) in two turns, the second
    sent with the first's items (``to_input_list``), with or without its reasoning items."""
    pytest.importorskip("agents", reason="needs the OpenAI Agents SDK (openai-agents)")
    import asyncio

    from agents import Agent, Runner, function_tool, set_tracing_disabled
    from agents.models.openai_responses import OpenAIResponsesModel

    set_tracing_disabled(True)
    openai_client = openai.AsyncOpenAI(base_url=server.base_url(PROVIDER), api_key="test", max_retries=0)

    def get_weather(city: str) -> str:
        """The weather in a city."""
        return "sunny"

    agent = Agent(name="weather", instructions="Be brief.", model=OpenAIResponsesModel("gpt-5", openai_client),
                  tools=[function_tool(get_weather)])

    async def converse() -> list:
        outputs, items = [], []
        for prompt in (first, "And in Rome?"):
            if not keep_reasoning:
                items = [item for item in items if item.get("type") != "reasoning"]
            result = await Runner.run(agent, [*items, {"role": "user", "content": prompt}])
            outputs.append(result.final_output)
            items = result.to_input_list()
        return outputs

    return asyncio.run(converse())


def test_the_agents_sdk_default_model_holds_a_tool_conversation_with_reasoning(server):
    server.script(AGENT_SCRIPT)
    text = "What is the weather in Paris? (agents sdk)"
    assert _agent_turns(server, text, keep_reasoning=True) == ["It is sunny in Paris.", "It is sunny in Rome too."]
    verdicts = conversation(server, text)
    assert [(v.status, v.problems) for v in verdicts] == [(200, ())] * 4


def test_the_agents_sdk_history_without_its_reasoning_items_gets_the_apis_error(server):
    """openai-agents-python #1660: the returned calls go back with their ids, their reasoning dropped."""
    server.script(AGENT_SCRIPT)
    text = "What is the weather in Paris? (agents sdk, reasoning dropped)"
    with pytest.raises(openai.BadRequestError, match=r"was provided without its required 'reasoning' item"):
        _agent_turns(server, text, keep_reasoning=False)
    verdicts = conversation(server, text)
    assert [(v.status, [p.rule for p in v.problems]) for v in verdicts][-1] == (400, ["X7"])
