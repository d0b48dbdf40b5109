"""A guarded call: on a thread of its own with a deadline, or on the caller's thread where the
call keeps its deadline itself (a program in a process of its own)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from chatconform import engine
from chatconform.contracts import get_contract
from chatconform.errors import Interrupted
from chatconform.frame.guard import guarded_call, time_left
from chatconform.runner import discovery

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
