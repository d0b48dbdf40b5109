"""Reports as JSON lines: a header, one line per (implementation, check), a footer.

This module holds the format, both ways: the lines (:func:`header`, :func:`result_line`,
:func:`search_line`, :func:`footer`), reading and merging reports, and the matrix and
diff the front ends show of them. A run writes its report through
:class:`chatconform.outputs.reporters.jsonl.JsonlReporter`.

The footer ends the report, so a truncated report is detected rather than read as a
shorter, greener run; its counts are not trusted on reading (:func:`counts` recounts them
from the result lines). Every line read is checked against its shape
(:mod:`chatconform.frame.shapes`): a report is data, wherever it came from.

A run stopped by a signal writes a partial report: the verdicts of the searches that
finished, the others' checks ``skip``, and a footer that says so (``interrupted``: the
signal; ``searched`` of ``searches``). :func:`interruption` reads it back; ``summary`` says
it, ``diff`` does not pass it, and :func:`merge` refuses such a shard.

A shard's report (``run --shard I/N``) also holds one ``search`` line per search it ran,
with everything the verdicts are folded from, so the shards of one run merge
(:func:`merge`) into the report a single run would have written.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TypeVar, cast

from chatconform.contracts import get_contract
from chatconform.engine import Failure, SearchResult, Selection, Unit, Verdict, fold_units
from chatconform.errors import ERROR, WARNING, ConfigError, EngineCaseError
from chatconform.frame import shapes
from chatconform.frame.profiles import get_profile
from chatconform.frame.status import STATUSES, Status
from chatconform.inputs import read_input
from chatconform.outputs.present import short
from chatconform.runner.discovery import Implementation

T = TypeVar("T")


def header(impls: list[Implementation], *, version: str, profile: str, seed: int | None,
           contracts: list[str] | None = None, checks: frozenset[str] | None = None,
           examples: int | None = None, started: datetime | None = None) -> dict:
    """The report's first line; ``started`` is when the run began (default: now)."""
    head: dict[str, Any] = {
        "type": "header",
        "suite": "chatconform",
        "version": version,
        "profile": profile,
        "seed": seed if seed is not None else "derandomized" if profile == "ci" else "random",
        "started": (started or datetime.now(UTC)).isoformat(timespec="seconds"),
        "implementations": {
            impl.name: {"version": impl.version, "spec": impl.shown_spec or impl.spec, "contracts": impl.contracts(),
                        "options": {k: _jsonable(v) for k, v in impl.options.items()},
                        "expected_failures": impl.expected_failures,
                        **({"left_out": {k: sorted(v) for k, v in impl.left_out.items()}} if impl.left_out else {})}
            for impl in impls
        },
    }
    if contracts is not None:
        head["contracts"] = list(contracts)
        head["checks"] = sorted(checks) if checks is not None else None
    if examples is not None:
        head["examples"] = examples
    return head


#: The header fields that say which run a report is of (not when it ran, nor which shard).
_RUN_FIELDS = ("version", "profile", "seed", "implementations", "contracts", "checks", "examples", "providers")


def add_shard(head: dict, index: int, count: int, units: list[Unit], planned: list[Unit], names: list[str]) -> None:
    """Say in ``head`` which shard of which run the report is: the run's fingerprint (its
    settings, not its time), every unit of the run, and this shard's."""
    def key(unit: Unit) -> list:
        return [names[unit.impl], unit.contract, unit.variant]

    run = json.dumps({k: head.get(k) for k in _RUN_FIELDS} | {"shards": count,
                                                               "plan": [key(u) for u in planned]},
                     sort_keys=True, default=str)
    head["shard"] = {"index": index, "count": count, "run": hashlib.sha256(run.encode()).hexdigest()[:16],
                     "units": [key(u) for u in units], "planned": [key(u) for u in planned]}


def _jsonable(value):
    return sorted(value) if isinstance(value, (set, frozenset)) else value


