"""The ``chatconform`` command: a thin front end over the engine.

Exit codes: 0 pass (expected failures included), 1 a check failed, 2 usage or
configuration error, 3 nothing was selected to run.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from chatconform.conformance.registry import ConfigError

def _version() -> str:
    from chatconform.version import __version__

    return __version__


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    out = Console(highlight=False, soft_wrap=False, width=_width())
    err = Console(stderr=True, highlight=False, width=_width())
    try:
        return args.handler(args, out, err)
    except ConfigError as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}")
        return 2
    except KeyboardInterrupt:
        err.print("interrupted")
        return 130


def _width() -> int | None:
    return None if sys.stdout.isatty() else 120


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="chatconform", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"chatconform {_version()}")
    sub = parser.add_subparsers(dest="command")

    run = sub.add_parser("run", help="run the conformance checks against implementations")
    run.add_argument("--impl", action="append", default=[], metavar="NAME|module:attr",
                     help="implementation to test (repeatable; default: every registered one)")
    run.add_argument("--contract", action="append", default=[], help="contract to run (repeatable)")
    run.add_argument("--check", action="append", default=[], metavar="ID",
                     help="only this check (repeatable)")
    run.add_argument("--profile", default="ci", choices=["ci", "dev", "deep"])
    run.add_argument("--seed", type=int, default=None, help="random seed (overrides derandomize)")
    run.add_argument("--examples", type=int, default=None, metavar="N",
                     help="examples per search instead of the profile's (a quick look, not a gate)")
    run.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                     help="per-call timeout for the implementation (default 10)")
    run.add_argument("--report", metavar="FILE.jsonl", help="write a JSON-lines report")
    run.set_defaults(handler=cmd_run)

    lst = sub.add_parser("list", help="list implementations, checks and fakes")
    lst.set_defaults(handler=cmd_list)

    replay = sub.add_parser("replay", help="re-run a failure saved under .chatconform/failures/")
    replay.add_argument("files", nargs="+", metavar="FILE")
    replay.add_argument("--impl", default=None, help="run the case against another implementation")
    replay.set_defaults(handler=cmd_replay)

    summary = sub.add_parser("summary", help="summarise a JSON-lines report")
    summary.add_argument("report")
    summary.add_argument("--format", default="pretty", choices=["pretty", "markdown", "json"])
    summary.set_defaults(handler=cmd_summary)

    diff = sub.add_parser("diff", help="compare two reports by check id")
    diff.add_argument("old")
    diff.add_argument("new")
    diff.set_defaults(handler=cmd_diff)

    validate = sub.add_parser("validate", help="lint recorded provider request bodies")
    validate.add_argument("files", nargs="+", metavar="FILE", help="JSON or JSON-lines file, or -")
    validate.add_argument("--provider", required=True)
    validate.add_argument("--format", default="pretty", choices=["pretty", "json"])
    validate.set_defaults(handler=cmd_validate)
    return parser


# -- run ---------------------------------------------------------------------------------------

class _Progress:
    """One line per finished search; a live counter while a search runs on a terminal."""

    def __init__(self, err: Console):
        self.err = err
        self.status = None
        self.count = 0
        self.label = ""

    def __call__(self, event: str, **info: Any) -> None:
        if event == "start":
            self.count = 0
            variant = f" [{info['variant']}]" if info["variant"] else ""
            self.label = f"{info['impl'].name} · {info['contract'].name}{variant}"
            if self.err.is_terminal:
                self.status = self.err.status(f"{escape(self.label)}: starting")
                self.status.start()
        elif event == "example":
            self.count += 1
            if self.status is not None and self.count % 10 == 0:
                self.status.update(f"{escape(self.label)}: {self.count} examples")
        elif event == "end":
            if self.status is not None:
                self.status.stop()
                self.status = None
            result = info["result"]
            failing = len(result.failures) + (result.hung is not None)
            note = f"[red]{failing} failing[/]" if failing else "[green]ok[/]"
            if result.aborted:
                note = "[magenta]stopped[/]"
            self.err.print(f"  {escape(self.label)}: {result.examples} examples, "
                           f"{info['seconds']:.1f}s, {note}")


def cmd_run(args, out: Console, err: Console) -> int:
    from chatconform.conformance import discovery, engine, report, repro
    from chatconform.conformance.guard import DEFAULT_TIMEOUT
    from chatconform.conformance.profiles import get_profile

    profile = get_profile(args.profile, examples=args.examples)
    if args.report:
        report.check_writable(args.report)  # fail now, not after a long run
    selection = engine.select(args.contract, args.check)
    if args.impl:
        impls = [discovery.load(spec) for spec in args.impl]
    else:
        impls = discovery.load_installed(lambda line: err.print(escape(line)))
    if not impls:
        err.print("nothing to run: no implementation is registered; pass --impl")
        return 3
    seed_note = args.seed if args.seed is not None else (
        "derandomized" if profile.derandomize else "random")
    err.print(f"chatconform {_version()} · profile {profile.name} · seed {seed_note} · "
              f"{len(impls)} implementation(s) · contracts "
              f"{', '.join(c.name for c in selection.contracts)}")
    started = time.perf_counter()
    verdicts = engine.run(impls, selection, profile, seed=args.seed,
                          timeout=args.timeout or DEFAULT_TIMEOUT, progress=_Progress(err))
    seconds = time.perf_counter() - started
    repro.save_failures(verdicts)
    head = report.header(impls, version=_version(), profile=profile.name, seed=args.seed)
    foot = report.footer(verdicts, seconds)
    if args.report:
        report.write(args.report, head, verdicts, foot)
    if engine.nothing_ran(verdicts):
        reasons = sorted({v.message for v in verdicts})
        err.print("nothing to run: every selected check was skipped (" + "; ".join(reasons) + ")")
        return 3
    _print_matrix(out, [report.result_line(v) for v in verdicts])
    _print_failures(out, verdicts)
    counts = foot["counts"]
    out.print(", ".join(f"{n} {s}" for s, n in counts.items() if n) + f" in {seconds:.1f}s")
    if args.report:
        out.print(f"report: {args.report}")
    return engine.exit_code(verdicts)


def _print_matrix(out: Console, results: list[dict]) -> None:
    from chatconform.conformance.report import matrix

    impls, checks, cells = matrix(results)
    table = Table(title="conformance", title_justify="left")
    table.add_column("check")
    for impl in impls:
        table.add_column(impl, justify="center")
    for check in checks:
        row = []
        for impl in impls:
            cell = cells.get((check, impl))
            row.append(f"[{cell.status.style}]{escape(cell.label)}[/]" if cell else "")
        table.add_row(check, *row)
    out.print(table)


def _print_failures(out: Console, verdicts) -> None:
    from chatconform.conformance.present import describe
    from chatconform.conformance.status import Status

    grouped: dict[tuple[Status, str, str], list[str]] = {}
    for verdict in verdicts:
        status = Status(verdict.status)
        if status in (Status.ERROR, Status.NOT_EVALUATED):
            grouped.setdefault((status, verdict.implementation, verdict.message), []).append(verdict.check)
    for (status, impl, message), checks in grouped.items():
        word = "ERROR" if status == Status.ERROR else "NOT EVALUATED"
        out.print(f"\n[{status.style}]{word}[/] {', '.join(checks)} · {escape(impl)}: {escape(message)}")
    for verdict in verdicts:
        if Status(verdict.status) != Status.FAIL:
            continue
        for failure in verdict.failures:
            shown = describe(verdict, failure)
            head, _, rest = shown.title.partition(" ")
            out.print(f"\n[bold red]{head}[/] [bold]{escape(rest)}[/]")
            for label, text in shown.fields:
                out.print(f"  {label + ':':<9} {escape(text)}")
            out.print(f"  {shown.input_label}:")
            _print_block(out, shown.input_json)
            if failure.saved and not failure.saved.startswith("not saved"):
                out.print(f"  re-run:   chatconform replay {escape(failure.saved)}")
            out.print("  regression test:")
            _print_block(out, shown.test)


def _print_block(out: Console, text: str) -> None:
    """Indented, unstyled and unwrapped, so it can be copied as it is."""
    for line in text.rstrip("\n").splitlines():
        out.print(("    " + line).rstrip(), markup=False, highlight=False, soft_wrap=True)


# -- list, replay, summary, diff, validate ----------------------------------------------------

def cmd_list(args, out: Console, err: Console) -> int:
    from chatconform.conformance import discovery
    from chatconform.conformance.contracts import all_contracts
    from chatconform.fakes import all_fakes

    table = Table(title="implementations", title_justify="left")
    for column in ("name", "version", "loads from", "contracts"):
        table.add_column(column)
    for name, ep in sorted(discovery.registered().items()):
        try:
            impl = discovery.load(name)
            table.add_row(impl.name, impl.version, ep.value, ", ".join(impl.contracts()))
        except ConfigError as exc:
            table.add_row(name, "?", ep.value, f"[red]{escape(str(exc))}[/]")
    out.print(table)

    fakes = all_fakes()
    caught_by: dict[str, list[str]] = {}
    for spec, fake in fakes.items():
        for check_id in fake.violates:
            caught_by.setdefault(check_id, []).append(fake.name)
    table = Table(title="checks", title_justify="left")
    for column in ("id", "title", "guards", "fakes that violate it"):
        table.add_column(column)
    for contract in all_contracts().values():
        for check in contract.ordered_checks():
            table.add_row(check.id, check.title, check.rationale, ", ".join(caught_by.get(check.id, [])))
    out.print(table)

    table = Table(title="fakes (use with --impl)", title_justify="left")
    for column in ("spec", "reproduces"):
        table.add_column(column)
    for spec, fake in fakes.items():
        table.add_row(spec, fake.reproduces)
    out.print(table)
    return 0


def cmd_replay(args, out: Console, err: Console) -> int:
    from chatconform.conformance import repro

    status = 0
    for path in args.files:
        record = repro.load_record(path)
        impl = args.impl or record["implementation"]
        try:
            repro.check_case(impl, record["check"], record["case"], variant=record.get("variant"))
        except AssertionError as exc:
            out.print(f"[bold red]FAIL[/] {escape(path)}: {escape(str(exc))}")
            status = 1
        else:
            out.print(f"[green]pass[/] {escape(path)}: {record['check']} now holds for {escape(impl)}")
    return status


def cmd_summary(args, out: Console, err: Console) -> int:
    from chatconform.conformance import report

    parsed = report.read(args.report)
    if args.format == "markdown":
        out.print(report.markdown(parsed), markup=False, end="")
    elif args.format == "json":
        out.print_json(data=report.summary_json(parsed))
    else:
        _print_matrix(out, parsed.results)
        counts = parsed.footer.get("counts", {})
        out.print(", ".join(f"{n} {s}" for s, n in counts.items() if n))
    return 1 if any(report.status_of(r).fails_run for r in parsed.results) else 0


def cmd_diff(args, out: Console, err: Console) -> int:
    from chatconform.conformance import report

    result = report.diff(report.read(args.old), report.read(args.new))
    sections = [("regressed", result.regressed), ("improved", result.improved),
                ("changed", result.changed)]
    for title, rows in sections:
        for impl, check, old, new in rows:
            out.print(f"{title:11} {check}  {escape(impl)}: {old} -> {new}")
    for impl, check, status in result.appeared:
        out.print(f"{'appeared':11} {check}  {escape(impl)}: {status}")
    for impl, check, status in result.disappeared:
        out.print(f"{'disappeared':11} {check}  {escape(impl)}: was {status}")
    if not any([result.regressed, result.improved, result.changed, result.appeared,
                result.disappeared]):
        out.print("no differences")
    return 1 if result.regressed else 0


def cmd_validate(args, out: Console, err: Console) -> int:
    from chatconform.provider_schemas.lint import run_validate

    return run_validate(args.files, args.provider, args.format)


if __name__ == "__main__":
    sys.exit(main())
