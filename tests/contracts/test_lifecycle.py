"""The lifecycle contract: programs, their JSON, the composition, and the fakes only it catches."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import InvalidArgument
from pydantic_ai.messages import ModelRequest, ModelResponse, SystemPromptPart, ToolCallPart, ToolReturnPart

from chatconform import run_conformance
from chatconform.contracts import all_contracts, get_contract
from chatconform.contracts.lifecycle.play import Composition, Ledger, composed_methods, play, step_kinds
from chatconform.errors import ConfigError, Violation
from chatconform.fakes import lifecycle as lifecycle_fakes
from chatconform.fakes.lifecycle import DropsFramedSummary, RefusesToShrink
from chatconform.frame.contract import Example
from chatconform.providers import PROVIDER_IDS
from chatconform.reference import ReferenceImplementation
from chatconform.strategies.lifecycles import STANDING_PROMPT, Lifecycle, Step, lifecycles
from chatconform.strategies.runs import Scenario
from tests.ci_stream import ci_cases
from tests.messages import answer, user

CONTRACT = get_contract("lifecycle")
#: Each fake only a composition catches, with the one contract it has a method of.
COMPOSED = {"chatconform.fakes.lifecycle:RefusesToShrink": "persist",
            "chatconform.fakes.lifecycle:GuardsOtherConversation": "persist",
            "chatconform.fakes.lifecycle:DropsFramedSummary": "sanitize",
            "chatconform.fakes.lifecycle:TrimForgetsInterruption": "trim",
            "chatconform.fakes.lifecycle:AppendsCompactedCapture": "persist",
            "chatconform.fakes.lifecycle:NestsSummaries": "compaction"}


def _start():
    return [ModelRequest([SystemPromptPart(STANDING_PROMPT)]), user("Hello (u1)"), answer("Hi. (a2)"),
            user("And then? (u3)"), ModelResponse([ToolCallPart("lookup", {"n": 1}, "c1")]),
            ModelRequest([ToolReturnPart("lookup", "found", "c1")]), answer("Done. (a6)")]


KINDS = tuple(step_kinds().values())


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(lifecycles(KINDS))
def test_a_program_comes_back_from_its_json(program):
    data = json.loads(json.dumps(CONTRACT.case_to_json(program)))
    assert CONTRACT.case_from_json(data) == program


@pytest.mark.parametrize(("data", "says"), [
    ([], "a lifecycle case is a JSON object"),
    ({"steps": [{"step": "dance"}]}, "step 1: a step is an object whose 'step' is one of"),
    ({"steps": [{"step": "restart", "cut": 3}]}, "step 1: unknown key(s) cut"),
    ({"steps": [{"step": "restart"}, {"step": "turn"}]}, "step 2: a 'turn' step needs scenario"),
    ({"steps": [{"step": "turn", "scenario": {"ending": "lunch"}}]}, "step 1: ending='lunch' is not one of"),
    ({"steps": [{"step": "compact"}]}, "step 1: a 'compact' step that compacts needs a summary"),
    ({"steps": [{"step": "trim", "pick": -1}]}, "step 1: pick=-1 must be an int >= 0"),
    ({"steps": [], "extra": 1}, "unknown key(s) extra"),
    ({"steps": []}, "a lifecycle case needs at least one step"),
    ({"steps": [{"step": "turn", "scenario": {"ending": "deferred"}}]}, "step 1: a lifecycle turn is drawn from"),
])
def test_a_bad_program_is_refused_with_where(data, says):
    with pytest.raises(ValueError) as info:
        CONTRACT.case_from_json(data)
    assert says in str(info.value)


def test_the_strategy_refuses_bad_knobs():
    with pytest.raises(InvalidArgument):
        lifecycles(KINDS, max_steps=0).example()
    with pytest.raises(InvalidArgument):
        lifecycles(()).example()


def test_a_composition_calls_its_own_methods_and_the_reference_the_rest():
    composition = Composition(RefusesToShrink())
    assert composition.own == {"persist_run"}
    assert composition.whose("persist_run", "compact") == "yours: persist_run"
    assert composition.whose("trim") == "the reference's"
    # No to_payload of its own: every provider the reference maps.
    assert set(composition.providers) == set(PROVIDER_IDS)


def test_serde_is_one_method_pair():
    class DumpsOnly:
        def dump(self, history):
            return b"[]"

    assert Composition(DumpsOnly()).own == {"dump", "load"}


def test_the_reference_keeps_every_invariant_on_a_hand_written_program():
    steps = [Step("turn", Scenario([], ending="cancel_after_calls")), Step("repair"),
             Step("compact", pick=2, summary="The story so far."), Step("client"), Step("restart"),
             Step("trim", pick=1), Step("request"), Step("branch", Scenario([]))]
    trace = play(Lifecycle(_start(), steps), Composition(ReferenceImplementation()))
    assert [r.step.kind for r in trace.records] == [s.kind for s in steps]
    for record in trace.records:
        assert record.ledger.missing(record.after) == [], record.title()
    assert trace.records[-1].thread is not None or "extract_thread" in trace.own
    request = next(r for r in trace.records if r.step.kind == "request")
    assert {p for p, _ in request.payloads} == set(Composition(ReferenceImplementation()).providers)


def test_every_kind_of_step_a_contract_declares_is_played_by_its_declaration():
    """The player names no step: each kind is its contract's declaration (Contract.lifecycle_steps),
    played on the reference's store and recorded with its description and methods."""
    declared = {kind.name: contract.name for contract in all_contracts().values() for kind in contract.lifecycle_steps}
    assert declared == {"turn": "persist", "branch": "thread", "restart": "serde", "client": "sanitize",
                        "compact": "compaction", "trim": "trim", "repair": "repair", "request": "payload"}
    assert list(step_kinds()) == ["turn", "branch", "restart", "client", "compact", "trim", "repair", "request"]
    for name, kind in step_kinds().items():
        step = Step(name, Scenario([]) if kind.runs else None, pick=1,
                    summary="The story so far." if kind.compacts else "")
        (record,) = play(Lifecycle(_start(), [step]), Composition(ReferenceImplementation())).records
        assert (record.step.kind, record.methods, record.description) == (name, kind.methods, kind.describe(step))
    with pytest.raises(ValueError, match="no contract declares a lifecycle step 'dance'"):
        play(Lifecycle(_start(), [Step("dance")]), Composition(ReferenceImplementation()))


