"""Runs that scale out: ``run --jobs N`` (worker processes), ``run --shard I/N`` (a CI
matrix, merged by ``summary`` and ``diff``), and the pytest plugin under pytest-xdist.

The promise is that none of them changes a verdict: a parallel run's report is the serial
run's apart from timings, and the shards of a run merge to it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from chatconform import api, engine
from chatconform.cli import main
from chatconform.errors import ConfigError
from chatconform.frame.status import Status
from chatconform.outputs import report
from chatconform.runner import discovery

ROOT = Path(__file__).resolve().parents[2]
EXEC_IMPL = f"exec:{sys.executable} {ROOT / 'examples' / 'python' / 'impl.py'}"
#: A reference, two fakes (failures to shrink, on several providers), and a program over the
#: JSON-lines protocol: every way of naming an implementation that a worker loads again.
IMPLS = ["reference", "chatconform.fakes.payload:SortSystemFirst39372",
         "chatconform.fakes.thread:SinglePassTies", EXEC_IMPL]
RUN = [arg for spec in IMPLS for arg in ("--impl", spec)] + [
    "--contract", "thread", "--contract", "payload", "--provider", "openai-chat", "--provider", "qwen-vllm",
    "--examples", "6"]


def results(path: Path) -> list[dict]:
    return [line for line in map(json.loads, path.read_text().splitlines()) if line["type"] == "result"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One serial run, one with two jobs, and two shards of the same run (one of them with
    two jobs): their reports."""
    folder = tmp_path_factory.mktemp("scale")
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        codes = {"serial": main(["run", *RUN, "--report", "serial.jsonl"]),
                 "jobs": main(["run", *RUN, "--jobs", "2", "--report", "jobs.jsonl"])}
        for index, jobs in ((1, "1"), (2, "2")):
            codes[f"shard{index}"] = main(["run", *RUN, "--shard", f"{index}/2", "--jobs", jobs,
                                           "--report", f"shard{index}.jsonl"])
    finally:
        os.chdir(cwd)
    return folder, codes


@pytest.mark.slow
def test_two_jobs_give_the_serial_report_apart_from_timings(runs):
    folder, codes = runs
    serial, jobs = results(folder / "serial.jsonl"), results(folder / "jobs.jsonl")
    assert codes["serial"] == codes["jobs"] == 1
    assert any(r["status"] == "fail" for r in serial) and any(r["status"] == "pass" for r in serial)
    assert jobs == serial
    head = [json.loads((folder / f).read_text().splitlines()[0]) for f in ("serial.jsonl", "jobs.jsonl")]
    assert {k for k in head[0] if head[0][k] != head[1][k]} <= {"started"}


@pytest.mark.slow
def test_shards_split_the_searches_and_merge_to_the_serial_report(runs, capsys):
    folder, _ = runs
    shards = [folder / f"shard{i}.jsonl" for i in (1, 2)]
    heads = [json.loads(p.read_text().splitlines()[0])["shard"] for p in shards]
    units = [tuple(u) for h in heads for u in h["units"]]
    assert sorted(units) == sorted(map(tuple, heads[0]["planned"])) and len(set(units)) == len(units)
    assert [h["index"] for h in heads] == [1, 2] and all(h["units"] for h in heads)
    merged = report.read_many(shards)
    assert merged.results == results(folder / "serial.jsonl")
    assert merged.header["merged"]["shards"] == 2
    # A folder of shard reports (as a CI job downloads them) merges too.
    (folder / "shards").mkdir(exist_ok=True)
    for path in shards:
        (folder / "shards" / path.name).write_text(path.read_text())
    assert report.read_many([folder / "shards"]).results == merged.results
    capsys.readouterr()
    assert main(["diff", str(folder / "serial.jsonl"), *map(str, shards)]) == 0
    assert "no differences" in capsys.readouterr().out
    assert main(["summary", *map(str, shards), "--fail-on-failure"]) == 1


def test_the_partition_is_deterministic_and_covers_the_plan():
    impls = [discovery.load("reference"), discovery.load("chatconform.fakes.thread:SinglePassTies")]
    planned = engine.plan(impls, engine.select(None))
    assert planned == engine.plan(impls, engine.select(None))
    for count in (1, 2, 3, 5, len(planned) + 2):
        shards = [engine.shard_units(planned, i, count) for i in range(1, count + 1)]
        flat = [u for shard in shards for u in shard]
        assert len(flat) == len(planned) and set(flat) == set(planned)
        assert [engine.shard_units(planned, i, count) for i in range(1, count + 1)] == shards
    with pytest.raises(ConfigError, match="between 1 and 2"):
        engine.shard_units(planned, 3, 2)


