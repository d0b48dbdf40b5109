"""``chatconform bench`` and the large inputs it times: the table's shape, the exponent fit on
synthetic numbers, and generators that are deterministic and do a fixed amount of work per
message. Nothing here asserts a timing."""

from __future__ import annotations

import itertools
import json
import math
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, ToolCallPart, ToolReturnPart

from chatconform import bench
from chatconform.cli import main
from chatconform.contracts import all_contracts, get_contract
from chatconform.engine import BenchRound
from chatconform.frame.contract import Contract
from chatconform.reference.thread import extract_thread
from chatconform.runner import discovery
from chatconform.strategies import large_edge_history, large_history, large_rows, recorded_payloads

STRATEGIES = Path(bench.__file__).resolve().parent / "strategies"


@pytest.fixture(autouse=True)
def _few_rounds(monkeypatch):
    """The plumbing is under test, not the numbers: as few rounds as the bench allows."""
    monkeypatch.setattr(bench, "MAX_ROUNDS", bench.MIN_ROUNDS)
    monkeypatch.setattr(bench, "MIN_SPAN", 0.0)


# -- the exponent --------------------------------------------------------------------------------

@pytest.mark.parametrize("power", [1.0, 1.5, 2.0, 0.5])
def test_fit_recovers_a_power_law(power):
    sizes = [1_000, 10_000, 100_000, 1_000_000]
    assert bench.fit_exponent(sizes, [3e-7 * n ** power for n in sizes]) == pytest.approx(power)


def test_fit_is_least_squares_on_logs():
    # log10 points (3, 0), (4, 1), (5, 3): slope 1.5 by least squares
    assert bench.fit_exponent([1e3, 1e4, 1e5], [1, 10, 1000]) == pytest.approx(1.5)


@pytest.mark.parametrize(("sizes", "seconds"), [([1000], [0.1]), ([1000, 1000], [0.1, 0.2]), ([10, 100], [0.0, 1.0])])
def test_fit_needs_two_sizes_and_positive_times(sizes, seconds):
    assert bench.fit_exponent(sizes, seconds) is None


def test_series_fits_from_ten_thousand_when_it_can():
    series = bench.Series("thread", "reference", None, [
        bench.Timing(n, n, t, t / 2, 3, best=t, floor_best=t / 2)
        for n, t in ((1_000, 1.0), (10_000, 2.0), (100_000, 20.0))])
    assert series.fit_sizes == [10_000, 100_000]
    assert series.exponent == pytest.approx(1.0)
    two = bench.Series("thread", "reference", None, series.timings[:2])
    assert two.fit_sizes == [1_000, 10_000] and two.exponent == pytest.approx(math.log10(2))


def test_the_exponent_and_per_message_come_from_the_fastest_round():
    # medians that a slow last size would fit at 1.5; the fastest rounds grow linearly
    series = bench.Series("payload", "reference", "openai-chat", [
        bench.Timing(10_000, 10_000, 0.1, 0.01, 5, best=0.05, floor_best=0.01),
        bench.Timing(100_000, 100_000, 3.16, 0.1, 5, best=0.5, floor_best=0.1)])
    assert series.exponent == pytest.approx(1.0)
    assert series.timings[1].per_message == pytest.approx(5e-6)
    assert series.timings[1].ratio == pytest.approx(5.0)


def test_a_call_is_timed_until_it_returns_and_its_answer_freed_after(monkeypatch):
    real = time.perf_counter
    freed, clock = [], []

    class Answer:
        def __del__(self):
            freed.append(real())

    monkeypatch.setattr(bench.time, "perf_counter", lambda: clock.append(real()) or clock[-1])
    bench._per_call(Answer, 3)
    assert len(clock) == 2 and len(freed) == 3
    assert min(freed) > clock[1]  # all three dropped after the clock stopped


def _recording_thread_bench(monkeypatch, sizes, **limits):
    """Bench the reference thread walk at ``sizes``, recording the size of every timed call."""
    for name, value in limits.items():
        monkeypatch.setattr(bench, name, value)
    calls, events = [], []
    contract = get_contract("thread")
    reference = discovery.load("reference")
    walk = reference.method(contract)

    class Recording:
        name, version = "recording", "1"

        def method(self, c):
            return self.extract_thread if c is contract else None

        def extract_thread(self, rows):
            calls.append(len(rows))
            return walk(rows)

    result = bench.run_bench([Recording()], [contract], sizes, checks=False,
                             handlers=[events.append])
    return result, calls, events


