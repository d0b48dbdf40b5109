"""SIGINT and SIGTERM stop a run within seconds: exit 130 or 143, one line, a partial report
marked as interrupted, and no process the run started left behind; the handlers only note
the signal, and are put back when the run ends. A program's forked child does not outlive a
normal run either."""

from __future__ import annotations

import json
import os
import signal
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from chatconform import api
from chatconform.cli import main
from chatconform.errors import ConfigError, Interrupted
from chatconform.frame import stop
from chatconform.frame.guard import guarded_call
from chatconform.runner.protocol import reaper
from tests.processes import gone_within, group_members, living

ROOT = Path(__file__).resolve().parents[2]
CODES = {"SIGINT": 130, "SIGTERM": 143}

#: An implementation whose payload calls are slow; its first call leaves a file, so a test
#: signals the run while this search is under way.
SLOW = '''
import time


class Slow:
    name, version = "slow", "1"
    providers = {"openai-chat"}

    def to_payload(self, history, *, provider, instructions=None):
        open("searching", "w").close()
        time.sleep(0.5)
        return {"messages": []}
'''

#: A thread program that never answers a call; each copy notes its pid when it starts and
#: when it is called.
STUCK = textwrap.dedent("""
    import json, os, sys, time

    def note(name):
        with open(name, "a") as out:
            out.write(f"{os.getpid()}\\n")

    note("started")
    for line in sys.stdin:
        request = json.loads(line)
        if request["type"] == "hello":
            print(json.dumps({"protocol": 1, "name": "stuck", "version": "0", "contracts": ["thread"]}), flush=True)
        elif request["type"] == "stop":
            break
        else:
            note("called")
            time.sleep(3600)
""")

#: A thread program that starts processes as it starts, appending their pids to
#: ``children``: with ``fork`` a child in its process group, with ``escape`` two outside it
#: (:func:`tests.processes.leave_the_group`); then it answers correctly, or with ``hang``
#: never (noting that it was called).
STARTS = textwrap.dedent("""
    import json, subprocess, sys, time
    sys.path[:0] = [{examples!r}, {root!r}]
    from impl import thread_of
    from tests.processes import leave_the_group

    if "escape" in sys.argv:
        leave_the_group("children")
    else:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        with open("children", "a") as out:
            out.write(f"{{child.pid}}\\n")
    for line in sys.stdin:
        request = json.loads(line)
        if request["type"] == "hello":
            print(json.dumps({{"protocol": 1, "name": "starts", "version": "0", "contracts": ["thread"]}}), flush=True)
        elif request["type"] == "stop":
            break
        elif "hang" in sys.argv:
            open("called", "w").close()
            time.sleep(3600)
        else:
            answer = thread_of(request["input"], lambda r, k: r.get(k))
            print(json.dumps({{"id": request["id"], "result": answer}}), flush=True)
""")


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def wait_for(path: Path, seconds: float = 90.0) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)


def signal_and_wait(process, name: str, *, group: bool = False) -> tuple[str, float]:
    """Send signal ``name`` (to the whole process group, as a terminal does, with ``group``);
    the run's stderr and the seconds it took to exit."""
    number = signal.Signals[name]
    sent = time.monotonic()
    if group:
        os.killpg(process.pid, number)
    else:
        process.send_signal(number)
    _, err = process.communicate(timeout=60)
    return err, time.monotonic() - sent


