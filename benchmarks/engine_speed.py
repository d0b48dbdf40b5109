"""How fast a `ci` run is, side by side with an earlier revision, and the engine against a
bare ``@given`` over the same strategies and checks.

    python benchmarks/engine_speed.py versus --base REV [--main-job] [--one-at-a-time] [-- more run arguments]
    python benchmarks/engine_speed.py given [--contract NAME ...] [--examples N]
    python benchmarks/engine_speed.py contracts [--contract NAME ...] [--rounds N]

``versus`` checks ``REV`` out into a temporary git worktree and runs ``chatconform run
--profile ci --report`` from it and from this checkout at the same time (one process each,
so that on a two-core machine both meet the same drift), for the reference alone or, with
``--main-job``, for every bundled implementation. It prints each run's wall time, their
ratio, and every result whose status, level or message differs (none should: a faster engine
changes no verdict). With ``--one-at-a-time`` the two run one after the other, each alone and
with its own default ``--jobs`` (a run that uses every core cannot be timed beside another),
and each also gets the CPU the whole machine spent meanwhile (its workers and the
implementations' processes included), the peak memory of its process tree (proportional set
sizes summed, so pages a forked host shares with its fork server count once) and the peak
resident memory of its largest process (what ``/usr/bin/time -v`` reports).

``given`` times, per contract, ``chatconform.engine.run`` on the reference under
``ci`` against a bare Hypothesis test over the contract's own strategy that calls the
reference and every check on each case (``input_untouched`` as the case's pickle before and
after the call), for each variant, with the same settings: the engine's own cost is the
ratio. The two alternate, three rounds each; the fastest round counts.

``contracts`` times ``chatconform run --impl reference --profile ci --contract NAME`` for each
contract named (by default ``lifecycle`` and ``persist``, whose ratio the lifecycle contract is
held to), alternating, in a process of its own each (imports included, as a user meets them);
the fastest of the rounds counts, wall and CPU seconds.

Not part of the test run; nothing here is asserted. ``docs/benchmarks.md`` records a run.
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from main_job import verdicts  # the same reading of a report (this folder is on the path)

ROOT = Path(__file__).resolve().parent.parent


def _tree(root: int) -> list[int]:
    """``root`` and every process descended from it, read from /proc."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(parents.get(pid, ()))
    return found


def _memory_kb(pid: int) -> tuple[int, int]:
    """A process's resident memory and its proportional share of it (KB): a page several
    processes share (a forked host shares its fork server's) counts whole in each one's
    resident set, and once across their shares."""
    rss = pss = 0
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Rss:"):
                rss = int(line.split()[1])
            elif line.startswith("Pss:"):
                pss = int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return rss, pss


def _busy_ticks() -> int:
    """The whole machine's CPU ticks spent not idle (/proc/stat's first line)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return sum(fields) - fields[3] - fields[4]  # all but idle and iowait


def measured(command: list[str], *, cwd: Path, env: dict[str, str]) -> tuple[float, float, int, int, int]:
    """Run ``command`` alone: its wall seconds, the machine's CPU seconds meanwhile (every process
    it started, workers and implementations' processes included: read the machine as idle
    otherwise), the peak of its process tree's memory (the sum of their proportional shares) and
    of its largest process's resident memory (KB, sampled every 0.5 s), and its exit code."""
    ticks = os.sysconf("SC_CLK_TCK")
    busy, started = _busy_ticks(), time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tree_peak = single_peak = 0
    while process.poll() is None:
        sizes = [_memory_kb(pid) for pid in _tree(process.pid)]
        tree_peak = max(tree_peak, sum(pss for _, pss in sizes))
        single_peak = max(single_peak, max((rss for rss, _ in sizes), default=0))
        time.sleep(0.5)
    return (time.perf_counter() - started, (_busy_ticks() - busy) / ticks, tree_peak, single_peak,
            process.returncode)


