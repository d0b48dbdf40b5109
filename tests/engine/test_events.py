"""The engine's events and the reporters that handle them: a handler hears a run in order,
worker processes forward what their searches emit, and each output format is a reporter
(the terminal, the JSON-lines report, JUnit XML)."""

from __future__ import annotations

import itertools
import json
import re
import xml.etree.ElementTree as ET
from collections import Counter

import pytest

from chatconform import engine
from chatconform.cli import main
from chatconform.engine import (
    ExampleRan,
    RunFinished,
    RunStarted,
    SearchFinished,
    SearchStarted,
)
from chatconform.fakes.trim import KeepLastN
from chatconform.frame.profiles import get_profile
from chatconform.outputs import report
from chatconform.runner import discovery

FAKE = "chatconform.fakes.trim:KeepLastN"
QUICK = ("--examples", "30")  # enough trim cases for fake-keep-last-n to fail each check it names


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def _recorded_run(jobs: int) -> tuple[engine.RunOutcome, list]:
    events: list = []
    impls = [discovery.load("reference"), discovery.load(FAKE)]
    outcome = engine.run(impls, engine.select(["trim"]), get_profile("ci", examples=10), jobs=jobs,
                         handlers=[events.append])
    return outcome, events


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_handler_hears_the_run_in_order_with_every_case(jobs):
    outcome, events = _recorded_run(jobs)
    searches = [u for u in outcome.units if u.skip is None]
    assert isinstance(events[0], RunStarted) and events[0].searches == events[0].planned == len(searches) == 2
    assert isinstance(events[-1], RunFinished) and events[-1].outcome is outcome and events[-1].seconds > 0
    middle = events[1:-1]
    started = [e for e in middle if isinstance(e, SearchStarted)]
    finished = [e for e in middle if isinstance(e, SearchFinished)]
    assert {e.label for e in started} == {e.label for e in finished} == {"reference · trim", "fake-keep-last-n · trim"}
    assert {type(e) for e in middle} == {SearchStarted, ExampleRan, SearchFinished}
    ran = Counter(e.label for e in middle if isinstance(e, ExampleRan))
    for end in finished:
        # every case either pass ran, forwarded from the worker process under jobs=2
        assert ran[end.label] == end.result.examples + end.result.replayed > 0
        cases = [e for e in middle if isinstance(e, ExampleRan) and e.label == end.label]
        assert sum(not e.shrinking for e in cases) == end.result.examples
        assert sum(e.shrinking for e in cases) == end.result.replayed
        # each case says the checks seen failing before it: by the last, every failure found
        assert cases[0].failing == {} and set(cases[-1].failing) == set(end.result.failures)
        assert all(set(a.failing) <= set(b.failing) for a, b in itertools.pairwise(cases))
    assert any(e.failing and e.shrinking for e in middle if isinstance(e, ExampleRan))
    assert sorted(id(e.result) for e in finished) == sorted(id(r) for r in outcome.results.values())
    for label in ran:  # each case of a search comes between its start and its end
        positions = [i for i, e in enumerate(middle) if getattr(e, "label", None) == label]
        assert isinstance(middle[positions[0]], SearchStarted) and isinstance(middle[positions[-1]], SearchFinished)


def test_workers_give_the_handlers_what_a_serial_run_gives():
    serial, serial_events = _recorded_run(1)
    parallel, parallel_events = _recorded_run(2)
    assert [report.result_line(v) for v in serial.verdicts] == [report.result_line(v) for v in parallel.verdicts]

    def heard(events):
        return Counter((type(e).__name__, getattr(e, "label", None)) for e in events)

    assert heard(serial_events) == heard(parallel_events)


def _without_timings(text: str) -> str:
    return re.sub(r"\d+\.\ds\b", "<s>", text)