def test_rounds_interleave_the_sizes_and_give_each_as_many(monkeypatch):
    result, calls, events = _recording_thread_bench(monkeypatch, [300, 100, 200], MIN_ROUNDS=4, MAX_ROUNDS=4)
    # one warm-up per size, ascending; then each round visits every size in turn
    assert calls[:3] == [100, 200, 300]
    # a fast call is repeated within a measurement, so count runs of one size
    assert [n for n, _ in itertools.groupby(calls[3:])] == [100, 200, 300] * 4
    series = next(s for s in result.series if s.impl == "recording")
    assert [t.rounds for t in series.timings] == [4, 4, 4]
    rounds = [(e.implementation, e.round) for e in events if isinstance(e, BenchRound)]
    assert rounds == [("floor", n) for n in (1, 2, 3, 4)] + [("recording", n) for n in (1, 2, 3, 4)]


def test_sizes_past_the_memory_hold_are_timed_after_the_ones_held(monkeypatch):
    _, calls, _ = _recording_thread_bench(monkeypatch, [100, 200, 400], MIN_ROUNDS=3, MAX_ROUNDS=3,
                                          HOLD_MESSAGES=350)
    at_400 = calls.index(400)  # its warm-up comes after every round of the two held sizes
    assert set(calls[:at_400]) == {100, 200} and set(calls[at_400:]) == {400}
    assert calls[:at_400].count(100) == 1 + 3 and calls[at_400:].count(400) == 1 + 3


# -- the hooks -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["thread", "payload", "compaction"])
def test_large_case_is_deterministic_and_what_call_takes(name):
    contract = get_contract(name)
    variant = contract.bench_variants(contract.variants(discovery.load("reference")))[0]
    case = contract.large_case(500, 3, variant)
    assert contract.case_to_json(case) == contract.case_to_json(contract.large_case(500, 3, variant))
    assert contract.case_to_json(case) != contract.case_to_json(contract.large_case(500, 4, variant))
    assert 500 <= contract.size(case) <= 503
    reference = discovery.load("reference")
    output = contract.call(reference.method(contract), case, variant)
    assert contract.output_problem(output, case) is None
    assert contract.floor(case, variant) is None


def test_a_contract_without_a_large_input_is_named_not_timed():
    class Plain(Contract):
        name, method, signature = "plain_bench_probe", "plain", "plain(x)"
        crash_rationale = mutation_rationale = "-"

        def cases(self, variant): ...
        def call(self, fn, case, variant): ...
        def reference(self, case, variant): ...
        def case_to_json(self, case): ...
        def case_from_json(self, data): ...

    result = bench.run_bench([discovery.load("reference")], [Plain()], [100])
    assert result.series == []
    assert result.notes == ["plain_bench_probe: no large input (the contract defines no large_case)"]


def test_every_bundled_contract_has_a_large_input():
    assert all(type(c).large_case is not Contract.large_case or (c.composes and c.no_large_case)
               for c in all_contracts().values() if c.__module__.startswith("chatconform."))


# -- the command ---------------------------------------------------------------------------------

def test_bench_prints_a_table_per_contract_and_writes_json(tmp_path, capsys):
    out_file = tmp_path / "bench.json"
    code = main(["bench", "--impl", "reference", "--contract", "thread", "--contract", "compaction",
                 "--sizes", "200,400", "--json", str(out_file)])
    assert code == 0
    captured = capsys.readouterr()
    assert "thread at 400: building the input" in captured.err  # progress while it runs
    for header in ("implementation", "size", "median", "fastest", "per message", "x floor", "exponent"):
        assert header in captured.out
    assert captured.out.index("thread:") < captured.out.index("compaction:")
    data = json.loads(out_file.read_text())
    assert set(data) == {"machine", "sizes", "seed", "collector_paused", "series", "notes"}
    assert data["collector_paused"] is True
    assert data["sizes"] == [200, 400] and data["machine"]["cpus"]
    kinds = Counter((s["contract"], s["impl"]) for s in data["series"])
    assert kinds == Counter({("thread", "floor"): 1, ("thread", "reference"): 1, ("thread", "checks"): 1,
                             ("compaction", "floor"): 1, ("compaction", "reference"): 1,
                             ("compaction", "checks"): 1})
    for series in data["series"]:
        assert [t["size"] for t in series["timings"]] == [200, 400]
        assert isinstance(series["exponent"], float)
        for t in series["timings"]:
            assert t["seconds"] > 0 and t["floor"] > 0 and t["rounds"] >= bench.MIN_ROUNDS
            assert 0 < t["best"] <= t["seconds"] and 0 < t["floor_best"] <= t["floor"]
            assert t["per_message"] == pytest.approx(t["best"] / t["messages"])
            assert t["ratio"] == pytest.approx(t["best"] / t["floor_best"])