def result_line(verdict: Verdict) -> dict:
    """One (implementation, check): its status and message, with the worst failure's level,
    case (``example``) and variant; where several variants failed (a payload check for several
    providers), ``failures`` holds each one's variant, level, message and minimal case."""
    failure = verdict.failures[0] if verdict.failures else None
    line = {
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
    if len(verdict.failures) > 1:
        line["failures"] = [{"variant": f.variant, "level": f.level, "message": f.message, "example": f.case}
                            for f in verdict.failures]
    return line


def line_failures(result: dict) -> list[dict]:
    """Each failure a result line holds, as ``{variant, level, message, example}``: its
    ``failures`` where several variants failed, else the line itself (a report of an older
    chatconform keeps the worst failure only); none for a line with neither message nor case."""
    if result.get("failures"):
        return list(result["failures"])
    if result.get("message") is None and result.get("example") is None:
        return []
    return [{key: result.get(key) for key in ("variant", "level", "message", "example")}]


def failure_status(result: dict, failure: dict) -> Status:
    """The status one of a line's failures shows: a ``fail`` line's warning-level failure is a
    ``warn`` (another variant's error failed the check); an expected failure stays ``xfail``."""
    status = status_of(result)
    if status in (Status.FAIL, Status.WARN) and failure.get("level") in (ERROR, WARNING):
        return Status.FAIL if failure["level"] == ERROR else Status.WARN
    return status


def footer(verdicts: list[Verdict], seconds: float, *, interrupted: str | None = None, searched: int = 0,
           searches: int = 0) -> dict:
    """The last line; ``interrupted``: the signal that stopped the run after ``searched`` of its
    ``searches``."""
    counts = Counter(v.status for v in verdicts)
    line = {"type": "footer", "counts": {str(s): counts.get(s, 0) for s in STATUSES},
            "seconds": round(seconds, 3)}
    if interrupted:
        line |= {"interrupted": interrupted, "searched": searched, "searches": searches}
    return line


def interrupted_text(signal: str, searched: int, searches: int) -> str:
    """How a stopped run is described, by the run and by ``summary`` and ``diff`` alike."""
    return f"interrupted by {signal} after {searched} of {searches} searches"


#: What a front end adds when it shows a partial report.
PARTIAL = "a partial report (the checks of the searches it did not finish are skip)"


def interruption(report: Report) -> str | None:
    """What stopped the run of ``report`` (see :func:`interrupted_text`), or None when it ran to its end."""
    foot = report.footer
    if "interrupted" not in foot:
        return None
    return interrupted_text(foot["interrupted"], foot.get("searched", 0), foot.get("searches", 0))


def search_line(name: str, unit: Unit, result: SearchResult | None) -> dict:
    """One search of a shard (or the reason its (implementation, contract) did not run)."""
    line: dict[str, Any] = {"type": "search", "implementation": name, "contract": unit.contract,
                            "variant": unit.variant}
    if unit.skip is not None:
        line["skip"] = unit.skip
        return line
    assert result is not None, "a search that was not skipped has its result"
    line["result"] = {
        "failures": [_failure_json(f) for f in result.failures.values()],
        "hung": _failure_json(result.hung) if result.hung else None,
        "broken": result.broken,
        "aborted": result.aborted,
        "engine_error": [str(result.engine_error), result.engine_error.case_text] if result.engine_error else None,
        "examples": result.examples, "unjudged": result.unjudged, "replayed": result.replayed,
        "hangs": result.hangs, "evaluated": dict(result.evaluated),
        "passed_over": {check: sorted(reasons) for check, reasons in result.passed_over.items()},
    }
    return line


def _failure_json(failure: Failure) -> dict:
    def value(v):
        try:
            json.dumps(v)
            return v
        except (TypeError, ValueError):
            return short(v, limit=10**6)

    return {"check": failure.check, "message": failure.message, "case": failure.case, "variant": failure.variant,
            "expected": value(failure.expected), "actual": value(failure.actual), "shrunk": failure.shrunk,
            "shrink_note": failure.shrink_note, "level": failure.level, "why": failure.why}


def _failure(data: dict) -> Failure:
    """A failure of a search line (checked against its shape), its known fields only."""
    return Failure(**{k: v for k, v in data.items() if k in _FAILURE_FIELDS})


_FAILURE_FIELDS = frozenset(Failure.__dataclass_fields__) - {"saved"}


def _search_result(data: dict) -> SearchResult:
    result = SearchResult()
    result.failures = {f["check"]: _failure(f) for f in data["failures"]}
    result.hung = _failure(data["hung"]) if data.get("hung") else None
    result.broken = dict(data.get("broken") or {})
    result.aborted = data.get("aborted")
    if data.get("engine_error"):
        result.engine_error = EngineCaseError.restore(*data["engine_error"])
    result.examples, result.unjudged = data["examples"], data["unjudged"]
    result.replayed = data.get("replayed", 0)
    result.hangs = data.get("hangs", 0)
    result.evaluated = Counter(data["evaluated"])
    result.passed_over = {check: set(reasons) for check, reasons in (data.get("passed_over") or {}).items()}
    return result


@dataclass
class Report:
    header: dict
    results: list[dict]
    footer: dict
    searches: list[dict] = field(default_factory=list)
    path: str = "the report"
    #: What the request lines of a ``chatconform serve`` report count (:func:`request_counts`).
    requests: dict[str, int] | None = None


def read(path: str | Path) -> Report:
    """Parse a report; any damage (bad JSON, a field of the wrong type, a missing footer) is a
    ConfigError naming the file, the line and the field."""
    records: list[dict] = []
    numbers: list[int] = []
    for number, text in enumerate(read_input(path, "a chatconform report").split("\n"), 1):
        if not text.strip():
            continue
        record = shapes.parse_json(text, str(path), number)
        where = f"{path}:{number}"
        shapes.check(record, shapes.LINE, where)
        if record["type"] in shapes.REPORT_LINES:
            shapes.check(record, shapes.REPORT_LINES[record["type"]], f"{where} ({record['type']} line)")
        records.append(record)
        numbers.append(number)
    if not records:
        raise ConfigError(f"{path}: the file is empty; is this a chatconform report?")
    if records[0]["type"] != "header":
        raise ConfigError(f"{path}:{numbers[0]}: no header line; is this a chatconform report?")
    if records[-1]["type"] != "footer":
        raise ConfigError(f"{path}:{numbers[-1]}: no footer line after it: the report is truncated")
    results = [r for r in records[1:-1] if r["type"] == "result"]
    first_line: dict[tuple[str, str], int] = {}
    for record, number in zip(records[1:-1], numbers[1:-1], strict=True):
        if record["type"] != "result":
            continue
        key = (record["implementation"], record["check"])
        if key in first_line:  # the matrix would show one line and the counts both
            raise ConfigError(f"{path}:{number}: a second result for {key[1]} of {key[0]} (the first is on "
                              f"line {first_line[key]}); the report is damaged")
        first_line[key] = number
    searches = [r for r in records[1:-1] if r["type"] == "search"]
    served = [r for r in records[1:-1] if r["type"] == "request"]
    return Report(records[0], results, records[-1], searches, str(path),
                  request_counts(served) if served else None)


def request_counts(lines: list[dict]) -> dict[str, int]:
    """The requests of a ``chatconform serve`` report, recounted from its request lines: how
    many, in how many conversations, how many of them (and of the conversations) rejected or
    warned, and those not judged."""
    judged = [r for r in lines if r.get("served", "judged") == "judged"]

    def breaking(level: str) -> list[dict]:
        return [r for r in judged if any(isinstance(p, dict) and p.get("severity") == level
                                         for p in r.get("problems") or ())]

    rejected, warned = breaking("error"), breaking("warning")
    others = Counter(str(r.get("served")) for r in lines if r.get("served", "judged") != "judged")
    return {"requests": len(lines), "judged": len(judged),
            "conversations": len({str(r.get("conversation")) for r in judged}),
            "rejected": len(rejected), "rejected conversations": len({str(r.get("conversation")) for r in rejected}),
            "warned": len(warned), "warned conversations": len({str(r.get("conversation")) for r in warned}),
            **{k: others[k] for k in ("not judged", "no route", "too large", "refused")}}


def requests_text(report: Report) -> str | None:
    """A serve report's request counts in a line (None for any other report)."""
    n = report.requests
    if n is None:
        return None
    text = (f"{n['judged']} requests judged in {n['conversations']} conversations: {n['rejected']} rejected "
            f"(in {n['rejected conversations']} conversations), {n['warned']} with warnings "
            f"(in {n['warned conversations']})")
    said = {"not judged": "answered but not judged", "no route": "to routes not served",
            "too large": "over the size cap", "refused": "refused for their Host or Origin"}
    return text + "".join(f"; {n[k]} {words}" for k, words in said.items() if n[k])


def counts(results: list[dict]) -> dict[str, int]:
    """The count of each status, recounted from the result lines (a footer's counts are
    never shown: a forged footer must not read greener than its lines)."""
    tally = Counter(r["status"] for r in results)
    return {str(s): tally.get(str(s), 0) for s in STATUSES}


def counts_text(results: list[dict]) -> str:
    """The counts of report lines in a line: ``12 pass, 1 fail`` (recounted, as :func:`counts`)."""
    return ", ".join(f"{n} {s}" for s, n in counts(results).items() if n)


def read_many(paths: list[str | Path]) -> Report:
    """One report from ``paths``: a report (a shard's alone reads as that shard), or the shard
    reports of one run merged (a folder stands for every ``*.jsonl`` in it)."""
    files: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found = sorted(p for p in path.glob("*.jsonl") if p.is_file())
            if not found:
                raise ConfigError(f"{path}: no reports (*.jsonl) in this folder")
            files.extend(found)
        else:
            files.append(path)
    reports = [read(f) for f in dict.fromkeys(files)]
    if len(reports) == 1:
        return reports[0]  # one shard's report alone reads as that shard
    return merge(reports)


def merge(reports: list[Report]) -> Report:
    """The shard reports of one run, merged into the report of the whole run: the verdicts
    folded again from every shard's searches, in the run's order.

    Refuses (ConfigError) reports that are not shards, shards of different runs (their
    settings, implementations or plan differ), a shard given twice or overlapping another,
    and a run with a shard missing.
    """
    for r in reports:
        if (stopped := interruption(r)) is not None:
            raise ConfigError(f"{r.path}: the shard was {stopped}, so its report is partial; run the shard again")
    plain = [r.path for r in reports if "shard" not in r.header]
    if plain:
        raise ConfigError(f"{plain[0]} is not a shard report (run --shard I/N); only the shards of one run "
                          "merge, so give one report at a time")
    first = reports[0]
    shard = first.header["shard"]
    for other in reports[1:]:
        if other.header["shard"]["run"] != shard["run"] or other.header["shard"]["count"] != shard["count"]:
            raise ConfigError(f"{other.path} and {first.path} are shards of different runs (their settings, "
                              "implementations or searches differ); merge the shards of one run only")
    by_index: dict[int, Report] = {}
    owner: dict[tuple, str] = {}
    for r in reports:
        index = r.header["shard"]["index"]
        if index > shard["count"]:
            raise ConfigError(f"{r.path}: field shard.index: {index} is more than the shard count "
                              f"{shard['count']}")
        if index in by_index:
            raise ConfigError(f"shard {index}/{shard['count']} is given twice: {by_index[index].path} and {r.path}")
        by_index[index] = r
        for key in map(tuple, r.header["shard"]["units"]):
            if key in owner:
                raise ConfigError(f"{r.path} and {owner[key]} overlap: both searched {_unit_text(key)}")
            owner[key] = r.path
    missing = [i for i in range(1, shard["count"] + 1) if i not in by_index]
    if missing:
        total = shard["count"]
        named = ", ".join(f"{i}/{total}" for i in missing[:10]) + (", ..." if len(missing) > 10 else "")
        raise ConfigError(f"shard {named} missing: the merged "
                          f"report would leave out its searches (given: {', '.join(r.path for r in reports)})")
    implementations = first.header.get("implementations", {})
    names = list(implementations)
    # The providers each implementation was searched for: what a contract's variants read.
    searched = {n: frozenset(key[2] for key in shard["planned"] if key[0] == n and key[2]) for n in names}
    impls = [SimpleNamespace(name=n, spec=info.get("spec", n), expected_failures=info.get("expected_failures", {}),
                             left_out={k: frozenset(v) for k, v in info.get("left_out", {}).items()},
                             options={"providers": searched[n]})
             for n, info in implementations.items()]
    lines = {(s["implementation"], s["contract"], s.get("variant")): s for r in reports for s in r.searches}
    planned, results = [], {}
    for key in map(tuple, shard["planned"]):
        line = lines.get(key)
        where = owner.get(key, first.path)
        if line is None:
            raise ConfigError(f"{where}: no search line for {_unit_text(key)}; the report is damaged")
        if key[0] not in names:
            raise ConfigError(f"{where}: the search {_unit_text(key)} names an implementation the header "
                              "does not list; the report is damaged")
        if line.get("skip") is None and line.get("result") is None:
            raise ConfigError(f"{where}: the search line for {_unit_text(key)} has neither a skip nor a "
                              "result; the report is damaged")
        try:
            get_contract(key[1])
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc} (written by chatconform {first.header.get('version')})") from None
        unit = Unit(names.index(key[0]), key[1], key[2], skip=line.get("skip"))
        planned.append(unit)
        if unit.skip is None:
            results[unit] = _search_result(line["result"])
    checks = first.header.get("checks")
    selection = Selection([get_contract(c) for c in dict.fromkeys(u.contract for u in planned)],
                          frozenset(checks) if checks is not None else None)
    try:
        profile = get_profile(first.header.get("profile", "ci"), examples=first.header.get("examples"))
    except ConfigError:
        profile = None  # a profile this version does not know: fold without it
    verdicts = fold_units(impls, selection, planned, planned, results, profile)
    head = {k: v for k, v in first.header.items() if k != "shard"}
    head["merged"] = {"shards": shard["count"], "run": shard["run"],
                      "from": [by_index[i].path for i in sorted(by_index)]}
    foot = footer(verdicts, max(float(r.footer.get("seconds", 0)) for r in reports))
    # the search lines in the run's order, so the per-provider tables read a merged run as one shard
    searches = [lines[key] for key in map(tuple, shard["planned"])]
    return Report(head, [result_line(v) for v in verdicts], foot, searches, "+".join(r.path for r in reports))


