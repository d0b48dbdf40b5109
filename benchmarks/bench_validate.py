"""`chatconform validate` throughput: a JSON-lines file of 10,000 recorded request bodies.

Run: pytest benchmarks/bench_validate.py --benchmark-only
(not part of the test run; timings are reported, never asserted)

The bodies are generated here, deterministically: independent short agent conversations
(system prompt, questions, tool calls and results, answers; about nine messages each), about
one in five broken in a way a provider rejects, for openai-chat and anthropic; and a request
log where each call resends the conversation so far (the usual shape of a recorded log). Each
round starts with an empty message memo, so repeated messages only help within the file.
``extra_info["bodies_per_second"]`` is the number to quote; ``test_validate_only`` times
``validate()`` alone on bodies already parsed.
"""

from __future__ import annotations

import io
import json
import random

import pytest

from chatconform.provider_schemas import validate
from chatconform.provider_schemas.lint import run_validate
from chatconform.provider_schemas.schema_check import clear_memo

BODIES = 10_000
SYSTEM_PROMPTS = ["You are a weather bot.", "Answer in French.", "Be concise.", "You are a careful travel agent."]


def openai_body(rng: random.Random, n: int) -> dict:
    messages: list[dict] = [{"role": "system", "content": rng.choice(SYSTEM_PROMPTS)}]
    for turn in range(rng.randint(1, 4)):
        messages.append({"role": "user", "content": f"Question {n}.{turn}: weather in city {rng.randint(1, 500)}?"})
        if rng.random() < 0.5:
            ids = [f"call_{n}_{turn}_{k}" for k in range(rng.randint(1, 2))]
            calls = [{"id": i, "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "x"}'}} for i in ids]
            messages.append({"role": "assistant", "content": None, "tool_calls": calls})
            messages.extend({"role": "tool", "tool_call_id": i, "content": f"{rng.randint(-5, 35)}C"} for i in ids)
        messages.append({"role": "assistant", "content": f"It is {rng.randint(-5, 35)}C ({n}.{turn})."})
    broken = rng.random()
    if broken < 0.05:
        messages.insert(2, {"role": "system", "content": "late"})  # fine for OpenAI, Q3 elsewhere
    elif broken < 0.10:
        messages.insert(2, {"role": "tool", "tool_call_id": "call_x", "content": "orphan"})  # O7
    elif broken < 0.15:
        messages.append({"role": "assistant", "tool_calls": []})  # O4 + O5
    elif broken < 0.20:
        messages[1] = {"role": "user", "content": None}  # O2
    return {"model": "gpt-4o", "messages": messages}


def anthropic_body(rng: random.Random, n: int) -> dict:
    messages: list[dict] = []
    for turn in range(rng.randint(1, 4)):
        messages.append({"role": "user", "content": [{"type": "text", "text": f"Question {n}.{turn}: city {rng.randint(1, 500)}?"}]})
        if rng.random() < 0.5:
            ids = [f"toolu_{n}_{turn}_{k}" for k in range(rng.randint(1, 2))]
            uses = [{"type": "tool_use", "id": i, "name": "get_weather", "input": {"city": "x"}} for i in ids]
            messages.append({"role": "assistant", "content": [{"type": "text", "text": "Let me check."}, *uses]})
            results = [{"type": "tool_result", "tool_use_id": i, "content": f"{rng.randint(-5, 35)}C"} for i in ids]
            messages.append({"role": "user", "content": results})
        messages.append({"role": "assistant", "content": [{"type": "text", "text": f"It is {rng.randint(-5, 35)}C ({n}.{turn})."}]})
    messages.append({"role": "user", "content": "Thanks!"})
    broken = rng.random()
    if broken < 0.05:
        messages[0]["content"].insert(0, {"type": "text", "text": "  "})  # A7
    elif broken < 0.10:
        messages.insert(1, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "?"}]})  # A8
    elif broken < 0.15:
        messages[-1] = {"role": "assistant", "content": "Sure "}  # A10
    elif broken < 0.20:
        messages.insert(1, {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_y", "name": "f", "input": {}}]})  # A9
    return {"model": "claude-sonnet-4-5", "max_tokens": 1024, "system": rng.choice(SYSTEM_PROMPTS), "messages": messages}


MAKERS = {"openai-chat": openai_body, "anthropic": anthropic_body}


def request_log(rng: random.Random, size: int) -> list[dict]:
    """A recorded request log: every call of a conversation resends the history so far."""
    bodies: list[dict] = []
    n = 0
    while len(bodies) < size:
        n += 1
        history = [
            {"role": "system", "content": rng.choice(SYSTEM_PROMPTS)},
            {"role": "user", "content": f"Question {n}: weather in city {rng.randint(1, 500)}?"},
        ]
        for turn in range(rng.randint(5, 25)):
            bodies.append({"model": "gpt-4o", "messages": list(history)})
            history += [
                {"role": "assistant", "content": f"Answer {n}.{turn}: {rng.randint(-5, 35)}C."},
                {"role": "user", "content": f"And in city {rng.randint(1, 500)}?"},
            ]
    return bodies[:size]


@pytest.fixture(scope="module", params=sorted(MAKERS))
def recorded(request, tmp_path_factory):
    provider = request.param
    rng = random.Random(20260901)
    bodies = [MAKERS[provider](rng, n) for n in range(BODIES)]
    path = tmp_path_factory.mktemp("bench") / f"{provider}.jsonl"
    path.write_text("".join(json.dumps(body) + "\n" for body in bodies), encoding="utf-8")
    return provider, str(path), bodies


def test_lint_json_lines_file(benchmark, recorded):
    provider, path, _ = recorded
    out, err = io.StringIO(), io.StringIO()

    def lint() -> int:
        out.seek(0)
        out.truncate()
        return run_validate([path], provider, "json", out=out, err=err)

    code = benchmark.pedantic(lint, setup=clear_memo, rounds=3, iterations=1)
    assert code == 1 and err.getvalue() == ""
    benchmark.extra_info["provider"] = provider
    benchmark.extra_info["bodies"] = BODIES
    benchmark.extra_info["problems"] = out.getvalue().count("\n")
    benchmark.extra_info["bodies_per_second"] = round(BODIES / benchmark.stats.stats.mean)


def test_validate_only(benchmark, recorded):
    provider, _, bodies = recorded

    def check_all() -> int:
        return sum(len(validate(body, provider)) for body in bodies)

    problems = benchmark.pedantic(check_all, setup=clear_memo, rounds=3, iterations=1)
    benchmark.extra_info["provider"] = provider
    benchmark.extra_info["problems"] = problems
    benchmark.extra_info["bodies_per_second"] = round(BODIES / benchmark.stats.stats.mean)


def test_lint_request_log(benchmark, tmp_path):
    """The common real case: a log where each request resends the conversation so far."""
    path = tmp_path / "requests.jsonl"
    bodies = request_log(random.Random(20260902), BODIES)
    path.write_text("".join(json.dumps(body) + "\n" for body in bodies), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    code = benchmark.pedantic(
        lambda: run_validate([str(path)], "openai-chat", "json", out=out, err=err), setup=clear_memo, rounds=3, iterations=1
    )
    assert code == 0 and err.getvalue() == ""
    benchmark.extra_info["provider"] = "openai-chat"
    benchmark.extra_info["bodies"] = BODIES
    benchmark.extra_info["messages_per_body"] = round(sum(len(b["messages"]) for b in bodies) / BODIES, 1)
    benchmark.extra_info["bodies_per_second"] = round(BODIES / benchmark.stats.stats.mean)
