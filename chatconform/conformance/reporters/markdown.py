"""The markdown summary of a report (``chatconform summary --format markdown``): the matrix,
then the errors, warnings and expected failures with their cases, for a CI step summary."""

from __future__ import annotations

from chatconform.conformance.compact import render
from chatconform.conformance.report import (
    PARTIAL,
    Report,
    counts_text,
    interruption,
    matrix,
    not_provided_text,
    provided_in,
    split_provided,
    status_of,
)
from chatconform.conformance.status import Status


def markdown(report: Report) -> str:
    """The summary of ``report`` as markdown (a table, then the findings)."""
    results, absent = split_provided(report.results, provided_in(report.header))
    impls, checks, cells = matrix(results)
    lines = [f"### chatconform {report.header.get('version', '')} "
             f"(profile {report.header.get('profile', '?')})", ""]
    if impls:
        lines += ["| check | " + " | ".join(impls) + " |", "|---|" + "---|" * len(impls)]
    else:  # a shard with nothing to search: no table, which would render broken
        lines.append("No check ran.")
    stopped = interruption(report)
    if stopped:
        lines[1:1] = ["", f"**{stopped}**: {PARTIAL}"]
    for check in checks:
        row = [cells[(check, i)] if (check, i) in cells else None for i in impls]
        lines.append(f"| `{check}` | " + " | ".join(
            "" if c is None else f"**{c.label}**" if c.status.fails_run else c.label for c in row) + " |")
    lines += ["", counts_text(results)]  # never the footer's: it may be forged
    lines += provider_tables(report)
    if absent:
        lines += ["", *(f"- {not_provided_text(name, contracts)}" for name, contracts in absent.items())]
    # Errors first, then warnings (reported; they fail a run only under --strict), then the
    # expected failures (an implementation's known deviations).
    order = {Status.WARN: 1, Status.XFAIL: 2}
    shown = sorted((r for r in report.results if status_of(r).fails(strict=True) or status_of(r) == Status.XFAIL),
                   key=lambda r: order.get(status_of(r), 0))
    if shown:
        lines += ["", "| implementation | check | status | message |", "|---|---|---|---|"]
        lines += [f"| {r['implementation']} | `{r['check']}` | {status_of(r).label} | "
                  f"{_cell(r['message'])} |" for r in shown]
        lines += [block for r in shown if r.get("example") is not None for block in _example_block(r)]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "/").replace("\n", " ")


#: Lines of a case a markdown summary shows before it cuts the rest.
EXAMPLE_LINES = 80
#: Characters of one line of a case a markdown summary shows.
EXAMPLE_WIDTH = 300


def _example_block(result: dict) -> list[str]:
    """A collapsed block with the (minimal) case, so a step summary stays one table long."""
    variant = f" [{result['variant']}]" if result.get("variant") else ""
    # A case that did not shrink (a hang, a crash on a large history) can run to megabytes:
    # the summary shows its head, the report keeps it whole.
    lines = render(result["example"]).splitlines()
    shown = [line if len(line) <= EXAMPLE_WIDTH else f"{line[:EXAMPLE_WIDTH]}... ({len(line)} characters)"
             for line in lines[:EXAMPLE_LINES]]
    if len(lines) > EXAMPLE_LINES:
        shown.append(f"... {len(lines) - EXAMPLE_LINES} more lines: the whole case is in the report's 'example' field")
    text = "\n".join(shown)
    return ["", f"<details><summary>{result['implementation']} · {result['check']}{variant}: the case</summary>",
            "", "```json", text, "```", "", "</details>"]


def provider_tables(report: Report) -> list[str]:
    """One table per provider of the payload checks, a column per implementation that maps
    for it, from the report's search lines: what each library gets wrong for the provider a
    reader uses, with the message of each deviation (the rule and the provider's error text).
    The search lines are a shard's (``run --shard 1/1`` for a whole run, or merged shards);
    nothing for a report without them."""
    expected = {name: set(info.get("expected_failures", {}))
                for name, info in report.header.get("implementations", {}).items()}
    cells: dict[str, dict[tuple[str, str], str]] = {}  # provider -> (check, impl) -> label
    notes: dict[str, list[str]] = {}
    impls: dict[str, list[str]] = {}
    checks: list[str] = []
    for search in report.searches:
        provider, result = search.get("variant"), search.get("result")
        if search.get("contract") != "payload" or not provider or result is None:
            continue
        impl = search["implementation"]
        impls.setdefault(provider, [])
        if impl not in impls[provider]:
            impls[provider].append(impl)
        table = cells.setdefault(provider, {})
        for check, count in result.get("evaluated", {}).items():
            if count and (check, impl) not in table:
                checks.append(check)
                table[(check, impl)] = "pass"
        for failure in result.get("failures", []):
            check = failure["check"]
            checks.append(check)
            label = ("warn" if failure.get("level") == "warning" else
                     "xfail" if check in expected.get(impl, ()) else "**fail**")
            table[(check, impl)] = label
            if label != "warn":
                notes.setdefault(provider, []).append(f"- {impl} · `{check}` ({label}): {_cell(failure['message'])}")
    if not cells:
        return []
    order = list(dict.fromkeys(checks))
    lines = ["", "### The payload contract, provider by provider", ""]
    for provider in sorted(cells):
        table, columns = cells[provider], impls[provider]
        rows = [c for c in order if any((c, i) in table for i in columns)]
        lines += [f"#### `{provider}`", "", "| check | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
        lines += [f"| `{c}` | " + " | ".join(table.get((c, i), "") for i in columns) + " |" for c in rows]
        if notes.get(provider):
            lines += ["", *notes[provider]]
        lines.append("")
    return lines
