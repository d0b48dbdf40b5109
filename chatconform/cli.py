"""Check chat-history code (thread rebuilding, provider payloads, compaction) against property-based conformance checks.

chatconform generates conversations, runs the named checks against your implementation,
and prints each failure shrunk to a minimal input with a regression test to paste. It also
summarises and compares JSON-lines reports, lints recorded provider request bodies,
and times the contract functions on large inputs.

Exit codes: 0 pass (expected failures included), 1 a check failed or was not evaluated
(summary only with --fail-on-failure), 2 usage or configuration error, 3 nothing was
selected to run, 130 and 143 a run stopped by SIGINT (Ctrl-C) and SIGTERM, after writing
a partial report.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import sys
import warnings
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from chatconform.errors import ConfigError, ConformanceWarning
from chatconform.frame.argtypes import default_jobs, port, size_list
from chatconform.run_options import IMPL_METAVAR, add_to_command, narrow_providers, set_memory_limit

if TYPE_CHECKING:
    from chatconform.engine.events import Handler


def _version() -> str:
    from chatconform.version import __version__

    return __version__


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    out, err = console(sys.stdout), console(sys.stderr, stderr=True)
    try:
        return args.handler(args, out, err)
    except ConfigError as exc:
        err.print(Text.assemble(("error:", "bold red"), f" {exc}"))
        return 2
    except OSError as exc:  # a path the checks above missed: one line, never a traceback
        where = f"{exc.filename}: " if exc.filename else ""
        err.print(Text.assemble(("error:", "bold red"), f" {where}{exc.strerror or exc}"))
        return 2
    except KeyboardInterrupt:
        err.print("interrupted")
        return 130


def console(stream, *, stderr: bool = False) -> Console:
    """A console that prints text literally (no markup, emoji codes or highlighting). On a
    terminal it wraps text at the terminal's width (``COLUMNS`` when set, as in
    :func:`shutil.get_terminal_size`, else the terminal's own); writing to a pipe or file,
    it never wraps a line: logs and step summaries keep whole lines."""
    terminal = stream.isatty()
    return Console(stderr=stderr, markup=False, emoji=False, highlight=False, soft_wrap=not terminal,
                   width=None if terminal else 100_000)


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line, exit 2; an option is spelt whole (``--imp`` is no ``--impl``)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **{"allow_abbrev": False, **kwargs})

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    from chatconform.providers import PROVIDER_IDS

    parser = _Parser(prog="chatconform", description=__doc__.split("\n\n")[0] + "\n\n" +
                     __doc__.split("\n\n")[1], formatter_class=argparse.RawDescriptionHelpFormatter,
                     epilog=__doc__.split("\n\n")[2].strip())
    parser.add_argument("--version", action="version", version=f"chatconform {_version()}",
                        help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser("run", help="run the conformance checks against implementations",
                         description="Run the conformance checks against implementations; exit 0 when "
                                     "every check passes, 1 when one fails; SIGINT (Ctrl-C) and SIGTERM "
                                     "stop it within seconds with a partial report, exit 130 and 143.")
    add_to_command(run)
    run.set_defaults(handler=cmd_run)

    lst = sub.add_parser("list", help="list implementations, checks and fakes",
                         description="List the registered implementations, every check with the bug "
                                     "it guards, and the bundled fakes.")
    lst.add_argument("--format", default="pretty", choices=["pretty", "markdown", "json"],
                     help="pretty tables (default), markdown (--levels only) or one JSON object")
    lst.add_argument("--levels", action="store_true",
                     help="print the level of each provider-bound check on each provider instead: "
                          "an error with the rule it rests on, or a warning and why")
    lst.set_defaults(handler=cmd_list)

    replay = sub.add_parser("replay", help="re-run failures saved under .chatconform/failures/",
                            description="Re-run saved failures; exit 1 while one still fails.")
    replay.add_argument("files", nargs="+", metavar="FILE|DIR",
                        help="a saved case, or a folder of them (every *.json in it)")
    replay.add_argument("--impl", default=None, metavar=IMPL_METAVAR,
                        help="run the cases against this implementation; without it, only a case "
                             "saved for reference or an installed entry point replays (a saved "
                             "case is data: a path, module or command in it never runs)")
    replay.add_argument("--in-process", action="store_true",
                        help="load a Python implementation in this process (default: a process of its own)")
    replay.add_argument("--strict", action="store_true",
                        help="exit 1 while a warning-level finding still shows too (as run --strict)")
    replay.set_defaults(handler=cmd_replay)

    summary = sub.add_parser("summary", help="summarise a JSON-lines report",
                             description="Summarise a JSON-lines report; exit 0 unless --fail-on-failure "
                                         "is given and a check failed.")
    summary.add_argument("report", nargs="+", metavar="REPORT.jsonl",
                         help="a report written by run --report, or every shard report of one run "
                              "(files, or a folder of them), merged")
    summary.add_argument("--format", default="pretty", choices=["pretty", "markdown", "json", "html"],
                         help="pretty (default), markdown (for a CI step summary), json, or html (one "
                              "self-contained page: the matrix, each failure's case and regression test)")
    summary.add_argument("--output", "-o", metavar="FILE",
                         help="write the markdown, json or html summary to FILE (written atomically) instead "
                              "of stdout")
    summary.add_argument("--fail-on-failure", action="store_true",
                         help="exit 1 when the report holds a failing check or is the partial report "
                              "of an interrupted run (a gate on a stored report)")
    summary.set_defaults(handler=cmd_summary)

    diff = sub.add_parser("diff", help="compare two reports by check id",
                          description="Compare two reports by check id; exit 1 when a check regressed "
                                      "or disappeared, or NEW is the partial report of an interrupted run.")
    diff.add_argument("old", metavar="OLD.jsonl", help="the baseline report (a folder: its shard reports, merged)")
    diff.add_argument("new", nargs="+", metavar="NEW.jsonl",
                      help="the report to compare with it, or every shard report of one run (files, or a "
                           "folder of them), merged")
    diff.add_argument("--allow-missing", action="store_true",
                      help="do not count a check that disappeared (in OLD, not in NEW) as a "
                           "regression, as when checks or implementations were removed on purpose")
    diff.set_defaults(handler=cmd_diff)

    validate = sub.add_parser("validate", help="judge recorded request bodies and cassettes by the providers' rules",
                              description="Judge recorded request bodies, VCR cassettes and HAR files by the "
                                          "providers' schema and sequence rules, beside the status each request "
                                          "was answered with; exit 1 for an error on a request not recorded "
                                          "as rejected.")
    validate.add_argument("files", nargs="+", metavar="PATH",
                          help="a VCR cassette (.yaml, .yaml.gz), a HAR file, JSON lines of bodies or of "
                               "interactions, a JSON body or array of bodies, a folder of them, or - for stdin")
    validate.add_argument("--provider", metavar="ID",
                          help="the provider the requests went to (default: read off each request's URL; "
                               "required for bare bodies): " + ", ".join(PROVIDER_IDS))
    validate.add_argument("--format", default="pretty", choices=["pretty", "json"],
                          help="pretty (default) or one JSON object per problem and per recorded verdict")
    validate.set_defaults(handler=cmd_validate)

    serve = sub.add_parser("serve", help="a local provider endpoint that judges every request an app sends",
                           description="Serve the OpenAI, Qwen-on-vLLM, GLM, Mistral, Anthropic, Gemini and "
                                       "Bedrock Converse endpoints on 127.0.0.1: every request is judged by the "
                                       "rules of validate, rejected with the provider's own error where the "
                                       "provider would reject it, else answered; the verdicts go to a report "
                                       "that summary and diff read. Stops on SIGINT or SIGTERM (docs/serve.md).")
    serve.add_argument("--port", type=port, default=8400, metavar="N",
                       help="the port on 127.0.0.1 (default 8400; 0: a free one, printed)")
    serve.add_argument("--report", metavar="FILE.jsonl",
                       help="write the verdicts as a JSON-lines report (rewritten as requests come, and when "
                            "the server stops)")
    serve.add_argument("--script", metavar="FILE",
                       help="the replies, one per turn of each conversation (JSON list or JSON lines): text, "
                            "thinking, tool_calls, and interruptions (status, delay, cut_stream_after)")
    serve.add_argument("--generate", action="store_true",
                       help="draw the replies past the script's end with Hypothesis (replayable with --seed)")
    serve.add_argument("--seed", type=int, default=None, metavar="S",
                       help="the seed of --generate (default: a random one, printed)")
    serve.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                       help="let a page in a browser at ORIGIN (http://localhost:3000; * for any) post to the "
                            "server, with CORS headers; any other Origin is refused (403). Repeatable")
    serve.set_defaults(handler=cmd_serve)

    bench = sub.add_parser("bench", help="time the contract functions on large inputs",
                           description="Time each implementation's contract functions on large "
                                       "generated inputs beside a floor (one bare pass over the same "
                                       "data) and fit how the time grows with the size (1.0 = linear). "
                                       "Not a gate: it exits 0 whatever the timings.")
    bench.add_argument("--impl", action="append", default=[], metavar="NAME|module:attr|file.py:attr",
                       help="implementation to time (repeatable; default: every registered one)")
    bench.add_argument("--contract", action="append", default=[], metavar="NAME",
                       help="contract to time (repeatable; default: every one with a large input)")
    bench.add_argument("--sizes", type=size_list, default=None, metavar="N,N,...",
                       help="input sizes in messages or rows (default 1000,10000,100000)")
    bench.add_argument("--provider", action="append", default=[], choices=PROVIDER_IDS, metavar="ID",
                       help="payload providers to time (repeatable; default: one per dialect)")
    bench.add_argument("--seed", type=int, default=0, metavar="N", help="the seed of the inputs (default 0)")
    bench.add_argument("--no-checks", dest="checks", action="store_false",
                       help="do not time the contract's checks on the reference's answers")
    bench.add_argument("--with-gc", action="store_true",
                       help="time the garbage collector's passes too (by default calls are timed with "
                            "it paused, as timeit does: its cost grows with the heap, not the work)")
    bench.add_argument("--json", metavar="FILE", help="also write every timing as JSON")
    bench.set_defaults(handler=cmd_bench)
    return parser


# -- run ---------------------------------------------------------------------------------------

def cmd_run(args, out: Console, err: Console) -> int:
    """:func:`_claimed`, stopped by SIGINT or SIGTERM between two steps (never mid-step), so
    that what finished is reported and every program the run started is killed."""
    from chatconform.errors import Interrupted
    from chatconform.frame import stop

    with stop.handling():  # before the heavy imports of _run: a signal meanwhile is noted too
        try:
            return _claimed(args, out, err)
        except Interrupted as exc:  # while loading the implementations: nothing ran
            from chatconform.runner.protocol import channel

            channel.kill_all()
            err.print(f"interrupted by {exc.signal} before the run started")
            return stop.exit_code(exc.signal)


def _claimed(args, out: Console, err: Console) -> int:
    """Claim the files the run writes for the whole run (:func:`outputs.claim`: resolved, checked
    and locked now, so a long run is not lost to a bad path, a chdir or a second run)."""
    from chatconform.outputs import files as outputs

    if args.report and args.junit_xml and outputs.target(args.report) == outputs.target(args.junit_xml):
        raise ConfigError(f"--report and --junit-xml name the same file {args.report}; give each its own")
    with contextlib.ExitStack() as held:
        report = held.enter_context(outputs.claim(args.report))
        junit = held.enter_context(outputs.claim(args.junit_xml, "the JUnit XML", "--junit-xml"))
        return _run(args, out, err, report, junit)


def _run(args, out: Console, err: Console, report: Path | None, junit: Path | None) -> int:
    """Load the implementations, run the engine with the reporters the options ask for."""
    from chatconform import engine
    from chatconform.frame import stop
    from chatconform.frame.guard import DEFAULT_TIMEOUT
    from chatconform.frame.profiles import get_profile
    from chatconform.outputs import report as reports
    from chatconform.outputs.reporters import JsonlReporter, JunitReporter, SavedFailures, TerminalReporter
    from chatconform.runner import discovery

    profile = get_profile(args.profile, examples=args.examples)
    jobs = args.jobs if args.jobs is not None else default_jobs(args.in_process)
    # The files last: they are written after the results are shown, so a late write error loses
    # nothing. Made before the implementations load, as loading one may chdir.
    handlers: list[Handler] = [SavedFailures(),
                               TerminalReporter(out, err, verbose=args.verbose, providers=args.provider)]
    if junit is not None:
        handlers.append(JunitReporter(junit, strict=args.strict))
    if report is not None:
        handlers.append(JsonlReporter(report, version=_version(), providers=args.provider))
    selection = engine.select(args.contract, args.check)
    set_memory_limit(args.memory_limit)
    if args.impl:
        impls = discovery.load_all(args.impl, in_process=args.in_process)
    else:
        impls = discovery.load_installed(err.print, in_process=args.in_process)
    if not impls:
        err.print("nothing to run: no implementation is registered; pass --impl")
        return 3
    narrow_providers(impls, args.provider)
    outcome = engine.run(impls, selection, profile, seed=args.seed, timeout=args.timeout or DEFAULT_TIMEOUT,
                         shrink_expected=args.shrink_expected, jobs=jobs, shard=args.shard,
                         handlers=handlers)
    if outcome.interrupted:
        err.print(reports.interrupted_text(outcome.interrupted, outcome.searched, outcome.searches)
                  + (f"; partial report: {args.report}" if report is not None else ""))
        return stop.exit_code(outcome.interrupted)
    if report is not None and not engine.nothing_ran(outcome.verdicts):
        out.print(f"report: {args.report}")
    late = stop.requested()
    if late:  # once every search had finished: the output above is whole
        err.print(f"interrupted by {late} after the searches had finished")
        return stop.exit_code(late)
    return engine.run_exit_code(outcome, strict=args.strict)


# -- list, replay, summary, diff, validate ----------------------------------------------------

def cmd_list(args, out: Console, err: Console) -> int:
    if args.levels:
        return _list_levels(args.format)
    if args.format == "markdown":
        raise ConfigError("list --format markdown prints the levels table only: add --levels")
    from chatconform.contracts import all_contracts
    from chatconform.fakes import all_fakes
    from chatconform.runner import discovery

    impls: list[dict[str, Any]] = []
    for name, ep in sorted(discovery.registered().items()):
        try:
            impl = discovery.load(name, in_process=True, warm=False)  # what it declares: nothing runs or warms up
            impls.append({"name": impl.name, "version": impl.version, "loads_from": ep.value,
                          "contracts": impl.contracts(), "error": None})
        except ConfigError as exc:
            impls.append({"name": name, "version": None, "loads_from": ep.value, "contracts": [],
                          "error": str(exc)})
    fakes = all_fakes()
    caught_by: dict[str, list[str]] = {}
    for fake in fakes.values():
        for check_id in (*fake.violates, *fake.warns):
            caught_by.setdefault(check_id, []).append(fake.name)
    checks: list[dict[str, Any]] = [
        {"id": check.id, "contract": contract.name, "title": check.title, "guards": check.rationale,
         "level": _levels(check), "level_note": check.level_note, "violated_by": caught_by.get(check.id, [])}
        for contract in all_contracts().values() for check in contract.ordered_checks()]
    fake_rows: list[dict[str, Any]] = [
        {"spec": spec, "name": fake.name, "reproduces": fake.reproduces, "violates": list(fake.violates),
         "warns": list(fake.warns)}
        for spec, fake in fakes.items()]
    if args.format == "json":
        _write(json.dumps({"version": _version(), "implementations": impls, "checks": checks,
                           "fakes": fake_rows}, indent=2, ensure_ascii=False) + "\n")
        return 0

    if not sys.stdout.isatty():  # a pipe or a file: the tables' width, not one line per row
        out.width = _listing_width()
    table = _table("implementations", "name", "version", "loads from", "contracts")
    for row in impls:
        if row["error"]:
            table.add_row(row["name"], "?", row["loads_from"], Text(row["error"], style="red"))
        else:
            table.add_row(row["name"], row["version"], row["loads_from"], ", ".join(row["contracts"]))
    out.print(table)
    table = _table("checks", "id", "what it checks, its level, the bug it guards, the fakes that violate it")
    for check in checks:
        table.add_row(check["id"], "\n".join([check["title"], f"level: {check['level']}", f"guards: {check['guards']}",
                                              "violated by: " + (", ".join(check["violated_by"]) or "-")]))
    out.print(table)
    table = _table("fakes (use with --impl)", "spec", "reproduces")
    for fake_row in fake_rows:
        table.add_row(fake_row["spec"], fake_row["reproduces"])
    out.print(table)
    return 0


def _listing_width() -> int:
    """The width ``list`` lays out to: ``COLUMNS`` when set, else the terminal's, else 100."""
    return shutil.get_terminal_size((100, 24)).columns


