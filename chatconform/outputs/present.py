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
from chatconform.runner.loading import relative_spec


def short(value: Any, limit: int = 400) -> str:
    """A one-line rendering of an expected/actual value, cut at ``limit`` characters."""
    text = value if isinstance(value, str) else render(value, width=10**9)
    return text if len(text) <= limit else text[:limit] + " …"


#: Items shown on each side of the first difference of two long sequences.
WINDOW = 2


def compared(expected: Any, actual: Any, limit: int = 400) -> list[tuple[str, str]]:
    """The ``expected`` and ``actual`` fields. Two sequences too long for a line are shown
    around their first difference (a window of :data:`WINDOW` items each side, the rest
    counted), with a ``differs`` field naming the position: the first items of two long
    threads are usually the same, and a cut after them says nothing."""
    shown = [("expected", short(expected, limit)), ("actual", short(actual, limit))]
    if not (isinstance(expected, (list, tuple)) and isinstance(actual, (list, tuple))):
        return shown
    if all(len(text) <= limit for _, text in shown):
        return shown
    at = next((i for i, (e, a) in enumerate(zip(expected, actual, strict=False)) if e != a),
              min(len(expected), len(actual)))
    where = (f"first at position {at} (counting from 0) of {len(expected)} expected and "
             f"{len(actual)} actual items")
    return [("differs", where), ("expected", _window(expected, at, limit)), ("actual", _window(actual, at, limit))]


def _window(items: list | tuple, at: int, limit: int) -> str:
    start, end = max(0, at - WINDOW), min(len(items), at + WINDOW + 1)
    inner = ", ".join(short(item, limit // (2 * WINDOW + 1)) for item in items[start:end])
    before = f"… {start} before, " if start else ""
    after = f", … {len(items) - end} after" if end < len(items) else ""
    return f"[{before}{inner}{after}]"


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
    """A failure as it is saved: the implementation named from its project's root (a file
    spec), so the record and the test made from it read the same on any machine."""
    return {
        "implementation": relative_spec(verdict.spec),
        "check": failure.check,
        "contract": verdict.contract,
        "variant": failure.variant,
        "message": failure.message,
        "case": failure.case,
    }


def regression_test(record: dict[str, Any], level: str = ERROR, *, case_file: str | None = None) -> str:
    """A pytest test to paste, at column 0, into the implementation's own suite. For a
    warning-level failure (``level``) it passes as pasted, with a warning, as the run does.

    A file implementation is named from its project's root, where ``check_case`` looks for it
    from the test's own file, so the test runs from any folder. ``case_file``: the name of
    the saved failure, which the test loads (``saved_case``) instead of holding a long case."""
    name = re.sub(r"\W+", "_", record["check"]).strip("_")
    variant = f", variant={string_literal(record['variant'])}" if record.get("variant") else ""
    note = ("    # a warning: passes with a ConformanceWarning, as the run does; strict=True fails on it\n"
            if level != ERROR else "")
    if case_file is None:
        imports = "check_case"
        case = f"    case = {render(record['case'], python=True, step=4, indent=4)}\n"
    else:
        imports = "check_case, saved_case"
        case = (f"    # the case is the saved failure {case_file}: saved_case looks beside this file, then in\n"
                "    # .chatconform/failures/ (copy it here to keep it)\n"
                f"    case = saved_case({string_literal(case_file)})\n")
    return (
        f"from chatconform import {imports}\n\n\n"
        f"def test_{name}_regression():\n"
        f"{case}"
        f"{note}"
        f"    check_case({string_literal(relative_spec(record['implementation']))}, "
        f"{string_literal(record['check'])}, case{variant})\n"
    )


def body_regression_test(body: Any, provider: str, rule: str, model: str | None = None, *,
                         body_file: str | None = None) -> str:
    """A pytest test to paste that runs a request body ``chatconform serve`` judged through
    ``validate``: it fails with the provider's error text while the body breaks ``rule``, and
    passes once the body is corrected (by hand, or by the code that builds it). ``body_file``:
    the saved request to load instead of holding a long body (looked for beside the test)."""
    name = re.sub(r"\W+", "_", f"{provider} {rule}").strip("_")
    if body_file is None:
        imports, held = "", f"    body = {render(body, python=True, step=4, indent=4)}\n"
    else:
        imports = "import json\nfrom pathlib import Path\n\n"
        held = (f"    # the request chatconform serve saved beside its report: copy it beside this file\n"
                f"    saved = Path(__file__).with_name({string_literal(body_file)})\n"
                "    body = json.loads(saved.read_text(encoding=\"utf-8\"))[\"request\"][\"parsed_body\"]\n")
    model_arg = f", model={string_literal(model)}" if model else ""
    return (
        f"{imports}from chatconform.provider_schemas import validate\n\n\n"
        f"def test_{name}_regression():\n"
        f"{held}"
        f"    broken = [p for p in validate(body, {string_literal(provider)}{model_arg}) "
        f"if p.rule == {string_literal(rule)}]\n"
        "    assert not broken, f\"{broken[0].rule} at {broken[0].path}: {broken[0].message}\"\n"
    )


def describe(verdict: Verdict, failure: Failure) -> FailureReport:
    """The presentation of one failure of one verdict."""
    variant = f" [{failure.variant}]" if failure.variant else ""
    check = get_check(verdict.check)
    fields = [("why", failure.why or check.rationale), ("what", failure.message)]
    if failure.level != "error":
        note = check.level_note or "reported, fails the run only under --strict"
        fields.append(("level", f"{failure.level}: {note}"))
    if failure.expected is not None or failure.actual is not None:
        fields += compared(failure.expected, failure.actual)
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
