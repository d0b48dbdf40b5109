"""Persistence: the reference ``persist_run`` on large captures against a floor, and the
run driver's throughput (real pydantic-ai runs per second, as the contract's cases are made).

Run: pytest benchmarks/bench_persist.py --benchmark-only
(not part of the test run; timings are reported, never asserted)
"""

import pytest
from hypothesis import HealthCheck, given, settings

from chatconform.conformance.contracts.persist import CONTRACT
from chatconform.reference.persist import persist_run
from chatconform.strategies.runs import run_cases

SIZES = [1_000, 10_000, 100_000]


@pytest.mark.parametrize("size", SIZES)
def test_reference_persist_run(benchmark, size):
    case = CONTRACT.large_case(size, size, None)
    benchmark.extra_info["messages"] = len(case.captured)
    stored = benchmark(persist_run, case.previous, case.captured, case.outcome)
    assert stored[-1].state == "interrupted"


@pytest.mark.parametrize("size", SIZES)
def test_floor_one_bare_pass(benchmark, size):
    case = CONTRACT.large_case(size, size, None)
    benchmark.extra_info["messages"] = len(case.captured)
    benchmark(CONTRACT.floor, case, None)


def test_driver_scenarios(benchmark):
    """Fifty scenarios drawn and played as the ci profile draws them (derandomized)."""
    played = []

    @settings(max_examples=50, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(run_cases())
    def play(result):
        played.append(result.outcome)

    benchmark.extra_info["scenarios_per_round"] = 50
    benchmark.pedantic(play, rounds=3, iterations=1)
    assert played