def _table(title: str, name: str, *columns: str) -> Table:
    """A table of ``list``: its first column, a name to search for or paste, stays whole on
    one line; a long value in the others wraps, or folds onto the next line, never cut short."""
    table = Table(title=title, title_justify="left")
    table.add_column(name, no_wrap=True)
    for column in columns:
        table.add_column(column, overflow="fold")
    return table


def _list_levels(form: str) -> int:
    """The table of chatconform.provider_schemas.levels: one line per (check, provider)."""
    from chatconform.provider_schemas.levels import level_table

    rows = level_table()
    if form == "json":
        _write(json.dumps([{"check": r.check, "provider": r.provider, "level": r.level, "rules": list(r.rules),
                            "basis": r.basis, "why": r.why} for r in rows], indent=2, ensure_ascii=False) + "\n")
        return 0
    if form == "markdown":
        lines = ["| check | provider | level | rules | basis | why |", "|---|---|---|---|---|---|"]
        lines += [f"| `{r.check}` | `{r.provider}` | {r.level} | {', '.join(r.rules) or '-'} | {r.basis} | "
                  f"{r.why.replace('|', '/')} |" for r in rows]
        _write("\n".join(lines) + "\n")
        return 0
    # One line a row, whatever the width, so the table greps (a row is a check, a provider
    # and one short reason: never the thousands of characters a wide table's line reaches).
    widths = [max(len(getattr(r, f)) for r in rows) for f in ("check", "provider")]
    _write("".join(f"{r.check:<{widths[0]}}  {r.provider:<{widths[1]}}  {r.level:<7}  "
                   f"{','.join(r.rules) or '-'}  ({r.basis}) {r.why}\n" for r in rows))
    return 0


