"""What a run prints: progress on stderr while it searches (one line per finished search;
on a terminal, a live line saying what is running, and elsewhere, as in a CI log, a line per
running search every :data:`PROGRESS_SECONDS`), then the matrix, each failure with its
minimal input and regression test, and the counts on stdout. Also the benchmark's progress.

On a terminal, text is wrapped at its width, tables fitted to it; a command to paste, a
case and a regression test are printed whole (the terminal folds a line too long for it),
since a line broken in them would not run or parse when pasted.
"""

from __future__ import annotations

import re
import textwrap
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import rich.status
from rich.console import Console
from rich.table import Table
from rich.text import Text

from chatconform.contracts import get_contract
from chatconform.engine import (
    BenchInput,
    BenchRound,
    BenchTimed,
    Event,
    ExampleRan,
    RunFinished,
    RunStarted,
    SearchFinished,
    SearchStarted,
    nothing_ran,
    shard_idle,
)
from chatconform.errors import ERROR
from chatconform.frame.status import Status
from chatconform.outputs import report
from chatconform.outputs.present import TEST_BANNER, describe, failure_record, indent, regression_test
from chatconform.outputs.repro import replay_command
from chatconform.version import __version__

#: Off a terminal (a CI log, a file), how often a line says what each running search has done.
PROGRESS_SECONDS = 30.0


#: Characters a terminal acts on rather than shows (C0 and C1 controls, DEL): an escape
#: sequence in a name, a message or a program's stderr could retitle the window or clear it.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str, *, lines: bool = True) -> str:
    """``text`` with every control character shown as an escape (``\\x1b``), never acted on;
    newlines and tabs too unless ``lines`` (a name or a table cell is one line)."""
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    return text if lines else text.replace("\n", "\\n").replace("\t", "\\t")


@dataclass
class _Running:
    """A search under way: whose, since when, its cases so far (of the exploring pass, and
    replayed while shrinking) and the checks seen failing."""

    implementation: str
    started: float
    examples: int = 0
    replayed: int = 0
    failing: dict[str, str] = field(default_factory=dict)

    def text(self, label: str) -> str:
        return (f"{label}: {self.examples} examples"
                + (f", shrinking ({self.replayed} replayed)" if self.replayed else ""))


def failures_note(failing: Mapping[str, str], expected: Collection[str]) -> tuple[str, str]:
    """How a search line sums up the checks seen failing (check id -> level), with its style:
    what fails the run (``failing``), the warnings, and the expected failures the
    implementation declares apart; ``ok`` for none."""
    declared = sum(check in expected for check in failing)
    errors = sum(check not in expected and level == ERROR for check, level in failing.items())
    warnings = len(failing) - declared - errors
    parts = [f"{errors} failing"] if errors else []
    if warnings:
        parts.append(f"{warnings} warning" + "s" * (warnings > 1))
    if declared:
        parts.append(f"{declared} expected failure{'s' * (declared > 1)}, as declared")
    return ", ".join(parts) or "ok", "red" if errors else "yellow" if parts else "green"


def reached_text(contract: str, reached: dict[str, set[str]]) -> str:
    """What a search's cases reached, measure by measure, of how many there are."""
    totals = get_contract(contract).reachable()
    return "; ".join(f"{len(found)}" + (f" of {totals[measure]}" if measure in totals else "") + f" {measure}"
                     for measure, found in reached.items())


