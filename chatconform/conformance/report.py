"""Reports as JSON lines: a header, one line per (implementation, check), a footer.

The footer carries the counts, so a truncated report is detected rather than read
as a shorter, greener run.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from chatconform.conformance.argtypes import read_input
from chatconform.conformance.discovery import Implementation
from chatconform.conformance.engine import Verdict
from chatconform.conformance.registry import ConfigError
from chatconform.conformance.status import STATUSES, Status


def header(impls: list[Implementation], *, version: str, profile: str, seed: int | None) -> dict:
    return {
        "type": "header",
        "suite": "chatconform",
        "version": version,
        "profile": profile,
        "seed": seed if seed is not None else "derandomized" if profile == "ci" else "random",
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "implementations": {
            impl.name: {"version": impl.version, "spec": impl.spec, "contracts": impl.contracts(),
                        "options": {k: _jsonable(v) for k, v in impl.options.items()}}
            for impl in impls
        },
    }


def _jsonable(value):
    return sorted(value) if isinstance(value, (set, frozenset)) else value


def result_line(verdict: Verdict) -> dict:
    failure = verdict.failures[0] if verdict.failures else None
    return {
        "type": "result",
        "implementation": verdict.implementation,
        "contract": verdict.contract,
        "check": verdict.check,
        "status": str(verdict.status),
        "level": failure.level if failure else None,
        "message": verdict.message,
        "example": failure.case if failure else None,
        "variant": failure.variant if failure else None,
        "examples": verdict.examples,
        "evaluated": verdict.evaluated,
    }


def footer(verdicts: list[Verdict], seconds: float) -> dict:
    counts = Counter(v.status for v in verdicts)
    return {"type": "footer", "counts": {str(s): counts.get(s, 0) for s in STATUSES},
            "seconds": round(seconds, 3)}


def check_writable(path: str | Path) -> None:
    """Fail before a run, not after it, when the report cannot be written."""
    target = Path(path)
    folder = target.resolve().parent
    if target.is_dir():
        raise ConfigError(f"cannot write the report {path}: it is a folder")
    if not folder.is_dir():
        raise ConfigError(f"cannot write the report {path}: no folder {folder}")
    existed = target.exists()
    try:
        with open(target, "a"):
            pass
    except OSError as exc:
        raise ConfigError(f"cannot write the report {path}: {exc.strerror or exc}") from None
    if not existed:
        target.unlink(missing_ok=True)


def write(path: str | Path, head: dict, verdicts: list[Verdict], foot: dict) -> None:
    try:
        with open(path, "w") as out:
            for line in [head, *map(result_line, verdicts), foot]:
                out.write(json.dumps(line, default=str) + "\n")
    except OSError as exc:
        raise ConfigError(f"cannot write the report {path}: {exc.strerror}") from None


@dataclass
class Report:
    header: dict
    results: list[dict]
    footer: dict


def read(path: str | Path) -> Report:
    """Parse a report; any damage is a ConfigError naming the file and line."""
    lines = read_input(path, "a chatconform report").splitlines()
    records: list[dict] = []
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}:{number}:{exc.colno}: not JSON ({exc.msg})") from None
        if not isinstance(record, dict) or "type" not in record:
            raise ConfigError(f"{path}:{number}: not a report line (no \"type\")")
        records.append(record)
    if not records:
        raise ConfigError(f"{path}: the file is empty; is this a chatconform report?")
    if records[0]["type"] != "header":
        raise ConfigError(f"{path}: no header line; is this a chatconform report?")
    if records[-1]["type"] != "footer":
        raise ConfigError(f"{path}: no footer line: the report is truncated")
    results = [r for r in records[1:-1] if r["type"] == "result"]
    known = {str(status) for status in STATUSES}
    damaged = next((r for r in results if r.get("status") not in known or "check" not in r
                    or "implementation" not in r), None)
    if damaged is not None:
        raise ConfigError(f"{path}: a result line without a known status, check and implementation: "
                          f"{json.dumps(damaged)[:200]}")
    return Report(records[0], results, records[-1])


# -- rendering ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Cell:
    """One matrix cell: a status, and on how many of the search's cases it was evaluated."""

    status: Status
    evaluated: int | None = None
    examples: int | None = None

    @property
    def label(self) -> str:
        partial = (self.status in (Status.PASS, Status.FAIL, Status.WARN) and self.examples and self.evaluated is not None
                   and self.evaluated < self.examples)
        return f"{self.status.label} {self.evaluated}/{self.examples}" if partial else self.status.label


