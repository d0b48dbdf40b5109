"""Reproducing a failure: save it, and re-run it (:func:`check_case`, ``chatconform replay``).

A saved case is plain JSON (the implementation spec, the check id, the shrunk input),
not a Hypothesis blob, so it survives upgrades of Hypothesis and of chatconform.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import sys
import warnings
from pathlib import Path
from types import FrameType
from typing import Any

from chatconform.contracts import get_check, get_contract
from chatconform.engine import Verdict, evaluate_case
from chatconform.errors import ERROR, ConfigError, ConformanceWarning, EngineCaseError
from chatconform.frame import shapes
from chatconform.frame.guard import DEFAULT_TIMEOUT
from chatconform.frame.status import Status
from chatconform.inputs import read_input
from chatconform.outputs import files as outputs
from chatconform.outputs.present import describe, failure_record, regression_test
from chatconform.runner import discovery
from chatconform.runner.loading import find_spec_file, project_root

__all__ = ["FAILURES_DIR", "check_case", "failure_record", "load_record", "regression_test", "replay_command",
           "replay_spec", "save_failure", "save_failures", "saved_case", "saved_cases", "saved_path"]

FAILURES_DIR = Path(".chatconform") / "failures"


def saved_path(record: dict[str, Any], directory: Path = FAILURES_DIR) -> Path:
    """Where :func:`save_failure` saves ``record``: named by its implementation, check, variant
    and case, so a summary of the report can name the file the run saved."""
    digest = hashlib.sha256(json.dumps(record["case"], sort_keys=True).encode()).hexdigest()[:10]
    variant = f"--{record['variant']}" if record.get("variant") else ""
    label = re.split(r"[\\/]", record["implementation"])[-1]  # a file spec: its file name and attribute
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{label}--{record['check']}{variant}")
    return directory / f"{slug}--{digest}.json"


def save_failure(record: dict[str, Any], directory: Path = FAILURES_DIR) -> Path:
    """Save one failure, atomically (a failed write leaves no half a case); its file's path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = saved_path(record, directory)
    outputs.write_atomic(path, json.dumps(record, indent=2) + "\n", "the saved failure")
    return path


def save_failures(verdicts: list[Verdict], directory: Path = FAILURES_DIR, *, shown: Path | None = None) -> None:
    """Save every failure of a run, recording on each where it went (or why it could not);
    ``shown``: the folder as the record names it (``directory`` itself by default)."""
    for verdict in verdicts:
        if verdict.status != Status.FAIL:
            continue
        for failure in verdict.failures:
            try:
                path = save_failure(failure_record(verdict, failure), directory)
            except OSError as exc:
                failure.saved = f"not saved ({exc.strerror or exc})"
            except ConfigError as exc:
                failure.saved = f"not saved ({exc})"
            else:
                failure.saved = str(path if shown is None else shown / path.name)


