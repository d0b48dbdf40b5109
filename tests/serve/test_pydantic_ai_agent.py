"""A pydantic-ai ``Agent`` against ``chatconform serve``, offline: an agent with one tool, on
OpenAI chat, Anthropic and Google models pointed at the server, runs a scripted tool loop and
a second run on its own history, plain and streamed, every request judged clean; a body the
provider rejects (two system messages for Qwen on vLLM) and a scripted overload reach the
agent as pydantic-ai's ModelHTTPError with the provider's status and text."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pydantic_ai", reason="needs pydantic-ai (the pydantic-ai extra)")

from pydantic_ai import Agent
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelRequest, ModelResponse, SystemPromptPart, TextPart, UserPromptPart

from tests.serve.helpers import conversation

pytestmark = pytest.mark.serve

#: Two tool rounds (the first with thinking), the answer, then the answer to a second run.
SCRIPT = [
    {"thinking": "The user wants two cities; one call at a time.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Rome"}}]},
    {"text": "Sunny in Paris and in Rome."},
    {"text": "Still sunny."},
]


def model(server, provider: str):
    """The pydantic-ai model for ``provider``, its base URL the server's route."""
    base_url = server.base_url(provider)
    if provider == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        return AnthropicModel("claude-sonnet-4-5", provider=AnthropicProvider(base_url=base_url, api_key="test"))
    if provider == "gemini":
        from pydantic_ai.models.google import GoogleModel
        from pydantic_ai.providers.google import GoogleProvider

        return GoogleModel("gemini-2.5-flash", provider=GoogleProvider(base_url=base_url, api_key="test"))
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    name = "Qwen/Qwen3.5-27B" if provider == "qwen-vllm" else "gpt-4o"
    return OpenAIChatModel(name, provider=OpenAIProvider(base_url=base_url, api_key="test"))


