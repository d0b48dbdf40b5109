"""A Python implementation that attacks its own process cannot take the run down, hang it,
or fake a pass: it runs in a process of its own (the built-in host), so each attack is a
verdict, the run ends in bounded time, and the report is written where it was asked for.

Each run is a real ``chatconform run`` in a subprocess, so an attack that escaped would
show as this test's failure, not as the test process's end. The implementations are in
``hostile.py`` beside this file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

HOSTILE = Path(__file__).resolve().parent / "hostile.py"
ROOT = Path(__file__).resolve().parents[2]
#: Seconds a run may take: start, a few examples, one deadline of 2 s, the report.
BOUND = 40

# name: (the check that fails, what its message says)
ATTACKS = {
    "ExitZero": ("thread.no_crash", "exited with status 0"),
    "ExitOne": ("thread.no_crash", "exited with status 1"),
    "KillSelf": ("thread.no_crash", "exited with signal 9"),
    "HoldTheGil": ("thread.no_crash", "did not return within 1s (hung): the implementation gave no answer in time "
                                      "(its process was stopped)"),
    "HangWhenIterated": ("thread.no_crash", "did not return within 1s (hung)"),
    "HangWhenRead": ("thread.no_crash", "did not return within 1s (hung)"),
    "RaiseWhenRead": ("thread.no_crash", "raised RuntimeError: no id today"),
    "CloseStdio": ("thread.starts_at_newest", ""),
    "RewireTheEngine": ("thread.starts_at_newest", ""),
}
#: The attacks that hang: each replay of the case waits out the deadline (cold: twice it), so
#: theirs is 1 s; the others keep 2 s, room for a process to start on a busy machine.
HANGS = {"HoldTheGil", "HangWhenIterated", "HangWhenRead"}


def _run(tmp_path: Path, name: str, *more: str, env: dict | None = None) -> tuple[subprocess.CompletedProcess, float]:
    command = [sys.executable, "-m", "chatconform", "run", "--impl", f"{HOSTILE}:{name}", "--contract", "thread",
               "--examples", "8", "--timeout", "2", "--report", "out/report.jsonl", *more]
    (tmp_path / "out").mkdir(exist_ok=True)
    started = time.monotonic()
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=BOUND * 3,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    return done, time.monotonic() - started


def _results(path: Path) -> dict[str, dict]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return {line["check"]: line for line in lines if line.get("type") == "result"}


@pytest.mark.parametrize("name", list(ATTACKS))
def test_an_attack_on_its_own_process_is_a_failing_verdict(tmp_path, name):
    check, said = ATTACKS[name]
    done, seconds = _run(tmp_path, name, "--check", check, *(("--timeout", "1") if name in HANGS else ()))
    assert done.returncode == 1, done.stdout + done.stderr
    assert seconds < BOUND, f"{name} took {seconds:.0f}s"
    assert "Traceback" not in done.stderr
    results = _results(tmp_path / "out" / "report.jsonl")
    assert results[check]["status"] == "fail", results[check]
    assert said in results[check]["message"], results[check]["message"]
    assert f"FAIL {check}" in done.stdout


def test_a_rewired_engine_in_the_implementations_process_fakes_nothing(tmp_path):
    done, _ = _run(tmp_path, "RewireTheEngine", "--check", "thread.starts_at_newest", "--check",
                   "thread.matches_reference", "--check", "thread.no_crash")
    results = _results(tmp_path / "out" / "report.jsonl")
    assert {c: r["status"] for c, r in results.items()} == {
        "thread.starts_at_newest": "fail", "thread.matches_reference": "fail", "thread.no_crash": "pass"}
    assert done.returncode == 1


def test_a_folder_change_in_the_implementation_moves_no_file(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done, _ = _run(tmp_path, "ChangeFolder", env={"HOSTILE_FOLDER": str(elsewhere)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert all(r["status"] == "pass" for r in _results(tmp_path / "out" / "report.jsonl").values())
    assert list(elsewhere.iterdir()) == []


def test_in_process_is_the_old_way_and_says_so(tmp_path):
    # The same attack in this process: the run itself ends, with the implementation's status.
    done, _ = _run(tmp_path, "ExitZero", "--in-process", "--check", "thread.no_crash")
    assert done.returncode == 0 and not (tmp_path / "out" / "report.jsonl").exists()


def test_an_allocation_past_the_memory_cap_is_a_verdict(tmp_path):
    done, seconds = _run(tmp_path, "AllocateTooMuch", "--memory-limit", "1024", "--check", "thread.no_crash")
    assert done.returncode == 1, done.stdout + done.stderr
    crash = _results(tmp_path / "out" / "report.jsonl")["thread.no_crash"]
    assert crash["status"] == "fail" and "MemoryError" in crash["message"], crash
    assert seconds < BOUND


def test_the_pytest_plugin_gets_a_failing_item_not_a_dead_session(tmp_path):
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--pyargs", "chatconform.conformance",
               "--chatconform-impl", f"{HOSTILE}:ExitZero", "--chatconform-check", "thread.no_crash",
               "--chatconform-check", "thread.reaches_root", "--chatconform-examples", "5"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=BOUND * 3,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 1, done.stdout[-2000:]
    # no_crash fails, and reaches_root, never evaluated, fails as not evaluated
    assert "2 failed" in done.stdout and "exited with status 0" in done.stdout


def test_only_the_bundled_reference_runs_in_the_searching_process():
    """The reference is the suite's own code, so it is not isolated; any other spec is."""
    from chatconform.reference import ReferenceImplementation
    from chatconform.runner import discovery
    from chatconform.runner.protocol import Program

    for spec in ("reference", discovery.REFERENCE_TARGET):
        reference = discovery.load(spec)
        assert isinstance(reference.obj, ReferenceImplementation) and not reference.hosted
    fake = discovery.load(f"{HOSTILE}:ExitZero")
    assert isinstance(fake.obj, Program) and fake.hosted


