"""The JSON-lines report of a run (``chatconform run --report FILE``), written atomically when
the run finishes; the lines themselves are :mod:`chatconform.outputs.report`'s."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from chatconform.engine import Event, RunFinished, RunStarted
from chatconform.outputs import files as outputs
from chatconform.outputs import report


class JsonlReporter:
    """Writes the report: the header (the run's settings, when it started), a shard's search
    lines (one per search, with its failures by provider), one result line per verdict, and the
    footer with the counts (and, for a run stopped by a signal, which signal after how many
    searches).

    ``providers``: the providers the run was narrowed to (``--provider``), which the header
    records, in the order given. ``path`` is made absolute here, at the start, so a chdir
    during the run does not move the report.
    """

    def __init__(self, path: str | Path, *, version: str, providers: Sequence[str] = ()) -> None:
        self.path, self.version, self.providers = Path(path).absolute(), version, list(providers)
        self.started: RunStarted | None = None
        self.started_at = datetime.now(UTC)

    def __call__(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.started, self.started_at = event, datetime.now(UTC)
        elif isinstance(event, RunFinished):
            self.write(event)

    def write(self, finished: RunFinished) -> None:
        run, outcome = self.started, finished.outcome
        assert run is not None, "a run finishes only after it started"
        profile = run.profile
        head = report.header(run.implementations, version=self.version, profile=profile.name, seed=run.seed,
                             contracts=[c.name for c in run.selection.contracts], checks=run.selection.checks,
                             examples=profile.max_examples if profile.exact_examples else None,
                             started=self.started_at)
        if self.providers:
            head["providers"] = self.providers
        names = [impl.name for impl in run.implementations]
        if outcome.shard:
            report.add_shard(head, *outcome.shard, outcome.units, outcome.planned, names)
        # A shard's searches are what merging folds again. Each search of a provider (a payload
        # search) also holds that provider's verdicts, which the per-provider tables of a
        # summary read: a plain run writes those only.
        searches = [report.search_line(names[u.impl], u, outcome.results.get(u)) for u in outcome.units
                    if (outcome.shard or u.variant is not None)
                    and (u.skip is not None or u in outcome.results)]  # an interrupted search left none
        lines = [head, *searches, *map(report.result_line, outcome.verdicts),
                 report.footer(outcome.verdicts, finished.seconds, interrupted=outcome.interrupted,
                               searched=outcome.searched, searches=outcome.searches)]
        outputs.write_atomic(self.path, "".join(json.dumps(line, default=str) + "\n" for line in lines))