def test_a_free_worker_takes_a_unit_of_an_implementation_it_has_loaded_within_the_contract_at_hand():
    from collections import deque

    from chatconform.engine.parallel import Task, _next_task
    from chatconform.engine.results import SearchSettings, Unit
    from chatconform.frame.profiles import get_profile

    settings = SearchSettings(get_profile("ci"))

    def task(spec: str, contract: str, variant: str | None) -> Task:
        return Task(Unit(0, contract, variant), spec, {}, settings)

    class Worker:
        specs: set[str] = set()
        last: tuple[str, str | None] | None = None

    worker = Worker()
    worker.specs, worker.last = {"b"}, ("payload", "glm")
    pending = deque([task("a", "payload", "openai-chat"), task("b", "payload", "openai-chat"),
                     task("b", "payload", "glm"), task("b", "serde", None)])
    # its implementation, the variant it searched last: ahead of the queue's head
    assert _next_task(pending, worker) == task("b", "payload", "glm")
    # its implementation, another variant of the same contract
    assert _next_task(pending, worker) == task("b", "payload", "openai-chat")
    # none of its own left in the contract at hand: the head, never the next contract's unit
    assert _next_task(pending, worker) == task("a", "payload", "openai-chat")
    assert worker.specs == {"a", "b"} and worker.last == ("payload", "openai-chat")
    assert _next_task(pending, worker) == task("b", "serde", None) and not pending


@pytest.mark.slow
def test_merging_refuses_what_is_not_one_whole_run(runs, tmp_path):
    folder, _ = runs
    shard = {i: folder / f"shard{i}.jsonl" for i in (1, 2)}
    lines = shard[2].read_text().splitlines()
    head = json.loads(lines[0])

    def variant(name: str, **changes) -> Path:
        changed = {**head, "shard": {**head["shard"], **changes}}
        (tmp_path / name).write_text("\n".join([json.dumps(changed), *lines[1:]]) + "\n")
        return tmp_path / name

    with pytest.raises(ConfigError, match="shard 2/2 missing"):
        report.merge([report.read(shard[1])])  # read alone, one shard's report is that shard
    with pytest.raises(ConfigError, match=r"field shard.index: 3 is more than the shard count 2"):
        report.read_many([shard[1], variant("third.jsonl", index=3, units=[])])
    with pytest.raises(ConfigError, match="not a shard report"):
        report.read_many([folder / "serial.jsonl", shard[1]])
    with pytest.raises(ConfigError, match="given twice"):
        report.read_many([shard[1], shard[2], variant("again.jsonl")])
    with pytest.raises(ConfigError, match="overlap"):
        report.read_many([shard[1], variant("overlap.jsonl", units=json.loads(shard[1].read_text().splitlines()[0])
                                            ["shard"]["units"])])
    with pytest.raises(ConfigError, match="different runs"):
        report.read_many([shard[1], variant("other.jsonl", run="0" * 16)])
    assert main(["summary", str(shard[1]), str(variant("broken.jsonl", run="0" * 16))]) == 2