def versus(args: argparse.Namespace) -> None:
    out = Path(tempfile.mkdtemp(prefix="chatconform-versus-"))
    base = out / "base"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(base), args.base], check=True)
    try:
        trees = {f"base {args.base}": base, "this checkout": ROOT}
        impl = [] if args.main_job else ["--impl", "reference"]
        if args.one_at_a_time:
            _one_at_a_time(trees, impl, out, args)
            return
        started, running = {}, {}
        for label, tree in trees.items():
            report = out / f"{label.split()[0]}.jsonl"
            env = {**os.environ, "PYTHONPATH": str(tree)}
            # one process each, so that both meet the same drift (a run's default is a worker per CPU)
            command = [sys.executable, "-m", "chatconform", "run", "--profile", "ci", "--report", str(report),
                       "--jobs", "1", *impl, *args.more]
            started[label] = time.perf_counter()
            running[label] = (subprocess.Popen(command, cwd=out, env=env, stdout=subprocess.DEVNULL,
                                               stderr=subprocess.DEVNULL), report)
        seconds: dict[str, float] = {}
        while len(seconds) < len(running):
            for label, (process, _) in running.items():
                if label in seconds:
                    continue
                pid, status, usage = os.wait4(process.pid, os.WNOHANG)
                if pid:
                    # CPU time too: on a shared machine it drifts less than the wall clock.
                    seconds[label] = time.perf_counter() - started[label]
                    cpu = usage.ru_utime + usage.ru_stime
                    print(f"{label:<20} {seconds[label]:>7.0f} s  {cpu:>7.0f} s CPU  "
                          f"exit {os.waitstatus_to_exitcode(status)}", flush=True)
            time.sleep(0.5)
        first, second = trees
        print(f"{'speed-up':<20} {seconds[first] / seconds[second]:>7.2f}x")
        _compare(*(report for _, report in running.values()))
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False)


def _one_at_a_time(trees: dict[str, Path], impl: list[str], out: Path, args: argparse.Namespace) -> None:
    """Each revision's run alone on the machine, base first, as a user runs it (each with its
    own default of --jobs): wall and CPU seconds, peak memory, and the verdicts compared."""
    seconds: dict[str, float] = {}
    cpu: dict[str, float] = {}
    reports = {}
    for label, tree in trees.items():
        report = reports[label] = out / f"{label.split()[0]}.jsonl"
        env = {**os.environ, "PYTHONPATH": str(tree)}
        env.pop("CHATCONFORM_JOBS", None)
        command = [sys.executable, "-m", "chatconform", "run", "--profile", "ci", "--report", str(report),
                   *impl, *args.more]
        wall, used, tree_kb, single_kb, code = measured(command, cwd=out, env=env)
        seconds[label], cpu[label] = wall, used
        print(f"{label:<20} {wall:>7.0f} s  {used:>7.0f} s CPU  peak {tree_kb / 1024:>5.0f} MB in all, "
              f"{single_kb / 1024:>4.0f} MB largest process  exit {code}", flush=True)
    first, second = trees
    print(f"{'speed-up':<20} {seconds[first] / seconds[second]:>7.2f}x wall, {cpu[first] / cpu[second]:.2f}x CPU")
    _compare(*reports.values())


def _compare(before: Path, after: Path) -> None:
    """Print how many results each report holds, and every one whose verdict differs."""
    old, new = verdicts(before), verdicts(after)
    differ = sorted((k for k in old.keys() | new.keys() if old.get(k) != new.get(k)), key=str)
    print(f"{len(old)} results before, {len(new)} after, {len(differ)} differ")
    for key in differ:
        print("  ", "/".join(str(part) for part in key if part is not None))
        print("     before:", old.get(key))
        print("     after: ", new.get(key))


def engine_seed(contract: str) -> int:
    """The seed a derandomized run of the engine draws ``contract``'s cases from: Hypothesis
    derives it from the test's source and key, so a bare test of other source gets it
    explicitly, and both sides judge the same cases."""
    from hypothesis.internal.compat import int_from_bytes
    from hypothesis.internal.reflection import function_digest

    from chatconform.engine.search import _Pass

    test = _Pass._hypothesis_test(None)  # the test's source: the pass is not read here
    test._hypothesis_internal_add_digest = f"chatconform||{contract}".encode()
    return int_from_bytes(function_digest(test))


