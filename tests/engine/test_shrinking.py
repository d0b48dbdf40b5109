"""Every failure shrinks, and where its case is not minimal the verdict says why: Hypothesis'
own shrink limits, a flaky implementation, a hang in the run's own process."""

import threading

from hypothesis.internal.conjecture import engine as hypothesis_engine

from chatconform import run_conformance
from chatconform.engine import search as search_module
from chatconform.fakes.thread import OldestFirst
from chatconform.outputs.present import describe
from chatconform.reference.thread import extract_thread

CHECK = "thread.starts_at_newest"


def run(impl, **options):
    """A short search in this process: what is judged here is the engine's bookkeeping."""
    (verdict,) = [v for v in run_conformance(impl, checks=[CHECK], examples=30, in_process=True, **options)
                  if v.check == CHECK]
    return verdict


def test_a_shrunk_failure_says_nothing_about_shrinking():
    verdict = run(OldestFirst)
    failure = verdict.failures[0]
    assert failure.shrunk and failure.shrink_note is None
    assert describe(verdict, failure).input_label == "minimal input"


def test_a_shrink_cut_short_by_hypothesis_says_so_and_keeps_the_smallest_case(monkeypatch):
    monkeypatch.setattr(hypothesis_engine, "MAX_SHRINKS", 1)
    verdict = run(OldestFirst)
    failure = verdict.failures[0]
    assert failure.shrunk and "shrinking stopped early" in failure.shrink_note
    report = describe(verdict, failure)
    assert report.input_label == "smallest input seen"
    assert ("shrink", failure.shrink_note) in report.fields


def test_hypothesis_limits_are_the_ones_named():
    """If Hypothesis renames its reasons, the note would silently never appear: pin them."""
    assert search_module._shrink_cut_short(hypothesis_engine.ExitReason.max_shrinks.value)
    assert search_module._shrink_cut_short(hypothesis_engine.ExitReason.very_slow_shrinking.value)
    assert search_module._shrink_cut_short(hypothesis_engine.ExitReason.finished.value) is None
    assert search_module._shrink_cut_short(None) is None


class WrongOnce:
    """Right on every call but the first that could go wrong: the shrinking pass never meets
    its failure again."""

    name, version = "wrong-once", "1"

    def __init__(self):
        self.wronged = False
        self.lock = threading.Lock()

    def extract_thread(self, rows):
        thread = extract_thread(rows)
        with self.lock:
            if self.wronged or len(thread) < 2:
                return thread
            self.wronged = True
        return list(reversed(thread))


def test_a_flaky_failure_is_reported_where_seen_and_says_why():
    verdict = run(WrongOnce)
    failure = verdict.failures[0]
    assert not failure.shrunk and failure.shrink_note == search_module.FLAKY
    report = describe(verdict, failure)
    assert report.input_label == "input (not shrunk)" and ("shrink", search_module.FLAKY) in report.fields


def test_without_shrinking_the_reason_is_given():
    failure = run(OldestFirst, shrink=False).failures[0]
    assert not failure.shrunk and failure.shrink_note == search_module.NOT_ASKED


class LogsCalls:
    """Reverses threads of three rows or more (a starts_at_newest failure), and logs each
    call's input and whether it answered wrong."""

    name, version = "logs-calls", "1"
    calls: list[tuple[tuple, bool]] = []

    def extract_thread(self, rows):
        thread = extract_thread(rows)
        wrong = len(thread) >= 3
        LogsCalls.calls.append((tuple((r.id, r.parent_message_id, str(r.created_at)) for r in rows), wrong))
        return list(reversed(thread)) if wrong else thread


