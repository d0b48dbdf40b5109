"""Examples per second of a ``ci`` search's cases, in-process against isolated.

    python benchmarks/isolation.py [--impl reference] [--contract thread ...] [--cases 200] [--rounds 3]

The same implementation is loaded twice: in this process (``--in-process``) and in a
process of its own behind the built-in host (the default of every front end for every
implementation but the bundled reference, which is hosted here all the same). The same
drawn cases (the ``ci`` profile's, derandomized) go through the engine's
:func:`evaluate_case` (the call and every check) for each, in alternating rounds so that
drift on a shared machine hits both alike. Not part of the test run; nothing here is
asserted. ``docs/benchmarks.md`` records a run.
"""

from __future__ import annotations

import argparse
import time

from hypothesis import HealthCheck, given, settings

from chatconform.contracts import all_contracts, get_contract
from chatconform.engine import evaluate_case
from chatconform.runner import discovery


def draw(contract, variant, count: int) -> list:
    cases: list = []

    @settings(max_examples=count, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(contract.cases(variant))
    def collect(case):
        cases.append(case)

    collect()
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--impl", default="reference")
    parser.add_argument("--contract", action="append", default=[])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    impls = {"in-process": discovery.load(args.impl, in_process=True), "isolated": discovery.hosted(args.impl)}
    print(f"{args.impl}: {args.cases} ci cases per contract x {args.rounds} rounds, the call and every check")
    print(f"{'contract':<12} {'in-process/s':>13} {'isolated/s':>11} {'cost':>6}")
    totals = dict.fromkeys(impls, 0.0)
    for name in args.contract or list(all_contracts()):
        contract = get_contract(name)
        variants = contract.variants(impls["in-process"])
        if impls["in-process"].method(contract) is None or not variants:
            continue
        variant = variants[0]
        cases = draw(contract, variant, args.cases)
        seconds = dict.fromkeys(impls, 0.0)
        for _ in range(args.rounds):
            for label, impl in impls.items():
                started = time.perf_counter()
                for case in cases:
                    evaluate_case(impl, contract, case, variant, timeout=10.0)
                seconds[label] += time.perf_counter() - started
        runs = len(cases) * args.rounds
        for label in impls:
            totals[label] += seconds[label]
        print(f"{name:<12} {runs / seconds['in-process']:>13.0f} {runs / seconds['isolated']:>11.0f} "
              f"{seconds['isolated'] / seconds['in-process']:>5.2f}x")
    print(f"{'all':<12} {'':>13} {'':>11} {totals['isolated'] / totals['in-process']:>5.2f}x")


if __name__ == "__main__":
    main()
