"""A guarded call: on a thread of its own with a deadline, or on the caller's thread where the
call keeps its deadline itself (a program in a process of its own)."""

from __future__ import annotations

import gc
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from chatconform.conformance import discovery, engine
from chatconform.conformance.contracts import get_contract
from chatconform.conformance.guard import guarded_call, time_left
from chatconform.conformance.snapshot import YOUNG_WHILE_JUDGING, collecting_less
from chatconform.errors import Interrupted

ROOT = Path(__file__).resolve().parents[2]


def test_a_call_that_keeps_its_deadline_runs_here_and_knows_its_time():
    seen = []
    outcome = guarded_call(lambda: seen.append((threading.current_thread(), time_left())) or "done", 5.0,
                           enforced=True)
    (thread, left), = seen
    assert outcome.output == "done" and thread is threading.current_thread()
    assert left is not None and 0 < left <= 5.0
    assert time_left() is None  # the deadline is the call's only


def test_any_other_call_runs_on_a_thread_of_its_own():
    seen = []
    guarded_call(lambda: seen.append(threading.current_thread()), 5.0)
    assert seen[0] is not threading.current_thread()


def test_what_a_call_here_raises_is_its_failure_and_a_stop_is_no_verdict():
    def broken():
        raise KeyError("row")

    outcome = guarded_call(broken, 5.0, enforced=True)
    assert isinstance(outcome.error, KeyError) and outcome.error.__traceback__ is None
    assert "broken" in outcome.error_trace

    def stopped():
        raise Interrupted("SIGINT")

    with pytest.raises(Interrupted):
        guarded_call(stopped, 5.0, enforced=True)


def test_a_programs_calls_start_no_thread(monkeypatch):
    started = []
    real = threading.Thread.start

    def start(self):
        started.append(self.name)
        real(self)

    program = discovery.load(f"exec:{sys.executable} {ROOT / 'examples/python/impl.py'}")
    try:
        monkeypatch.setattr(threading.Thread, "start", start)
        outcome = engine.run([program], engine.Selection([get_contract("thread")], None), "dev")
    finally:
        program.obj.close()
    assert outcome.results and "chatconform-call" not in started


def test_a_case_is_judged_with_fewer_young_collections_and_the_thresholds_come_back():
    seen = []

    class Threads:
        name, version = "threads", "1"

        def extract_thread(self, rows):
            seen.append(gc.get_threshold()[0])
            return list(rows)

    before = gc.get_threshold()
    impl = discovery.load_object(Threads, in_process=True)
    engine.run([impl], engine.Selection([get_contract("thread")], None), "dev")
    assert seen and min(seen) >= YOUNG_WHILE_JUDGING and gc.get_threshold() == before


def test_thresholds_a_call_sets_are_its_own():
    with collecting_less():
        gc.set_threshold(1234, 5, 6)
    try:
        assert gc.get_threshold() == (1234, 5, 6)
    finally:
        gc.set_threshold(700, 10, 10)


def test_a_hosted_implementations_process_judges_with_fewer_young_collections_too(tmp_path):
    (tmp_path / "watched.py").write_text(textwrap.dedent(f"""
        import gc

        class Threads:
            name, version = "watched", "1"

            def extract_thread(self, rows):
                with open({str(tmp_path / "seen")!r}, "a") as seen:
                    seen.write(f"{{gc.get_threshold()[0]}}\\n")
                return list(rows)
    """))
    impl = discovery.load(f"{tmp_path / 'watched.py'}:Threads")
    try:
        engine.run([impl], engine.Selection([get_contract("thread")], None), "dev")
    finally:
        impl.obj.close()
    seen = [int(line) for line in (tmp_path / "seen").read_text().split()]
    assert seen and min(seen) >= YOUNG_WHILE_JUDGING
