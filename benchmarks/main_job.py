"""The README's main job, isolated against in-process, side by side: time and verdicts.

    python benchmarks/main_job.py [--jobs 1] [--out DIR] [-- more run arguments]

Runs ``chatconform run --report`` twice at the same time, once as every front end runs by
default (each implementation under test in a process of its own) and once with
``--in-process``, each with ``--jobs`` worker processes (one each by default, so that the
two runs share a two-core machine evenly and drift hits both alike). Prints each run's
wall time, their ratio, and every result whose status, level or message differs between
the two reports (none is expected: isolation changes no verdict). Not part of the test
run; nothing here is asserted. ``docs/benchmarks.md`` records a run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def verdicts(report: Path) -> dict[tuple, tuple]:
    """(implementation, contract, check, variant) -> (status, level, message), per result line."""
    found = {}
    for line in report.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("type") == "result":
            key = (record["implementation"], record["contract"], record["check"], record.get("variant"))
            found[key] = (record["status"], record.get("level"), record.get("message"))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--jobs", default="1")
    parser.add_argument("--out", type=Path, default=None, help="where the two reports go (default: a temporary folder)")
    parser.add_argument("more", nargs="*", help="further arguments of chatconform run (after --)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="chatconform-main-job-"))
    out.mkdir(parents=True, exist_ok=True)
    modes = {"isolated": [], "in-process": ["--in-process"]}
    started, running = {}, {}
    for label, extra in modes.items():
        report = out / f"{label}.jsonl"
        command = [sys.executable, "-m", "chatconform", "run", "--jobs", args.jobs, "--report", str(report),
                   *extra, *args.more]
        started[label] = time.perf_counter()
        running[label] = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds, codes = {}, {}
    pending = dict(running)
    while pending:
        for label, process in list(pending.items()):
            if process.poll() is not None:
                seconds[label], codes[label] = time.perf_counter() - started[label], process.returncode
                del pending[label]
        time.sleep(0.5)
    for label in modes:
        print(f"{label:<11} {seconds[label]:>7.0f} s  exit {codes[label]}  ({out / (label + '.jsonl')})")
    print(f"{'cost':<11} {seconds['isolated'] / seconds['in-process']:>7.2f}x")
    isolated, in_process = verdicts(out / "isolated.jsonl"), verdicts(out / "in-process.jsonl")
    differ = sorted((key for key in isolated.keys() | in_process.keys() if isolated.get(key) != in_process.get(key)),
                    key=lambda key: [str(part) for part in key])
    print(f"{len(isolated)} results isolated, {len(in_process)} in-process, {len(differ)} differ")
    for key in differ:
        print("  ", "/".join(str(part) for part in key if part is not None))
        print("     isolated:  ", isolated.get(key))
        print("     in-process:", in_process.get(key))


if __name__ == "__main__":
    main()
