"""Time every contract function on large inputs, beside a floor, and fit how it grows.

For each contract with a large input (:meth:`Contract.large_case`) and each size, one case
is built from ``(size, seed)``, and each implementation's function is called once on it (a
warm-up, which also sets how many rounds fit in ``ROUND_TIME``). Then the contract's floor
(:meth:`Contract.floor`: one bare pass doing the least work the contract needs) and each
function in turn run round by round, each round over the case of every size, so that a
machine busy with other work slows the sizes alike: timed one size after another, the
largest size could land in a slow minute and the smaller ones in a quiet one, and the
fitted exponent moved by up to 0.5 between runs on a shared machine. One function's rounds
are not mixed with another's, whose garbage and memory use would land on it. Cases are held together up to
``HOLD_MESSAGES`` messages; a larger size is timed on its own after them.

Every size gets the same number of rounds (as many as its slowest call allows, at least
``MIN_ROUNDS``; a call that takes longer than ``ROUND_LIMIT`` runs once). Each size reports
the median and the fastest round; the time per message, the ratio to the floor and the
growth exponent are read from the fastest. Work elsewhere on the machine only ever adds
time, so the fastest round is the closest to what the code itself costs (the advice of
:mod:`timeit`: https://docs.python.org/3/library/timeit.html).

A ``checks`` series times the reference's call and then every check of the contract on
its answer, as a run evaluates one case, and a ``floor`` series shows how the floor itself
grows: on a machine whose caches the data outgrows, even a bare pass grows faster than
linearly, and an implementation's exponent is best read beside it.

The growth exponent is the least-squares slope of log(time) against log(size): 1.0 is
linear, 2.0 quadratic. It is fitted over the sizes from 10^4 up when there are two of
them (fixed costs dominate smaller inputs), else over every size timed.

``chatconform bench`` prints the tables; ``benchmarks/`` reuses the same cases with
pytest-benchmark. Nothing here asserts a timing.
"""

from __future__ import annotations

import gc
import math
import os
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

from chatconform.engine.events import BenchInput, BenchRound, BenchTimed, Event, Handler, emit
from chatconform.errors import NotApplicable, Violation
from chatconform.frame.contract import Contract, Example

DEFAULT_SIZES = (1_000, 10_000, 100_000)
#: A size whose predicted time per call is above this many seconds is not timed.
CALL_BUDGET = 60.0
#: Rounds of one series at one size: at least MIN_ROUNDS, up to MAX_ROUNDS while they fit
#: in ROUND_TIME seconds.
MIN_ROUNDS, MAX_ROUNDS, ROUND_TIME = 5, 15, 1.0
#: A call slower than this is timed once.
ROUND_LIMIT = 10.0
#: A fast call is repeated within one measurement until it spans this many seconds.
MIN_SPAN = 0.002
#: Sizes from here up are used for the exponent, when two of them were timed.
FIT_FROM = 10_000
#: The cases of one contract and variant held in memory together, in messages, so that
#: their rounds interleave (a case of 10^5 messages takes some 130 MB).
HOLD_MESSAGES = 250_000
CHECKS = "checks"
FLOOR = "floor"


def fit_exponent(sizes: Sequence[float], seconds: Sequence[float]) -> float | None:
    """The least-squares slope of log(seconds) on log(size); None with fewer than two
    distinct sizes or a time that is not positive."""
    points = [(math.log(n), math.log(t)) for n, t in zip(sizes, seconds, strict=True) if n > 0 and t > 0]
    if len(points) != len(sizes) or len({x for x, _ in points}) < 2:
        return None
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    sxx = sum((x - mean_x) ** 2 for x, _ in points)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in points)
    return sxy / sxx


def fit_sizes(sizes: Sequence[int]) -> list[int]:
    """The sizes an exponent is fitted over: those from ``FIT_FROM`` up when there are two,
    else all of them."""
    large = [n for n in sizes if n >= FIT_FROM]
    return large if len(large) >= 2 else list(sizes)


