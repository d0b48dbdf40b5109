"""Examples per second for ``thread`` through ``exec:`` against the same walk in-process.

    python benchmarks/exec_overhead.py [--cases 400] [--rounds 3]

Both run the same code (``examples/python/impl.py``): in-process through
``file.py:InProcessThreads``, and as a program through ``exec:``. The same drawn cases go
through the engine's :func:`evaluate_case` (the call and every thread check) for each, in
alternating rounds so that drift on a shared machine hits both alike. Not part of the
test run; nothing here is asserted.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from isolation import draw  # this folder's: the same drawn cases

from chatconform.contracts import get_contract
from chatconform.engine import evaluate_case
from chatconform.runner import discovery

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "python" / "impl.py"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--cases", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    contract = get_contract("thread")
    cases = draw(contract, None, args.cases)
    impls = {"in-process": discovery.load(f"{EXAMPLE}:InProcessThreads", in_process=True),
             "exec:": discovery.load(f"exec:{sys.executable} {EXAMPLE}")}
    seconds = dict.fromkeys(impls, 0.0)
    for _ in range(args.rounds):
        for label, impl in impls.items():
            started = time.perf_counter()
            for case in cases:
                evaluate_case(impl, contract, case, None, timeout=10.0)
            seconds[label] += time.perf_counter() - started
    runs = len(cases) * args.rounds
    rate = {label: runs / spent for label, spent in seconds.items()}
    rows = sum(len(case) for case in cases) / len(cases)
    print(f"{len(cases)} thread cases (mean {rows:.0f} rows) x {args.rounds} rounds, call and every check:")
    for label in impls:
        print(f"  {label:<11} {rate[label]:8.0f} examples/s")
    print(f"  exec: / in-process = {rate['exec:'] / rate['in-process']:.2f}")


if __name__ == "__main__":
    main()
