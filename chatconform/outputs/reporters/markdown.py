"""The markdown summary of a report (``chatconform summary --format markdown``): the matrix,
then the errors, warnings and expected failures with their cases, for a CI step summary."""

from __future__ import annotations

import html
import re
from typing import Any

from chatconform.frame.status import Status
from chatconform.outputs.pretty import render
from chatconform.outputs.report import (
    PARTIAL,
    Cell,
    Report,
    counts_text,
    failure_status,
    findings,
    interruption,
    line_failures,
    matrix,
    not_provided_text,
    provided_in,
    provider_matrix,
    requests_text,
    split_provided,
    status_of,
)


def markdown(report: Report) -> str:
    """The summary of ``report`` as markdown (a table, then the findings)."""
    results, absent = split_provided(report.results, provided_in(report.header))
    impls, checks, cells = matrix(results)
    lines = [f"### chatconform {report.header.get('version', '')} "
             f"(profile {report.header.get('profile', '?')})", ""]
    if impls:
        lines += ["| check | " + " | ".join(map(_cell, impls)) + " |", "|---|" + "---|" * len(impls)]
    else:  # a shard with nothing to search: no table, which would render broken
        lines.append("No check ran.")
    stopped = interruption(report)
    if stopped:
        lines[1:1] = ["", f"**{stopped}**: {PARTIAL}"]
    for check in checks:
        row = [cells.get((check, i), None) for i in impls]
        lines.append(f"| `{_cell(check)}` | " + " | ".join(
            "" if c is None else f"**{c.label}**" if c.status.fails_run else c.label for c in row) + " |")
    lines += ["", counts_text(results)]  # never the footer's: it may be forged
    served = requests_text(report)
    if served:
        lines += ["", _cell(served)]
    lines += provider_tables(report)
    if absent:
        lines += ["", *(f"- {_cell(not_provided_text(name, contracts))}" for name, contracts in absent.items())]
    shown = findings(report.results)
    if shown:
        lines += ["", "| implementation | check | status | message |", "|---|---|---|---|"]
        for r in shown:
            if r.get("failures"):  # several variants failed: each with its own message
                lines += [f"| {_cell(r['implementation'])} | `{_cell(r['check'])}` {_cell(_variant(f))} | "
                          f"{failure_status(r, f).label} | {_cell(str(f.get('message') or ''))} |"
                          for f in line_failures(r)]
            else:
                lines.append(f"| {_cell(r['implementation'])} | `{_cell(r['check'])}` | {status_of(r).label} | "
                             f"{_cell(r['message'] or '')} |")
        lines += [block for r in shown for f in line_failures(r) if f.get("example") is not None
                  for block in _example_block(r, f)]
    return "\n".join(lines) + "\n"


def _variant(failure: dict) -> str:
    return f"[{failure['variant']}]" if failure.get("variant") else ""


def _cell(text: str) -> str:
    """``text`` as one table cell: no line break or other control character (a space each), no
    pipe (a slash) and no backtick (a quote: cells in a code span would end it)."""
    return _CONTROL.sub(" ", text).replace("|", "/").replace("`", "'")


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


#: Lines of a case a markdown summary shows before it cuts the rest.
EXAMPLE_LINES = 80
#: Characters of one line of a case a markdown summary shows.
EXAMPLE_WIDTH = 300


def case_text(case: Any) -> tuple[str, bool]:
    """A case as a summary shows it, and whether it was cut. A case that did not shrink (a
    hang, a crash on a large history) can run to megabytes: a summary shows its head (the
    first :data:`EXAMPLE_LINES` lines, each at most :data:`EXAMPLE_WIDTH` long), the report
    keeps it whole."""
    lines = render(case).splitlines()
    shown = [line if len(line) <= EXAMPLE_WIDTH else f"{line[:EXAMPLE_WIDTH]}... ({len(line)} characters)"
             for line in lines[:EXAMPLE_LINES]]
    if len(lines) > EXAMPLE_LINES:
        shown.append(f"... {len(lines) - EXAMPLE_LINES} more lines: the whole case is in the report's 'example' field")
    return "\n".join(shown), shown != lines


def _example_block(result: dict, failure: dict) -> list[str]:
    """A collapsed block with one failure's (minimal) case, so a step summary stays one table long."""
    variant = f" {_variant(failure)}" if failure.get("variant") else ""
    text, _ = case_text(failure["example"])
    title = html.escape(_cell(f"{result['implementation']} · {result['check']}{variant}"))  # inside HTML
    return ["", f"<details><summary>{title}: the case</summary>",
            "", "```json", text, "```", "", "</details>"]


def provider_tables(report: Report) -> list[str]:
    """One table per provider of the payload checks (:func:`~chatconform.outputs.report.provider_matrix`),
    a column per implementation that maps for it: what each library gets wrong for the provider
    a reader uses, with the message of each deviation (the rule and the provider's error text).
    Nothing for a report without search lines (a shard's, or merged shards)."""
    tables = provider_matrix(report)
    if not tables:
        return []
    lines = ["", "### The payload contract, provider by provider", ""]
    for table in tables:
        columns = table.implementations
        lines += [f"#### `{_cell(table.provider)}`", "", "| check | " + " | ".join(map(_cell, columns)) + " |",
                  "|---|" + "---|" * len(columns)]
        lines += [f"| `{c}` | " + " | ".join(_provider_label(table.cells.get((c, i))) for i in columns) + " |"
                  for c in table.checks]
        notes = [f"- {_cell(impl)} · `{_cell(check)}` ({_provider_label(cell)}): {_cell(failure['message'])}"
                 for (check, impl), failure in table.failures.items()
                 if (cell := table.cells[(check, impl)]).status != Status.WARN]
        if notes:
            lines += ["", *notes]
        lines.append("")
    return lines


def _provider_label(cell: Cell | None) -> str:
    return "" if cell is None else "**fail**" if cell.status == Status.FAIL else cell.status.label