def _levels(check) -> str:
    """``error``, ``warning``, or the default with the providers where it differs."""
    if not check.levels:
        return check.level
    others = sorted({level for _, level in check.levels})
    return check.level + "; " + "; ".join(
        f"{level} for {', '.join(p for p, lv in check.levels if lv == level)}" for level in others)


def _write(text: str) -> None:
    """Machine-readable output, written as it is (no console, no wrapping)."""
    sys.stdout.write(text)
    sys.stdout.flush()


def cmd_replay(args, out: Console, err: Console) -> int:
    from chatconform.outputs import repro

    files = [case for path in args.files for case in repro.saved_cases(path)]
    records = [(path, repro.load_record(path)) for path in files]  # every file checked before any runs
    status = 0
    specs = [repro.replay_spec(record, path, args.impl) for path, record in records]
    for (path, record), impl in zip(records, specs, strict=True):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", ConformanceWarning)  # raised here, to be printed as a WARN
                repro.check_case(impl, record["check"], record["case"], variant=record.get("variant"),
                                 in_process=args.in_process, strict=args.strict)
        except AssertionError as exc:
            out.print(Text.assemble(("FAIL", "bold red"), f" {path}: {exc}"))
            status = 1
        except ConformanceWarning as exc:
            out.print(Text.assemble(("WARN", "bold yellow"), f" {path}: {exc}"))
        else:
            out.print(Text.assemble(("pass", "green"), f" {path}: {record['check']} now holds for {impl}"))
    return status