def _unit_text(key: tuple) -> str:
    impl, contract, variant = key
    return f"{impl} · {contract}" + (f" [{variant}]" if variant else "")


# -- rendering ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Cell:
    """One matrix cell: a status, and on how many of the search's cases it was evaluated."""

    status: Status
    evaluated: int | None = None
    examples: int | None = None

    @property
    def label(self) -> str:
        partial = (self.status in (Status.PASS, Status.FAIL, Status.WARN) and self.examples
                   and self.evaluated is not None and self.evaluated < self.examples)
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


@dataclass
class ProviderTable:
    """The payload checks of one provider: a column per implementation that maps for it, and
    each cell's search failure (the rule broken and the provider's error text), if any."""

    provider: str
    implementations: list[str]
    checks: list[str]
    cells: dict[tuple[str, str], Cell]
    failures: dict[tuple[str, str], dict]


def provider_matrix(report: Report) -> list[ProviderTable]:
    """The payload contract provider by provider, from the report's search lines (a shard's:
    ``run --shard 1/1`` for a whole run, or merged shards), sorted by provider; empty for a
    report without them. A failure is ``warn`` at warning level, ``xfail`` where its
    implementation declares it, else ``fail``."""
    expected = {name: set(info.get("expected_failures", {}))
                for name, info in report.header.get("implementations", {}).items()}
    tables: dict[str, ProviderTable] = {}
    order: list[str] = []
    for search in report.searches:
        provider, result = search.get("variant"), search.get("result")
        if search.get("contract") != "payload" or not provider or result is None:
            continue
        impl = search["implementation"]
        table = tables.setdefault(provider, ProviderTable(provider, [], [], {}, {}))
        if impl not in table.implementations:
            table.implementations.append(impl)
        examples = result.get("examples")
        for check, count in result.get("evaluated", {}).items():
            if count and (check, impl) not in table.cells:
                order.append(check)
                table.cells[(check, impl)] = Cell(Status.PASS, count, examples)
        for failure in result.get("failures", []):
            check = failure["check"]
            order.append(check)
            status = (Status.WARN if failure.get("level") == "warning" else
                      Status.XFAIL if check in expected.get(impl, ()) else Status.FAIL)
            evaluated = result.get("evaluated", {}).get(check)
            table.cells[(check, impl)] = Cell(status, evaluated, examples)
            table.failures[(check, impl)] = failure
    # In the contract's order, as the result lines give it (a search's evaluated checks come in
    # no fixed order).
    rank = {check: position for position, check in enumerate(dict.fromkeys(r.get("check") for r in report.results))}
    checks = sorted(dict.fromkeys(order), key=lambda check: rank.get(check, len(rank)))
    for table in tables.values():
        table.checks = [c for c in checks if any((c, i) in table.cells for i in table.implementations)]
    return [tables[p] for p in sorted(tables)]