def test_the_lifecycle_composes_the_methods_of_the_contracts_that_declare_steps():
    assert set(composed_methods()) == {"persist_run", "extract_thread", "dump", "load", "sanitize", "compact", "trim",
                                       "repair", "to_payload"}
    joined = [c for c in all_contracts().values() if c.lifecycle_steps]
    assert CONTRACT.signature == "; ".join(c.signature for c in joined)
    assert [call.method for call in CONTRACT.calls()] == list(composed_methods())


def test_a_result_is_checked_as_its_contracts_signature_says():
    from chatconform.errors import MalformedResult

    class Odd:
        def trim(self, history, *, max_messages):
            return {"messages": history}

        def dump(self, history):
            return 7

        def load(self, data):
            return []

        def to_payload(self, history, *, provider, instructions=None):
            return ["not", "a", "dict"]  # a body is read as it comes: payload_accepted judges it

    with pytest.raises(MalformedResult, match=r"step 1 \(trim\), trim\(\): returned dict"):
        play(Lifecycle(_start(), [Step("trim")]), Composition(Odd()))
    with pytest.raises(MalformedResult, match=r"step 1 \(restart\), dump\(\): returned int, not bytes or str"):
        play(Lifecycle(_start(), [Step("restart")]), Composition(Odd()))
    (record,) = play(Lifecycle(_start(), [Step("request")]), Composition(Odd())).records
    assert record.payloads and record.payloads[0][1] == ["not", "a", "dict"]


