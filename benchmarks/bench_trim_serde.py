"""The reference ``trim`` and ``dump``/``load`` on large histories, against each contract's floor.

Run: pytest benchmarks/bench_trim_serde.py --benchmark-only
(not part of the test run; timings are reported, never asserted)
"""

import pytest

from chatconform.conformance.contracts import get_contract
from chatconform.reference.serde import dump, load
from chatconform.reference.trim import trim

SIZES = [1_000, 10_000, 100_000]


@pytest.mark.parametrize("size", SIZES)
def test_reference_trim(benchmark, size):
    case = get_contract("trim").large_case(size, seed=size, variant=None)
    benchmark.extra_info["messages"] = len(case.history)
    benchmark.pedantic(trim, args=(case.history,), kwargs={"max_messages": case.max_messages}, rounds=3, iterations=1)


@pytest.mark.parametrize("size", SIZES)
def test_reference_dump_then_load(benchmark, size):
    case = get_contract("serde").large_case(size, seed=size, variant=None)
    benchmark.extra_info["messages"] = len(case.history)
    benchmark.pedantic(lambda: load(dump(case.history)), rounds=3, iterations=1)


@pytest.mark.parametrize("contract", ["trim", "serde"])
@pytest.mark.parametrize("size", SIZES)
def test_floor_one_bare_pass(benchmark, size, contract):
    chosen = get_contract(contract)
    case = chosen.large_case(size, seed=size, variant=None)
    benchmark.extra_info["messages"] = len(case.history)
    benchmark(chosen.floor, case, None)
