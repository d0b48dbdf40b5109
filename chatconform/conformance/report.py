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

from chatconform.conformance.discovery import Implementation
from chatconform.conformance.engine import STATUSES, Verdict
from chatconform.conformance.registry import ConfigError


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
                        "providers": sorted(impl.providers)}
            for impl in impls
        },
    }


def result_line(verdict: Verdict) -> dict:
    failure = verdict.failures[0] if verdict.failures else None
    return {
        "type": "result",
        "implementation": verdict.implementation,
        "contract": verdict.contract,
        "check": verdict.check,
        "status": verdict.status,
        "message": verdict.message,
        "example": failure.case if failure else None,
        "variant": failure.variant if failure else None,
        "examples": verdict.examples,
    }


def footer(verdicts: list[Verdict], seconds: float) -> dict:
    counts = Counter(v.status for v in verdicts)
    return {"type": "footer", "counts": {s: counts.get(s, 0) for s in STATUSES},
            "seconds": round(seconds, 3)}


def check_writable(path: str | Path) -> None:
    folder = Path(path).resolve().parent
    if not folder.is_dir():
        raise ConfigError(f"cannot write the report {path}: no folder {folder}")
    if Path(path).is_dir():
        raise ConfigError(f"cannot write the report {path}: it is a folder")


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
    try:
        lines = Path(path).read_text().splitlines()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None
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
    if not records or records[0]["type"] != "header":
        raise ConfigError(f"{path}: no header line; is this a chatconform report?")
    if records[-1]["type"] != "footer":
        raise ConfigError(f"{path}: no footer line: the report is truncated")
    results = [r for r in records[1:-1] if r["type"] == "result"]
    return Report(records[0], results, records[-1])


# -- rendering ---------------------------------------------------------------------------------

def matrix(results: list[dict]) -> tuple[list[str], list[str], dict[tuple[str, str], str]]:
    """(implementations, checks, status by (check, implementation)) in first-seen order."""
    impls = list(dict.fromkeys(r["implementation"] for r in results))
    checks = list(dict.fromkeys(r["check"] for r in results))
    cells = {(r["check"], r["implementation"]): r["status"] for r in results}
    return impls, checks, cells


LABELS = {"pass": "pass", "fail": "FAIL", "error": "error", "skip": "skip", "xfail": "xfail"}


def markdown(report: Report) -> str:
    impls, checks, cells = matrix(report.results)
    lines = [f"### chatconform {report.header.get('version', '')} "
             f"(profile {report.header.get('profile', '?')})", "",
             "| check | " + " | ".join(impls) + " |",
             "|---|" + "---|" * len(impls)]
    for check in checks:
        row = [LABELS.get(cells.get((check, i), ""), "") for i in impls]
        lines.append(f"| `{check}` | " + " | ".join(f"**{c}**" if c == "FAIL" else c for c in row) + " |")
    counts = report.footer.get("counts", {})
    lines += ["", ", ".join(f"{n} {s}" for s, n in counts.items() if n)]
    failing = [r for r in report.results if r["status"] in ("fail", "error")]
    if failing:
        lines += ["", "| implementation | check | message |", "|---|---|---|"]
        lines += [f"| {r['implementation']} | `{r['check']}` | {r['message'].replace('|', '/')} |"
                  for r in failing]
    return "\n".join(lines) + "\n"


def summary_json(report: Report) -> dict:
    impls, checks, cells = matrix(report.results)
    return {
        "version": report.header.get("version"),
        "profile": report.header.get("profile"),
        "counts": report.footer.get("counts", {}),
        "matrix": {i: {c: cells.get((c, i)) for c in checks} for i in impls},
    }


@dataclass
class Diff:
    regressed: list[tuple[str, str, str, str]]  # (implementation, check, old, new)
    improved: list[tuple[str, str, str, str]]
    changed: list[tuple[str, str, str, str]]
    appeared: list[tuple[str, str, str]]
    disappeared: list[tuple[str, str, str]]


_GOOD = {"pass", "xfail", "skip"}


def diff(old: Report, new: Report) -> Diff:
    before = {(r["implementation"], r["check"]): r["status"] for r in old.results}
    after = {(r["implementation"], r["check"]): r["status"] for r in new.results}
    result = Diff([], [], [], [], [])
    for key, status in after.items():
        if key not in before:
            result.appeared.append((*key, status))
        elif before[key] != status:
            row = (*key, before[key], status)
            if before[key] in _GOOD and status not in _GOOD:
                result.regressed.append(row)
            elif before[key] not in _GOOD and status in _GOOD:
                result.improved.append(row)
            else:
                result.changed.append(row)
    result.disappeared = [(*key, status) for key, status in before.items() if key not in after]
    return result