def test_two_contracts_cannot_declare_one_kind_of_step(monkeypatch):
    import importlib

    from chatconform.errors import ContractLoadError

    player = importlib.import_module("chatconform.contracts.lifecycle.play")

    persist = get_contract("persist")
    monkeypatch.setattr(player, "joined", lambda: (persist, persist))
    with pytest.raises(ContractLoadError, match="two contracts declare the lifecycle step 'turn'"):
        player.step_kinds.__wrapped__()


def test_the_ledger_lets_go_only_what_the_reference_drops():
    start = _start()
    kept = Ledger.of(start).carried(start, start[:0])
    assert kept.missing([]) == []
    assert Ledger.of(start).missing([]) != []


def test_an_in_run_compaction_is_reached_under_ci(monkeypatch):
    programs = ci_cases("lifecycle", monkeypatch)
    turns = [s for p in programs for s in p.steps if s.kind == "turn"]
    assert sum(s.compact_in_run for s in turns) >= 20
    open_calls = [s for s in turns if s.scenario.ending == "cancel_after_calls"]
    assert len(open_calls) >= 5
    # A compaction followed, at any distance, by a client round trip: what DropsFramedSummary needs.
    assert sum(any(a.kind == "compact" and any(b.kind == "client" for b in p.steps[i + 1:])
                   for i, a in enumerate(p.steps)) for p in programs) >= 5
    assert max(len(p.steps) for p in programs) >= 10


def test_a_method_the_implementation_lacks_is_skipped_not_left_unevaluated():
    class OnlyPersist:
        name, version = "only-persist", "1"

        def persist_run(self, previous, captured, outcome):
            return ReferenceImplementation.persist_run(previous, captured, outcome)

    verdicts = {v.check: v for v in run_conformance(OnlyPersist, contracts=["lifecycle"], profile="ci",
                                                    examples=20, in_process=True)}
    thread = verdicts["lifecycle.thread_ancestors"]
    assert (thread.status, thread.message) == (
        "skip", "only-persist has no extract_thread: every thread is the reference's, so there is none of its "
                "own to judge")
    assert {v.status for c, v in verdicts.items() if c != thread.check} <= {"pass", "skip"}


def test_the_lifecycle_option_is_a_bool():
    class Odd(RefusesToShrink):
        lifecycle = "no"

    with pytest.raises(ConfigError, match="lifecycle must be True or False"):
        run_conformance(Odd, contracts=["lifecycle"], profile="ci", examples=1)


def test_an_adapter_judged_method_by_method_is_skipped():
    class Judged(RefusesToShrink):
        lifecycle = False

    verdicts = run_conformance(Judged, contracts=["lifecycle"], profile="ci", examples=1)
    assert {(v.status, v.message) for v in verdicts} == {
        ("skip", "fake-refuses-to-shrink is judged method by method (its lifecycle option is False)")}


@pytest.mark.slow
@pytest.mark.parametrize(("spec", "contract"), COMPOSED.items())
def test_a_composition_fake_passes_its_own_contract(spec, contract):
    verdicts = run_conformance(spec, contracts=[contract], profile="ci", in_process=True)
    assert verdicts and [(v.check, v.message) for v in verdicts if v.status != "pass"] == []


@pytest.mark.release  # how short a shrunk program is
@pytest.mark.slow
@pytest.mark.parametrize("spec", sorted(COMPOSED))
def test_a_composition_fake_shrinks_to_a_short_program(spec):
    fake = getattr(lifecycle_fakes, spec.split(":")[1])
    (check,) = fake.violates
    (verdict,) = run_conformance(spec, checks=[check], profile="ci", in_process=True)
    assert verdict.status == "fail"
    steps = verdict.failures[0].case["steps"]
    assert 1 <= len(steps) <= 6, steps
    # Numbered, and each step says whose methods it called.
    assert "1. " in verdict.message and "[yours: " in verdict.message
    assert STANDING_PROMPT in json.dumps(verdict.failures[0].case)


