"""Whole frameworks against one ``chatconform serve``: pydantic-ai, the OpenAI Agents SDK,
LangChain's ``create_agent`` and litellm (each where it is installed) hold a five-turn tool
conversation, twice, under a script and under drawn replies (seeded, interruptions included).
Every reply reaches the application as scripted or drawn (the tools run with the arguments
sent, each turn's answer is the reply's text), no request is rejected for what the server
itself sent, and every request the application made is in the report."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable

import pytest

httpx = pytest.importorskip("httpx", reason="the serve tests post with httpx (a dependency of the SDK extras)")
pytest.importorskip("starlette", reason="chatconform serve needs the serve extra (starlette, uvicorn)")
pytest.importorskip("openai", reason="every framework here reaches the server through the openai SDK")

from chatconform.serve import start  # noqa: E402

pytestmark = pytest.mark.serve

PROMPTS = [f"Turn {n}: plan the trip ({{framework}}, {{mode}})" for n in range(1, 6)]
#: Each turn: a call (parallel calls in the second), then the answer.
SCRIPT = [
    {"thinking": "Look it up.", "tool_calls": [{"name": "forecast", "arguments": {"city": "Paris", "days": 2}}]},
    {"text": "Answer 1"},
    {"tool_calls": [{"name": "forecast", "arguments": {"city": "Rome", "days": 1}}, {"name": "now", "arguments": {}}]},
    {"text": "Answer 2"},
    {"tool_calls": [{"name": "now", "arguments": {}}]},
    {"text": "Answer 3"},
    {"text": "Answer 4"},
    {"tool_calls": [{"name": "forecast", "arguments": {"city": "Oslo", "days": 7}}]},
    {"text": "Answer 5"},
]


class App:
    """What the application saw: each tool call it ran, each request it sent."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, dict]] = []
        self.sent = 0

    def forecast(self, city: str, days: int) -> str:
        self.ran.append(("forecast", {"city": city, "days": days}))
        return f"sunny in {city} for {days} days"

    def now(self) -> str:
        self.ran.append(("now", {}))
        return "noon"

    def http_client(self) -> httpx.AsyncClient:
        async def count(request: httpx.Request) -> None:
            self.sent += 1

        return httpx.AsyncClient(event_hooks={"request": [count]}, timeout=30)


def with_pydantic_ai(base_url: str, app: App, prompts: list[str]) -> list[str]:
    pytest.importorskip("pydantic_ai", reason="needs pydantic-ai (the pydantic-ai extra)")
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    client = AsyncOpenAI(base_url=base_url, api_key="test", http_client=app.http_client())
    agent = Agent(OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=client)), instructions="Be brief.",
                  tools=[app.forecast, app.now])
    outputs, history = [], None
    for prompt in prompts:
        result = agent.run_sync(prompt, message_history=history)
        outputs.append(result.output)
        history = result.all_messages()
    return outputs


def with_openai_agents(base_url: str, app: App, prompts: list[str]) -> list[str]:
    pytest.importorskip("agents", reason="needs the OpenAI Agents SDK (openai-agents)")
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=base_url, api_key="test", http_client=app.http_client())

    def forecast(city: str, days: int) -> str:
        """The forecast for a city over some days."""
        return app.forecast(city, days)

    def now() -> str:
        """The time now."""
        return app.now()

    agent = Agent(name="planner", instructions="Be brief.", model=OpenAIChatCompletionsModel("gpt-4o", client),
                  tools=[function_tool(forecast), function_tool(now)])

    async def converse() -> list[str]:
        outputs, items = [], []
        for prompt in prompts:
            result = await Runner.run(agent, [*items, {"role": "user", "content": prompt}])
            outputs.append(result.final_output)
            items = result.to_input_list()
        return outputs

    return asyncio.run(converse())


def with_langchain(base_url: str, app: App, prompts: list[str]) -> list[str]:
    """LangChain's agent (``create_agent``, LangChain 1.0 and later) on ``ChatOpenAI``: each turn
    is the conversation so far plus the prompt, as a chat application keeps it."""
    pytest.importorskip("langchain.agents", reason="needs langchain 1.0 or newer (create_agent)")
    pytest.importorskip("langchain_openai", reason="needs langchain-openai (the langchain-openai extra)")
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    @tool
    def forecast(city: str, days: int) -> str:
        """The forecast for a city over some days."""
        return app.forecast(city, days)

    @tool
    def now() -> str:
        """The time now."""
        return app.now()

    model = ChatOpenAI(model="gpt-4o", base_url=base_url, api_key="test",  # type: ignore[arg-type]
                       http_async_client=app.http_client())
    agent = create_agent(model, tools=[forecast, now], system_prompt="Be brief.")

    async def converse() -> list[str]:
        outputs: list[str] = []
        messages: list = []
        for prompt in prompts:
            state = await agent.ainvoke({"messages": [*messages, {"role": "user", "content": prompt}]})
            messages = state["messages"]
            outputs.append(messages[-1].content)
        return outputs

    return asyncio.run(converse())