def findings(results: list[dict]) -> list[dict]:
    """The result lines a summary details: errors first, then warnings (reported; they fail a
    run only under --strict), then the expected failures (an implementation's known deviations)."""
    order = {Status.WARN: 1, Status.XFAIL: 2}
    return sorted((r for r in results if status_of(r).fails(strict=True) or status_of(r) == Status.XFAIL),
                  key=lambda r: order.get(status_of(r), 0))


def provided_by(impls: list[Implementation]) -> dict[str, frozenset[str]]:
    """The contracts each implementation provides (has a method for), by name."""
    return {impl.name: frozenset(impl.contracts()) for impl in impls}


def provided_in(header: dict) -> dict[str, frozenset[str]]:
    """:func:`provided_by` as a report's header records it; an implementation whose entry
    lists no contracts (a report of an older chatconform) is left out: all of its lines show."""
    return {name: frozenset(info["contracts"]) for name, info in header.get("implementations", {}).items()
            if "contracts" in info}


def _line_fields(result: dict) -> tuple[str, str, str]:
    return result["implementation"], result.get("contract") or result["check"].split(".", 1)[0], result["status"]


def split_provided(items: list[T], provided: Mapping[str, Collection[str]],
                   fields: Callable[[T], tuple[str, str, str]] | None = None) -> tuple[list[T], dict[str, list[str]]]:
    """``items`` (report lines, or what ``fields`` reads an implementation, a contract and a
    status from) less the ``skip`` of each contract its implementation does not provide
    (``provided``), and those contracts by implementation, in order.

    A contract an implementation has no method for is no check of it: the report keeps its
    ``skip`` lines, while the matrix, the counts and JUnit leave them out and say it in one
    line per implementation (:func:`not_provided_text`).
    """
    read = fields if fields is not None else cast(Callable[[T], tuple[str, str, str]], _line_fields)
    kept: list[T] = []
    absent: dict[str, list[str]] = {}
    for item in items:
        implementation, contract, status = read(item)
        known = provided.get(implementation)
        if known is not None and status == Status.SKIP and contract not in known:
            names = absent.setdefault(implementation, [])
            if contract not in names:
                names.append(contract)
        else:
            kept.append(item)
    return kept, absent