def _machine_failure(implementation, examples: int) -> str:
    from hypothesis import Phase
    from hypothesis import settings as with_settings
    from hypothesis.stateful import run_state_machine_as_test

    from chatconform import lifecycle_machine
    from chatconform.engine.search import no_local_constants

    machine = lifecycle_machine(implementation)
    try:
        # as the engine searches: Hypothesis' pool of constants read from the code of the modules
        # loaded would make the derandomized programs follow every edit of chatconform's code
        with no_local_constants():
            run_state_machine_as_test(machine, settings=with_settings(
                max_examples=examples, stateful_step_count=6, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck), phases=[Phase.generate, Phase.shrink]))
    except AssertionError as exc:
        return str(exc)
    return ""


def test_the_state_machine_holds_for_the_reference():
    assert _machine_failure(ReferenceImplementation(), 30) == ""


@pytest.mark.release  # how short a shrunk program is
@pytest.mark.slow  # a stateful test shrinks by replaying agent runs
def test_the_state_machine_catches_a_composition_bug_in_a_short_program():
    message = _machine_failure(DropsFramedSummary(), 30)
    assert message.startswith("lifecycle.summary_once: after step ") and "[yours: sanitize]" in message
    assert message.count(". ") <= 12  # a handful of numbered steps


def test_an_implementation_in_a_process_of_its_own_declares_its_lifecycle_option():
    from pathlib import Path

    spec = f"{Path(__file__).resolve().parents[1] / 'data' / 'many_bugs.py'}:ManyBugs"
    verdicts = run_conformance(spec, contracts=["lifecycle"], profile="ci", examples=1)
    assert {v.status for v in verdicts} == {"skip"}
    assert "its lifecycle option is False" in verdicts[0].message


# -- runs that really run, and every invariant after every step ----------------------------------------

def _violation(check: str, program: Lifecycle, implementation) -> Violation | None:
    """What ``check`` says of ``program`` played by ``implementation``: its violation, or None."""
    trace = play(program, Composition(implementation))
    (found,) = [c for c in CONTRACT.checks if c.id == f"lifecycle.{check}"]
    try:
        found.evaluate(Example(CONTRACT, program, trace, None))
    except Violation as violation:
        return violation
    return None


def _judge(check: str, program: Lifecycle, implementation) -> str | None:
    """The message of ``check`` on ``program`` played by ``implementation``, or None: it holds."""
    violation = _violation(check, program, implementation)
    return None if violation is None else violation.message


def test_every_turn_a_conversation_plays_is_stored():
    """Each run gets a run id no stored message carries: pydantic-ai refuses a reused one, which
    used to end every turn after the first before it began, storing nothing (6, 6, 6 messages)."""
    from chatconform.contracts.lifecycle.play import user_texts

    steps = [Step("turn", Scenario([], prompt=f"Turn {n} (u-t{n})")) for n in (1, 2, 3)]
    trace = play(Lifecycle(_start(), steps), Composition(ReferenceImplementation()))
    # Two messages a turn (its prompt, its answer); the start's two leading requests are one once
    # pydantic-ai has read them (7 messages, 6 in the first capture).
    assert [len(r.after) for r in trace.records] == [8, 10, 12]
    assert all(f"Turn {n} (u-t{n})" in user_texts(r.after) for n, r in enumerate(trace.records, 1))
    assert len({m.run_id for m in trace.records[-1].after if m.run_id is not None}) == 3


def test_a_fresh_run_id_is_one_no_message_of_the_history_carries():
    import dataclasses

    from chatconform.strategies.runs import fresh_run_id

    history = _start()
    assert fresh_run_id(history) == "run-1"
    taken = [dataclasses.replace(m, run_id="run-2") for m in history[:2]] + history[2:]
    assert fresh_run_id(taken) == "run-3"  # run-2 is taken: one past it, not "run-2" again