def pids(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


# -- a whole run, stopped ---------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM"])
def test_a_signal_stops_the_run_with_a_partial_report(name, jobs, start_run, tmp_path):
    """The reference's two searches finish; the slow one is cut short. With two jobs the
    signal goes to the whole process group (workers included), as a terminal's Ctrl-C and a
    CI runner's SIGTERM to the job's group do."""
    (tmp_path / "slow.py").write_text(SLOW)
    process = start_run("--impl", "reference", "--impl", "slow.py:Slow", "--contract", "thread",
                        "--contract", "payload", "--provider", "openai-chat", "--examples", "60",
                        "--jobs", jobs, "--report", "r.jsonl")
    wait_for(tmp_path / "searching")
    err, seconds = signal_and_wait(process, name, group=jobs == "2")
    assert process.returncode == CODES[name], err
    assert seconds < 10, f"{seconds:.1f}s from {name} to exit"
    assert "Traceback" not in err and "Error" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"interrupted by {name} after ") and last.endswith(" of 3 searches; partial report: r.jsonl")
    assert gone_within(lambda: group_members(process.pid)) == []

    report = lines(tmp_path / "r.jsonl")
    foot = report[-1]
    assert foot["type"] == "footer" and foot["interrupted"] == name and foot["searches"] == 3
    assert 1 <= foot["searched"] <= 2 and f"after {foot['searched']} of 3" in last
    results = {(r["implementation"], r["check"]): r for r in report if r["type"] == "result"}
    slow = [r for (impl, check), r in results.items() if impl == "slow" and check.startswith("payload.")]
    assert slow and all(r["status"] == "skip" and f"interrupted by {name}" in r["message"] for r in slow)
    finished = [r for (impl, _), r in results.items() if impl == "reference" and r["status"] != "skip"]
    assert finished and {r["status"] for r in finished} <= {"pass", "not_evaluated"}


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_program_stuck_in_a_call_is_stopped_at_once_and_is_no_verdict(jobs, start_run, tmp_path):
    """With --timeout 30 the stop does not wait for the call's deadline; the program (each copy:
    the worker's, and the one the parent asked for its hello) is killed, and the call it never
    answered is not a no_crash failure."""
    (tmp_path / "stuck.py").write_text(STUCK)
    process = start_run("--impl", f"exec:{sys.executable} stuck.py", "--impl", "reference", "--contract", "thread",
                        "--timeout", "30", "--jobs", jobs, "--report", "r.jsonl")
    wait_for(tmp_path / "called")
    err, seconds = signal_and_wait(process, "SIGINT")
    assert process.returncode == 130, err
    assert seconds < 5, f"{seconds:.1f}s from SIGINT to exit"
    assert "Traceback" not in err, err
    assert gone_within(lambda: living(pids(tmp_path / "started"))) == []
    assert gone_within(lambda: group_members(process.pid)) == []
    crash = [r for r in lines(tmp_path / "r.jsonl") if r.get("check") == "thread.no_crash" and
             r["implementation"] == "stuck"]
    assert crash[0]["status"] == "skip" and "interrupted by SIGINT" in crash[0]["message"]


@pytest.mark.slow
def test_a_child_forked_by_a_program_does_not_outlive_a_normal_run(start_run, tmp_path):
    (tmp_path / "starts.py").write_text(STARTS.format(examples=str(ROOT / "examples/python"), root=str(ROOT)))
    process = start_run("--impl", f"exec:{sys.executable} starts.py fork", "--contract", "thread", "--examples", "5")
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, out + err
    forked = pids(tmp_path / "children")
    assert forked and gone_within(lambda: living(forked), seconds=5) == []


@pytest.mark.skipif(not reaper.available(), reason="no child subreapers here: docs/running.md says what is left")
@pytest.mark.slow
@pytest.mark.parametrize("ending", ["normal", "SIGINT", "SIGKILL"])
def test_processes_a_program_starts_outside_its_group_end_with_the_run(ending, start_run, tmp_path):
    """Its supervisor ends them: when the program exits at the end of a normal run, when the
    run stops it on a signal, and when the run's process is killed outright (the supervisor's
    socket to it closes)."""
    (tmp_path / "starts.py").write_text(STARTS.format(examples=str(ROOT / "examples/python"), root=str(ROOT)))
    command = f"exec:{sys.executable} starts.py escape" + ("" if ending == "normal" else " hang")
    process = start_run("--impl", command, "--contract", "thread", "--examples", "5", "--timeout", "30")
    if ending != "normal":
        wait_for(tmp_path / "called")
        process.send_signal(signal.Signals[ending])
    out, err = process.communicate(timeout=120)
    assert process.returncode == {"normal": 0, "SIGINT": 130, "SIGKILL": -signal.SIGKILL}[ending], out + err
    escaped = pids(tmp_path / "children")
    assert len(escaped) >= 2 and gone_within(lambda: living(escaped), seconds=5) == []


# -- the handlers -----------------------------------------------------------------------------

def test_the_handlers_note_the_signal_and_are_put_back():
    # A background job (`cmd &` in a script) starts with SIGINT ignored, and handling() keeps
    # an ignored signal ignored, as it should: give the test Python's own handlers to replace.
    outer = {signal.SIGINT: signal.signal(signal.SIGINT, signal.default_int_handler),
             signal.SIGTERM: signal.signal(signal.SIGTERM, signal.SIG_DFL)}
    try:
        before = {number: signal.getsignal(number) for number in stop.SIGNALS}
        with stop.handling():
            os.kill(os.getpid(), signal.SIGINT)  # no KeyboardInterrupt: only noted
            waited = time.monotonic() + 5  # the handler runs on the main thread, soon after
            while stop.requested() is None and time.monotonic() < waited:
                time.sleep(0.01)
            assert stop.requested() == "SIGINT"
            with pytest.raises(Interrupted):
                stop.check()
            os.kill(os.getpid(), signal.SIGTERM)
            assert stop.requested() == "SIGINT"  # the first one is what stopped the run
        assert stop.requested() is None
        assert {number: signal.getsignal(number) for number in stop.SIGNALS} == before
    finally:
        for number, handler in outer.items():
            signal.signal(number, handler)


