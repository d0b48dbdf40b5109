"""Cases drawn once per run and judged for every implementation (engine.drawn), with the
same verdicts as drawing them again for each search."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from chatconform import engine
from chatconform.contracts import get_contract
from chatconform.engine import drawn
from chatconform.fakes.trim import FirstPlusLast, TrimsInPlace
from chatconform.frame.profiles import get_profile
from chatconform.reference.trim import trim
from chatconform.runner import discovery


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


def test_a_run_keeps_one_contracts_cases_at_a_time():
    store = drawn.DrawnCases()
    with store.session():
        store.keep("thread", 10, [drawn.DrawnCase("a")])
        store.keep("trim", 10, [drawn.DrawnCase("b")])
        assert store.get("thread", 10) is None
        assert [c.case for c in store.get("trim", 10)] == ["b"]
    assert store.get("trim", 10) is None and not store.kept


def test_a_run_searches_contract_by_contract_and_folds_in_plan_order():
    from chatconform.engine.plan import search_order
    from chatconform.engine.results import Unit

    units = [Unit(0, "thread"), Unit(0, "trim"), Unit(1, "thread"), Unit(1, "trim", "x"), Unit(2, "thread")]
    assert [(u.impl, u.contract) for u in search_order(units)] == [
        (0, "thread"), (1, "thread"), (2, "thread"), (0, "trim"), (1, "trim")]


def test_a_contract_is_searched_variant_by_variant():
    """Every implementation judged for a provider meets the reference's answers for it kept:
    the units of a variant are searched together, in the order the plan first names each."""
    from chatconform.engine.plan import search_order
    from chatconform.engine.results import Unit

    units = [Unit(0, "payload", "a"), Unit(0, "payload", "b"), Unit(1, "payload", "a"),
             Unit(1, "payload", "b"), Unit(0, "trim")]
    assert [(u.impl, u.variant) for u in search_order(units)] == [
        (0, "a"), (1, "a"), (0, "b"), (1, "b"), (0, None)]


def test_a_kept_case_holds_what_was_derived_for_one_variant_at_a_time():
    case = drawn.DrawnCase("history")
    case.for_variant("anthropic")["reference"] = "body"
    assert case.for_variant("anthropic") == {"reference": "body"}
    assert case.for_variant("gemini") == {}  # another provider: anthropic's answers let go
    assert case.for_variant("anthropic") == {}


@pytest.mark.parametrize(("output", "same"), [
    ({"messages": [{"role": "user", "content": "hi"}], "n": 1}, True),
    ({"messages": [{"role": "user", "content": "hi"}], "n": True}, False),  # equal in Python, not in JSON
    ({"messages": [{"role": "user", "content": "hi"}], "n": 1.0}, False),
    ({"messages": [{"role": "user", "content": "hi!"}], "n": 1}, False),
    ({"messages": [{"role": "user", "content": "hi"}], "n": 1, "x": None}, False),
])
def test_what_is_derived_from_the_reference_answer_is_shared_only_for_the_same_json(output, same):
    from chatconform.frame.contract import Example

    shared: dict = {}
    variant: dict = {"reference": {"messages": [{"role": "user", "content": "hi"}], "n": 1}}
    example = Example(get_contract("payload"), None, output, "openai-chat", shared=shared, variant_shared=variant)
    assert example.is_reference_answer is same
    derived = example.output_once("turns", lambda: ["derived from", id(output)])
    assert (example.reference_once("turns", lambda: "the reference's") is derived) is same


def test_an_output_whose_comparison_raises_is_judged_as_it_is():
    from chatconform.frame.contract import Example

    class Hostile(dict):
        def __ne__(self, other):
            raise RuntimeError("no comparing me")

    variant: dict = {"reference": {"messages": []}}
    example = Example(get_contract("payload"), None, Hostile(messages=[]), "openai-chat", shared={},
                      variant_shared=variant)
    assert example.is_reference_answer is False


def test_a_session_spaces_full_collections_out_and_restores_the_thresholds():
    import gc

    before = gc.get_threshold()
    store = drawn.DrawnCases()
    with store.session():
        assert gc.get_threshold() == (before[0], before[1], max(before[2], 100))
        with store.session():  # nested, as a worker's run inside the run
            assert gc.get_threshold()[2] == max(before[2], 100)
        assert gc.get_threshold()[2] == max(before[2], 100)
    assert gc.get_threshold() == before


@contextmanager
def _collector_off():
    import gc

    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_a_contracts_cases_are_let_go_by_reference_counting_once_forgotten():
    """Hypothesis holds each test it runs in cycles of its own: a search must not hang its
    drawn cases on them, or they outlive the run until a full collection."""
    import weakref

    from chatconform.engine.search import search

    with _collector_off(), drawn.STORE.session():
        search(discovery.wrap(FirstPlusLast), get_contract("trim"), None, get_profile("ci", examples=10), shrink=False)
        (kept,) = drawn.STORE.kept.values()
        refs = [weakref.ref(case) for case in kept]
        del kept
        drawn.STORE.forget()
        assert [ref() for ref in refs] == [None] * len(refs)


def test_a_search_of_the_next_contract_forgets_the_last_ones_cases_before_drawing():
    seen: list[list[tuple[str, int]]] = []

    class Watching:
        name, version = "watching", "0"

        def trim(self, history, *, max_messages):
            seen.append(list(drawn.STORE.kept))
            return trim(history, max_messages=max_messages)

    store = drawn.STORE
    with store.session():
        store.keep("thread", 10, [drawn.DrawnCase("a")])
        engine.run([discovery.wrap(Watching)], engine.Selection([get_contract("trim")], None),
                   get_profile("ci", examples=5))
    assert seen and all(kept == [] for kept in seen)