def cmd_summary(args, out: Console, err: Console) -> int:
    from chatconform.outputs import files as outputs
    from chatconform.outputs import report
    from chatconform.outputs.reporters import print_matrix

    if args.output is not None and args.format == "pretty":
        raise ConfigError("summary --output writes a markdown, json or html summary: add --format")
    target = outputs.target(args.output, "the summary") if args.output is not None else None  # before the work
    parsed = report.read_many(args.report)
    stopped = report.interruption(parsed)
    if args.format == "pretty":
        if stopped:
            out.print(f"{stopped}: {report.PARTIAL}")
        results, absent = report.split_provided(parsed.results, report.provided_in(parsed.header))
        print_matrix(out, results, absent)
        out.print(report.counts_text(results))  # recounted: the footer's are not trusted
        served = report.requests_text(parsed)
        if served:
            out.print(served)
    elif target is None:
        _write(_summary_text(parsed, args.format))
    else:
        outputs.write_atomic(target, _summary_text(parsed, args.format), "the summary")
    failed = stopped is not None or any(report.status_of(r).fails_run for r in parsed.results)
    return 1 if failed and args.fail_on_failure else 0


def _summary_text(parsed, form: str) -> str:
    """The markdown, json or html summary of a report."""
    from chatconform.outputs import report
    from chatconform.outputs.reporters import markdown

    if form == "html":
        from chatconform.outputs.reporters.html import html  # Jinja2 is imported for the page only

        return html(parsed)
    if form == "markdown":
        return markdown(parsed)
    return json.dumps(report.summary_json(parsed), indent=2, ensure_ascii=False) + "\n"