@dataclass
class Timing:
    size: int  # the size asked for
    messages: int  # what the case holds (messages, or rows)
    seconds: float  # median of the rounds
    floor: float  # the floor's median on the same case, in the same rounds
    rounds: int
    best: float  # the fastest round
    floor_best: float  # the floor's fastest round

    @property
    def per_message(self) -> float:
        return self.best / max(self.messages, 1)

    @property
    def ratio(self) -> float | None:
        return self.best / self.floor_best if self.floor_best > 0 else None


@dataclass
class Series:
    """One implementation (or the checks) on one contract and variant, over the sizes."""

    contract: str
    impl: str
    variant: str | None
    timings: list[Timing] = field(default_factory=list)
    note: str = ""  # why a size was not timed

    @property
    def fit_sizes(self) -> list[int]:
        return fit_sizes([t.size for t in self.timings])

    @property
    def exponent(self) -> float | None:
        chosen = [t for t in self.timings if t.size in self.fit_sizes]
        return fit_exponent([t.messages for t in chosen], [t.best for t in chosen])

    def to_json(self) -> dict:
        return {"contract": self.contract, "impl": self.impl, "variant": self.variant,
                "exponent": self.exponent, "fit_sizes": self.fit_sizes, "note": self.note,
                "timings": [{**asdict(t), "per_message": t.per_message, "ratio": t.ratio} for t in self.timings]}


@dataclass
class BenchResult:
    series: list[Series] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # contracts or implementations not timed

    def to_json(self, *, sizes: Sequence[int], seed: int) -> dict:
        return {"machine": machine(), "sizes": list(sizes), "seed": seed, "collector_paused": _PAUSE_COLLECTOR,
                "series": [s.to_json() for s in self.series], "notes": self.notes}


def machine() -> dict[str, Any]:
    """What the timings were taken on."""
    return {"python": platform.python_version(), "implementation": platform.python_implementation(),
            "platform": platform.platform(terse=True), "machine": platform.machine(),
            "cpus": os.cpu_count()}


#: Whether calls are timed with the cyclic garbage collector paused (as ``timeit`` does).
#: A collection walks every live container, so its cost grows with the heap (the input, the
#: output being built), not with the work a contract does; ``run_bench(with_gc=True)``
#: (``chatconform bench --with-gc``) times it too.
_PAUSE_COLLECTOR = True


def _per_call(fn: Callable[[], Any], repeat: int) -> float:
    """Seconds per call of ``fn``, over ``repeat`` calls after a collection (so garbage of
    earlier calls is not charged to this one), with the collector paused unless asked.

    A call's time ends when it returns: its answers are dropped after the clock stops, as
    pytest-benchmark does for a round of one call, so that freeing a large answer (the
    caller's business, and most of it after the answer was sent) is not timed.
    """
    gc.collect()
    paused = _PAUSE_COLLECTOR and gc.isenabled()
    if paused:
        gc.disable()
    answers = [None] * repeat
    try:
        started = time.perf_counter()
        for index in range(repeat):
            answers[index] = fn()
        return (time.perf_counter() - started) / repeat
    finally:
        del answers
        if paused:
            gc.enable()


def _repeat(first: float) -> int:
    """Calls per measurement, so that a fast call is timed over at least ``MIN_SPAN``."""
    return max(1, min(1000, math.ceil(MIN_SPAN / max(first, 1e-9))))


def _rounds(first: float) -> int:
    if first >= ROUND_LIMIT:
        return 1
    return max(MIN_ROUNDS, min(MAX_ROUNDS, int(ROUND_TIME / max(first, 1e-9))))


def _called(contract: Contract, fn: Callable[..., Any], variant: str | None, case: Any) -> Any:
    """``fn`` called on ``case`` as ``contract`` calls it: what a series of an implementation times."""
    return contract.call(fn, case, variant)


def _checked(contract: Contract, fn: Callable[..., Any], variant: str | None, impl: Any, case: Any) -> None:
    """The checks run on ``fn``'s output for ``case``: what the checks' series times."""
    _run_checks(contract, case, contract.call(fn, case, variant), variant, impl)


def _run_checks(contract: Contract, case: Any, output: Any, variant: str | None, impl: Any) -> None:
    example = Example(contract, case, output, variant, impl=impl)
    example.__dict__["reference"] = output  # the output is the reference's answer
    for check in contract.ordered_checks():
        if check.evaluate is None:
            continue
        try:
            check.evaluate(example)
        except (NotApplicable, Violation):
            pass