def check_case(implementation: Any, check_id: str, case: Any, *, variant: str | None = None,
               timeout: float = DEFAULT_TIMEOUT, in_process: bool = False, strict: bool = False) -> None:
    """Assert that one check passes on one input (given as JSON, as a failure prints it).

    ``implementation`` is a spec (entry-point name, ``module:attr`` or ``path/file.py:attr``)
    or the object itself; it runs in a process of its own unless ``in_process``
    (:func:`discovery.load_object`). A relative file path is looked for from the root of the
    project that holds the calling file (the folder with its pyproject.toml, setup.py,
    setup.cfg or .git), as failures print it, then from the working folder.
    A warning-level failure passes, as it does in a run, and is emitted as a
    :class:`~chatconform.errors.ConformanceWarning`; ``strict`` fails on it too (``run --strict``).
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not chatconform's frames
    try:
        if isinstance(implementation, str):
            spec = find_spec_file(implementation, _caller_file())
            impl = discovery.load(spec, in_process=in_process)
        else:
            impl = discovery.load_object(implementation, in_process=in_process)
        check = get_check(check_id)
        contract = get_contract(check.contract)
    except ConfigError as exc:
        raise ConfigError(str(exc)) from None  # raised here, so pytest hides chatconform's frames
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
            warning = failure.level != ERROR
            verdict = Verdict(impl.name, impl.spec, contract.name, check_id, Status.WARN if warning else Status.FAIL,
                              failure.message)
            report = describe(verdict, failure)
            text = "\n".join([report.title, *(f"  {label}: {text}" for label, text in report.fields)])
            if warning and not strict:
                warnings.warn(ConformanceWarning(text), stacklevel=2)
                return
            raise AssertionError(text)
    if check_id not in evaluation.evaluated:
        crash = next((f.message for f in evaluation.failures), "the check does not apply to this case")
        raise AssertionError(f"{check_id} was not evaluated for {impl.name}: {crash}")


_PACKAGE = Path(__file__).resolve().parent.parent


def _caller_file() -> Path | None:
    """The file of the nearest caller outside chatconform (the regression test's own file)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        path = Path(frame.f_code.co_filename)
        if path.is_absolute() and not path.resolve().is_relative_to(_PACKAGE) and path.suffix == ".py":
            return path.resolve()
        frame = frame.f_back
    return None


def saved_case(name: str | Path) -> Any:
    """The case of a saved failure (``chatconform`` saves each under .chatconform/failures/),
    for a regression test whose case is too long to paste: looked for as given when absolute,
    else beside the calling test file, then in .chatconform/failures/ under the root of the
    project holding it, then under the working folder. Every field is checked (:func:`load_record`)."""
    name = Path(name)
    near = _caller_file()
    places = [name] if name.is_absolute() else []
    if not places:
        root = project_root(near.parent) if near is not None else None
        places = [folder / name for folder in (near.parent if near else None,
                                                root / FAILURES_DIR if root else None,
                                                Path.cwd() / FAILURES_DIR) if folder is not None]
    for path in places:
        if path.is_file():
            return load_record(path)["case"]
    raise ConfigError(f"no saved case {name}: looked at {', '.join(str(p) for p in places)}")


def load_record(path: str | Path) -> dict[str, Any]:
    """A saved failure, every field checked; a ConfigError in one line (naming the file, the
    line and the field) for anything else. Nothing named in it is loaded here: the record is
    data, and :func:`replay_spec` says what may run it."""
    path = Path(path)
    text = read_input(path, "a saved chatconform failure")
    record = shapes.parse_json(text, str(path))
    if not isinstance(record, dict):
        raise ConfigError(f"{path}:1: not a saved chatconform failure (expected an object, "
                          f"got {shapes.describe(record)})")
    shapes.check_document(record, shapes.SAVED_FAILURE, str(path), text)
    return record


def replays_by_itself(spec: str) -> bool:
    """Whether ``replay`` loads a saved case's own implementation ``spec`` without ``--impl``:
    only the reference and installed entry points, never a path, a module or a command."""
    return spec == "reference" or spec in discovery.registered()


def replay_command(path: str | Path, spec: str) -> str:
    """The command that replays the case saved at ``path`` for the implementation ``spec``."""
    command = f"chatconform replay {shlex.quote(str(path))}"
    return command if replays_by_itself(spec) else f"{command} --impl {shlex.quote(spec)}"


def replay_spec(record: dict[str, Any], path: str | Path, override: str | None) -> str:
    """The implementation to replay ``record`` against: ``override`` (``replay --impl``) when
    given, else the record's own only when it names ``reference`` or an installed entry point.
    A saved case can come from anywhere (a pull request), so a path, a module or a command
    in it is never imported or run."""
    if override:
        return override
    spec = record["implementation"]
    if replays_by_itself(spec):
        return spec
    raise ConfigError(f"{path} names the implementation {spec!r}, which is not an installed one: "
                      "replay loads only what the command line names; to run the case against it, "
                      "pass --impl SPEC")


def saved_cases(path: str | Path) -> list[Path]:
    """The saved cases to replay for ``path``: the file itself, or every ``*.json`` in a folder."""
    path = Path(path)
    if not path.is_dir():
        return [path]
    found = sorted(p for p in path.glob("*.json") if p.is_file())
    if not found:
        raise ConfigError(f"{path}: no saved cases (*.json) in this folder")
    return found