def cmd_diff(args, out: Console, err: Console) -> int:
    from chatconform.outputs import report

    base, head = report.read_many([args.old]), report.read_many(args.new)
    result = report.diff(base, head)
    sections = [("regressed", result.regressed), ("improved", result.improved),
                ("changed", result.changed)]
    for title, rows in sections:
        for impl, check, old, new in rows:
            out.print(f"{title:11} {check}  {impl}: {old} -> {new}")
    for impl, check, status in result.appeared:
        out.print(f"{'appeared':11} {check}  {impl}: {status}")
    for impl, check, status in result.disappeared:
        out.print(f"{'disappeared':11} {check}  {impl}: was {status}")
    if not any([result.regressed, result.improved, result.changed, result.appeared,
                result.disappeared]):
        out.print("no differences")
    missing = result.disappeared and not args.allow_missing
    if missing:
        out.print(f"{len(result.disappeared)} check(s) of OLD are not in NEW: a regression "
                  "(--allow-missing if they were removed on purpose)")
    if (stopped := report.interruption(base)) is not None:
        out.print(f"warning: OLD was {stopped}: {report.PARTIAL}")
    if (cut := report.interruption(head)) is not None:
        out.print(f"NEW was {cut}: a partial report passes no gate")
    return 1 if result.regressed or missing or cut else 0