def test_a_shrinking_pass_does_not_call_again_on_cases_its_exploring_pass_judged():
    from chatconform import engine
    from chatconform.frame.profiles import get_profile
    from chatconform.runner import discovery

    LogsCalls.calls = []
    # after the reference, as a run judges many: its exploring pass judges the cases the
    # reference's search drew and kept
    impls = [discovery.load("reference", in_process=True), discovery.load_object(LogsCalls, in_process=True)]
    outcome = engine.run(impls, engine.select(checks=[CHECK]), get_profile("ci", examples=30))
    (verdict,) = [v for v in outcome.verdicts if v.implementation == "logs-calls"]
    assert verdict.status == "fail" and verdict.failures[0].shrunk
    explored, shrinking = LogsCalls.calls[:30], LogsCalls.calls[30:]
    first_wrong = next(i for i, (_, wrong) in enumerate(explored) if wrong)
    assert first_wrong > 0  # cases before it, which the shrinking pass draws again first
    # the exploring pass's cases, drawn again by the same choices, are known to hold or to fail
    # as before, and are not judged again: the first failing one is not called before the last
    # call, which replays the minimal case for the failure reported
    assert explored[first_wrong] not in shrinking[:-1]
    last_input, last_wrong = shrinking[-1]
    assert last_wrong and len(last_input) <= len(explored[first_wrong][0])
    assert len(verdict.failures[0].case) == len(last_input)
    # the run still counts them among the cases the shrinking replayed
    assert outcome.results[next(u for u in outcome.units if u.impl == 1)].replayed > len(shrinking)


def test_a_search_writes_out_as_json_only_the_cases_of_the_failures_it_keeps(monkeypatch):
    """OldestFirst fails starts_at_newest on nearly every case with a few rows: the exploring
    pass keeps the first failure of each check, and no other case is written out (a long
    history per failing case was a tenth of a worker's time)."""
    from chatconform.contracts import get_contract
    from chatconform.frame.profiles import get_profile
    from chatconform.runner import discovery

    contract = get_contract("thread")
    written, evaluated = [], []
    real_to_json = type(contract).case_to_json

    def to_json(self, case):
        written.append(case)
        return real_to_json(self, case)

    monkeypatch.setattr(type(contract), "case_to_json", to_json)
    real_evaluate = search_module.evaluate_case

    def evaluate(*args, **kwargs):
        evaluation = real_evaluate(*args, **kwargs)
        evaluated.append(len(evaluation.failures))
        return evaluation

    monkeypatch.setattr(search_module, "evaluate_case", evaluate)
    impl = discovery.load_object(OldestFirst, in_process=True)
    result = search_module.search(impl, contract, None, get_profile("ci", examples=40), shrink=False)
    assert result.failures[CHECK].case is not None
    assert sum(evaluated) > 3 * len(result.failures)  # failures on many cases...
    assert 1 <= len(written) <= len(result.failures)  # ...but only the first of each check is written out


def test_a_shrinking_pass_does_not_call_again_on_cases_another_shrinking_pass_judged(monkeypatch):
    """LogsCalls' reversed threads fail starts_at_newest and matches_reference on the same
    cases, so both shrinking passes try the same cases: the second is told what the first
    found on each (a deterministic implementation answers alike), and calls only to replay
    its minimal case, whose failure is the one reported."""
    from chatconform.contracts import get_contract
    from chatconform.frame.profiles import get_profile
    from chatconform.runner import discovery

    checks = frozenset({CHECK, "thread.matches_reference"})
    passes: list[int] = []  # the number of calls made before each pass started
    real_run = search_module._Pass.run

    def run_pass(self):
        passes.append(len(LogsCalls.calls))
        return real_run(self)

    monkeypatch.setattr(search_module._Pass, "run", run_pass)
    LogsCalls.calls = []
    impl = discovery.load_object(LogsCalls, in_process=True)
    result = search_module.search(impl, get_contract("thread"), None, get_profile("ci", examples=30),
                                  selected=checks)
    assert set(result.failures) == checks and all(f.shrunk for f in result.failures.values())
    assert len(passes) == 3  # the exploring pass, then one shrinking pass per check
    first, second = passes[2] - passes[1], len(LogsCalls.calls) - passes[2]
    assert first > 5  # the first shrinking pass calls on the cases it tries...
    assert second == 1  # ...the second only on its minimal case's last replay
    assert len(result.failures[CHECK].case) == len(result.failures["thread.matches_reference"].case)
