"""The engine's guarantees: pinned profiles, distinct failures, the one-call API."""

import pytest
from hypothesis import settings

from chatconform import check_case, run_conformance
from chatconform.frame.calls import is_bundled_reference
from chatconform.frame.profiles import PROFILES
from chatconform.reference import ReferenceImplementation

PINNED = ("max_examples", "derandomize", "database", "verbosity", "phases", "stateful_step_count",
          "report_multiple_bugs", "suppress_health_check", "deadline", "print_blob", "backend")


def test_profiles_do_not_inherit_hypothesis_ci_profile():
    before = {name: {k: getattr(p.settings(), k) for k in PINNED if k != "database"}
              for name, p in PROFILES.items()}
    try:
        settings.register_profile("chatconform-test-hostile", max_examples=3, derandomize=False,
                                  deadline=50, print_blob=True)
        settings.load_profile("chatconform-test-hostile")
        after = {name: {k: getattr(p.settings(), k) for k in PINNED if k != "database"}
                 for name, p in PROFILES.items()}
    finally:
        settings.load_profile("chatconform-tests")  # the profile tests/conftest.py loads
    assert before == after
    assert PROFILES["ci"].settings().derandomize and PROFILES["ci"].settings().database is None
    assert not PROFILES["dev"].settings().derandomize and PROFILES["dev"].settings().database is not None


def test_seed_overrides_derandomize():
    assert PROFILES["ci"].settings(seed=5).derandomize is False


@pytest.mark.slow
def test_run_conformance_accepts_objects():
    from chatconform.fakes.thread import OldestFirst

    verdicts = {v.check: v.status for v in run_conformance(OldestFirst, checks=["thread.starts_at_newest",
                                                                                "thread.no_crash"])}
    assert verdicts["thread.starts_at_newest"] == "fail"
    assert verdicts["thread.no_crash"] == "pass"


@pytest.mark.slow
def test_all_distinct_failures_are_reported_not_only_the_first():
    verdicts = run_conformance("chatconform.fakes.thread:UnscopedHeadCheck", contracts=["thread"])
    failing = {v.check for v in verdicts if v.status == "fail"}
    assert {"thread.parent_chain", "thread.ancestors_only", "thread.matches_reference"} <= failing


def test_check_case_passes_and_fails():
    case = [
        {"id": "C", "parent_message_id": "A", "created_at": "2026-01-01T00:00:03+00:00"},
        {"id": "X", "parent_message_id": None, "created_at": "2026-01-01T00:00:02+00:00"},
        {"id": "A", "parent_message_id": None, "created_at": "2026-01-01T00:00:01+00:00"},
    ]
    check_case("reference", "thread.ancestors_only", case)
    try:
        check_case("chatconform.fakes.thread:UnscopedHeadCheck", "thread.ancestors_only", case)
    except AssertionError as exc:
        assert "X" in str(exc)
    else:
        raise AssertionError("the Dify fake passed its own bug")


def test_cases_survive_their_json_form():
    from hypothesis import given
    from hypothesis import settings as hsettings

    from chatconform.contracts import all_contracts

    for contract in all_contracts().values():
        @hsettings(max_examples=30)
        @given(contract.cases(None if contract.name == "thread" else "openai-chat"))
        def round_trip(case):  # run at once, below: ``contract`` is the loop's current one
            as_json = contract.case_to_json(case)  # noqa: B023
            assert contract.case_to_json(contract.case_from_json(as_json)) == as_json  # noqa: B023

        round_trip()


@pytest.mark.slow
def test_async_contract_methods_are_awaited():
    from chatconform.reference.thread import extract_thread

    class AsyncThreads:
        name, version = "async-threads", "1"

        async def extract_thread(self, rows):
            return extract_thread(rows)

    verdicts = run_conformance(AsyncThreads, contracts=["thread"], profile="ci")
    # thread.slow times the call: on a loaded CI machine it may warn, which says nothing about
    # awaiting (an un-awaited coroutine fails every check that reads the result).
    assert {v.status for v in verdicts if v.check != "thread.slow"} == {"pass"}
    assert {v.status for v in verdicts if v.check == "thread.slow"} <= {"pass", "warn"}


@pytest.mark.slow
def test_dev_profile_keeps_failures_in_its_example_database(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    verdicts = run_conformance("chatconform.fakes.thread:SinglePassTies", checks=["thread.reaches_root"],
                               profile="dev")
    assert verdicts[0].status == "fail"
    assert any((tmp_path / ".chatconform" / "examples").rglob("*"))


def test_every_provider_is_judged_on_the_same_histories():
    """One draw, all providers: a shape one provider trips on is tried on all of them."""
    from chatconform import engine
    from chatconform.contracts import get_contract
    from chatconform.frame.profiles import get_profile
    from chatconform.reference.payload import to_payload
    from chatconform.runner import discovery

    seen: dict[str, list[str]] = {}

    class Recording:
        name, version = "recording", "0"
        providers = frozenset({"openai-chat", "anthropic", "bedrock-converse"})

        # Told the model and reasoning setting, as the reference is: a dev run then finds
        # nothing to shrink for one provider and not the others.
        def to_payload(self, history, *, provider, instructions=None, model=None, reasoning=None):
            seen.setdefault(provider, []).append(repr(history))
            return to_payload(history, provider=provider, instructions=instructions, model=model,
                              reasoning=reasoning)

    for profile in (get_profile("ci", examples=15), get_profile("dev", examples=15)):
        seen.clear()
        profile = type(profile)(**{**profile.__dict__, "use_database": False})
        engine.run([discovery.wrap(Recording)], engine.Selection([get_contract("payload")], None), profile)
        assert seen["openai-chat"] == seen["anthropic"] == seen["bedrock-converse"], profile.name
        assert len(set(seen["openai-chat"])) > 5


def test_a_calls_deadline_grows_with_the_square_of_its_input():
    """A mapper quadratic in its input is slow, not hung: the deadline grows as fast."""
    from chatconform.frame.guard import call_deadline, slow_limit

    assert call_deadline(10, 0) == call_deadline(10, 99) == 10
    assert call_deadline(10, 1000) == 40 and call_deadline(10, 4433) > 250
    small, large = call_deadline(10, 500), call_deadline(10, 5000)
    assert large / small > 5000 / 500  # faster than the input grows
    assert slow_limit(call_deadline(10, 1000)) == 8


class _SortsInPlace(ReferenceImplementation):
    """The reference's walk, after sorting the caller's rows in place: a subclass of the
    reference is an implementation like any other."""

    @staticmethod
    def extract_thread(rows):
        rows.sort(key=lambda row: row.id)
        return ReferenceImplementation.extract_thread(rows)


def test_only_the_bundled_reference_as_shipped_is_lent_its_case():
    assert is_bundled_reference(ReferenceImplementation())
    assert not is_bundled_reference(_SortsInPlace())
    overridden = ReferenceImplementation()
    overridden.extract_thread = _SortsInPlace.extract_thread
    assert not is_bundled_reference(overridden)
    verdicts = {v.check: v.status for v in run_conformance(_SortsInPlace(), contracts=["thread"], examples=30)}
    assert verdicts["thread.input_untouched"] == "fail"
