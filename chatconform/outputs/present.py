"""One presentation of a failure, for every front end.

The CLI (styled), the pytest plugin and ``check_case``/``replay`` (plain text) all show a
failure from the same :class:`FailureReport`: the check id and the bug it guards, what was
wrong, expected vs actual, the minimal input as JSON, where it was saved, and a regression
test to paste (:func:`regression_test`, from the record a failure is saved as, :func:`failure_record`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from chatconform.contracts import get_check
from chatconform.engine import Failure, Verdict
from chatconform.errors import ERROR
from chatconform.outputs.pretty import render, string_literal


def short(value: Any, limit: int = 400) -> str:
    """A one-line rendering of an expected/actual value, cut at ``limit`` characters."""
    text = value if isinstance(value, str) else render(value, width=10**9)
    return text if len(text) <= limit else text[:limit] + " …"


#: The line a printed regression test starts under; itself a comment, so the block pastes as it is.
TEST_BANNER = "# regression test: paste into your test suite"


@dataclass(frozen=True)
class FailureReport:
    title: str  # "<check> [<variant>] · <implementation>"
    fields: list[tuple[str, str]]  # (label, one-line text): why, what, expected, actual, saved
    input_label: str  # "minimal input", "input (not shrunk)" or "smallest input seen"
    input_json: str
    test: str  # the regression test, ready to paste at column 0
    call: str = ""  # the test's last line, the check_case(...) call

    def plain(self) -> str:
        lines = [self.title]
        lines += [f"  {label + ':':<9} {text}" for label, text in self.fields]
        lines += [f"  {self.input_label}:", indent(self.input_json), TEST_BANNER, self.test.rstrip("\n")]
        return "\n".join(lines)


def indent(text: str, by: int = 4) -> str:
    return "\n".join((" " * by + line).rstrip() for line in text.rstrip("\n").splitlines())


def failure_record(verdict: Verdict, failure: Failure) -> dict[str, Any]:
    return {
        "implementation": verdict.spec,
        "check": failure.check,
        "contract": verdict.contract,
        "variant": failure.variant,
        "message": failure.message,
        "case": failure.case,
    }


def regression_test(record: dict[str, Any], level: str = ERROR) -> str:
    """A pytest test to paste, at column 0, into the implementation's own suite. For a
    warning-level failure (``level``) it passes as pasted, with a warning, as the run does."""
    name = re.sub(r"\W+", "_", record["check"]).strip("_")
    case = render(record["case"], python=True, step=4, indent=4)
    variant = f", variant={string_literal(record['variant'])}" if record.get("variant") else ""
    note = ("    # a warning: passes with a ConformanceWarning, as the run does; strict=True fails on it\n"
            if level != ERROR else "")
    return (
        "from chatconform import check_case\n\n\n"
        f"def test_{name}_regression():\n"
        f"    case = {case}\n"
        f"{note}"
        f"    check_case({string_literal(record['implementation'])}, {string_literal(record['check'])}, "
        f"case{variant})\n"
    )


def describe(verdict: Verdict, failure: Failure) -> FailureReport:
    """The presentation of one failure of one verdict."""
    variant = f" [{failure.variant}]" if failure.variant else ""
    check = get_check(verdict.check)
    fields = [("why", check.rationale), ("what", failure.message)]
    if failure.level != "error":
        note = check.level_note or "reported, fails the run only under --strict"
        fields.append(("level", f"{failure.level}: {note}"))
    if failure.expected is not None or failure.actual is not None:
        fields += [("expected", short(failure.expected)), ("actual", short(failure.actual))]
    if failure.shrink_note:
        fields.append(("shrink", failure.shrink_note))
    if failure.saved:
        fields.append(("saved", failure.saved))
    test = regression_test(failure_record(verdict, failure), failure.level)
    return FailureReport(
        title=f"{'FAIL' if failure.level == 'error' else 'WARN'} {verdict.check}{variant} · {verdict.implementation}",
        fields=fields,
        input_label=_input_label(failure),
        input_json=render(failure.case),
        test=test,
        call=test.rstrip("\n").splitlines()[-1].strip(),
    )


def _input_label(failure: Failure) -> str:
    if not failure.shrunk:
        return "input (not shrunk)"
    return "smallest input seen" if failure.shrink_note else "minimal input"
