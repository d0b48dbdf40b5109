"""`chatconform validate` throughput: a JSON-lines file of 10,000 recorded request bodies.

Run: pytest benchmarks/bench_validate.py --benchmark-only
(not part of the test run; timings are reported, never asserted)

The bodies come from ``chatconform.strategies.recorded_payloads``, deterministically:
independent short agent conversations (system prompt, questions, tool calls and results,
answers; about nine messages each), about one in five broken in a way a provider rejects, for
openai-chat and anthropic; and a request log where each call resends the conversation so far
(the usual shape of a recorded log). Each
round starts with an empty message memo, so repeated messages only help within the file.
``extra_info["bodies_per_second"]`` is the number to quote; ``test_validate_only`` times
``validate()`` alone on bodies already parsed.
"""

from __future__ import annotations

import io
import itertools

import pytest

from chatconform.provider_schemas import validate
from chatconform.provider_schemas.lint import run_validate
from chatconform.provider_schemas.schema_check import clear_memo
from chatconform.strategies import recorded_payloads, write_json_lines

BODIES = 10_000


def bodies_of(provider: str, seed: int, *, resend: bool = False) -> list[dict]:
    return list(itertools.islice(recorded_payloads(seed, 10**9, provider=provider, resend=resend), BODIES))


def rate(benchmark) -> int | None:
    """Bodies per second (None under --benchmark-disable, where nothing is timed)."""
    return round(BODIES / benchmark.stats.stats.mean) if benchmark.stats else None


@pytest.fixture(scope="module", params=["anthropic", "openai-chat"])
def recorded(request, tmp_path_factory):
    provider = request.param
    bodies = bodies_of(provider, 20260901)
    path = tmp_path_factory.mktemp("bench") / f"{provider}.jsonl"
    write_json_lines(path, bodies)
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
    benchmark.extra_info["bodies_per_second"] = rate(benchmark)


def test_validate_only(benchmark, recorded):
    provider, _, bodies = recorded

    def check_all() -> int:
        return sum(len(validate(body, provider)) for body in bodies)

    problems = benchmark.pedantic(check_all, setup=clear_memo, rounds=3, iterations=1)
    benchmark.extra_info["provider"] = provider
    benchmark.extra_info["problems"] = problems
    benchmark.extra_info["bodies_per_second"] = rate(benchmark)


def test_lint_request_log(benchmark, tmp_path):
    """The common real case: a log where each request resends the conversation so far."""
    path = tmp_path / "requests.jsonl"
    bodies = bodies_of("openai-chat", 20260902, resend=True)
    write_json_lines(path, bodies)
    out, err = io.StringIO(), io.StringIO()
    code = benchmark.pedantic(
        lambda: run_validate([str(path)], "openai-chat", "json", out=out, err=err),
        setup=clear_memo, rounds=3, iterations=1
    )
    assert code == 0 and err.getvalue() == ""
    benchmark.extra_info["provider"] = "openai-chat"
    benchmark.extra_info["bodies"] = BODIES
    benchmark.extra_info["messages_per_body"] = round(sum(len(b["messages"]) for b in bodies) / BODIES, 1)
    benchmark.extra_info["bodies_per_second"] = rate(benchmark)