def test_bench_payload_times_one_provider_per_dialect_unless_named(capsys):
    assert main(["bench", "--impl", "reference", "--contract", "payload", "--sizes", "60", "--no-checks"]) == 0
    out = capsys.readouterr().out
    assert all(p in out for p in ("openai-chat", "anthropic", "gemini", "bedrock-converse"))
    assert "qwen-vllm" not in out and "checks" not in out
    assert main(["bench", "--impl", "reference", "--contract", "payload", "--contract", "thread", "--sizes", "60",
                 "--provider", "mistral", "--no-checks"]) == 0
    out = capsys.readouterr().out
    assert "mistral" in out and "anthropic" not in out and "thread:" in out  # thread has no providers


@pytest.mark.parametrize("sizes", ["0", "10,x", "1.5", ""])
def test_bench_rejects_bad_sizes_in_one_line(sizes, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "--sizes", sizes])
    assert exit_info.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_bench_reports_an_implementation_that_raises(tmp_path, capsys):
    module = tmp_path / "raising_impl.py"
    module.write_text("class Impl:\n    name = 'raiser'\n    version = '1'\n"
                      "    def extract_thread(self, rows):\n        raise RuntimeError('boom')\n")
    assert main(["bench", "--impl", f"{module}:Impl", "--sizes", "50,100"]) == 0
    out = capsys.readouterr().out
    assert "raised RuntimeError at 50: boom" in out


# -- the generators --------------------------------------------------------------------------------

def _lines_run(fn, *args, **kwargs) -> int:
    """How many lines of chatconform.strategies run while ``fn`` does: work, counted."""
    count = 0
    folder = str(STRATEGIES)

    def trace(frame, event, arg):
        nonlocal count
        if not frame.f_code.co_filename.startswith(folder):
            return None
        if event == "line":
            count += 1
        return trace

    sys.settrace(trace)
    try:
        fn(*args, **kwargs)
    finally:
        sys.settrace(None)
    return count


@pytest.mark.parametrize(("generator", "kwargs"), [
    (large_rows, {}), (large_rows, {"corrupt_links": 0.05}), (large_history, {}), (large_edge_history, {}),
    (lambda seed, size: list(recorded_payloads(seed, size)), {}),
    (lambda seed, size: list(recorded_payloads(seed, size, resend=True)), {}),
])
def test_generators_do_a_fixed_amount_of_work_per_message(generator, kwargs):
    small, large = (_lines_run(generator, 5, n, **kwargs) for n in (2_000, 20_000))
    assert 8 < large / small < 12  # ten times the size, ten times the lines run


def test_generators_are_deterministic_and_seeded():
    assert [(r.id, r.parent_message_id) for r in large_rows(1, 3_000, corrupt_links=0.01)] == \
           [(r.id, r.parent_message_id) for r in large_rows(1, 3_000, corrupt_links=0.01)]
    dump = ModelMessagesTypeAdapter.dump_json
    assert dump(large_edge_history(2, 1_000)) == dump(large_edge_history(2, 1_000))
    assert dump(large_edge_history(2, 1_000)) != dump(large_edge_history(3, 1_000))
    payloads = recorded_payloads(4, 500, provider="anthropic")
    assert list(payloads) == list(recorded_payloads(4, 500, provider="anthropic"))


def test_shape_knobs_change_the_shape():
    plain = large_history(1, 2_000, tool_rounds=0.0)
    assert not any(isinstance(p, ToolCallPart) for m in plain for p in m.parts)
    rows = large_rows(1, 2_000, switch_branch=0.0, regenerate=0.0, api_turns=0.0)
    assert len(extract_thread(rows)) == 2_000  # one straight line
    assert sum(len(b["messages"]) for b in recorded_payloads(1, 5_000)) in range(5_000, 5_100)


def test_hostile_history_is_valid_and_hostile():
    history = large_edge_history(9, 4_000, nesting=40)
    assert 4_000 <= len(history) <= 4_002 and isinstance(history[-1], ModelRequest)
    assert ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(history)) == history
    calls = Counter(p.tool_call_id for m in history for p in m.parts if isinstance(p, ToolCallPart))
    results = [p for m in history for p in m.parts if isinstance(p, ToolReturnPart)]
    assert any(n > 1 for n in calls.values())  # ids reused by a later round
    assert any(p.outcome == "failed" for p in results)
    assert len(results) < sum(calls.values())  # some calls left unanswered


@pytest.mark.parametrize("bad", [{"size": -1}, {"size": 1.5}, {"corrupt_links": 2}, {"ties": "x"}])
def test_generators_reject_bad_knobs_by_name(bad):
    kwargs = {"seed": 1, "size": 10, **bad}
    with pytest.raises(ValueError, match=next(iter(bad))):
        large_rows(**kwargs)