def test_an_ignored_signal_stays_ignored():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with stop.handling():
            assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.01)
            assert stop.requested() is None
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_stop_gives_up_a_hung_call_at_once():
    threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM)).start()
    started = time.monotonic()
    with stop.handling(), pytest.raises(Interrupted):
        guarded_call(lambda: time.sleep(30), timeout=30)
    assert time.monotonic() - started < 2


def test_the_api_leaves_the_signal_handlers_alone():
    """run_conformance is a library call: Ctrl-C there is the caller's (a KeyboardInterrupt)."""
    seen = []

    class Watch:
        name, version = "watch", "1"

        def extract_thread(self, rows):
            seen.append(signal.getsignal(signal.SIGINT))
            return rows[:1]

    before = signal.getsignal(signal.SIGINT)
    api.run_conformance(Watch, contracts=["thread"], examples=2, shrink=False)
    assert seen and set(seen) == {before} and signal.getsignal(signal.SIGINT) == before


# -- reading an interrupted report back -------------------------------------------------------

@pytest.fixture
def interrupted_report(tmp_path, monkeypatch):
    """A report of a finished run, and the same report marked as stopped by SIGINT after 1 of 2 searches."""
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--impl", "reference", "--contract", "thread", "--examples", "3",
                 "--report", "whole.jsonl"]) == 0
    report = lines(tmp_path / "whole.jsonl")
    report[-1] |= {"interrupted": "SIGINT", "searched": 1, "searches": 2}
    (tmp_path / "cut.jsonl").write_text("".join(json.dumps(line) + "\n" for line in report))
    return tmp_path / "whole.jsonl", tmp_path / "cut.jsonl"


def test_summary_says_the_run_was_interrupted(interrupted_report, capsys):
    whole, cut = interrupted_report
    assert main(["summary", str(cut)]) == 0
    assert "interrupted by SIGINT after 1 of 2 searches: a partial report" in capsys.readouterr().out
    assert main(["summary", str(cut), "--fail-on-failure"]) == 1  # a gate: a partial report fails it
    assert main(["summary", str(whole), "--fail-on-failure"]) == 0
    assert main(["summary", str(cut), "--format", "markdown"]) == 0
    assert "**interrupted by SIGINT after 1 of 2 searches**" in capsys.readouterr().out
    assert main(["summary", str(cut), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["interrupted"] == "interrupted by SIGINT after 1 of 2 searches"


def test_diff_fails_an_interrupted_new_report_and_warns_of_an_interrupted_old_one(interrupted_report, capsys):
    whole, cut = interrupted_report
    assert main(["diff", str(whole), str(cut)]) == 1
    assert "NEW was interrupted by SIGINT after 1 of 2 searches: a partial report passes no gate" in \
        capsys.readouterr().out
    assert main(["diff", str(cut), str(whole)]) == 0
    assert "warning: OLD was interrupted by SIGINT" in capsys.readouterr().out
    failing = [dict(r, status="fail") if r.get("check") == "thread.reaches_root" else r for r in lines(cut)]
    cut.write_text("".join(json.dumps(line) + "\n" for line in failing))
    assert main(["diff", str(whole), str(cut)]) == 1
    out = capsys.readouterr().out
    assert "regressed   thread.reaches_root" in out and "NEW was interrupted by SIGINT" in out


def test_an_interrupted_shard_is_not_merged(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["run", "--impl", "reference", "--contract", "thread", "--contract", "trim", "--examples", "3"]
    for index in (1, 2):
        assert main([*args, "--shard", f"{index}/2", "--report", f"s{index}.jsonl"]) == 0
    shard = lines(tmp_path / "s2.jsonl")
    shard[-1] |= {"interrupted": "SIGTERM", "searched": 0, "searches": 1}
    (tmp_path / "s2.jsonl").write_text("".join(json.dumps(line) + "\n" for line in shard))
    from chatconform.outputs import report

    with pytest.raises(ConfigError, match=r"s2.jsonl: the shard was interrupted by SIGTERM after 0 of 1 searches"):
        report.read_many([tmp_path / "s1.jsonl", tmp_path / "s2.jsonl"])