def test_a_store_that_leaves_calls_unanswered_blocks_the_next_turn():
    """The next turn's own run refuses the history (pydantic-ai's UserError, raised to the
    player, not taken for the run's failure): the play stops there, and continuable names the
    step that left it so."""
    program = Lifecycle(_start(), [Step("turn", Scenario([], ending="cancel_after_calls")),
                                   Step("turn", Scenario([])), Step("repair")])
    from chatconform.fakes.persist import NoInterruptedMarker

    trace = play(program, Composition(NoInterruptedMarker()))
    assert len(trace.records) == 2 and trace.records[1].blocked is not None
    assert "unprocessed tool calls" in trace.records[1].blocked
    message = _judge("continuable", program, NoInterruptedMarker())
    assert message is not None and message.startswith("after step 1 (turn, yours: persist_run)")
    assert _judge("continuable", program, ReferenceImplementation()) is None


def test_a_driver_error_is_chatconforms_own_bug(monkeypatch):
    """pydantic-ai refusing the driver's own call (a run id it already used) is raised as
    chatconform's bug: the engine reports it as its own error, never the implementation's crash."""
    import importlib

    from chatconform.errors import DriverError
    from chatconform.strategies.runs import run_scenario

    runs = importlib.import_module("chatconform.strategies.runs")
    monkeypatch.setattr(runs, "fresh_run_id", lambda history: "run-1")
    first = run_scenario(Scenario(_start()))
    with pytest.raises(DriverError, match="already appears in `message_history`"):
        run_scenario(Scenario([*first.captured]))
    (verdict,) = run_conformance("reference", checks=["lifecycle.no_crash"], examples=3, shrink=False,
                                 in_process=True)
    assert verdict.status == "error" and "could not play the agent runs of a generated case (DriverError" in \
        verdict.message


def test_a_step_that_leaves_the_conversation_stuck_is_named_though_a_later_step_mends_it():
    from chatconform.contracts.lifecycle.play import refusal
    from chatconform.fakes.lifecycle import TrimForgetsInterruption

    program = Lifecycle(_start(), [Step("turn", Scenario([], ending="cancel_after_calls")),
                                   Step("trim", pick=1), Step("repair")])
    trace = play(program, Composition(TrimForgetsInterruption()))
    assert refusal(trace.records[-1].after) is None  # the repair mends it: a check at the end saw nothing
    message = _judge("continuable", program, TrimForgetsInterruption())
    assert message is not None and message.startswith("after step 2 (trim, yours: trim): the next run refuses")
    assert _judge("continuable", program, ReferenceImplementation()) is None


def test_a_message_stored_twice_is_an_error_at_the_step_that_doubled_it():
    from chatconform.fakes.lifecycle import AppendsCompactedCapture

    program = Lifecycle(_start(), [Step("turn", Scenario([]), pick=2, summary="So far. (sum)", compact_in_run=True)])
    message = _judge("stored_once", program, AppendsCompactedCapture())
    assert message is not None and message.startswith("after step 1 (turn, yours: persist_run, compact"[:38])
    assert "stored 2 times where it was said 1 time" in message
    assert _judge("stored_once", program, ReferenceImplementation()) is None
    (check,) = [c for c in CONTRACT.checks if c.id == "lifecycle.stored_once"]
    assert check.level == "error"


def test_a_summary_pasted_into_the_next_one_is_nested():
    from chatconform.fakes.lifecycle import NestsSummaries

    program = Lifecycle(_start(), [Step("compact", pick=3, summary="First. (summary 1)"),
                                   Step("compact", pick=1, summary="Second. (summary 2)")])
    message = _judge("summary_not_nested", program, NestsSummaries())
    assert message is not None and message.startswith("after step 2 (compact, yours: compact): one stored part "
                                                       "holds 2 summaries")
    assert _judge("summary_not_nested", program, ReferenceImplementation()) is None


def test_a_summary_or_a_standing_prompt_stored_twice_fails_the_run():
    """Stored twice, they are sent twice: an error, where it was a warning."""
    from chatconform.fakes.persist import AppendsRunHistory

    doubled = Lifecycle(_start(), [Step("compact", pick=2, summary="So far. (sum)"), Step("turn", Scenario([]))])
    for check in ("summary_once", "system_prompt_once"):
        violation = _violation(check, doubled, AppendsRunHistory())
        assert violation is not None and "is stored 2 times" in violation.message, check
        assert violation.level is None  # the check's own level: an error
    assert {c.level for c in CONTRACT.checks if c.id in ("lifecycle.summary_once", "lifecycle.system_prompt_once")} \
        == {"error"}


