"""Every check can fail, every fake is caught by the checks it names, the reference passes."""

import pytest

from chatconform import run_conformance
from chatconform.contracts import all_checks, all_contracts
from chatconform.fakes import all_fakes

pytestmark = pytest.mark.slow  # every test here runs whole conformance searches

FAKES = all_fakes()


@pytest.mark.parametrize("contract", sorted(all_contracts()))
def test_reference_passes_every_check(contract):
    """One search per contract, so parallel workers share them."""
    verdicts = run_conformance("reference", contracts=[contract], profile="ci")
    assert {v.check for v in verdicts} == {c.id for c in all_checks() if c.contract == contract}
    assert [(v.check, v.status, v.message) for v in verdicts if v.status != "pass"] == []


def test_every_check_belongs_to_a_contract():
    assert {c.contract for c in all_checks()} == set(all_contracts())


@pytest.mark.parametrize("spec", sorted(FAKES))
def test_fake_is_caught_by_the_checks_it_names(spec):
    fake = FAKES[spec]
    # Whether it is caught, not how small its counterexample shrinks (tested apart).
    warns = getattr(fake, "warns", ())
    # A payload fake is searched once per provider it declares: the first hundred cases of
    # ci's stream catch every one of them (a search stops as soon as each check it names has
    # failed). Other contracts take the profile's count: the first hundred persist cases of ci
    # hold no deferred run.
    examples = 100 if ".payload:" in spec else None
    # In this process, to keep the suite fast: test_isolated_verdicts_are_the_in_process_ones
    # shows the fakes judged alike in a process of their own.
    # A thread fake that crashes may hang (a walk that never ends): each hang waits out a
    # deadline that grows with the input (27 s for 2,700 rows at timeout=2), so theirs is short.
    timeout = 0.5 if "thread.no_crash" in fake.violates else 2
    verdicts = {v.check: v for v in run_conformance(spec, checks=fake.violates + warns, profile="ci",
                                                    timeout=timeout, shrink=False, examples=examples,
                                                    in_process=True)}
    missed = [c for c in fake.violates if verdicts[c].status != "fail"]
    assert missed == [], f"{fake.name} was not caught by {missed}"
    unwarned = [(c, str(verdicts[c].status)) for c in warns if verdicts[c].status != "warn"]
    assert unwarned == [], f"{fake.name} was not reported as a warning by {unwarned}"


#: One fake per contract that edits its input, and one that cannot be written as JSON: what
#: crossing to a process of its own could change.
CROSSING = [*sorted({spec.split(":")[0]: spec for spec, fake in FAKES.items()
                     if any(c.endswith(".input_untouched") for c in fake.violates)}.values()),
            "chatconform.fakes.persist:StoresTheError"]


@pytest.mark.parametrize("spec", CROSSING)
def test_isolated_verdicts_are_the_in_process_ones(spec):
    fake = FAKES[spec]
    runs = [{v.check: (v.status, v.evaluated) for v in run_conformance(
        spec, checks=fake.violates, profile="ci", examples=30, shrink=False, in_process=in_process)}
        for in_process in (True, False)]
    assert runs[0] == runs[1]
    assert all(status == "fail" for status, _ in runs[1].values()), runs[1]


def test_every_check_is_violated_by_some_fake():
    claimed = {check_id for fake in FAKES.values() for check_id in fake.violates + getattr(fake, "warns", ())}
    assert sorted(c.id for c in all_checks() if c.id not in claimed) == []


def test_fakes_name_their_bug():
    for spec, fake in FAKES.items():
        assert fake.reproduces and fake.name and (fake.violates or getattr(fake, "warns", ())), spec


def test_every_contract_has_the_standard_checks():
    for contract in all_contracts().values():
        ids = {c.id for c in contract.checks}
        assert {f"{contract.name}.no_crash", f"{contract.name}.input_untouched"} <= ids


@pytest.mark.release  # how small a shrunk case is
def test_dify_39031_counterexample_is_small():
    verdicts = run_conformance("chatconform.fakes.thread:UnscopedHeadCheck", contracts=["thread"])
    by_check = {v.check: v for v in verdicts}
    caught = [by_check[c] for c in ("thread.reaches_root", "thread.ancestors_only")
              if by_check[c].status == "fail"]
    assert caught
    assert min(len(v.failures[0].case) for v in caught) <= 3


@pytest.mark.release  # how small a shrunk case is
def test_pairing_counterexample_of_user_before_results_is_at_most_seven_messages():
    """A user message typed while tools ran, sent before their results: the shrunk case is
    the turn that holds it and at most one tool round before it (the ci search keeps a first
    round whose calls another model made), not the turns that came before those."""
    from chatconform.fakes.payload import ToolResultAfterUser

    class OnOpenAI(ToolResultAfterUser):
        providers = frozenset({"openai-chat", "glm"})

    verdicts = run_conformance(OnOpenAI, checks=["payload.tool_pairing"], profile="ci")
    failures = verdicts[0].failures
    assert {f.variant for f in failures} == {"openai-chat", "glm"}
    assert all(f.shrunk and len(f.case["history"]) <= 7 for f in failures), \
        [(f.variant, len(f.case["history"])) for f in failures]


def test_every_fake_derives_from_the_one_base():
    from chatconform.fakes.base import Fake

    assert [spec for spec, fake in FAKES.items() if not issubclass(fake, Fake)] == []
