"""The engine: plan a run, search each unit, judge each case, fold the verdicts.

One module per step, read in this order: :mod:`.results` (what the steps hand each other),
:mod:`.evaluate` (one case through the implementation and the checks), :mod:`.search` (one
search: an exploring pass, then a shrinking pass per failing check), :mod:`.drawn` (the
cases a run draws once and judges for every implementation), :mod:`.plan` (the
units of a run, shards, the selection), :mod:`.fold` (verdicts, expected failures, exit
codes), :mod:`.run` (a run, serially or in worker processes, :mod:`.parallel`) and
:mod:`.events` (what a run tells its handlers). ``docs/architecture.md`` ("The engine")
walks through them.

Two entry points: :func:`run` for a run (a :class:`RunOutcome`) and :func:`evaluate_case`
for a single case.
"""

from chatconform.engine.evaluate import evaluate_case
from chatconform.engine.events import (
    BenchInput,
    BenchRound,
    BenchTimed,
    Event,
    ExampleRan,
    Handler,
    RunFinished,
    RunStarted,
    SearchFinished,
    SearchStarted,
)
from chatconform.engine.fold import (
    NO_CASE_APPLIES,
    exit_code,
    fold_contract,
    fold_units,
    nothing_ran,
    run_exit_code,
    shard_idle,
)
from chatconform.engine.plan import nothing_ran_in, plan, select, shard_units
from chatconform.engine.results import (
    Evaluation,
    Failure,
    RunOutcome,
    SearchResult,
    SearchSettings,
    Selection,
    Unit,
    Verdict,
)
from chatconform.engine.run import run
from chatconform.engine.search import no_local_constants

__all__ = [
    "NO_CASE_APPLIES", "BenchInput", "BenchRound", "BenchTimed", "Evaluation", "Event", "ExampleRan", "Failure",
    "Handler", "RunFinished", "RunOutcome", "RunStarted", "SearchFinished", "SearchResult", "SearchSettings",
    "SearchStarted", "Selection", "Unit", "Verdict", "evaluate_case", "exit_code", "fold_contract", "fold_units",
    "no_local_constants", "nothing_ran", "nothing_ran_in", "plan", "run", "run_exit_code", "select",
    "shard_idle", "shard_units",
]