def weather_agent(server, provider: str, cities: list[str]) -> Agent:
    agent = Agent(model(server, provider), instructions="Answer briefly.")

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The weather in a city."""
        cities.append(city)
        return f"sunny in {city}"

    return agent


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("provider", ["openai-chat", "anthropic", "gemini"])
def test_a_tool_loop_then_a_second_run_on_its_history(server, provider, stream):
    server.script(SCRIPT)
    cities: list[str] = []
    agent = weather_agent(server, provider, cities)
    prompt = f"What is the weather in Paris and Rome? (agent, {provider}, {'stream' if stream else 'plain'})"
    if stream:
        with agent.run_stream_sync(prompt) as run:
            assert run.get_output() == "Sunny in Paris and in Rome."
        history = run.all_messages()
    else:
        result = agent.run_sync(prompt)
        assert result.output == "Sunny in Paris and in Rome."
        history = result.all_messages()
    assert cities == ["Paris", "Rome"]
    assert agent.run_sync("And now?", message_history=history).output == "Still sunny."

    judged = conversation(server, prompt)
    assert [(v.provider, v.turn, v.status) for v in judged] == [(provider, turn, 200) for turn in (1, 2, 3, 4)]
    assert [p for v in judged for p in v.problems if p.severity == "error"] == []
    assert "sunny in Rome" in json.dumps(judged[2].body)  # the tool's results went back


def test_a_rejected_body_reaches_the_agent_as_the_providers_error(server):
    server.script([])
    history = [ModelRequest(parts=[SystemPromptPart("Be brief."), UserPromptPart("Hi (agent, qwen)")]),
               ModelResponse(parts=[TextPart("Hello.")]),
               ModelRequest(parts=[SystemPromptPart("Summary of earlier turns.")])]
    with pytest.raises(ModelHTTPError) as caught:
        Agent(model(server, "qwen-vllm")).run_sync("Again?", message_history=history)
    assert caught.value.status_code == 400
    assert caught.value.body == {"message": "System message must be at the beginning.",
                                 "type": "invalid_request_error", "param": None, "code": None}
    [verdict] = conversation(server, "Hi (agent, qwen)")
    assert verdict.answered == "rejected" and [p.rule for p in verdict.problems] == ["Q3"]


def test_a_scripted_overload_reaches_the_agent_with_its_status(server):
    from anthropic import AsyncAnthropic
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    server.script([{"status": 529, "message": "Overloaded"}])
    client = AsyncAnthropic(base_url=server.base_url("anthropic"), api_key="test", max_retries=0)  # 529 is retried
    agent = Agent(AnthropicModel("claude-sonnet-4-5", provider=AnthropicProvider(anthropic_client=client)))
    with pytest.raises(ModelHTTPError) as caught:
        agent.run_sync("Busy? (agent, anthropic)")
    assert caught.value.status_code == 529 and "Overloaded" in str(caught.value.body)


@pytest.mark.parametrize("provider", ["openai-chat", "anthropic", "gemini"])
def test_the_same_agent_run_twice_gets_the_script_twice(server, provider):
    """A second run of the application is no continuation of the first: it meets the script's
    replies again, each request asking a turn asked before."""
    server.script(SCRIPT)
    prompt = f"What is the weather in Paris and Rome? (agent twice, {provider})"
    for _ in range(2):
        cities: list[str] = []
        assert weather_agent(server, provider, cities).run_sync(prompt).output == "Sunny in Paris and in Rome."
        assert cities == ["Paris", "Rome"]
    judged = conversation(server, prompt)
    assert [(v.turn, v.entry, v.status) for v in judged] == [(turn, turn, 200) for turn in (1, 2, 3)] * 2
    # the second run's first request asks the first's turn again; its later ones do too, but
    # for Gemini, whose calls have no ids of the server's, pydantic-ai makes new ids each run
    assert [v.again for v in judged[3:]] == [True, provider != "gemini", provider != "gemini"]


def test_an_sdk_retry_after_an_overload_meets_the_next_entry(server):
    from anthropic import AsyncAnthropic
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    server.script([{"status": 529, "message": "Overloaded"}, {"text": "Here after a retry."}])
    client = AsyncAnthropic(base_url=server.base_url("anthropic"), api_key="test", max_retries=2)
    agent = Agent(AnthropicModel("claude-sonnet-4-5", provider=AnthropicProvider(anthropic_client=client)))
    assert agent.run_sync("Busy? (agent retried)").output == "Here after a retry."
    assert [(v.turn, v.entry, v.status) for v in conversation(server, "Busy? (agent retried)")] == [
        (1, 1, 529), (1, 2, 200)]


#: SCRIPT as Claude answers with thinking on: every reply starts with its thinking.
THINKING_SCRIPT = [SCRIPT[0], {"thinking": "Now Rome.", **SCRIPT[1]}, *SCRIPT[2:]]


def _thinking_agent(server, cities: list[str]) -> Agent:
    """The weather agent on Claude with thinking on (a budget under max_tokens)."""
    from pydantic_ai.models.anthropic import AnthropicModelSettings

    agent = weather_agent(server, "anthropic", cities)
    agent.model_settings = AnthropicModelSettings(
        max_tokens=2048, anthropic_thinking={"type": "enabled", "budget_tokens": 1024})
    return agent


def test_an_agent_with_thinking_on_keeps_its_thinking_across_requests(server):
    server.script(THINKING_SCRIPT)
    cities: list[str] = []
    agent = _thinking_agent(server, cities)
    prompt = "What is the weather in Paris and Rome? (agent, anthropic thinking)"
    result = agent.run_sync(prompt)
    assert result.output == "Sunny in Paris and in Rome." and cities == ["Paris", "Rome"]
    assert agent.run_sync("And now?", message_history=result.all_messages()).output == "Still sunny."
    judged = conversation(server, prompt)
    assert [v.status for v in judged] == [200] * 4
    assert [p for v in judged for p in v.problems if p.severity == "error"] == []
    assert '"thinking": {"type": "enabled"' in json.dumps(judged[1].body)  # the setting went out


#: A history's thinking dropped (A20, judged in the body alone) or rewritten (A23, judged against
#: the answer that returned it), and the text Anthropic answers each with.
EDITS = {"dropped": ("A20", "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
                            "`tool_use`"),
         "changed": ("A23", "messages.1.content.0: `thinking` or `redacted_thinking` blocks in the latest assistant "
                            "message cannot be modified")}


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_agent_history_with_its_thinking_edited_gets_anthropics_error(server, edit):
    from dataclasses import replace

    from pydantic_ai.messages import ThinkingPart

    server.script([SCRIPT[0], {"text": "Sunny in Paris."}])
    agent = _thinking_agent(server, [])
    prompt = f"What is the weather in Paris? (agent, anthropic thinking {edit})"
    history = agent.run_sync(prompt).all_messages()[:3]  # the question, the call, its result
    kept = history[1].parts
    parts = ([p for p in kept if not isinstance(p, ThinkingPart)] if edit == "dropped" else
             [replace(p, content=p.content + " (summarised)") if isinstance(p, ThinkingPart) else p for p in kept])
    assert parts != kept
    with pytest.raises(ModelHTTPError) as caught:
        agent.run_sync(None, message_history=[history[0], replace(history[1], parts=parts), history[2]])
    rule, text = EDITS[edit]
    assert caught.value.status_code == 400 and text in caught.value.body["error"]["message"]
    assert [p.rule for p in conversation(server, prompt)[-1].problems if p.severity == "error"] == [rule]
