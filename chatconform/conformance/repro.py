"""Reproducing a failure: save it, print a regression test, re-run it.

A saved case is plain JSON (the implementation spec, the check id, the shrunk input),
not a Hypothesis blob, so it survives upgrades of Hypothesis and of chatconform.
"""

from __future__ import annotations

import hashlib
import json
import pprint
import re
from pathlib import Path
from typing import Any

from chatconform.conformance import discovery
from chatconform.conformance.contracts import get_contract
from chatconform.conformance.engine import EngineCaseError, Failure, Verdict, evaluate_case
from chatconform.conformance.status import Status
from chatconform.conformance.guard import DEFAULT_TIMEOUT
from chatconform.conformance.registry import ConfigError, get_check

FAILURES_DIR = Path(".chatconform") / "failures"


def failure_record(verdict: Verdict, failure: Failure) -> dict[str, Any]:
    return {
        "implementation": verdict.spec,
        "check": failure.check,
        "contract": verdict.contract,
        "variant": failure.variant,
        "message": failure.message,
        "case": failure.case,
    }


def save_failure(record: dict[str, Any], directory: Path = FAILURES_DIR) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(json.dumps(record["case"], sort_keys=True).encode()).hexdigest()[:10]
    variant = f"--{record['variant']}" if record.get("variant") else ""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{record['implementation']}--{record['check']}{variant}")
    path = directory / f"{slug}--{digest}.json"
    path.write_text(json.dumps(record, indent=2) + "\n")
    return path


def save_failures(verdicts: list[Verdict], directory: Path = FAILURES_DIR) -> None:
    """Save every failure of a run, recording on each where it went (or why it could not)."""
    for verdict in verdicts:
        if verdict.status != Status.FAIL:
            continue
        for failure in verdict.failures:
            try:
                failure.saved = f"{save_failure(failure_record(verdict, failure), directory)}"
            except OSError as exc:
                failure.saved = f"not saved ({exc.strerror or exc})"


def regression_test(record: dict[str, Any]) -> str:
    """A pytest test to paste into the implementation's own suite."""
    name = re.sub(r"\W+", "_", record["check"]).strip("_")
    case = pprint.pformat(record["case"], indent=1, width=88, sort_dicts=False)
    case = "\n".join(" " * 11 + line if i else line for i, line in enumerate(case.splitlines()))
    variant = f", variant={record['variant']!r}" if record.get("variant") else ""
    return (
        "from chatconform import check_case\n\n\n"
        f"def test_{name}_regression():\n"
        f"    case = {case}\n"
        f"    check_case({record['implementation']!r}, {record['check']!r}, case{variant})\n"
    )


def check_case(implementation: Any, check_id: str, case: Any, *, variant: str | None = None,
               timeout: float = DEFAULT_TIMEOUT) -> None:
    """Assert that one check passes on one input (given as JSON, as a failure prints it).

    ``implementation`` is a spec (entry-point name or ``module:attr``) or the object itself.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not chatconform's frames
    impl = discovery.load(implementation) if isinstance(implementation, str) else \
        discovery.wrap(implementation)
    check = get_check(check_id)
    contract = get_contract(check.contract)
    if impl.method(contract) is None:
        raise ConfigError(f"{impl.name} has no {contract.method}()")
    try:
        parsed = contract.case_from_json(case)
    except ValueError as exc:
        raise ConfigError(f"the case is not a valid {contract.name} input: {exc}") from None
    try:
        evaluation = evaluate_case(impl, contract, parsed, variant, timeout=timeout, only=frozenset({check_id}))
    except EngineCaseError as exc:
        raise ConfigError(f"{exc}; this is a chatconform bug (case: {exc.case_text})") from None
    if check_id in evaluation.broken:
        raise AssertionError(f"{check_id}: {evaluation.broken[check_id]}")
    for failure in evaluation.failures:
        if failure.check == check_id:
            from chatconform.conformance.present import describe

            verdict = Verdict(impl.name, impl.spec, contract.name, check_id, Status.FAIL, failure.message)
            report = describe(verdict, failure)
            raise AssertionError("\n".join([report.title, *(f"  {label}: {text}" for label, text in report.fields)]))
    if check_id not in evaluation.evaluated:
        crash = next((f.message for f in evaluation.failures), "the check does not apply to this case")
        raise AssertionError(f"{check_id} was not evaluated for {impl.name}: {crash}")


def load_record(path: str | Path) -> dict[str, Any]:
    try:
        record = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{exc.lineno}:{exc.colno}: not JSON ({exc.msg})") from None
    missing = [k for k in ("implementation", "check", "case") if k not in (record or {})]
    if not isinstance(record, dict) or missing:
        raise ConfigError(f"{path}: not a saved chatconform failure (missing {', '.join(missing)})")
    return record