def not_provided_text(implementation: str, contracts: list[str]) -> str:
    """The line that says which of the selected contracts an implementation does not provide."""
    return (f"{implementation} does not provide {', '.join(contracts)} "
            f"(it has no method for {'it' if len(contracts) == 1 else 'them'})")


def summary_json(report: Report) -> dict:
    impls, checks, cells = matrix(report.results)
    return {
        "version": report.header.get("version"),
        "profile": report.header.get("profile"),
        "counts": counts(report.results),
        "interrupted": interruption(report),
        "matrix": {i: {c: str(cells[(c, i)].status) for c in checks if (c, i) in cells} for i in impls},
        "failures": [{**{key: r.get(key) for key in ("implementation", "check", "status", "variant", "message")},
                      **({"failures": [{key: f.get(key) for key in ("variant", "level", "message")}
                                       for f in r["failures"]]} if r.get("failures") else {})}
                     for r in report.results if status_of(r).fails_run],
        "not_provided": split_provided(report.results, provided_in(report.header))[1],
    }


@dataclass
class Diff:
    regressed: list[tuple[str, str, str, str]]  # (implementation, check, old, new)
    improved: list[tuple[str, str, str, str]]
    changed: list[tuple[str, str, str, str]]
    appeared: list[tuple[str, str, str]]
    disappeared: list[tuple[str, str, str]]




def diff(old: Report, new: Report) -> Diff:
    """What changed from ``old`` to ``new``, by (implementation, check). A gate treats the
    ``disappeared`` as regressions too (``diff --allow-missing`` lets them pass): a report
    that lost its checks is not a green one."""
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