def cmd_validate(args, out: Console, err: Console) -> int:
    import io

    from chatconform.inputs import bounded_stream
    from chatconform.provider_schemas.lint import run_validate

    # Standard input up to the size limit files have; past it, one line and exit 2.
    stdin = (io.TextIOWrapper(bounded_stream(sys.stdin.buffer, "<stdin>", "request bodies"), encoding="utf-8")
             if "-" in args.files else None)
    return run_validate(args.files, args.provider, args.format, stdin=stdin)


def cmd_serve(args, out: Console, err: Console) -> int:
    """Serve until SIGINT or SIGTERM, holding the report's lock the while."""
    import random

    from chatconform.outputs import files as outputs
    from chatconform.serve.log import ServeLog
    from chatconform.serve.replies import Replies, Script, load_script
    from chatconform.serve.server import run

    script: Script = load_script(args.script) if args.script else {}
    seed = args.seed if args.seed is not None else random.randrange(2**32) if args.generate else None
    with outputs.claim(args.report) as report:
        log = ServeLog(report, version=_version(), seed=seed,
                       settings={"script": args.script, "generate": args.generate})
        replies = Replies(script, generate=args.generate, seed=seed or 0)
        log.notice = err.print

        def announce(root: str) -> None:
            drawn = f"; replies drawn with --seed {seed}" if args.generate else ""
            out.print(f"chatconform serve: listening on {root} (OpenAI-style: {root}/v1, {root}/<provider>/v1; "
                      f"Anthropic, Gemini, Bedrock: {root}){drawn}; Ctrl-C stops")

        unwritten: ConfigError | None = None
        try:
            stopped_by = run(args.port, log, replies, announce, tuple(args.allow_origin))
        except ConfigError as exc:
            if log.write_error is None:  # not the report's: nothing was served
                raise
            unwritten, stopped_by = exc, None  # the report could not be written: say what was served, then fail
    verdicts = [v for v in log.verdicts if v.served == "judged"]
    rejected = sum(1 for v in verdicts if v.rejected)
    warned = sum(1 for v in verdicts if not v.rejected and v.problems)
    others = Counter(v.served for v in log.verdicts if v.served != "judged")
    said = {"not judged": "answered but not judged", "no route": "to routes it does not serve",
            "refused": "refused (Host or Origin)", "too large": "over the provider's size cap"}
    out.print(f"stopped by {stopped_by or 'the server'}: {len(verdicts)} requests judged, {rejected} rejected, "
              f"{warned} with warnings" + "".join(f"; {others[k]} {text}" for k, text in said.items() if others[k])
              + (f"; report: {args.report}" if report is not None and unwritten is None else ""))
    if unwritten is not None:
        raise unwritten
    return 0