class _Timed:
    """A callable under test with its series, and whether it is still timed."""

    def __init__(self, series: Series, run: Callable[[Any], Any]):
        self.series, self.run = series, run
        self.stopped = False
        self.warm_ups: list[tuple[int, float]] = []  # (size, seconds) of each warm-up call

    def predicted(self, size: int) -> float | None:
        """The time of one call at ``size`` from the warm-ups so far (at least linear growth)."""
        if not self.warm_ups:
            return None
        chosen = fit_sizes([n for n, _ in self.warm_ups])
        points = [(n, t) for n, t in self.warm_ups if n in chosen]
        growth = max(fit_exponent([n for n, _ in points], [t for _, t in points]) or 1.0, 1.0)
        last_size, last = self.warm_ups[-1]
        return last * (size / last_size) ** growth


@dataclass
class _Held:
    """The case of one size, held for the interleaved rounds, with what is timed on it."""

    size: int
    case: Any
    messages: int
    warm: list[tuple[_Timed, float]]  # each callable timed at this size, with its warm-up time
    floor_repeat: int = 1
    floor_times: list[float] = field(default_factory=list)
    times: dict[int, list[float]] = field(default_factory=dict)  # by position in ``warm``


def run_bench(impls: Sequence[Any], contracts: Sequence[Contract], sizes: Sequence[int], *,
              seed: int = 0, providers: Sequence[str] | None = None, checks: bool = True,
              with_gc: bool = False, handlers: Sequence[Handler] = ()) -> BenchResult:
    """Time each implementation's method of each contract at each size (see the module doc).

    ``impls`` are loaded implementations (:func:`chatconform.runner.discovery.load`);
    the first that is the reference (named ``reference``) also gives the ``checks`` series.
    ``providers`` narrows the variants timed; by default each contract picks its own
    (:meth:`Contract.bench_variants`). Calls are timed with the garbage collector paused
    unless ``with_gc``. ``handlers`` hear :class:`BenchInput` (an input is being built),
    :class:`BenchRound` (a round over the held sizes starts) and :class:`BenchTimed` (a
    series got a size, or was stopped).
    """
    global _PAUSE_COLLECTOR
    _PAUSE_COLLECTOR = not with_gc
    def note(event: Event) -> None:
        emit(handlers, event)

    result = BenchResult()
    sizes = sorted(set(sizes))
    for contract in contracts:
        if type(contract).large_case is Contract.large_case:
            result.notes.append(f"{contract.name}: no large input (the contract defines no large_case)")
            continue
        runners: dict[str | None, list[_Timed]] = {}
        for impl in impls:
            fn = impl.method(contract)
            if fn is None:
                continue
            reason = contract.skip_reason(impl)
            variants = contract.variants(impl)
            if providers and variants != [None]:  # a contract without providers keeps its one variant
                variants = [v for v in variants if v in providers]
            else:
                variants = contract.bench_variants(variants)
            if reason or not variants:
                result.notes.append(f"{contract.name}: {impl.name} not timed ({reason or 'no variant selected'})")
                continue
            for variant in variants:
                timed = runners.setdefault(variant, [])
                series = Series(contract.name, impl.name, variant)
                timed.append(_Timed(series, partial(_called, contract, fn, variant)))
                if checks and impl.name == "reference" and not any(t.series.impl == CHECKS for t in timed):
                    check_series = Series(contract.name, CHECKS, variant)
                    timed.append(_Timed(check_series, partial(_checked, contract, fn, variant, impl)))
        if not runners:
            result.notes.append(f"{contract.name}: no implementation selected provides {contract.method}")
            continue
        for variant, timed in runners.items():
            floor = Series(contract.name, FLOOR, variant)
            result.series.extend([floor, *(t.series for t in timed)])
            _time_sizes(contract, variant, sizes, seed, timed, floor, note)
    return result


