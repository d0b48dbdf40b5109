"""The reference ``to_payload`` on large histories, per provider, against a floor.

Run: pytest benchmarks/bench_payload.py --benchmark-only
(not part of the test run; timings are reported, never asserted)
"""

import pytest

from chatconform.provider_schemas import validate
from chatconform.reference.payload import to_payload
from chatconform.strategies import expand_history

SIZES = [1_000, 10_000, 100_000]
PROVIDERS = ["openai-chat", "anthropic", "gemini", "bedrock-converse"]


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("size", SIZES)
def test_reference_to_payload(benchmark, size, provider):
    history = expand_history(seed=size, size=size)
    benchmark.extra_info["messages"] = len(history)
    body = benchmark.pedantic(to_payload, args=(history,), kwargs={"provider": provider},
                              rounds=3, iterations=1)
    if size <= 1_000:
        assert [p for p in validate(body, provider) if p.severity == "error"] == []


@pytest.mark.parametrize("size", SIZES)
def test_floor_one_bare_pass(benchmark, size):
    history = expand_history(seed=size, size=size)
    benchmark.extra_info["messages"] = len(history)
    benchmark(lambda: [len(message.parts) for message in history])