def status_of(result: dict) -> Status:
    """The status of a report line; an unknown one is a damaged report."""
    try:
        return Status(result["status"])
    except (KeyError, ValueError):
        raise ConfigError(f"not a chatconform report result (status {result.get('status')!r})") from None


def matrix(results: list[dict]) -> tuple[list[str], list[str], dict[tuple[str, str], Cell]]:
    """(implementations, checks, cell by (check, implementation)) in first-seen order."""
    impls = list(dict.fromkeys(r["implementation"] for r in results))
    checks = list(dict.fromkeys(r["check"] for r in results))
    cells = {(r["check"], r["implementation"]): Cell(status_of(r), r.get("evaluated"), r.get("examples"))
             for r in results}
    return impls, checks, cells


def markdown(report: Report) -> str:
    impls, checks, cells = matrix(report.results)
    lines = [f"### chatconform {report.header.get('version', '')} "
             f"(profile {report.header.get('profile', '?')})", "",
             "| check | " + " | ".join(impls) + " |",
             "|---|" + "---|" * len(impls)]
    for check in checks:
        row = [cells[(check, i)] if (check, i) in cells else None for i in impls]
        lines.append(f"| `{check}` | " + " | ".join(
            "" if c is None else f"**{c.label}**" if c.status.fails_run else c.label for c in row) + " |")
    counts = report.footer.get("counts", {})
    lines += ["", ", ".join(f"{n} {s}" for s, n in counts.items() if n)]
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


def _example_block(result: dict) -> list[str]:
    """A collapsed block with the (minimal) case, so a step summary stays one table long."""
    from chatconform.conformance.compact import render

    variant = f" [{result['variant']}]" if result.get("variant") else ""
    return ["", f"<details><summary>{result['implementation']} · {result['check']}{variant}: the case</summary>",
            "", "```json", render(result["example"]), "```", "", "</details>"]


def summary_json(report: Report) -> dict:
    impls, checks, cells = matrix(report.results)
    return {
        "version": report.header.get("version"),
        "profile": report.header.get("profile"),
        "counts": report.footer.get("counts", {}),
        "matrix": {i: {c: str(cells[(c, i)].status) for c in checks if (c, i) in cells} for i in impls},
        "failures": [{key: r.get(key) for key in ("implementation", "check", "status", "variant", "message")}
                     for r in report.results if status_of(r).fails_run],
    }


@dataclass
class Diff:
    regressed: list[tuple[str, str, str, str]]  # (implementation, check, old, new)
    improved: list[tuple[str, str, str, str]]
    changed: list[tuple[str, str, str, str]]
    appeared: list[tuple[str, str, str]]
    disappeared: list[tuple[str, str, str]]




def diff(old: Report, new: Report) -> Diff:
    before = {(r["implementation"], r["check"]): r["status"] for r in old.results}
    after = {(r["implementation"], r["check"]): r["status"] for r in new.results}
    result = Diff([], [], [], [], [])
    for key, status in after.items():
        if key not in before:
            result.appeared.append((*key, status))
        elif before[key] != status:
            row = (*key, before[key], status)
            was_bad, is_bad = Status(before[key]).fails_run, Status(status).fails_run
            if is_bad and not was_bad:
                result.regressed.append(row)
            elif was_bad and not is_bad:
                result.improved.append(row)
            else:
                result.changed.append(row)
    result.disappeared = [(*key, status) for key, status in before.items() if key not in after]
    return result