def with_litellm(base_url: str, app: App, prompts: list[str]) -> list[str]:
    """litellm is a client, not an agent: the loop is the application's own, as litellm's docs
    show it (call, run each tool, send the results, until an answer without calls)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # its bundled price table: no download
    litellm = pytest.importorskip("litellm", reason="needs litellm")
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key="test", http_client=app.http_client())
    run: dict[str, Callable[..., str]] = {"forecast": app.forecast, "now": app.now}
    tools = [{"type": "function", "function": {"name": "forecast", "parameters": {
                 "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                 "required": ["city", "days"]}}},
             {"type": "function", "function": {"name": "now", "parameters": {"type": "object", "properties": {}}}}]

    async def converse() -> list[str]:
        messages: list = [{"role": "system", "content": "Be brief."}]
        outputs = []
        for prompt in prompts:
            messages.append({"role": "user", "content": prompt})
            while True:
                response = await litellm.acompletion(model="openai/gpt-4o", messages=messages, tools=tools,
                                                     client=client)
                message = response.choices[0].message
                messages.append(message.model_dump(exclude_none=True))
                if not message.tool_calls:
                    outputs.append(message.content)
                    break
                for call in message.tool_calls:
                    result = run[call.function.name](**json.loads(call.function.arguments))
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        return outputs

    return asyncio.run(converse())


FRAMEWORKS = {"pydantic-ai": with_pydantic_ai, "openai-agents": with_openai_agents, "langchain": with_langchain,
              "litellm": with_litellm}


def twice(framework: str, mode: str, endpoint) -> tuple[App, list[list[str]]]:
    """The framework's five-turn conversation, run twice against ``endpoint``."""
    app = App()
    prompts = [p.format(framework=framework, mode=mode) for p in PROMPTS]
    runs = [FRAMEWORKS[framework](endpoint.base_url("openai-chat"), app, prompts) for _ in range(2)]
    return app, runs


def report_lines(path, kind: str) -> list[dict]:
    """The report's lines of ``kind``: JSON lines split at newlines alone (a drawn text may
    hold U+2028, which ``str.splitlines`` also splits at)."""
    return [line for line in map(json.loads, filter(None, path.read_text().split("\n"))) if line["type"] == kind]


def canonical(call: tuple[str, dict]) -> str:
    return json.dumps(call, sort_keys=True)


def assert_no_rejection(endpoint) -> None:
    assert [(v.number, p.rule, p.message) for v in endpoint.verdicts for p in v.problems if p.severity == "error"] \
        == []


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_scripted_five_turn_tool_conversation_twice(framework, tmp_path):
    endpoint = start(script=SCRIPT, report=tmp_path / "serve.jsonl", version="test")
    try:
        app, runs = twice(framework, "script", endpoint)
    finally:
        endpoint.stop()
    assert runs == [[f"Answer {n}" for n in range(1, 6)]] * 2
    calls = [(c["name"], c["arguments"]) for entry in SCRIPT for c in entry.get("tool_calls", ())]
    assert sorted(map(canonical, app.ran)) == sorted(map(canonical, calls * 2))  # a reply's calls in any order
    assert_no_rejection(endpoint)
    # the second run asks every turn of the first again: the same entries, none used up
    entries = [v.entry for v in endpoint.verdicts]
    assert entries == list(range(1, 10)) * 2 and [v.again for v in endpoint.verdicts] == [False] * 9 + [True] * 9
    assert len(report_lines(tmp_path / "serve.jsonl", "request")) == app.sent == 18


@pytest.mark.slow
@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("seed", [5, 13, 21])  # each draws an interruption for every framework
def test_a_drawn_five_turn_tool_conversation_twice(framework, seed, tmp_path):
    """Drawn replies, interruptions among them: a busy status, a cut or dropped answer, which
    the openai SDK retries (the retry meets the next entry), and slow answers."""
    endpoint = start(generate=True, seed=seed, report=tmp_path / "serve.jsonl", version="test")
    try:
        app, runs = twice(framework, f"drawn {seed}", endpoint)
    finally:
        endpoint.stop()
    assert runs[0] == runs[1]  # the same requests get the same replies
    assert_no_rejection(endpoint)
    verdicts = endpoint.verdicts
    drawn = [endpoint.replies.drawn(v.conversation, v.entry) for v in verdicts]
    assert None not in drawn and all(v.answered == reply.kind for v, reply in zip(verdicts, drawn, strict=True))
    complete = [reply for reply in drawn if reply.status is None and reply.cut_stream_after is None]
    assert [r for r in drawn if r not in complete or r.delay], "the seed drew no interruption"
    # every complete reply reached the application: its calls ran with the arguments drawn (a
    # framework runs one reply's calls concurrently, in any order), and each answer without
    # calls ended a turn with its text
    assert sorted(map(canonical, app.ran)) == sorted(canonical((c.name, c.arguments))
                                                     for reply in complete for c in reply.tool_calls)
    assert [t for run in runs for t in run] == [reply.text for reply in complete if not reply.tool_calls]
    assert len(report_lines(tmp_path / "serve.jsonl", "request")) == len(verdicts) == app.sent
    [header] = report_lines(tmp_path / "serve.jsonl", "header")
    assert header["seed"] == seed and header["serve"]["interruptions"] == ["status", "cut", "drop", "slow"]