# -- bench ------------------------------------------------------------------------------------

def cmd_bench(args, out: Console, err: Console) -> int:
    """Claim the timings file for the whole run (as ``run`` does its report), then time."""
    from chatconform.outputs import files as outputs

    with outputs.claim(args.json, "the timings", "--json") as timings:
        return _bench(args, out, err, timings)


def _bench(args, out: Console, err: Console, timings: Path | None) -> int:
    from chatconform import bench, engine
    from chatconform.outputs import files as outputs
    from chatconform.outputs.reporters import BenchProgress
    from chatconform.outputs.reporters.terminal import seconds_text
    from chatconform.runner import discovery

    contracts = engine.select(args.contract, []).contracts
    # Timed here, in this process: a benchmark measures the implementation, not the protocol.
    impls = ([discovery.load(spec, in_process=True) for spec in args.impl] if args.impl
             else discovery.load_installed(err.print, in_process=True))
    if not impls:
        err.print("nothing to time: no implementation is registered; pass --impl")
        return 3
    sizes = args.sizes or list(bench.DEFAULT_SIZES)
    err.print(f"chatconform {_version()} bench · sizes {', '.join(f'{n:,}' for n in sizes)} · seed {args.seed} · "
              f"{bench.machine()['cpus']} CPUs, Python {bench.machine()['python']} · "
              f"{'collector on' if args.with_gc else 'collector paused during calls'}")

    result = bench.run_bench(impls, contracts, sizes, seed=args.seed, providers=args.provider or None,
                             with_gc=args.with_gc,
                             checks=args.checks, handlers=[BenchProgress(err)])
    if not result.series:
        for line in result.notes:
            err.print(line)
        err.print("nothing to time")
        return 3
    for contract in dict.fromkeys(s.contract for s in result.series):
        table = Table(title=f"{contract}: time per call, the median and the fastest of the rounds; per message, "
                            f"x floor and the growth exponent (log-log fit, 1.0 = linear) from the fastest",
                      title_justify="left")
        for column in ("implementation", "variant", "size", "median", "fastest", "per message", "x floor",
                       "exponent"):
            table.add_column(column, justify="left" if column in ("implementation", "variant") else "right")
        for series in (s for s in result.series if s.contract == contract):
            exponent = series.exponent
            fitted = (f"{exponent:.2f}" + (f" ({series.fit_sizes[0]:,}+)" if series.fit_sizes[0] > sizes[0] else "")
                      if exponent is not None else "-")
            for index, t in enumerate(series.timings):
                table.add_row(series.impl, series.variant or "", f"{t.size:,}", seconds_text(t.seconds),
                              seconds_text(t.best), seconds_text(t.per_message), f"{t.ratio:.1f}" if t.ratio else "-",
                              fitted if index == len(series.timings) - 1 else "")
            if series.note:
                table.add_row(series.impl, series.variant or "", "", series.note, "", "", "", "")
        out.print(table)
    for line in result.notes:
        out.print(line)
    if timings is not None:
        outputs.write_atomic(timings, json.dumps(result.to_json(sizes=sizes, seed=args.seed), indent=1),
                             "the timings")
        out.print(f"timings: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