# -- facts a verdict is made of are measured in the run's process --------------------------------------

FORGERIES = {  # name: (the check, its status, what its message says)
    "EditAndRewireTheDetector": ("thread.input_untouched", "fail", "changed its input"),
    "SleepAndRewireTheClock": ("thread.slow", "warn", "slow, past"),
}


@pytest.mark.parametrize("name", list(FORGERIES))
def test_a_rewired_detector_or_clock_in_its_own_process_forges_no_verdict(tmp_path, name):
    check, status, said = FORGERIES[name]
    done, seconds = _run(tmp_path, name, "--examples", "3", "--timeout", "3", "--check", check)
    assert seconds < BOUND, f"{name} took {seconds:.0f}s"
    result = _results(tmp_path / "out" / "report.jsonl")[check]
    assert result["status"] == status and said in result["message"], result
    assert done.returncode == (1 if status == "fail" else 0), done.stdout + done.stderr


# -- replies whose reading would cost more than they weigh ---------------------------------------------

AMPLIFIERS = {  # name: what the no_crash failure says (None: the result was read as JSON instead)
    "ReplyAllocatingGigabytes": "builtins.bytearray is not a data class",
    "ReplyExpandingARange": "builtins.range is not a data class",
    "ReplyStoringAtAFarMemoIndex": "opcode LONG_BINPUT",
    "ReplyNestedAMillionDeep": "",
    "JsonNestedAMillionDeep": "nested too deeply",
    "ReplyRewiringAClass": "adds to what is not being built (an atom or a class)",
    # What a pickler writes for a value that shares much: the run asks for it as JSON
    # (the host answers with the implementation's correct result, so no_crash holds).
    "ReplyHashingSharedTuples": None,
    "ReplySharingAList": None,
}
#: The most memory the run's processes may reach reading such replies (the run itself takes
#: about 200 MiB; any of these read naively takes gigabytes).
MEMORY_BOUND_MIB = 700


@pytest.mark.parametrize("name", list(AMPLIFIERS))
def test_a_reply_that_would_amplify_is_a_crash_read_in_bounded_memory_and_time(tmp_path, name):
    """The run is started by a small Python process that reports the most memory any of its
    descendants held (``getrusage``: the run's process, its fork server and the hosts)."""
    measure = ("import resource, subprocess, sys; done = subprocess.run(sys.argv[1:]); "
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, file=sys.stderr); "
               "sys.exit(done.returncode)")
    (tmp_path / "out").mkdir()
    command = [sys.executable, "-c", measure, sys.executable, "-m", "chatconform", "run", "--impl",
               f"{HOSTILE}:{name}", "--contract", "thread", "--examples", "3", "--timeout", "3", "--jobs", "1",
               "--check", "thread.no_crash", "--report", "out/report.jsonl"]
    started = time.monotonic()
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=BOUND * 3,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    seconds = time.monotonic() - started
    said = AMPLIFIERS[name]
    assert done.returncode == (0 if said is None else 1), done.stdout + done.stderr
    peak_mib = int(done.stderr.strip().splitlines()[-1])
    assert peak_mib < MEMORY_BOUND_MIB, f"{name}: {peak_mib} MiB"
    assert seconds < BOUND, f"{name} took {seconds:.0f}s"
    crash = _results(tmp_path / "out" / "report.jsonl")["thread.no_crash"]
    assert crash["status"] == ("pass" if said is None else "fail") and (said or "") in crash["message"], crash


# -- processes an implementation starts end with the run ----------------------------------------------

from chatconform.runner.protocol import reaper  # noqa: E402
from tests.processes import gone_within, living  # noqa: E402

needs_subreapers = pytest.mark.skipif(not reaper.available(),
                                      reason="no child subreapers here: docs/running.md says what is left")


@needs_subreapers
@pytest.mark.slow
@pytest.mark.parametrize("ending", ["normal", "SIGKILL"])
def test_processes_it_starts_outside_its_group_end_with_the_run(tmp_path, ending):
    """A session of its own and a daemon, started at every call: gone once the run has
    ended, or once the run's process was killed (its fork server sees its socket close)."""
    import signal

    noted = tmp_path / "pids"
    command = [sys.executable, "-m", "chatconform", "run", "--impl", f"{HOSTILE}:LeaveTheGroup", "--contract",
               "thread", "--examples", "5" if ending == "normal" else "400", "--timeout", "5"]
    process = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT), "HOSTILE_PIDS": str(noted)})
    if ending == "SIGKILL":
        deadline = time.monotonic() + BOUND
        while len(_pids(noted)) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)  # the run's process alone: nothing of it can act
    out, err = process.communicate(timeout=BOUND * 3)
    assert process.returncode == (0 if ending == "normal" else -signal.SIGKILL), out + err
    started = _pids(noted)
    assert len(started) >= 4
    assert gone_within(lambda: living(started), seconds=5) == []


def _pids(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []
