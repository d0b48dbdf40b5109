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
from chatconform.conformance.engine import Failure, Verdict, evaluate_case
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
    failures, broken, _ = evaluate_case(impl, contract, parsed, variant, timeout=timeout,
                                        only=frozenset({check_id}))
    if check_id in broken:
        raise AssertionError(f"{check_id}: {broken[check_id]}")
    for failure in failures:
        if failure.check == check_id:
            detail = ""
            if failure.expected is not None or failure.actual is not None:
                detail = f"\n  expected: {failure.expected!r}\n  actual:   {failure.actual!r}"
            raise AssertionError(f"{check_id} failed for {impl.name}: {failure.message}{detail}")


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