def test_the_terminal_and_the_report_are_the_same_with_workers(capsys, tmp_path, monkeypatch):
    from chatconform.outputs.reporters import terminal

    monkeypatch.setattr(terminal, "PROGRESS_SECONDS", float("inf"))  # no "still searching" line, however slow
    outputs = {}
    for jobs in ("1", "2"):
        assert main(["run", "--impl", "reference", "--impl", FAKE, "--contract", "trim", *QUICK, "--jobs", jobs,
                     "--report", "r.jsonl"]) == 1
        captured = capsys.readouterr()
        lines = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
        outputs[jobs] = (_without_timings(captured.out), sorted(_without_timings(captured.err).splitlines()[1:]),
                         [line for line in lines if line["type"] == "result"], lines[-1]["counts"])
    assert outputs["1"] == outputs["2"]
    out, progress, results, counts = outputs["1"]
    assert progress == ["  fake-keep-last-n · trim: 30 examples, <s>, 3 failing",
                        "  reference · trim: 30 examples, <s>, ok"]
    assert out.startswith("conformance\n") and "FAIL trim.pairs_intact · fake-keep-last-n" in out
    assert out.rstrip().endswith("report: r.jsonl")
    assert f"{counts['pass']} pass, {counts['fail']} fail in <s>" in out
    assert len(results) == sum(counts.values())


def test_junit_xml_has_one_testcase_per_verdict_and_a_failure_per_failing_check(tmp_path):
    assert main(["run", "--impl", "reference", "--impl", FAKE, "--contract", "trim", *QUICK,
                 "--report", "r.jsonl", "--junit-xml", "j.xml"]) == 1
    results = [r for r in map(json.loads, (tmp_path / "r.jsonl").read_text().splitlines()) if r["type"] == "result"]
    root = ET.parse(tmp_path / "j.xml").getroot()
    assert root.tag == "testsuites"
    cases = root.findall("./testsuite/testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [(r["implementation"], r["check"]) for r in results]
    by_id = {(c.get("classname"), c.get("name")): c for c in cases}
    failing = {r["check"] for r in results if r["status"] == "fail"}
    assert {c for c in KeepLastN.violates if c.startswith("trim.")} <= failing
    for result in results:
        case = by_id[(result["implementation"], result["check"])]
        failure = case.find("failure")
        if result["status"] == "fail":
            assert failure is not None and failure.get("message") == result["message"]
            assert f"FAIL {result['check']}" in failure.text and "regression test" in failure.text
        else:
            assert result["status"] == "pass" and len(case) == 0
    assert root.get("tests") == str(len(results)) and root.get("failures") == str(len(failing))
    assert [s.get("name") for s in root.findall("testsuite")] == ["reference", "fake-keep-last-n"]
    assert root.find("./testsuite[@name='reference']").get("failures") == "0"


def test_junit_xml_maps_errors_skips_and_warnings():
    from chatconform.engine import Verdict
    from chatconform.frame.status import Status
    from chatconform.outputs.reporters import JunitReporter

    verdicts = [Verdict("x", "x", "trim", "trim.no_crash", Status.ERROR, "the check itself raised"),
                Verdict("x", "x", "trim", "trim.user_led", Status.SKIP, "x has no trim()"),
                Verdict("x", "x", "trim", "trim.keeps_latest", Status.XFAIL, "expected failure: known"),
                Verdict("x", "x", "trim", "trim.within_budget", Status.NOT_EVALUATED, "not evaluated: \x00"),
                Verdict("x", "x", "trim", "trim.pairs_intact", Status.WARN, "a hazard")]
    for strict, warned in ((False, "system-out"), (True, "failure")):
        document = JunitReporter("j.xml", strict=strict).document(verdicts, 1.0)
        root = ET.fromstring(ET.tostring(document.getroot()))  # it parses, the NUL escaped
        kinds = [[child.tag for child in case] for case in root.iter("testcase")]
        assert kinds == [["error"], ["skipped"], ["skipped"], ["failure"], [warned]]
        assert (root.get("errors"), root.get("skipped"), root.get("failures")) == ("1", "2", str(1 + strict))
