"""The reference ``sanitize`` and ``repair`` on large hostile histories, against a floor.

Run: pytest benchmarks/bench_sanitize_repair.py --benchmark-only
(not part of the test run; timings are reported, never asserted)
"""

import pytest

from chatconform.conformance.contracts import get_contract

SIZES = [1_000, 10_000, 100_000]
CONTRACTS = ["sanitize", "repair"]


@pytest.mark.parametrize("name", CONTRACTS)
@pytest.mark.parametrize("size", SIZES)
def test_reference(benchmark, size, name):
    contract = get_contract(name)
    case = contract.large_case(size, size, None)
    benchmark.extra_info["messages"] = len(case.history)
    benchmark.pedantic(contract.reference, args=(case, None), rounds=3, iterations=1)


@pytest.mark.parametrize("name", CONTRACTS)
@pytest.mark.parametrize("size", SIZES)
def test_floor(benchmark, size, name):
    contract = get_contract(name)
    case = contract.large_case(size, size, None)
    benchmark.extra_info["messages"] = len(case.history)
    benchmark(contract.floor, case, None)
