"""Running a run: plan it, search its units (here, or in worker processes), fold the
verdicts, and tell the handlers as it goes (:func:`run`, the engine's one entry point for a run).

Whatever order the searches finish in, the verdicts are folded in plan order. Two seams are
left for what comes later: each search's cases meet the implementation only in
:func:`chatconform.engine.evaluate.evaluate_case` (where a process boundary to
an implementation running in a child process goes), and a search is keyed by its contract,
not its implementation, when derandomized, so a run draws each contract's cases once and
judges them for every unit (:mod:`chatconform.engine.drawn`; a worker of
``--jobs`` draws its own, the same ones).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from chatconform.engine.drawn import STORE
from chatconform.engine.events import Handler, RunFinished, RunStarted, SearchFinished, SearchStarted, emit
from chatconform.engine.fold import fold_units
from chatconform.engine.parallel import run_units
from chatconform.engine.plan import plan, search_order, shard_units
from chatconform.engine.results import RunOutcome, SearchResult, SearchSettings, Selection, Unit
from chatconform.engine.search import new_stream, search_unit
from chatconform.errors import Interrupted
from chatconform.frame import stop
from chatconform.frame.guard import DEFAULT_TIMEOUT
from chatconform.frame.profiles import Profile, get_profile
from chatconform.runner.discovery import Implementation
from chatconform.runner.protocol import channel


def run(impls: list[Implementation], selection: Selection, profile: str | Profile = "ci", *,
        seed: int | None = None, timeout: float = DEFAULT_TIMEOUT, shrink: bool = True,
        shrink_expected: bool = False, jobs: int = 1,
        shard: tuple[int, int] | None = None, handlers: Sequence[Handler] = ()) -> RunOutcome:
    """Plan the run, search its units (``jobs`` > 1: in that many worker processes; ``shard``
    ``(I, N)``: the I-th of N shards only) and fold the verdicts, emitting the
    :mod:`~chatconform.engine.events` to ``handlers`` in order.

    A stop asked for meanwhile (:mod:`chatconform.frame.stop`; only where a front end
    installed its handlers) ends the searching: the outcome holds the verdicts of the searches
    that finished, and names the signal (``interrupted``)."""
    started = time.perf_counter()
    prof = get_profile(profile) if isinstance(profile, str) else profile
    planned = plan(impls, selection, run_stream=new_stream(prof, seed))
    units = planned if shard is None else shard_units(planned, *shard)
    searches = search_order([u for u in units if u.skip is None])
    emit(handlers, RunStarted(impls, selection, prof, seed, jobs, shard, len(searches),
                              sum(u.skip is None for u in planned)))
    settings = SearchSettings(prof, seed, timeout, selection.checks, shrink, shrink_expected)
    results: dict[Unit, SearchResult] = {}
    try:
        if jobs > 1 and len(searches) > 1:
            results = run_units(impls, searches, settings, jobs=jobs, handlers=handlers)
        else:
            with STORE.session():  # each contract's cases drawn once, judged for every unit
                for unit in searches:
                    stop.check()
                    results[unit] = _search_here(impls[unit.impl], unit, settings, handlers)
    except Interrupted:
        pass  # the search under way is dropped; the finished ones are folded below
    interrupted = stop.requested()
    if interrupted:
        channel.kill_all()  # a program stuck in a call, or idle: nothing is asked of it again
    outcome = RunOutcome(fold_units(impls, selection, units, planned, results, prof, interrupted=interrupted),
                         units, planned, results, shard, interrupted)
    emit(handlers, RunFinished(outcome, time.perf_counter() - started))
    return outcome


def _search_here(impl: Implementation, unit: Unit, settings: SearchSettings,
                 handlers: Sequence[Handler]) -> SearchResult:
    """One search in this process, between its :class:`SearchStarted` and :class:`SearchFinished`."""
    emit(handlers, SearchStarted(impl.name, unit.contract, unit.variant))
    started = time.perf_counter()
    result = search_unit(impl, unit, settings, handlers)
    emit(handlers, SearchFinished(impl.name, unit.contract, unit.variant, result, time.perf_counter() - started))
    return result
