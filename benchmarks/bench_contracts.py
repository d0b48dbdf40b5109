"""Every contract function of the reference and of each installed adapter on large inputs,
each beside its floor (one bare pass over the same case doing the least work the contract
needs), with pytest-benchmark.

Run: pytest benchmarks/bench_contracts.py --benchmark-only [-k payload]
Sizes: CHATCONFORM_BENCH_SIZES=1000,10000,100000,1000000 (default 1000,10000,100000).
Not part of the test run; timings are reported, never asserted. ``chatconform bench`` times
the same cases (``Contract.large_case``) and fits the growth exponent.
"""

from __future__ import annotations

import os

import pytest

from chatconform.bench import DEFAULT_SIZES
from chatconform.contracts import all_contracts
from chatconform.frame.argtypes import size_list
from chatconform.frame.contract import Contract
from chatconform.runner import discovery

SIZES = size_list(os.environ["CHATCONFORM_BENCH_SIZES"]) if os.environ.get("CHATCONFORM_BENCH_SIZES") \
    else list(DEFAULT_SIZES)
IMPLS = discovery.load_installed(lambda line: None)
#: Every contract of the catalog with a large input (one without says why: ``Contract.no_large_case``).
CONTRACTS = [c for c in all_contracts().values() if type(c).large_case is not Contract.large_case]


def _targets():
    for contract in CONTRACTS:
        for impl in IMPLS:
            if impl.method(contract) is None or contract.skip_reason(impl):
                continue
            for variant in contract.bench_variants(contract.variants(impl)):
                yield pytest.param(contract, impl, variant, id=f"{contract.name}-{impl.name}-{variant or 'all'}")


def _floors():
    for contract in CONTRACTS:
        variants = {v for impl in IMPLS if impl.method(contract)
                    for v in contract.bench_variants(contract.variants(impl))}
        for variant in sorted(variants, key=str):
            yield pytest.param(contract, variant, id=f"{contract.name}-floor-{variant or 'all'}")


_CASES: dict = {}


def large_case(contract, size, variant):
    """One case per (contract, size, variant) for the whole session: built once, shared by
    the implementations and the floor."""
    key = (contract.name, size, variant)
    if key not in _CASES:
        _CASES.clear()  # keep one large case in memory at a time
        _CASES[key] = contract.large_case(size, size, variant)
    return _CASES[key]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize(("contract", "impl", "variant"), list(_targets()))
def test_contract_function(benchmark, contract, impl, variant, size):
    case = large_case(contract, size, variant)
    benchmark.extra_info["messages"] = contract.size(case) or size
    fn = impl.method(contract)
    try:  # an implementation that raises on the input is reported, not timed (as chatconform bench does)
        contract.call(fn, case, variant)
    except Exception as exc:
        pytest.skip(f"{impl.name} raised {type(exc).__name__} at {size:,}: {str(exc)[:160]}")
    benchmark.pedantic(contract.call, args=(fn, case, variant), rounds=3 if size < 100_000 else 1, iterations=1)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize(("contract", "variant"), list(_floors()))
def test_floor(benchmark, contract, variant, size):
    case = large_case(contract, size, variant)
    benchmark.extra_info["messages"] = contract.size(case) or size
    benchmark(contract.floor, case, variant)
