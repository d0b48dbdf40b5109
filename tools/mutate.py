"""Mutation testing of the reference modules: are the oracle's tests strong enough?

The reference defines what every implementation is judged against, so a bug in it
misjudges everyone. This script makes one plausible one-line change at a time to a
reference module (a flipped comparison, ``and`` for ``or``, an off-by-one, a dropped
condition or statement, a typo in a constant, ``match`` for ``search``, a negated ``if``,
a lost ``break``, a loop capped at 64 rounds), runs the tests that guard that module, and
reports every change the tests did not notice (a survivor).

    python tools/mutate.py                                   # every module in GUARDS
    python tools/mutate.py --module chatconform/reference/thread.py --jobs 2
    python tools/mutate.py --module chatconform/reference/thread.py --list

Mutants run in scratch copies of the project, one per job, so the checkout itself is
never written: an interrupted run (Ctrl-C, a killed terminal) cannot leave a mutant
behind. Within a copy the module is restored after every mutant. A mutant whose tests
outlast ``--timeout`` counts as killed (a walk that now loops forever is caught), and
the tests run under a memory limit, so one that loops while appending fails quickly
instead of filling the machine.

This is development tooling, outside the CI gate: a run takes minutes.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The tests that guard each module: fast ones, since they run once per mutant.
GUARDS: dict[str, list[str]] = {
    "chatconform/reference/thread.py": ["tests/test_thread_reference.py"],
    "chatconform/reference/payload.py": ["tests/test_reference_payload.py", "tests/test_reference_payload_policy.py"],
}

#: Mutants that cannot change behaviour, or whose change is accepted, with the reason.
#: Keyed by (module, the stripped source line, the mutation), so edits elsewhere in the
#: module keep the entry; a key that no longer matches anything simply stops applying.
EQUIVALENT: dict[tuple[str, str, str], str] = {
}

_SWAPS: dict[type, tuple[type, ...]] = {
    ast.Eq: (ast.NotEq,), ast.NotEq: (ast.Eq,),
    ast.Lt: (ast.LtE, ast.Gt), ast.LtE: (ast.Lt, ast.GtE),
    ast.Gt: (ast.GtE, ast.Lt), ast.GtE: (ast.Gt, ast.LtE),
    ast.In: (ast.NotIn,), ast.NotIn: (ast.In,),
    ast.Is: (ast.IsNot,), ast.IsNot: (ast.Is,),
}
_SYMBOLS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
            ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}
_REGEX_SWAPS = {"match": ("search", "fullmatch"), "search": ("match",), "fullmatch": ("match",)}
_DROPPABLE = (ast.Assign, ast.AugAssign, ast.Expr, ast.If, ast.For, ast.While, ast.Break,
              ast.Continue, ast.Return, ast.Raise)
_LOOP_CAP = 64


def _short(node: ast.AST, limit: int = 40) -> str:
    text = ast.unparse(node)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _typo(text: str) -> str:
    """The string with its last character changed, as a mistyped constant would be."""
    if not text:
        return "x"
    last = text[-1]
    return text[:-1] + ("1" if last == "0" else "0" if last.isdigit() else chr(ord(last) ^ 1))


def _is_docstring(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


class _Sites(ast.NodeTransformer):
    """Walks a module in a fixed order, numbering every mutation it could make.

    With ``target`` None it only records the sites; with a number it applies that one
    mutation. Both runs walk the same fresh tree the same way, so numbers agree.
    """

    def __init__(self, target: int | None = None):
        self.target = target
        self.sites: list[tuple[int, int, str]] = []  # (line, column, description)

    def offer(self, node: ast.AST, description: str, make: Callable[[], ast.AST]) -> ast.AST | None:
        index = len(self.sites)
        self.sites.append((node.lineno, node.col_offset, description))
        return make() if index == self.target else None

    def visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, (ast.Import, ast.ImportFrom)) or _is_docstring(node):
            return node  # imports and docstrings: nothing a test could notice
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            node.body = [self.visit(statement) for statement in node.body]
            return node  # annotations, decorators and bases are declarations, not behaviour
        if isinstance(node, ast.AnnAssign):
            if node.value is not None:
                node.value = self.visit(node.value)
            return node
        self.generic_visit(node)
        for description, make in self.options(node):
            replaced = self.offer(node, description, make)
            if replaced is not None:
                return ast.copy_location(replaced, node) if hasattr(replaced, "lineno") else replaced
        return node

    def options(self, node: ast.AST) -> Iterator[tuple[str, Callable[[], ast.AST]]]:
        yield from _operator_options(node)
        yield from _constant_options(node)
        yield from _statement_options(node)


def _operator_options(node: ast.AST) -> Iterator[tuple[str, Callable[[], ast.AST]]]:
    if isinstance(node, ast.Compare):
        for position, op in enumerate(node.ops):
            for other in _SWAPS.get(type(op), ()):
                def swap(position=position, other=other):
                    node.ops[position] = other()
                    return node
                yield f"`{_SYMBOLS[type(op)]}` -> `{_SYMBOLS[other]}`", swap
    elif isinstance(node, ast.BoolOp):
        name, other = ("and", ast.Or) if isinstance(node.op, ast.And) else ("or", ast.And)
        yield f"`{name}` -> `{'or' if name == 'and' else 'and'}`", lambda: ast.BoolOp(other(), node.values)
        for position, value in enumerate(node.values):
            def drop(position=position):
                rest = node.values[:position] + node.values[position + 1:]
                return rest[0] if len(rest) == 1 else ast.BoolOp(node.op, rest)
            yield f"drop condition `{_short(value)}`", drop
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield f"drop `not` in `{_short(node)}`", lambda: node.operand
    elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        other, symbol = (ast.Sub, "-") if isinstance(node.op, ast.Add) else (ast.Add, "+")
        yield f"`{_short(node)}`: operator -> `{symbol}`", lambda: ast.BinOp(node.left, other(), node.right)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        for other in _REGEX_SWAPS.get(node.func.attr, ()):
            def rename(other=other):
                node.func.attr = other
                return node
            yield f"`.{node.func.attr}(` -> `.{other}(`", rename
    elif isinstance(node, (ast.If, ast.IfExp)):
        yield f"negate `if {_short(node.test)}`", lambda: _negated(node)
    elif isinstance(node, ast.While):
        if not (isinstance(node.test, ast.Constant) and node.test.value):
            yield f"negate `while {_short(node.test)}`", lambda: _negated(node)
        yield f"cap `while {_short(node.test)}` at {_LOOP_CAP} rounds", lambda: _capped(node)


def _negated(node: ast.If | ast.IfExp | ast.While) -> ast.AST:
    node.test = ast.UnaryOp(ast.Not(), node.test)
    return node


def _capped(loop: ast.While) -> ast.For:
    """``while test: body`` as ``for _ in range(64): if not test: break; body``."""
    stop = ast.If(ast.UnaryOp(ast.Not(), loop.test), [ast.Break()], [])
    return ast.For(ast.Name("_mutant_round", ast.Store()),
                   ast.Call(ast.Name("range", ast.Load()), [ast.Constant(_LOOP_CAP)], []),
                   [stop, *loop.body], loop.orelse, None)


def _constant_options(node: ast.AST) -> Iterator[tuple[str, Callable[[], ast.AST]]]:
    if not isinstance(node, ast.Constant):
        return
    value = node.value
    if isinstance(value, bool):
        yield f"`{value}` -> `{not value}`", lambda: ast.Constant(not value)
    elif isinstance(value, int):
        yield f"`{value}` -> `{value + 1}`", lambda: ast.Constant(value + 1)
        yield f"`{value}` -> `{value - 1}`", lambda: ast.Constant(value - 1)
    elif isinstance(value, str):
        typo = _typo(value)
        yield f"{_short(node)} -> {typo!r}", lambda: ast.Constant(typo)


def _statement_options(node: ast.AST) -> Iterator[tuple[str, Callable[[], ast.AST]]]:
    if isinstance(node, _DROPPABLE) and not _is_docstring(node):
        first_line = ast.unparse(node).splitlines()[0]
        yield f"drop statement `{first_line[:40]}`", ast.Pass


@dataclass(frozen=True)
class Mutant:
    module: str  # path relative to the project root
    line: int
    column: int
    description: str
    line_text: str  # the original source line, stripped: how EQUIVALENT names the site
    source: str  # the whole mutated module

    @property
    def where(self) -> str:
        return f"{self.module}:{self.line}"


def mutants(module: str, root: Path = ROOT) -> list[Mutant]:
    """Every distinct mutant of one module (read under ``root``), in source order."""
    original = (root / module).read_text()
    lines = original.splitlines()
    baseline = ast.unparse(ast.parse(original))
    survey = _Sites()
    survey.visit(ast.parse(original))
    found: list[Mutant] = []
    seen = {baseline}
    for index, (line, column, description) in enumerate(survey.sites):
        tree = _Sites(target=index).visit(ast.parse(original))
        source = ast.unparse(ast.fix_missing_locations(tree))
        if source in seen:
            continue  # a change that unparses to code already tried (or to the original)
        seen.add(source)
        found.append(Mutant(module, line, column, description, lines[line - 1].strip(), source))
    found.sort(key=lambda m: (m.line, m.column))
    return found


def equivalence(mutant: Mutant) -> str | None:
    return EQUIVALENT.get((mutant.module, mutant.line_text, mutant.description))


# -- running ---------------------------------------------------------------------------


def _scratch_copy() -> Path:
    """A copy of the project to mutate, without VCS data, caches or saved failures."""
    target = Path(tempfile.mkdtemp(prefix="chatconform-mutate-"))
    ignore = shutil.ignore_patterns(".git", ".venv", "__pycache__", ".chatconform", ".hypothesis",
                                    ".pytest_cache", "*.egg-info")
    shutil.copytree(ROOT, target / "project", ignore=ignore)
    return target / "project"


def _environment(project: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(project), *filter(None, [env.get("PYTHONPATH")])])
    env.pop("CI", None)  # Hypothesis' ci profile must not change the tests' settings
    return env


def _limit_memory(megabytes: int) -> Callable[[], None] | None:
    try:
        import resource
    except ImportError:  # not on this platform: run without a limit
        return None

    def apply() -> None:
        limit = megabytes * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


@dataclass
class Outcome:
    mutant: Mutant
    verdict: str  # "killed", "timeout" (counts as killed), "survived", "error"
    seconds: float


class Worker:
    """One scratch copy of the project; runs the guarding tests against one mutant at a time."""

    def __init__(self, timeout: float, memory_mb: int):
        self.project = _scratch_copy()
        self.timeout, self.memory_mb = timeout, memory_mb
        self.process: subprocess.Popen | None = None

    def pytest(self, args: list[str], timeout: float) -> tuple[int | None, float]:
        start = time.perf_counter()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:randomly", *args],
            cwd=self.project, env=_environment(self.project), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True, preexec_fn=_limit_memory(self.memory_mb))
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            code = None
        self.process = None
        return code, time.perf_counter() - start

    def run(self, mutant: Mutant, args: list[str]) -> Outcome:
        path = self.project / mutant.module
        original = path.read_text()
        try:
            path.write_text(mutant.source)
            code, seconds = self.pytest(args, self.timeout)
        finally:
            path.write_text(original)
        if code is None:
            return Outcome(mutant, "timeout", seconds)
        # pytest: 0 all passed, 1 a test failed, 2 interrupted (e.g. an import error), 5 no tests
        verdict = "survived" if code == 0 else "error" if code in (3, 4, 5) else "killed"
        return Outcome(mutant, verdict, seconds)

    def kill(self) -> None:
        process = self.process
        if process is not None and process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)  # the pytest run and anything it started
            process.wait()

    def close(self) -> None:
        self.kill()
        shutil.rmtree(self.project.parent, ignore_errors=True)


def _baseline(worker: Worker, module: str, args: list[str]) -> float:
    """The guarding tests must pass on the unmutated module; their time sets the default timeout."""
    code, seconds = worker.pytest(args, 600)
    if code != 0:
        sys.exit(f"the tests guarding {module} fail without any mutant (pytest exit {code}): "
                 f"{' '.join(args)}")
    return seconds


def run_module(module: str, args: list[str], workers: list[Worker], jobs: int) -> list[Outcome]:
    found = mutants(module, workers[0].project)  # the copy: edits made meanwhile do not mix in
    print(f"{module}: {len(found)} mutants, tests: {' '.join(args)}", flush=True)
    pending = iter(found)
    lock, stop = threading.Lock(), threading.Event()
    outcomes: list[Outcome] = []

    def next_mutant() -> Mutant | None:
        with lock:  # each mutant goes to exactly one worker
            return None if stop.is_set() else next(pending, None)

    def drain(worker: Worker) -> None:
        while (mutant := next_mutant()) is not None:
            outcome = worker.run(mutant, args)
            outcomes.append(outcome)
            mark = {"killed": ".", "timeout": "T", "survived": "S", "error": "E"}[outcome.verdict]
            print(mark, end="", flush=True)

    with ThreadPoolExecutor(jobs) as pool:
        futures = [pool.submit(drain, worker) for worker in workers]
        try:
            for future in futures:
                future.result()
        except BaseException:
            # Ctrl-C: hand out no more mutants and end the running test runs, so leaving
            # the pool does not wait for the rest of the module.
            stop.set()
            for worker in workers:
                worker.kill()
            raise
    print()
    outcomes.sort(key=lambda o: (o.mutant.line, o.mutant.column))
    return outcomes


def report(module: str, outcomes: list[Outcome]) -> None:
    equivalent = {id(o): equivalence(o.mutant) for o in outcomes}
    counted = [o for o in outcomes if not equivalent[id(o)]]
    killed = sum(o.verdict in ("killed", "timeout") for o in counted)
    hung = sum(o.verdict == "timeout" for o in counted)
    score = 100.0 * killed / len(counted) if counted else 100.0
    print(f"{module}: {killed}/{len(counted)} non-equivalent mutants killed ({score:.1f}%), "
          f"{hung} by timeout; {len(outcomes) - len(counted)} marked equivalent")
    for outcome in outcomes:
        note = equivalent[id(outcome)]
        if outcome.verdict in ("survived", "error") or note:
            status = f"equivalent: {note}" if note else outcome.verdict.upper()
            print(f"  {outcome.mutant.where}  {outcome.mutant.description}  [{status}]")


def _interrupted(signum, frame) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--module", action="append", help="module to mutate (repeatable; default: all in GUARDS)")
    parser.add_argument("--list", action="store_true", help="print the mutants without running anything")
    parser.add_argument("--jobs", type=int, default=1, help="mutants run at once (one scratch copy each)")
    parser.add_argument("--timeout", type=float, help="seconds per mutant (default: 5x the clean run, at least 20)")
    parser.add_argument("--memory-mb", type=int, default=4096, help="address-space limit of each test run")
    parser.add_argument("--pytest-args", help="tests to run instead of the module's GUARDS entry")
    options = parser.parse_args(argv)
    modules = options.module or list(GUARDS)
    for module in modules:
        if not (ROOT / module).is_file():
            parser.error(f"no such module: {module}")
        if module not in GUARDS and not options.pytest_args:
            parser.error(f"no tests are known to guard {module}: add it to GUARDS or pass --pytest-args")
    if options.list:
        for module in modules:
            for mutant in mutants(module):
                note = equivalence(mutant)
                print(f"{mutant.where}:{mutant.column}  {mutant.description}" + (f"  [equivalent: {note}]" if note else ""))
        return 0
    signal.signal(signal.SIGTERM, _interrupted)  # a killed terminal cleans up as Ctrl-C does
    workers: list[Worker] = []
    try:
        workers = [Worker(options.timeout or 0, options.memory_mb) for _ in range(max(1, options.jobs))]
        for module in modules:
            args = options.pytest_args.split() if options.pytest_args else GUARDS[module]
            clean = _baseline(workers[0], module, args)
            for worker in workers:
                worker.timeout = options.timeout or max(20.0, 5 * clean)
            report(module, run_module(module, args, workers, len(workers)))
    except KeyboardInterrupt:
        print("\ninterrupted: the checkout was never modified; scratch copies removed", file=sys.stderr)
        return 130
    finally:
        for worker in workers:
            worker.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
