"""The HTML summary of a report (``chatconform summary --format html``): one static page to
look at and pass around, the matrix with each failure's details a click away.

The page is one self-contained file (its CSS and its small filter script inline, no network
asset), so it works opened from the disk and as a CI artifact. It reads the report as the
markdown summary does (:func:`~chatconform.outputs.report.matrix`,
:func:`~chatconform.outputs.report.provider_matrix`,
:func:`~chatconform.outputs.report.findings`), and renders it with Jinja2 with
autoescape on: every value of a report is untrusted data (an implementation's name, a
message, a case), and only this module's own markup is not escaped.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from chatconform.contracts import all_contracts
from chatconform.errors import ERROR
from chatconform.frame.registry import find_check
from chatconform.frame.status import Status
from chatconform.outputs.present import body_regression_test, regression_test
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
from chatconform.outputs.reporters.markdown import case_text
from chatconform.outputs.repro import FAILURES_DIR, replay_command, saved_path
from chatconform.providers import PROVIDERS

#: The statuses whose cells link to their details (everything but a pass or a skip).
DETAILED = frozenset(Status) - {Status.PASS, Status.SKIP}


def html(report: Report) -> str:
    """The summary of ``report`` as one HTML page."""
    return _template().render(page=_page(report))


@cache
def _template() -> jinja2.Template:
    env = jinja2.Environment(loader=jinja2.PackageLoader("chatconform.outputs.reporters", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True)
    env.filters["linkify"] = linkify
    return env.get_template("summary.html.j2")


# -- what the page shows ------------------------------------------------------------------------

@dataclass
class Finding:
    """The details of one failing, warning or expected cell."""

    id: str
    implementation: str
    check: str
    contract: str
    variant: str | None
    status: Status
    message: str
    title: str = ""
    rationale: str = ""
    note: str = ""  # why a warning is one, or the reason an expected failure is declared
    case: Markup | None = None
    cut: bool = False
    test: str | None = None
    replay: str | None = None


@dataclass
class Row:
    check: str
    contract: str
    cells: list[tuple[Cell | None, str | None, str]]  # (cell, finding id, its tooltip)

    @property
    def bad(self) -> bool:
        """Whether the "only failures" filter keeps the row: a cell that is neither pass nor skip."""
        return any(cell is not None and cell.status in DETAILED for cell, _, _ in self.cells)


@dataclass
class Page:
    version: str
    run: list[tuple[str, str]]  # (label, value): the profile, the seed, when it started...
    implementations: list[tuple[str, str, str]]  # (name, version, spec)
    stopped: str | None
    counts: str
    columns: list[str]
    groups: dict[str, list[Row]]  # contract -> its rows
    providers: list[tuple[str, list[str], list[Row]]] = field(default_factory=list)
    not_provided: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    partial_note: str = PARTIAL


def _page(report: Report) -> Page:
    results, absent = split_provided(report.results, provided_in(report.header))
    impls, checks, cells = matrix(results)
    info = report.header.get("implementations", {})
    specs = {name: str(entry.get("spec") or name) for name, entry in info.items()}
    shown: dict[tuple[str, str, str | None], Finding] = {}  # by (implementation, check, variant)
    number = itertools.count(1)
    for result in findings(results):
        # A check several variants failed: a finding for each, the cell linking to the worst (the first).
        each = [(status_of(result), result)] if not result.get("failures") else [
            (failure_status(result, failure), result | failure) for failure in line_failures(result)]
        for index, (status, line) in enumerate(each):
            finding = _finding(f"f-{next(number)}", result["implementation"], result["check"], status, line,
                               specs, info)
            if index == 0:
                shown[(finding.implementation, finding.check, None)] = finding
            shown.setdefault((finding.implementation, finding.check, finding.variant), finding)
    tooltips = {(r["check"], r["implementation"]): str(r.get("message") or "") for r in results}
    groups: dict[str, list[Row]] = {}
    for check in checks:
        row = [(cells.get((check, i)), _linked(shown, i, check, None, cells.get((check, i))),
                tooltips.get((check, i), "")) for i in impls]
        contract = check.split(".", 1)[0]
        groups.setdefault(contract, []).append(Row(check, contract, row))
    providers = []
    for table in provider_matrix(report):
        rows = []
        for check in table.checks:
            row = []
            for impl in table.implementations:
                cell, failure = table.cells.get((check, impl)), table.failures.get((check, impl))
                key = (impl, check, table.provider)
                if failure is not None and cell is not None and key not in shown:
                    shown[key] = _finding(f"f-{next(number)}", impl, check, cell.status,
                                          failure | {"example": failure.get("case")}, specs, info)
                row.append((cell, _linked(shown, impl, check, table.provider, cell),
                            str(failure["message"]) if failure else ""))
            rows.append(Row(check, "payload", row))
        providers.append((table.provider, table.implementations, rows))
    return Page(
        version=str(report.header.get("version", "?")),
        run=_run(report.header) + ([("requests", served)] if (served := requests_text(report)) else []),
        implementations=[(name, str(entry.get("version", "?")), specs[name]) for name, entry in info.items()],
        stopped=interruption(report),
        counts=counts_text(results),  # recounted: a footer's counts may be forged
        columns=impls,
        groups=groups,
        providers=providers,
        not_provided=[not_provided_text(name, contracts) for name, contracts in absent.items()],
        findings=list({id(f): f for f in shown.values()}.values()),
    )


def _run(header: dict) -> list[tuple[str, str]]:
    """What the page says of the run, each value a string (a header is data too)."""
    run = [("profile", str(header.get("profile", "?"))), ("seed", str(header.get("seed", "?"))),
           ("started", str(header.get("started", "?")))]
    if header.get("examples"):
        run.append(("examples", f"{header['examples']} per search"))
    merged, shard = header.get("merged"), header.get("shard")
    if isinstance(merged, dict):
        run.append(("merged", f"{merged.get('shards', '?')} shards"))
    elif isinstance(shard, dict):
        run.append(("shard", f"{shard.get('index', '?')}/{shard.get('count', '?')}"))
    return run


def _linked(shown: dict, impl: str, check: str, variant: str | None, cell: Cell | None) -> str | None:
    if cell is None or cell.status not in DETAILED:
        return None
    finding = shown.get((impl, check, variant))
    return finding.id if finding is not None else None


def _finding(ident: str, impl: str, check_id: str, status: Status, line: dict, specs: dict[str, str],
             info: dict) -> Finding:
    """One finding from a result line (or a search line's failure, with its case as ``example``)."""
    all_contracts()  # the registry holds every check once the contracts are loaded
    check = find_check(check_id)
    variant = line.get("variant") or None
    finding = Finding(ident, impl, check_id, check.contract if check else check_id.split(".", 1)[0],
                      str(variant) if variant else None, status, str(line.get("message") or ""))
    if check is None and line.get("contract") == "serve" and isinstance(line.get("why"), str):
        finding.rationale = line["why"]  # a rule of the provider, judged by chatconform serve
    elif check is None:
        finding.rationale = "(a check this version of chatconform does not know)"
    else:
        finding.title, finding.rationale = check.title, check.rationale
    declared = info.get(impl, {}).get("expected_failures", {})
    if status == Status.XFAIL and isinstance(declared, dict) and check_id in declared:
        finding.note = f"declared expected: {declared[check_id]}"
    elif status == Status.WARN:
        finding.note = (check.level_note if check else "") or "a warning: fails the run only under --strict"
    case = line.get("example")
    if case is None:
        return finding
    if line.get("contract") == "serve":
        return _serve_finding(finding, impl, check_id, line, case)
    text, finding.cut = case_text(case)
    finding.case = highlight(text)
    record = {"implementation": specs.get(impl, impl), "check": check_id, "variant": finding.variant, "case": case}
    level = str(line.get("level") or ERROR)
    if not finding.cut:
        finding.test = regression_test(record, level)
    if status == Status.FAIL:  # a run saves its failures only, under this name
        saved = saved_path(record, FAILURES_DIR)
        finding.replay = replay_command(saved, record["implementation"])
        if finding.cut:  # too long to hold: the test loads the saved case
            finding.test = regression_test(record, level, case_file=saved.name)
    return finding


def _serve_finding(finding: Finding, provider: str, check_id: str, line: dict, body: Any) -> Finding:
    """A rule a request body broke under ``chatconform serve``: the body, a test that runs it
    through ``validate``, and the ``validate`` command on the body saved beside the report."""
    text, finding.cut = case_text(body)
    finding.case = highlight(text)
    rule = check_id.removeprefix("serve.")
    if provider not in PROVIDERS:  # a report is data: a provider this version does not know
        return finding
    if rule == "schema":
        rule = PROVIDERS[provider].generic_rule
    saved = line.get("saved")
    model = line.get("model") if isinstance(line.get("model"), str) else None
    if not finding.cut:
        finding.test = body_regression_test(body, provider, rule, model)
    elif isinstance(saved, str):
        finding.test = body_regression_test(body, provider, rule, model, body_file=Path(saved).name)
    if isinstance(line.get("command"), str):
        finding.replay = line["command"]
    return finding


# -- text into markup: escaped first, then marked up ------------------------------------------

_JSON_TOKEN = re.compile(r'("(?:[^"\\]|\\.)*")(\s*:)?|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|\b(true|false|null)\b')


def highlight(text: str) -> Markup:
    """JSON ``text`` with its keys, strings, numbers and literals in spans: each piece of the
    text is escaped before it is wrapped, so a case is shown as text, never as markup."""
    out: list[Any] = []
    at = 0
    for match in _JSON_TOKEN.finditer(text):
        out.append(escape(text[at:match.start()]))
        string, colon, number, literal = match.groups()
        if string is not None:
            out.append(_span("key" if colon else "str", string))
            out.append(escape(colon or ""))
        else:
            out.append(_span("num" if number is not None else "lit", number or literal))
        at = match.end()
    out.append(escape(text[at:]))
    return Markup("").join(out)


def _span(kind: str, text: str) -> Markup:
    return Markup('<span class="j-{}">{}</span>').format(kind, text)


_LINK = re.compile(r"https?://[^\s<>\"'`]+[^\s<>\"'`.,;:)\]]|\b([\w.-]+/[\w.-]+)#(\d+)\b")


def linkify(text: Any) -> Markup:
    """``text`` escaped, with its http(s) addresses and ``owner/repo#123`` references as links
    (to GitHub): a check's bug, or the issue an expected failure cites. No other scheme is
    ever a link, so a report cannot plant a ``javascript:`` one."""
    text = str(text)
    out: list[Any] = []
    at = 0
    for match in _LINK.finditer(text):
        repo, number = match.groups()
        url = f"https://github.com/{repo}/issues/{number}" if repo else match.group(0)
        out.append(escape(text[at:match.start()]))
        out.append(Markup('<a href="{}" rel="noopener noreferrer">{}</a>').format(url, match.group(0)))
        at = match.end()
    out.append(escape(text[at:]))
    return Markup("").join(out)
