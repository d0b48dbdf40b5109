"""How fast each contract's cases are drawn: fifty cases of its strategy, as the ``ci``
profile draws them (derandomized), with pytest-benchmark. For ``persist`` this is the run
driver's throughput (each case plays real pydantic-ai runs).

Run: pytest benchmarks/bench_cases.py --benchmark-only [-k persist]
Not part of the test run; timings are reported, never asserted. The contract functions on
large inputs are ``bench_contracts.py``.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from chatconform.contracts import all_contracts
from chatconform.frame.contract import Contract

CASES = 50


@pytest.mark.parametrize("contract", list(all_contracts().values()), ids=lambda contract: contract.name)
def test_draw_cases(benchmark, contract: Contract) -> None:
    drawn: list = []

    @settings(max_examples=CASES, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(contract.cases(None))
    def draw(case):
        drawn.append(case)

    benchmark.extra_info["cases_per_round"] = CASES
    benchmark.pedantic(draw, rounds=3, iterations=1)
    assert drawn
