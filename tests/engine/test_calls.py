"""The one call path (chatconform.frame.calls): every call into an implementation has the run's
deadline, its input snapshot and its result check, wherever it is made from."""

from __future__ import annotations

import time
from typing import Any

from chatconform import run_conformance
from chatconform.frame.calls import Caller, ImplementationProcess, running
from chatconform.frame.guard import time_left
from chatconform.reference import ReferenceImplementation
from chatconform.reference.serde import dump, load
from chatconform.runner.protocol.program import Program


class _SlowLoad:
    """dump as the reference does; load as it does, a second and a half later."""

    name, version = "slow-load", "1"

    def dump(self, history):
        return dump(history)

    def load(self, data):
        time.sleep(1.5)
        return load(data)


def test_the_runs_timeout_reaches_the_calls_the_checks_make():
    """serde.round_trip calls load() itself: with --timeout 0.5 it is given up at 0.5 s (it used
    to have a fixed 10 s, whatever the run's timeout)."""
    (verdict,) = run_conformance(_SlowLoad, checks=["serde.round_trip"], timeout=0.5, examples=2, shrink=False,
                                 in_process=True)
    assert verdict.status == "fail", verdict.message
    assert "load() did not return within 0.5s" in verdict.message
    (verdict,) = run_conformance(_SlowLoad, checks=["serde.round_trip"], timeout=5, examples=1, shrink=False,
                                 in_process=True)
    assert verdict.status == "pass", verdict.message


def test_a_call_in_this_process_gets_a_private_copy_compared_after():
    def append(history):
        history.append("mine")
        return history

    given = ["a", "b"]
    called = Caller(object(), 5).call(append, given, size=2, watch=True)
    assert given == ["a", "b"] and called.output == ["a", "b", "mine"]
    assert called.input_change() == "the implementation changed its input"
    assert Caller(object(), 5).call(list, given, size=2, watch=True).input_change() is None
    unwatched = Caller(object(), 5).call(append, given, size=2)
    assert unwatched.output is given and unwatched.input_change() is None


def test_the_bundled_reference_is_lent_its_input_and_still_judged():
    given = ["a"]
    caller = Caller(ReferenceImplementation(), 5)
    assert caller.bundled and not Caller(type("Mine", (ReferenceImplementation,), {})(), 5).bundled
    called = caller.call(lambda history: history, given, size=1, watch=True)
    assert called.output is given
    assert caller.call(lambda history: history.pop(), given, size=1, watch=True).input_change() is not None


def test_the_result_check_and_a_failure_are_the_calls_outcome():
    caller = Caller(object(), 5)
    checked = caller.call(lambda value: value, 3, size=0, check=lambda out: None if isinstance(out, str) else "no text")
    assert checked.problem == "no text"

    def broken(_):
        raise KeyError("row")

    failed = caller.call(broken, 3, size=0, check=lambda out: "never asked")
    assert isinstance(failed.error, KeyError) and failed.problem is None and not failed.hung


def test_a_hang_is_given_up_at_the_deadline_of_the_inputs_size():
    called = Caller(object(), 0.2).call(lambda _: time.sleep(3), None, size=0)
    assert called.hung and called.deadline == 0.2 and called.seconds < 1.5
    assert Caller(object(), 0.2).call(lambda _: None, None, size=2000).deadline == round(0.2 * 3 ** 2, 3)


def test_a_call_inside_a_call_keeps_the_runs_timeout_and_what_the_outer_has_left():
    seen: dict[str, Any] = {}

    def inner(_):
        seen["inner_left"] = time_left()

    def outer(_):
        seen["running"] = running()
        nested = Caller(object())  # as the lifecycle player makes one for each call
        seen["timeout"] = nested.timeout
        seen["called"] = nested.call(inner, None, size=5000)

    caller = Caller(object(), 2)
    caller.call(outer, None, size=0)
    assert seen["running"] is caller and seen["timeout"] == 2
    called = seen["called"]
    assert called.deadline == 2 * 6 ** 2  # the run's timeout, grown with the input
    assert called.allowed <= 2 and seen["inner_left"] <= 2  # but no longer than the outer call has left
    assert running() is None and Caller(object()).timeout == 10.0  # outside any call: the default


class _Process(ImplementationProcess):
    """An implementation in a process of its own, as the engine sees it."""

    def __init__(self, *, warm: bool, hosted: bool) -> None:
        self._warm, self._hosted = warm, hosted
        self.watched: list[float | None] = []
        self.lefts: list[float | None] = []

    def watch_input(self, timeout=None, shared=None):
        self.watched.append(timeout)

    def input_change(self):
        return "it sorted its rows"

    def took(self):
        return 0.25

    @property
    def warm(self):
        return self._warm

    @property
    def hosted(self):
        return self._hosted

    def method(self, rows):
        self.lefts.append(time_left())
        return rows


def test_a_process_of_its_own_keeps_the_deadline_and_says_what_became_of_its_input():
    cold = _Process(warm=False, hosted=True)
    called = Caller(cold, 1).call(cold.method, ["r"], size=0, watch=True)
    assert called.cold and called.allowed == 2 and cold.watched == [2]  # its start-up: twice the deadline
    assert 2 < cold.lefts[0] <= 2 + 1.1  # and the time to move the input through the pipe
    assert called.took == 0.25 and called.input_change() == "it sorted its rows"
    warm = _Process(warm=True, hosted=False)
    called = Caller(warm, 1).call(warm.method, ["r"], size=0)
    assert not called.cold and warm.watched == [] and called.input_change() is None
    assert warm.lefts[0] <= 1


def test_the_runners_program_is_an_implementation_process():
    assert issubclass(Program, ImplementationProcess)