def test_a_shard_with_nothing_to_search_passes_when_others_have_work(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code = main(["run", "--impl", "reference", "--contract", "thread", "--shard", "2/2",
                 "--report", "s.jsonl", "--examples", "2"])
    assert code == 0
    assert "nothing to search here" in capsys.readouterr().err
    assert json.loads((tmp_path / "s.jsonl").read_text().splitlines()[0])["shard"]["units"] == []


CRASHING = '''
import os


class Crashes:
    name, version = "crashes", "1"
    providers = {"openai-chat", "qwen-vllm"}

    def extract_thread(self, rows):
        return list(rows)

    def to_payload(self, history, *, provider, instructions=None):
        os._exit(3)  # the whole worker process goes, as a crash in native code would take it
'''


@pytest.mark.slow
def test_a_worker_that_dies_is_an_error_of_its_search_and_the_run_goes_on(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "crashing.py").write_text(CRASHING)
    # In-process, the exit takes the worker with it; isolated (the default), only the
    # implementation's own process goes, which is a verdict on the case.
    verdicts = api.run_conformance("crashing.py:Crashes", contracts=["thread", "payload"], examples=3,
                                   shrink=False, jobs=2, in_process=True)
    by_check = {v.check: v for v in verdicts}
    assert by_check["thread.no_crash"].status == Status.PASS
    died = by_check["payload.no_crash"]
    assert died.status == Status.ERROR and "worker process searching it died (exit code 3)" in died.message
    isolated = {v.check: v for v in api.run_conformance("crashing.py:Crashes", contracts=["payload"], examples=3,
                                                         shrink=False, jobs=2)}
    assert isolated["payload.no_crash"].status == Status.FAIL
    assert "exited with status 3" in isolated["payload.no_crash"].message


class TopLevel:
    """A class in a test module: a worker loads it from this file."""

    name, version = "top-level", "1"
    providers = {"openai-chat", "qwen-vllm"}

    def to_payload(self, history, *, provider, instructions=None):
        from chatconform.reference import ReferenceImplementation

        return ReferenceImplementation().to_payload(history, provider=provider, instructions=instructions)


@pytest.mark.slow
def test_objects_are_sent_by_where_they_are_defined():
    impl = discovery.wrap(TopLevel)
    spec = discovery.portable_spec(impl)  # by module name where a worker can import it, else by file
    assert spec.endswith("test_scale.py:TopLevel") or spec.endswith("test_scale:TopLevel")
    verdicts = api.run_conformance(TopLevel, contracts=["payload"], examples=3, shrink=False, jobs=2)
    # Three examples leave undecided (skip) what they cannot decide.
    assert {v.status for v in verdicts} <= {Status.PASS, Status.NOT_EVALUATED, Status.SKIP}
    assert next(v for v in verdicts if v.check == "payload.no_crash").status == Status.PASS
    with pytest.raises(ConfigError, match="cannot send TopLevel"):
        discovery.portable_spec(discovery.wrap(TopLevel()))

    class Local(TopLevel):
        pass

    with pytest.raises(ConfigError, match="defined at a module's top level"):
        api.run_conformance(Local, contracts=["payload"], examples=3, jobs=2)


SLOW = '''
import time


class Slow:
    name, version = "slow", "1"
    providers = {"openai-chat", "qwen-vllm", "glm"}

    def to_payload(self, history, *, provider, instructions=None):
        time.sleep(0.5)
        return {"messages": []}
'''


def _start_slow_run(tmp_path, start_run) -> subprocess.Popen:
    (tmp_path / "slow.py").write_text(SLOW)
    process = start_run("--impl", "slow.py:Slow", "--jobs", "2", "--examples", "200", "--report", "r.jsonl")
    time.sleep(8)  # the workers start and search
    return process


def _session_ends(process: subprocess.Popen) -> bool:
    """Whether every process of the run's session is gone within 30 seconds (a bound for a
    loaded machine; they are gone in about one when it is idle)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.2)
    return False


@pytest.mark.release  # worker processes stopped and run under xdist
@pytest.mark.slow
def test_ctrl_c_stops_the_workers(tmp_path, start_run):
    process = _start_slow_run(tmp_path, start_run)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "interrupted by SIGINT" in err and "Traceback" not in err
    assert _session_ends(process), "worker processes outlived the interrupted run"


@pytest.mark.release  # worker processes stopped and run under xdist
@pytest.mark.slow
def test_sigterm_stops_the_workers_with_a_partial_report(tmp_path, start_run):
    # A CI runner's SIGTERM: handled as a stop, like Ctrl-C.
    process = _start_slow_run(tmp_path, start_run)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143, err
    assert err.strip().splitlines()[-1].endswith("; partial report: r.jsonl"), err
    footer = json.loads((tmp_path / "r.jsonl").read_text().splitlines()[-1])
    assert footer["type"] == "footer" and footer["interrupted"] == "SIGTERM"
    assert _session_ends(process), "worker processes outlived their parent"
    assert "Traceback" not in err and "BrokenPipe" not in err, err


@pytest.mark.release  # worker processes stopped and run under xdist
@pytest.mark.slow
def test_workers_end_quietly_with_a_parent_killed_outright(tmp_path, start_run):
    # SIGKILL ends the parent with no chance to stop its workers: they see it gone.
    process = _start_slow_run(tmp_path, start_run)
    process.kill()
    _, err = process.communicate(timeout=60)
    assert process.returncode == -signal.SIGKILL
    assert _session_ends(process), "worker processes outlived their parent"
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def _outcomes(xml: Path) -> dict[str, str]:
    outcomes = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcomes[case.get("name")] = kinds[0] if kinds else "passed"
    return outcomes


@pytest.mark.release  # worker processes stopped and run under xdist
@pytest.mark.slow
def test_the_plugin_under_xdist_gives_the_outcomes_of_a_plain_session(tmp_path):
    pytest.importorskip("xdist")
    args = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--pyargs", "chatconform.conformance",
            "--chatconform-impl=chatconform.fakes.thread:OldestFirst", "--chatconform-contract=thread",
            "--chatconform-examples=4"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for workers in ("0", "2"):
        done = subprocess.run([*args, "-n", workers, f"--junitxml=n{workers}.xml"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 1, done.stdout + done.stderr  # the fake fails some checks
    serial, distributed = _outcomes(tmp_path / "n0.xml"), _outcomes(tmp_path / "n2.xml")
    assert len(serial) == 10 and "failure" in serial.values() and "passed" in serial.values()
    assert distributed == serial