def given_overhead(args: argparse.Namespace) -> None:
    from hypothesis import given, seed

    from chatconform import engine
    from chatconform.contracts import all_contracts
    from chatconform.engine import no_local_constants
    from chatconform.errors import NotApplicable, UnsendableCase, UnsendableContent, Violation
    from chatconform.frame.contract import Example
    from chatconform.frame.profiles import get_profile
    from chatconform.runner import discovery

    reference = discovery.load(discovery.REFERENCE_TARGET, in_process=True)
    profile = get_profile("ci") if args.examples is None else get_profile("ci", examples=args.examples)
    names = args.contract or list(all_contracts())
    print(f"{'contract':<12} {'engine s':>9} {'bare s':>9} {'ratio':>6}")
    for name in names:
        contract = all_contracts()[name]
        fn = reference.method(contract)
        variants = contract.variants(reference)

        def judging(contract, fn, variant):
            def test(case):
                # input_untouched as a bare test would have it: the case's pickle before
                # the call and after (a freshly drawn case needs no private copy).
                try:
                    before = pickle.dumps(case, protocol=pickle.HIGHEST_PROTOCOL)
                except Exception:
                    before = None
                try:
                    output = contract.call(fn, case, variant)
                except (UnsendableContent, UnsendableCase):
                    return  # the reference declines the case: no check judges it
                if before is not None and pickle.dumps(case, protocol=pickle.HIGHEST_PROTOCOL) != before:
                    raise AssertionError("the reference changed its input")
                example = Example(contract, case, output, variant, impl=reference)
                for check in contract.ordered_checks():
                    if check.evaluate is not None:
                        try:
                            check.evaluate(example)
                        except (NotApplicable, Violation):
                            pass
            return test

        def bare(contract=contract, fn=fn, variants=variants) -> None:
            settings = profile.settings(scale=contract.examples_scale)
            for variant in variants:
                test = judging(contract, fn, variant)
                with no_local_constants():
                    settings(seed(engine_seed(contract.name))(given(contract.cases(variant))(test)))()

        def engine_run(contract=contract) -> None:
            engine.run([reference], engine.Selection([contract], None), profile)

        best = {"engine": float("inf"), "bare": float("inf")}
        for _ in range(args.rounds):
            for label, work in (("engine", engine_run), ("bare", bare)):
                start = time.perf_counter()
                work()
                best[label] = min(best[label], time.perf_counter() - start)
        print(f"{name:<12} {best['engine']:>9.1f} {best['bare']:>9.1f} {best['engine'] / best['bare']:>6.2f}")


def contracts(args: argparse.Namespace) -> None:
    names = args.contract or ["lifecycle", "persist"]
    best = {name: (float("inf"), float("inf")) for name in names}
    for _ in range(args.rounds):
        for name in names:
            command = [sys.executable, "-m", "chatconform", "run", "--impl", "reference", "--profile", "ci",
                       "--contract", name]
            started = time.perf_counter()
            process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _, status, usage = os.wait4(process.pid, 0)
            wall = time.perf_counter() - started
            if os.waitstatus_to_exitcode(status) != 0:
                raise SystemExit(f"chatconform run --contract {name} exited {os.waitstatus_to_exitcode(status)}")
            best[name] = min(best[name], (wall, usage.ru_utime + usage.ru_stime))
    print(f"{'contract':<12} {'wall s':>7} {'cpu s':>7} {'/ ' + names[-1]:>12}")
    for name in names:
        wall, cpu = best[name]
        print(f"{name:<12} {wall:>7.1f} {cpu:>7.1f} {wall / best[names[-1]][0]:>12.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    sub = parser.add_subparsers(dest="command", required=True)
    vs = sub.add_parser("versus", help="a ci run here and at an earlier revision, side by side")
    vs.add_argument("--base", required=True, help="the revision to compare with (a tag, a commit)")
    vs.add_argument("--main-job", action="store_true", help="every bundled implementation, not the reference alone")
    vs.add_argument("--one-at-a-time", action="store_true",
                    help="each run alone, base first, with its own --jobs default (a run that uses every core "
                         "cannot be timed beside another); the machine's CPU and the tree's peak memory too")
    vs.add_argument("more", nargs="*", help="further arguments of chatconform run (after --)")
    bare = sub.add_parser("given", help="the engine against a bare @given, per contract")
    bare.add_argument("--contract", action="append", help="a contract (repeatable; default: all)")
    bare.add_argument("--examples", type=int, default=None, help="examples per search (default: the ci profile's)")
    bare.add_argument("--rounds", type=int, default=3)
    each = sub.add_parser("contracts", help="a ci run of the reference per contract, side by side")
    each.add_argument("--contract", action="append", help="a contract (repeatable; default: lifecycle, persist)")
    each.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.command == "versus":
        versus(args)
    elif args.command == "contracts":
        contracts(args)
    else:
        given_overhead(args)


if __name__ == "__main__":
    main()