class TerminalReporter:
    """The run's own output. ``providers``: the providers the run was narrowed to, named in
    its first line; ``verbose`` prints every counterexample in full."""

    def __init__(self, out: Console, err: Console, *, verbose: bool = False, providers: Sequence[str] = ()):
        self.out, self.err, self.verbose, self.providers = out, err, verbose, list(providers)
        self.status: rich.status.Status | None = None
        self.running: dict[str, _Running] = {}  # by label
        self.total, self.done = 0, 0
        self.expected: dict[str, Collection[str]] = {}  # implementation -> its declared expected failures
        self.provided: dict[str, frozenset[str]] = {}  # implementation -> the contracts it provides
        self.logged = time.monotonic()  # when progress was last logged (off a terminal)

    def __call__(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.started(event)
        elif isinstance(event, SearchStarted):
            self.running[event.label] = _Running(event.implementation, time.monotonic())
            self._show()
        elif isinstance(event, ExampleRan):
            if (running := self.running.get(event.label)) is not None:
                if event.shrinking:
                    running.replayed += 1
                else:
                    running.examples += 1
                running.failing = event.failing
                if (running.examples + running.replayed) % 10 == 0:
                    self._show()
        elif isinstance(event, SearchFinished):
            self.search_finished(event)
        elif isinstance(event, RunFinished):
            self.finished(event)
            return
        self._log_progress()

    def started(self, run: RunStarted) -> None:
        self.total = run.searches
        self.expected = {impl.name: impl.expected_failures for impl in run.implementations}
        self.provided = report.provided_by(run.implementations)
        self.logged = time.monotonic()
        seed = run.seed if run.seed is not None else "derandomized" if run.profile.derandomize else "random"
        providers = f" · providers {', '.join(self.providers)}" if self.providers else ""
        shard = f" · shard {run.shard[0]}/{run.shard[1]}" if run.shard else ""
        jobs = f" · {run.jobs} jobs" if run.jobs > 1 else ""
        self.err.print(f"chatconform {__version__} · profile {run.profile.name} · seed {seed} · "
                       f"{len(run.implementations)} implementation(s) · contracts "
                       f"{', '.join(c.name for c in run.selection.contracts)}{providers}{shard}{jobs}")

    def search_finished(self, event: SearchFinished) -> None:
        self.running.pop(event.label, None)
        self.done += 1
        if self.status is not None:
            self.status.stop()  # the finished line prints above, then the live line comes back
            self.status = None
        result = event.result
        failing = {f.check: f.level for f in result.failures.values()}
        if result.hung is not None:
            failing[result.hung.check] = ERROR
        note = failures_note(failing, self.expected.get(event.implementation, ()))
        if result.aborted:
            note = ("stopped", "magenta")
        label = visible(event.label, lines=False)
        self.err.print(Text.assemble(f"  {label}: {result.examples} examples, {event.seconds:.1f}s, ", note))
        if self.verbose and result.reached:
            self.err.print("    reached: " + reached_text(event.contract, result.reached))
        self._show()

    def _log_progress(self) -> None:
        """Off a terminal, where no live line shows, a line per running search once
        :data:`PROGRESS_SECONDS` have passed since the last such lines: its cases so far (of
        both passes), how long it has run, and the checks seen failing."""
        now = time.monotonic()
        if not self.running or now - self.logged < PROGRESS_SECONDS or self.err.is_terminal:
            return
        self.logged = now
        done = f" ({self.done} of {self.total} searches done)" if self.total > 1 else ""
        for label, running in self.running.items():
            note = failures_note(running.failing, self.expected.get(running.implementation, ()))
            self.err.print(Text.assemble(f"  still searching {visible(running.text(label), lines=False)}, "
                                         f"{now - running.started:.1f}s so far, ", note, done))

    def finished(self, event: RunFinished) -> None:
        outcome, verdicts, seconds = event.outcome, event.outcome.verdicts, event.seconds
        if outcome.interrupted:  # the front end says it in one line; the partial verdicts are in the report
            self.running.clear()
            self._show()
            return
        if shard_idle(outcome):
            index, count = outcome.shard or (0, 0)
            self.err.print(f"shard {index}/{count}: nothing to search here ({len(outcome.units)} of the run's "
                           f"{len(outcome.planned)} searches, all skipped or none)")
            return
        if nothing_ran(verdicts):
            reasons = sorted({v.message for v in verdicts})
            self.err.print("nothing to run: every selected check was skipped (" + "; ".join(reasons) + ")")
            return
        results, absent = report.split_provided([report.result_line(v) for v in verdicts], self.provided)
        print_matrix(self.out, results, absent)
        print_failures(self.out, verdicts, verbose=self.verbose)
        self.out.print(report.counts_text(results) + f" in {seconds:.1f}s")
        if outcome.shard:
            self.out.print(f"shard {outcome.shard[0]}/{outcome.shard[1]}: {len(outcome.units)} of the run's "
                           f"{len(outcome.planned)} searches; `chatconform summary` merges the shard reports")

    def _show(self) -> None:
        """The live line: what is running, with its examples so far (on a terminal only)."""
        if not self.err.is_terminal:
            return
        if not self.running:
            if self.status is not None:
                self.status.stop()
                self.status = None
            return
        text = "; ".join(r.text(label) if r.examples else label for label, r in self.running.items())
        if self.total > 1:
            text = f"[{self.done}/{self.total}] {text}"
        # One line, however narrow the terminal.
        line = Text(visible(text, lines=False), no_wrap=True, overflow="ellipsis")
        if self.status is None:
            self.status = self.err.status(line)
            self.status.start()
        else:
            self.status.update(line)


def print_matrix(out: Console, results: list[dict], not_provided: Mapping[str, list[str]] | None = None) -> None:
    """The matrix of report lines: a row per check, a column per implementation; then a line
    per implementation that does not provide some of the contracts (``not_provided``, from
    :func:`chatconform.outputs.report.split_provided`: those lines are not in ``results``)."""
    impls, checks, cells = report.matrix(results)
    table = Table(title="conformance", title_justify="left")
    table.add_column("check", overflow="fold")  # a narrow terminal folds an id, never cuts it
    for impl in impls:
        table.add_column(visible(impl, lines=False), justify="center")

    by_contract: dict[str, list[str]] = {}
    for check in checks:
        by_contract.setdefault(check.split(".", 1)[0], []).append(check)
    for contract, ids in by_contract.items():
        # A contract no implementation ran is one row, not one per check.
        shown = [c for check in ids for impl in impls if (c := cells.get((check, impl))) is not None]
        if len(ids) > 1 and shown and all(c.status == Status.SKIP for c in shown):
            ids = [f"{contract}.*"]
            cells.update({(ids[0], impl): cells[(by_contract[contract][0], impl)] for impl in impls
                          if (by_contract[contract][0], impl) in cells})
        for check in ids:
            row = []
            for impl in impls:
                cell = cells.get((check, impl))
                row.append(Text(cell.label, style=cell.status.style) if cell else Text(""))
            table.add_row(visible(check, lines=False), *row)
    out.print(table)
    for name, contracts in (not_provided or {}).items():
        out.print(visible(report.not_provided_text(name, contracts), lines=False))


#: A minimal input longer than this is cut short unless --verbose (the saved case holds all of it).
MAX_INPUT_LINES = 30


def print_failures(out: Console, verdicts, *, verbose: bool = False) -> None:
    """One block per failing check with its smallest counterexample; the others summarised.

    A case already printed for an earlier check is named, not printed again, and a very
    long one is cut short (``verbose`` prints every counterexample in full).
    """
    grouped: dict[tuple[Status, str, str], list[str]] = {}
    for verdict in verdicts:
        status = Status(verdict.status)
        if status in (Status.ERROR, Status.NOT_EVALUATED):
            grouped.setdefault((status, verdict.implementation, verdict.message), []).append(verdict.check)
    for (status, impl, message), checks in grouped.items():
        word = "ERROR" if status == Status.ERROR else "NOT EVALUATED"
        out.print(Text.assemble("\n", (word, status.style),
                                visible(f" {', '.join(checks)} · {impl}: {message}", lines=False)))
    shown: dict[tuple[str, str], str] = {}  # (implementation spec, case) -> the block that printed it
    elided = False
    for verdict in verdicts:
        if Status(verdict.status) not in (Status.FAIL, Status.WARN):
            continue
        reports = [describe(verdict, failure) for failure in verdict.failures]
        order = sorted(range(len(reports)), key=lambda i: len(reports[i].input_json))
        for index in order if verbose else order[:1]:
            failure, shown_report = verdict.failures[index], reports[index]
            elided |= print_failure(out, verdict, failure, shown_report, shown, verbose)
        others = [verdict.failures[i] for i in order[1:]]
        if others and not verbose:
            where = sorted({f.variant for f in others if f.variant})
            out.print(f"  also fails on {len(others)} other case(s)"
                      + (f" (for {', '.join(where)})" if where else "") + "; --verbose prints them")
            elided = True
    if elided:
        out.print("\n(cut short above; run again with --verbose for every counterexample in full)")


def print_failure(out: Console, verdict, failure, shown_report, shown: dict, verbose: bool) -> bool:
    """Print one failure block; True when part of it was cut short."""
    head, _, rest = shown_report.title.partition(" ")
    style = Status.FAIL.style if failure.level == "error" else Status.WARN.style
    out.print(Text.assemble("\n", (visible(head, lines=False), style), " ", (visible(rest, lines=False), "bold")))
    for label, text in shown_report.fields:
        if label == "saved":
            saved = failure.saved or ""
            label, text = ("saved", text) if saved.startswith("not saved") else (
                "re-run", replay_command(saved, verdict.spec))
        print_field(out, label, text, whole=label == "re-run")
    key = (verdict.spec, shown_report.input_json)
    earlier = shown.get(key)
    if earlier is not None and not verbose:
        out.print(f"  {shown_report.input_label}: the same as for {visible(earlier, lines=False)} above")
        out.print(f"  regression test: the one above, ending in  {shown_report.call}")
        return False
    shown.setdefault(key, shown_report.title.partition(" ")[2])
    lines = shown_report.input_json.splitlines()
    if len(lines) > MAX_INPUT_LINES and not verbose:
        out.print(f"  {shown_report.input_label} ({len(lines)} lines, the first {MAX_INPUT_LINES // 2}):")
        out.print(indent("\n".join(lines[:MAX_INPUT_LINES // 2])), soft_wrap=True)
        saved = failure.saved or ""
        if not saved or saved.startswith("not saved"):
            out.print(f"    … {len(lines) - MAX_INPUT_LINES // 2} more lines (--verbose prints them)")
            out.print("  regression test: not printed for a case this long that could not be saved "
                      "(--verbose prints it)")
            return True
        out.print(f"    … {len(lines) - MAX_INPUT_LINES // 2} more lines (the whole case is saved in {saved}; "
                  "--verbose prints it)")
        out.print(TEST_BANNER)
        test = regression_test(failure_record(verdict, failure), failure.level, case_file=Path(saved).name)
        out.print(test.rstrip("\n"), soft_wrap=True)
        return True
    out.print(f"  {shown_report.input_label}:")
    out.print(indent(shown_report.input_json), soft_wrap=True)  # never broken: it is pasted
    out.print(TEST_BANNER)
    out.print(shown_report.test.rstrip("\n"), soft_wrap=True)
    return False


def print_field(out: Console, label: str, text: str, *, whole: bool = False) -> None:
    """``  label:   text``; on a terminal, wrapped at its width under the text's first column,
    unless ``whole`` (a command to paste: printed on one line, whatever its length)."""
    head, text = f"  {label + ':':<9} ", visible(text)
    width = out.width if out.is_terminal else None  # off a terminal, nothing is fitted to a width
    if width is None or whole or len(head) + len(text) <= width:
        out.print(head + text, soft_wrap=True)
        return
    out.print(textwrap.fill(text, width=max(width, len(head) + 20), initial_indent=head,
                            subsequent_indent=" " * len(head), break_on_hyphens=False), soft_wrap=True)


def seconds_text(value: float) -> str:
    """A duration in the unit that reads best (s, ms, µs, ns)."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value * 1e9:.3g} ns"


class BenchProgress:
    """The benchmark's progress on stderr: each input built, each round, each timing."""

    def __init__(self, err: Console) -> None:
        self.err = err

    def __call__(self, event: Event) -> None:
        if isinstance(event, BenchInput):
            variant = f" [{event.variant}]" if event.variant else ""
            self.err.print(f"  {event.contract}{variant} at {event.size:,}: building the input")
        elif isinstance(event, BenchRound):
            variant = f" [{event.variant}]" if event.variant else ""
            self.err.print(f"  {event.contract}{variant} · {event.implementation}: round {event.round} of "
                           f"{event.rounds} over {', '.join(f'{n:,}' for n in event.sizes)}")
        elif isinstance(event, BenchTimed):
            series = event.series
            label = f"{series.contract} · {series.impl}" + (f" [{series.variant}]" if series.variant else "")
            if event.timing is not None:
                t = event.timing
                ratio = f", {t.ratio:.1f}x the floor" if t.ratio else ""
                self.err.print(f"    {label}: median {seconds_text(t.seconds)}, fastest {seconds_text(t.best)}"
                               f"{ratio} ({t.rounds} rounds)")
            else:
                self.err.print(f"    {label}: {event.skipped}")