def _time_sizes(contract: Contract, variant: str | None, sizes: Sequence[int], seed: int, timed: list[_Timed],
                floor_series: Series, note: Callable[[Event], None]) -> None:
    """Warm up at each size in turn, holding the cases; time the held sizes in rounds."""
    held: list[_Held] = []
    try:
        for size in sizes:
            live = [t for t in timed if not t.stopped and not _over_budget(t, size, note)]
            if not live:
                continue
            if held and sum(h.messages for h in held) + size > HOLD_MESSAGES:
                _time_rounds(contract, variant, held, floor_series, note)
                held = []
                gc.unfreeze()
            note(BenchInput(contract.name, variant, size))
            case = contract.large_case(size, seed, variant)
            if case is None:
                for t in live:
                    t.stopped = True
                    t.series.note = f"no large input for {variant or 'this contract'}"
                continue
            # The inputs live as long as the timing: move them out of the collector's reach,
            # as a long-lived process does with gc.freeze(), so a collection a call triggers
            # walks what the call made, not every input held (that walk grows with the heap,
            # not with the work the contract does).
            gc.collect()
            gc.freeze()
            warm = _warm_up(live, case, size, note)
            if warm:
                held.append(_Held(size, case, contract.size(case) or size, warm))
        if held:
            _time_rounds(contract, variant, held, floor_series, note)
    finally:
        held = []
        gc.unfreeze()


def _over_budget(t: _Timed, size: int, note: Callable[[Event], None]) -> bool:
    predicted = t.predicted(size)
    if predicted is None or predicted <= CALL_BUDGET:
        return False
    t.stopped = True
    t.series.note = f"{size:,} not timed: about {predicted:.0f} s a call predicted"
    note(BenchTimed(t.series, size, skipped=t.series.note))
    return True


def _warm_up(live: list[_Timed], case: Any, size: int, note: Callable[[Event], None]) -> list[tuple[_Timed, float]]:
    """One untimed call of each: a warm-up, and what sets the rounds; one that raises is
    reported and not timed again."""
    warm = []
    for t in live:
        started = time.perf_counter()
        try:
            t.run(case)
        except Exception as exc:
            t.stopped = True
            t.series.note = f"raised {type(exc).__name__} at {size:,}: {str(exc)[:160]}"
            note(BenchTimed(t.series, size, skipped=t.series.note))
            continue
        seconds = time.perf_counter() - started
        t.warm_ups.append((size, seconds))
        warm.append((t, seconds))
    return warm


def _time_rounds(contract: Contract, variant: str | None, held: list[_Held], floor_series: Series,
                 note: Callable[[Event], None]) -> None:
    """Time the floor and every callable on every held case, round by round."""
    firsts = [first for h in held for _, first in h.warm]
    normal = [_rounds(first) for first in firsts if first < ROUND_LIMIT]
    rounds = min(normal) if normal else 1  # the same for every size: a fastest of as many rounds
    for h in held:
        started = time.perf_counter()
        contract.floor(h.case, variant)
        h.floor_repeat = _repeat(time.perf_counter() - started)
        h.times = {index: [] for index in range(len(h.warm))}
    def each_round(label: str, run: Callable[[int], None]) -> None:
        for round_number in range(rounds):
            note(BenchRound(contract.name, variant, label, round_number + 1, rounds, [h.size for h in held]))
            run(round_number)

    def floor_round(round_number: int) -> None:
        for h in held:
            h.floor_times.append(_per_call(partial(contract.floor, h.case, variant), h.floor_repeat))

    each_round(FLOOR, floor_round)
    for t in dict.fromkeys(t for h in held for t, _ in h.warm):
        def impl_round(round_number: int, t: _Timed = t) -> None:
            for h in held:
                for index, (timed, first) in enumerate(h.warm):
                    if timed is t and (round_number == 0 or first < ROUND_LIMIT):
                        h.times[index].append(_per_call(partial(t.run, h.case), _repeat(first)))

        each_round(t.series.impl, impl_round)
    for h in held:
        floor, floor_best = statistics.median(h.floor_times), min(h.floor_times)
        floor_series.timings.append(Timing(h.size, h.messages, floor, floor, len(h.floor_times), floor_best,
                                           floor_best))
        for index, spent in h.times.items():
            t = h.warm[index][0]
            timing = Timing(h.size, h.messages, statistics.median(spent), floor, len(spent), min(spent), floor_best)
            t.series.timings.append(timing)
            note(BenchTimed(t.series, h.size, timing=timing))
