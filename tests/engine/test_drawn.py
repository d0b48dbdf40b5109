"""Cases drawn once per run and judged for every implementation (engine.drawn), with the
same verdicts as drawing them again for each search."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from chatconform.conformance import discovery, engine
from chatconform.conformance.contracts import get_contract
from chatconform.conformance.engine import drawn
from chatconform.conformance.profiles import get_profile
from chatconform.fakes.trim import FirstPlusLast, TrimsInPlace
from chatconform.reference.trim import trim


def _recording(name: str, seen: dict[str, list[str]]):
    class Recording:
        version = "0"

        def trim(self, history, *, max_messages):
            seen.setdefault(name, []).append(repr((history, max_messages)))
            return trim(history, max_messages=max_messages)

    Recording.name = name
    return discovery.wrap(Recording)


@pytest.fixture
def draws(monkeypatch):
    """How many trim cases Hypothesis drew, whatever the search."""
    contract = get_contract("trim")
    original = type(contract).cases
    counted = [0]

    def count(case):
        counted[0] += 1
        return case

    monkeypatch.setattr(type(contract), "cases", lambda self, variant: original(self, variant).map(count))
    return counted


def test_a_run_draws_each_contracts_cases_once_for_every_implementation(draws):
    seen: dict[str, list[str]] = {}
    impls = [_recording("first", seen), _recording("second", seen), _recording("third", seen)]
    engine.run(impls, engine.Selection([get_contract("trim")], None), get_profile("ci", examples=20))
    assert seen["first"] == seen["second"] == seen["third"]
    assert len(seen["first"]) == draws[0]  # the later searches judged the first one's cases
    assert not drawn.STORE.kept  # nothing outlives the run


def test_a_search_outside_a_run_draws_its_own_cases(draws):
    seen: dict[str, list[str]] = {}
    profile = get_profile("ci", examples=20)
    for name in ("first", "second"):
        engine.run([_recording(name, seen)], engine.Selection([get_contract("trim")], None), profile)
    assert seen["first"] == seen["second"]
    assert draws[0] == 2 * len(seen["first"])


@contextmanager
def _no_session():
    yield


def _verdicts(outcome):
    return [(v.implementation, v.check, v.status, v.message, v.examples, v.evaluated,
             [(f.level, f.message, f.case, f.shrink_note) for f in v.failures]) for v in outcome.verdicts]


@pytest.mark.slow
def test_kept_cases_give_the_verdicts_and_minimal_cases_of_drawing_again(monkeypatch):
    """Failing fakes (one mutating its input) after the reference: every verdict, count and
    shrunk case is the one a run that draws again for each search reports."""
    impls = [discovery.load(discovery.REFERENCE_TARGET, in_process=True),
             discovery.wrap(FirstPlusLast), discovery.wrap(TrimsInPlace)]
    selection = engine.Selection([get_contract("trim")], None)
    profile = get_profile("ci", examples=40)
    kept = engine.run(impls, selection, profile)
    monkeypatch.setattr(drawn.STORE, "session", _no_session)
    again = engine.run(impls, selection, profile)
    assert _verdicts(kept) == _verdicts(again)
    assert any(v.status == "fail" for v in kept.verdicts)