@pytest.mark.slow  # a ci search of the reference
def test_the_ci_programs_reach_every_two_kinds_of_step_one_after_the_other():
    """What --verbose prints: every pair of step kinds, most endings of a run followed by each
    kind of step, and distinct programs (Hypothesis mutates a program into near-copies)."""
    from chatconform.engine.search import search
    from chatconform.frame.profiles import PROFILES
    from chatconform.runner.discovery import load

    result = search(load("reference"), CONTRACT, None, PROFILES["ci"], shrink=False)
    counted = {measure.split(" (")[0]: len(found) for measure, found in result.reached.items()}
    totals = {measure.split(" (")[0]: total for measure, total in CONTRACT.reachable().items()}
    assert counted["pairs of step kinds one after the other"] == totals["pairs of step kinds one after the other"] \
        == 64
    assert counted["ending-then-step pairs"] >= 70 and totals["ending-then-step pairs"] == 88
    assert counted["distinct programs"] >= 120 and result.examples == 250


@pytest.mark.slow  # plays the ci programs
def test_the_ci_programs_store_every_turn_they_play(monkeypatch):
    """On the reference's store, each turn's prompt is stored after its step, but where the run
    never took it (cancelled or timed out before it began); no turn is refused."""
    from chatconform.contracts.lifecycle.play import user_texts

    played = stored = untaken = 0
    for program in ci_cases("lifecycle", monkeypatch):
        for record in play(program, Composition(ReferenceImplementation())).records:
            assert record.blocked is None, record.title()
            if record.step.kind != "turn":
                continue
            played += 1
            scenario = record.step.scenario
            if scenario.cut_at == "before_start":
                untaken += 1
            else:
                assert scenario.prompt in user_texts(record.after), record.title()
                stored += 1
    assert played == stored + untaken and stored > 4 * untaken and played > 300


def test_a_program_says_what_it_reaches_and_verbose_prints_it():
    from chatconform.outputs.reporters.terminal import reached_text

    program = Lifecycle(_start(), [Step("turn", Scenario([], ending="cancel_in_tool")), Step("trim"),
                                   Step("turn", Scenario([])), Step("trim")])
    reached = {measure.split(" (")[0]: found for measure, found in CONTRACT.reached(program).items()}
    assert reached["ending-then-step pairs"] == {"cancel_in_tool then trim", "success then trim"}
    assert reached["pairs of step kinds one after the other"] == {"turn then trim", "trim then turn"}
    assert reached["distinct programs"] == {"turn(cancel_in_tool) trim turn(success) trim"}
    text = reached_text("lifecycle", {measure: set(found) for measure, found in CONTRACT.reached(program).items()})
    assert text.startswith("2 of 88 ending-then-step pairs") and "; 2 of 64 pairs of step kinds" in text
    assert text.endswith("; 1 distinct programs (their steps and endings)")


def test_nests_summaries_passes_over_a_provider_compaction_without_text():
    """A provider's compaction item carries no text (``content=None``): the fake nests only the
    framed summaries it finds, and never fails on the item instead of by its bug."""
    from pydantic_ai.messages import CompactionPart

    from chatconform.fakes.lifecycle import NestsSummaries
    from chatconform.reference.compaction import SUMMARY_FRAME, summary_request

    provider_item = ModelResponse([CompactionPart(None, id="cmp_1", provider_name="openai")])
    history = [summary_request("earlier (s0)"), user("Hi (u1)"), provider_item, user("More (u2)"), answer("Yes (a2)")]
    compacted = NestsSummaries().compact(history, cut=3, summary="later (s1)")
    summary = next(p.content for m in compacted for p in m.parts if isinstance(p, CompactionPart))
    assert summary.count(SUMMARY_FRAME) == 2 and "earlier (s0)" in summary and "later (s1)" in summary
