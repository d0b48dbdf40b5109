"""Mutation testing of the reference modules: are the oracle's tests strong enough?

The reference defines what every implementation is judged against, so a bug in it
misjudges everyone. This script makes one plausible one-line change at a time to a
reference module (a flipped comparison, ``and`` for ``or``, an off-by-one, a dropped
condition or statement, a typo in a constant, ``match`` for ``search``, a negated ``if``,
a lost ``break``, a loop capped at 64 rounds), runs the tests that guard that module, and
reports every change the tests did not notice (a survivor).

    python tools/mutate.py                                   # every module in GUARDS
    python tools/mutate.py --module chatconform/reference/payload.py
    python tools/mutate.py --module chatconform/reference/thread.py --list

How a run stays fast on one core:

- **One collection, one fork per mutant.** The guarding tests are collected once, in one
  pytest session. Each mutant runs in a forked child that swaps the mutated code into the
  loaded module (function bodies replaced in place, changed constants rebound wherever
  they were imported, as a fresh import would), runs the selected tests and exits. No file
  is ever written: an interrupted run cannot leave a mutant behind in the checkout.
- **Only the tests that run the line.** A clean traced run records which lines of the
  module each test executes; a mutant runs only the tests that execute its statement (all
  of them for module-level code), and a mutant no test reaches survives without running.
  The tests are deterministic (the project's Hypothesis profile is derandomized), so a test
  that never reaches a line behaves the same whatever that line says.
- **Likely killers first, no shrinking.** The selected tests run until the first failure:
  the test that killed this mutant in an earlier run, then tests that killed a mutant on
  the same line, then the fastest. Hypothesis stops at its first failing example.
- **A cache.** Verdicts are kept in ``.chatconform/mutation-cache.json``, keyed by the
  mutated module and the contents of the project's code and tests, so a rerun after a
  change redoes only what the change can affect (and a previously killed mutant starts
  with its killer).

A mutant whose tests outlast the timeout counts as killed (a walk that now loops forever
is caught), and each child runs under a memory limit, so one that loops while appending
fails quickly instead of filling the machine. Mutants run one at a time unless ``--jobs``
says otherwise.

This is development tooling, outside the CI gate.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import io
import json
import os
import select
import signal
import sys
import time
import types
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".chatconform" / "mutation-cache.json"

#: The tests that guard each module: fast ones, since the selected ones run once per mutant.
GUARDS: dict[str, list[str]] = {
    "chatconform/reference/thread.py": ["tests/test_thread_reference.py"],
    "chatconform/reference/payload.py": ["tests/test_reference_payload.py", "tests/test_reference_payload_policy.py"],
    "chatconform/reference/compaction.py": ["tests/test_compaction.py"],
}

#: Mutants that cannot change behaviour, with the reason: left out of the score.
#: Keyed by (module, the stripped source line, the mutation), so edits elsewhere in the
#: module keep the entry; a key that no longer matches anything simply stops applying.
EQUIVALENT: dict[tuple[str, str, str], str] = {
}

#: Mutants that do change behaviour, left unkilled on purpose, with the reason: they
#: count as survivors in the score and are listed as accepted.
ACCEPTED: dict[tuple[str, str, str], str] = {
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


def _is_dunder_all(node: ast.AST) -> bool:
    return isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)


def _statement_lines(statement: ast.stmt) -> frozenset[int]:
    """The lines whose execution shows that ``statement`` ran: a simple statement's own
    lines; a compound statement's header and the first line of its body."""
    body = getattr(statement, "body", None)
    if not body or not isinstance(body, list):
        return frozenset(range(statement.lineno, (statement.end_lineno or statement.lineno) + 1))
    return frozenset(range(statement.lineno, max(statement.lineno, body[0].lineno - 1) + 1)) | {body[0].lineno}


@dataclass(frozen=True)
class Site:
    line: int
    column: int
    description: str
    lines: frozenset[int]  # executed lines that show the mutated code ran
    at_import: bool  # module or class level: runs when the module is imported


class _Sites(ast.NodeTransformer):
    """Walks a module in a fixed order, numbering every mutation it could make.

    With ``target`` None it only records the sites; with a number it applies that one
    mutation. Both runs walk the same fresh tree the same way, so numbers agree.
    """

    def __init__(self, target: int | None = None):
        self.target = target
        self.sites: list[Site] = []
        self.statements: list[frozenset[int]] = []  # the lines of each enclosing statement
        self.functions = 0

    def offer(self, node: ast.AST, description: str, make: Callable[[], ast.AST]) -> ast.AST | None:
        index = len(self.sites)
        self.sites.append(Site(node.lineno, node.col_offset, description, self.statements[-1],
                               self.functions == 0))
        return make() if index == self.target else None

    def visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, (ast.Import, ast.ImportFrom)) or _is_docstring(node) or _is_dunder_all(node):
            return node  # imports, docstrings and ``__all__``: declarations, not behaviour
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            inside = not isinstance(node, ast.ClassDef)
            self.functions += inside
            node.body = [self.visit(statement) for statement in node.body]
            self.functions -= inside
            return node  # annotations, decorators and bases are declarations, not behaviour
        if isinstance(node, ast.stmt):
            self.statements.append(_statement_lines(node))  # before a child is replaced
        try:
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
        finally:
            if isinstance(node, ast.stmt):
                self.statements.pop()

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
    lines: frozenset[int] = frozenset()  # lines a test must execute to run the mutated code
    at_import: bool = False  # module-level code: every test runs it

    @property
    def where(self) -> str:
        return f"{self.module}:{self.line}"

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.module, self.line_text, self.description)

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()


def mutants(module: str, root: Path = ROOT, original: str | None = None) -> list[Mutant]:
    """Every distinct mutant of one module (read under ``root``), in source order."""
    original = (root / module).read_text() if original is None else original
    lines = original.splitlines()
    baseline = ast.unparse(ast.parse(original))
    survey = _Sites()
    survey.visit(ast.parse(original))
    found: list[Mutant] = []
    seen = {baseline}
    for index, site in enumerate(survey.sites):
        tree = _Sites(target=index).visit(ast.parse(original))
        source = ast.unparse(ast.fix_missing_locations(tree))
        if source in seen:
            continue  # a change that unparses to code already tried (or to the original)
        seen.add(source)
        found.append(Mutant(module, site.line, site.column, site.description, lines[site.line - 1].strip(),
                            source, site.lines, site.at_import))
    found.sort(key=lambda m: (m.line, m.column))
    return found


def equivalence(mutant: Mutant) -> str | None:
    return EQUIVALENT.get(mutant.key)


# -- swapping a mutant into the loaded module ------------------------------------------------


class ImportBroken(Exception):
    """The mutant breaks importing the module or a module that imports from it."""


def _function(value: object) -> types.FunctionType | None:
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    return value if isinstance(value, types.FunctionType) else None


def _same(new: object, old: object) -> bool:
    if new is old:
        return True
    try:
        return type(new) is type(old) and bool(new == old)
    except Exception:
        return False


def _rebind(module: types.ModuleType, name: str, old: object, new: object) -> None:
    """``name`` now means ``new``, in the module and wherever it was imported from it."""
    for other in list(sys.modules.values()):
        namespace = getattr(other, "__dict__", None)
        if isinstance(namespace, dict) and namespace.get(name, None) is old and name in namespace:
            namespace[name] = new
    module.__dict__[name] = new


class _Swap:
    """Puts a mutated module's code into the loaded module, keeping its objects' identity:
    function bodies are swapped in place (so every reference, a subclass, a bound method
    or a ``from`` import, runs the mutated code) and changed values are rebound."""

    def __init__(self, module: types.ModuleType, filename: str):
        self.module, self.filename = module, filename
        self.created: set[int] = set()  # ids of classes the mutated module defined

    def apply(self, source: str) -> None:
        namespace: dict = {"__name__": self.module.__name__, "__file__": self.module.__file__,
                           "__package__": self.module.__package__, "__spec__": self.module.__spec__,
                           "__builtins__": __builtins__}
        try:
            exec(compile(source, self.filename, "exec"), namespace)
        except Exception as error:
            raise ImportBroken(f"{type(error).__name__}: {error}") from error
        self.created = {id(v) for v in namespace.values() if isinstance(v, type) and v.__module__ == self.module.__name__}
        old_namespace = self.module.__dict__
        for name, new in namespace.items():
            if name.startswith("__") and name.endswith("__"):
                continue
            old = old_namespace.get(name, _MISSING)
            self._assign(old_namespace, name, old, new, module_level=True)
        # (names that are not identifiers are pytest's assertion-rewriting helpers)
        for name in [n for n in old_namespace if n not in namespace and n.isidentifier() and not n.startswith("__")]:
            self._removed(name, old_namespace[name])

    def _assign(self, namespace: dict, name: str, old: object, new: object, module_level: bool,
                owner: type | None = None) -> None:
        new_function, old_function = _function(new), _function(old)
        if new_function is not None and new_function.__code__.co_filename == self.filename:
            if old_function is None or len(old_function.__code__.co_freevars) != len(new_function.__code__.co_freevars):
                raise ImportBroken(f"cannot swap {name}")  # not made by any one-line mutation
            old_function.__code__ = new_function.__code__
            old_function.__defaults__ = new_function.__defaults__
            old_function.__kwdefaults__ = new_function.__kwdefaults__
            return
        if new_function is not None:
            return  # made elsewhere (dataclass methods, imports): the same as before
        if isinstance(new, type) and id(new) in self.created:
            if not isinstance(old, type):
                raise ImportBroken(f"cannot swap class {name}")
            for attribute, value in vars(new).items():
                if attribute in ("__dict__", "__weakref__", "__doc__", "__module__", "__qualname__", "__slots__"):
                    continue
                if type(value).__name__ in ("member_descriptor", "getset_descriptor"):
                    continue
                self._assign(vars(old), attribute, vars(old).get(attribute, _MISSING), value,
                             module_level=False, owner=old)
            for attribute in [a for a in vars(old) if a not in vars(new) and not a.startswith("__")]:
                delattr(old, attribute)
            return
        if type(new).__module__ == self.module.__name__ or id(type(new)) in self.created:
            return  # an instance of one of the module's classes: the old one runs the new code
        if old is _MISSING or not _same(new, old):
            if module_level:
                _rebind(self.module, name, old, new)
            else:
                setattr(owner, name, new)

    def _removed(self, name: str, old: object) -> None:
        for other in list(sys.modules.values()):
            if other is self.module:
                continue
            namespace = getattr(other, "__dict__", None)
            if isinstance(namespace, dict) and name in namespace and namespace[name] is old:
                raise ImportBroken(f"{other.__name__} imports {name}, which the mutant no longer defines")
        del self.module.__dict__[name]


_MISSING = object()


# -- running ---------------------------------------------------------------------------


@dataclass
class Outcome:
    mutant: Mutant
    verdict: str  # "killed", "timeout" (counts as killed), "survived", "uncovered" (survived, no test runs it)
    seconds: float
    killer: str = ""  # the failing test, or why it counts as killed
    cached: bool = False


def _fingerprint_of_project(module: str) -> str:
    """The code and tests a verdict depends on, besides the mutated module itself."""
    digest = hashlib.sha256()
    for folder in ("chatconform", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative != module:
                digest.update(relative.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


class Cache:
    """Verdicts by (mutant, project) fingerprint, and each site's last killer."""

    def __init__(self, path: Path, enabled: bool):
        self.path, self.enabled = path, enabled
        self.data: dict = {"verdicts": {}, "killers": {}}
        if enabled and path.is_file():
            try:
                self.data = json.loads(path.read_text())
            except (OSError, ValueError):
                pass

    @staticmethod
    def _site(mutant: Mutant) -> str:
        return "\0".join(mutant.key)

    def verdict(self, mutant: Mutant, project: str) -> dict | None:
        return self.data["verdicts"].get(f"{mutant.fingerprint}:{project}") if self.enabled else None

    def killer(self, mutant: Mutant) -> str | None:
        return self.data["killers"].get(self._site(mutant))

    def store(self, outcome: Outcome, project: str) -> None:
        mutant = outcome.mutant
        self.data["verdicts"][f"{mutant.fingerprint}:{project}"] = {
            "verdict": outcome.verdict, "killer": outcome.killer, "seconds": round(outcome.seconds, 3)}
        if outcome.verdict == "killed" and "::" in outcome.killer:
            self.data["killers"][self._site(mutant)] = outcome.killer

    def save(self) -> None:
        if not self.enabled:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self.data, indent=0, sort_keys=True))
        temporary.replace(self.path)


def _virtual_memory_bytes() -> int:
    try:
        return int(Path("/proc/self/statm").read_text().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _quiet_child(memory_mb: int) -> None:
    """In a forked child: no output, and at most ``memory_mb`` more address space."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    sys.stdout, sys.stderr = io.StringIO(), io.StringIO()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        import resource
    except ImportError:
        return
    limit = _virtual_memory_bytes() + memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _fork(work: Callable[[Callable[[dict], None]], object], memory_mb: int) -> Child:
    """Runs ``work(say)`` in a forked child: ``say`` sends the parent a progress message,
    and what ``work`` returns is sent last, as ``{"done": ...}``."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        code = 0
        try:
            _quiet_child(memory_mb)
            pipe = os.fdopen(write, "w")

            def say(message: dict) -> None:
                pipe.write(json.dumps(message) + "\n")
                pipe.flush()

            say({"done": work(say)})
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(write)
    return Child(pid, read)


@dataclass
class Child:
    """A forked child seen from the parent: its messages, as they arrive."""

    pid: int
    fd: int
    buffer: bytes = b""
    closed: bool = False

    def read(self) -> list[dict]:
        """The messages that arrived (call when the pipe is readable); at the end of the
        stream ``closed`` is set."""
        chunk = os.read(self.fd, 1 << 16)
        if not chunk:
            self.closed = True
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        return [json.loads(line) for line in lines if line]

    def wait(self) -> dict | None:
        """Every message to the end; the final answer, or None if the child died first."""
        answer = None
        while not self.closed:
            for message in self.read():
                answer = message.get("done", answer)
        self.end()
        return answer

    def end(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _no_shrinking(items: list) -> None:
    """Hypothesis stops at the first failing example: a kill needs no minimal one. Passing
    runs are unchanged (the same examples, generated the same way)."""
    from hypothesis import Phase, settings

    for item in items:
        function = getattr(item, "obj", None)
        current = getattr(function, "_hypothesis_internal_use_settings", None)
        if isinstance(current, settings):
            phases = [p for p in current.phases if p in (Phase.explicit, Phase.reuse, Phase.generate)]
            function._hypothesis_internal_use_settings = settings(current, phases=phases, report_multiple_bugs=False)


def _run_items(items: list, say: Callable[[dict], None]) -> str | None:
    """Runs the items in order until one fails; the failing one's node id, or None."""
    from _pytest.runner import runtestprotocol

    for item in items:
        say({"start": item.nodeid})
        reports = runtestprotocol(item, log=False, nextitem=None)
        if any(report.failed for report in reports):
            return item.nodeid
    return None


class _FreshRun:
    """The plugin of a fresh test session in a child: no shrinking, tests in the order
    given, progress reported, stop at the first failure."""

    def __init__(self, order: list[str], say: Callable[[dict], None]):
        self.order, self.say = {test: i for i, test in enumerate(order)}, say
        self.failed: str | None = None

    def pytest_collection_modifyitems(self, items: list) -> None:
        items[:] = sorted((i for i in items if i.nodeid in self.order), key=lambda i: self.order[i.nodeid])
        _no_shrinking(items)

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self.say({"start": nodeid})

    def pytest_runtest_logreport(self, report) -> None:
        if report.failed and self.failed is None:
            self.failed = report.nodeid


def _fresh_session(mutant: Mutant, tests: list[str], say: Callable[[dict], None]) -> str | None:
    """In a child: the project's modules and tests imported afresh, the mutant in place of
    the module, and the tests run in a new session. For module-level code, whose values
    other modules may have used while they were imported (a fresh import is the faithful
    way to see its effect)."""
    import importlib.abc
    import importlib.util

    import pytest

    name = mutant.module.removesuffix(".py").replace("/", ".")
    for loaded in [n for n, m in sys.modules.items()
                   if n.split(".")[0] in ("chatconform", "tests") or
                   str(getattr(m, "__file__", "") or "").startswith(str(ROOT / "tests"))]:
        del sys.modules[loaded]

    class Loader(importlib.abc.Loader):
        def create_module(self, spec):
            return None

        def exec_module(self, module):
            exec(compile(mutant.source, str(ROOT / mutant.module), "exec"), module.__dict__)

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path, target=None):
            if fullname != name:
                return None
            return importlib.util.spec_from_file_location(fullname, ROOT / mutant.module, loader=Loader())

    sys.meta_path.insert(0, Finder())
    plugin = _FreshRun(tests, say)
    files = sorted({test.split("::")[0] for test in tests})
    # Plain asserts: pytest's rewriting import hook would load the module from disk.
    code = pytest.main(["-q", "-x", "--assert=plain", "-p", "no:randomly", "-p", "no:cacheprovider", *files],
                       plugins=[plugin])
    if plugin.failed:
        return plugin.failed
    return None if code == 0 else f"(the fresh session ended with pytest exit {int(code)})"


def _traced_baseline(items: list, filename: str) -> list[dict]:
    """Every item on the clean module, traced: passed, seconds, the module's lines it ran."""
    import threading

    lines: set[int] = set()

    def local(frame, event, arg):
        if event == "line":
            lines.add(frame.f_lineno)
        return local

    def tracer(frame, event, arg):
        if frame.f_code.co_filename == filename:
            lines.add(frame.f_lineno)
            return local
        return None

    from _pytest.runner import runtestprotocol

    found = []
    sys.settrace(tracer)
    threading.settrace(tracer)
    try:
        for item in items:
            lines.clear()
            start = time.perf_counter()
            reports = runtestprotocol(item, log=False, nextitem=None)
            found.append({"test": item.nodeid, "passed": not any(r.failed for r in reports),
                          "seconds": time.perf_counter() - start, "lines": sorted(lines)})
    finally:
        sys.settrace(None)
        threading.settrace(None)
    return found


#: Seconds a fresh session may take to import and collect, on top of its tests' budgets.
_FRESH_SESSION_SECONDS = 15.0


class Runner:
    """The pytest plugin that takes over the test loop: baseline, then every mutant."""

    def __init__(self, module: str, options: argparse.Namespace):
        self.module, self.options = module, options
        self.filename = str(ROOT / module)
        self.source = (ROOT / module).read_text()  # edits made during the run do not mix in
        self.outcomes: list[Outcome] = []
        self.failed: str | None = None

    def pytest_runtestloop(self, session) -> bool:
        import importlib

        items = list(session.items)
        if not items:
            self.failed = "no tests collected"
            return True
        _no_shrinking(items)
        name = self.module.removesuffix(".py").replace("/", ".")
        module = importlib.import_module(name)
        if os.path.realpath(module.__file__) != os.path.realpath(self.filename):
            self.failed = f"{name} is imported from {module.__file__}, not from this checkout"
            return True
        self.run(items, module)
        return True

    def budget(self, test: str) -> float:
        """Seconds one test may take under a mutant before it counts as hung."""
        return self.options.timeout or 2 * self.seconds[test] + 3

    def run(self, items: list, module: types.ModuleType) -> None:
        options = self.options
        start = time.perf_counter()
        baseline = _fork(lambda say: _traced_baseline(items, self.filename), options.memory_mb).wait()
        if baseline is None:
            self.failed = "the traced clean run crashed"
            return
        broken = [row["test"] for row in baseline if not row["passed"]]
        if broken:
            self.failed = "the guarding tests fail without any mutant: " + ", ".join(broken)
            return
        by_id = {item.nodeid: item for item in items}
        self.seconds = {row["test"]: row["seconds"] for row in baseline}
        runs = {row["test"]: frozenset(row["lines"]) for row in baseline}
        print(f"{self.module}: clean traced run {time.perf_counter() - start:.1f}s, {len(items)} tests",
              flush=True)

        found = mutants(self.module, original=self.source)
        project = _fingerprint_of_project(self.module)
        cache = Cache(CACHE, not options.no_cache)
        line_killers: dict[int, set[str]] = defaultdict(set)
        pending: list[tuple[Mutant, list[str]]] = []
        for mutant in found:
            tests = [t for t in self.seconds if mutant.at_import or runs[t] & mutant.lines]
            cached = cache.verdict(mutant, project)
            if cached is not None:
                self.outcomes.append(Outcome(mutant, cached["verdict"], cached["seconds"], cached["killer"], True))
            elif not tests:
                self.outcomes.append(Outcome(mutant, "uncovered", 0.0, "no guarding test runs this line"))
            else:
                pending.append((mutant, tests))
        print(f"{self.module}: {len(found)} mutants, {len(found) - len(pending)} known without running "
              f"(cached or reached by no test), {len(pending)} to run; tests: {' '.join(self.options.guards)}",
              flush=True)

        def order(mutant: Mutant, tests: list[str]) -> list[str]:
            hint = cache.killer(mutant)
            return sorted(tests, key=lambda t: (t != hint, t not in line_killers[mutant.line], self.seconds[t]))

        def work(mutant: Mutant, tests: list[str]) -> Callable[[Callable[[dict], None]], object]:
            def inside(say: Callable[[dict], None]) -> object:
                if mutant.at_import:
                    return {"killer": _fresh_session(mutant, tests, say)}
                try:
                    _Swap(module, self.filename).apply(mutant.source)
                except ImportBroken as error:
                    return {"killer": f"(import: {error})"}
                return {"killer": _run_items([by_id[t] for t in tests], say)}
            return inside

        running: dict[int, tuple[Child, Mutant, float, list[float]]] = {}  # fd -> child, mutant, start, [deadline]
        queue = list(pending)
        try:
            while queue or running:
                while queue and len(running) < max(1, options.jobs):
                    mutant, tests = queue.pop(0)
                    child = _fork(work(mutant, order(mutant, tests)), options.memory_mb)
                    now = time.perf_counter()
                    setup = _FRESH_SESSION_SECONDS if mutant.at_import else 5.0
                    running[child.fd] = (child, mutant, now, [now + setup])
                wait = max(0.0, min(state[3][0] for state in running.values()) - time.perf_counter())
                ready, _, _ = select.select(list(running), [], [], wait)
                now = time.perf_counter()
                for fd in list(running):
                    child, mutant, began, deadline = running[fd]
                    outcome = None
                    if fd in ready:
                        for message in child.read():
                            if "start" in message:
                                deadline[0] = time.perf_counter() + self.budget(message["start"])
                            elif "done" in message:
                                killer = message["done"]["killer"]
                                outcome = Outcome(mutant, "killed" if killer else "survived", now - began,
                                                  killer or "")
                        if outcome is None and child.closed:
                            outcome = Outcome(mutant, "killed", now - began, "(the test run crashed)")
                    if outcome is None and now >= deadline[0]:
                        outcome = Outcome(mutant, "timeout", now - began, "(timeout)")
                    if outcome is None:
                        continue
                    child.end()
                    del running[fd]
                    if outcome.verdict == "killed" and "::" in outcome.killer:
                        line_killers[mutant.line].add(outcome.killer)
                    cache.store(outcome, project)
                    self.outcomes.append(outcome)
                    mark = {"killed": ".", "timeout": "T", "survived": "S"}[outcome.verdict]
                    print(mark, end="", flush=True)
        finally:
            for child, *_rest in running.values():
                child.end()
            cache.save()
        print()


def report(module: str, outcomes: list[Outcome], seconds: float) -> int:
    """Prints the score and every survivor; the number of unexplained survivors."""
    outcomes = sorted(outcomes, key=lambda o: (o.mutant.line, o.mutant.column))
    equivalent = {id(o): equivalence(o.mutant) for o in outcomes}
    counted = [o for o in outcomes if not equivalent[id(o)]]
    killed = sum(o.verdict in ("killed", "timeout") for o in counted)
    hung = sum(o.verdict == "timeout" for o in counted)
    score = 100.0 * killed / len(counted) if counted else 100.0
    cached = sum(o.cached for o in outcomes)
    print(f"{module}: {killed}/{len(counted)} non-equivalent mutants killed ({score:.1f}%), "
          f"{hung} by timeout; {len(outcomes) - len(counted)} marked equivalent; "
          f"{cached} verdicts from the cache; {seconds:.0f}s")
    unexplained = 0
    for outcome in outcomes:
        note = equivalent[id(outcome)]
        accepted = ACCEPTED.get(outcome.mutant.key)
        survived = outcome.verdict in ("survived", "uncovered")
        if survived or note:
            if note:
                status = f"equivalent: {note}"
            elif accepted:
                status = f"accepted: {accepted}"
            else:
                unexplained += 1
                status = "SURVIVED" if outcome.verdict == "survived" else "SURVIVED (no guarding test runs this line)"
            print(f"  {outcome.mutant.where}  {outcome.mutant.description}  [{status}]")
    return unexplained


def run_module(module: str, options: argparse.Namespace) -> int:
    import pytest

    runner = Runner(module, options)
    start = time.perf_counter()
    code = pytest.main(["-q", "-p", "no:randomly", "-p", "no:cacheprovider", *options.guards], plugins=[runner])
    if runner.failed:
        print(f"{module}: {runner.failed}", file=sys.stderr)
        return 2
    if code not in (0, pytest.ExitCode.OK) and not runner.outcomes:
        print(f"{module}: pytest could not collect the guarding tests (exit {code})", file=sys.stderr)
        return 2
    report(module, runner.outcomes, time.perf_counter() - start)
    return 0


def _interrupted(signum, frame) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--module", action="append", help="module to mutate (repeatable; default: all in GUARDS)")
    parser.add_argument("--list", action="store_true", help="print the mutants without running anything")
    parser.add_argument("--jobs", type=int, default=1, help="mutants run at once (default 1)")
    parser.add_argument("--timeout", type=float, help="seconds per mutant (default: 3x its tests' clean traced run "
                                                      "plus 10, at least 20)")
    parser.add_argument("--memory-mb", type=int, default=4096, help="extra address space each mutant may use")
    parser.add_argument("--pytest-args", help="tests to run instead of the module's GUARDS entry")
    parser.add_argument("--no-cache", action="store_true", help="run every mutant, ignoring and keeping no cache")
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
    signal.signal(signal.SIGTERM, _interrupted)  # a killed terminal stops the run as Ctrl-C does
    if len(modules) > 1:  # one process a module: each imports its tests afresh
        import subprocess

        shared = [f"--jobs={options.jobs}", f"--memory-mb={options.memory_mb}"]
        shared += [f"--timeout={options.timeout}"] if options.timeout else []
        shared += [f"--pytest-args={options.pytest_args}"] if options.pytest_args else []
        shared += ["--no-cache"] if options.no_cache else []
        return max(subprocess.call([sys.executable, __file__, *shared, "--module", module]) for module in modules)
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    options.guards = options.pytest_args.split() if options.pytest_args else GUARDS[modules[0]]
    try:
        return run_module(modules[0], options)
    except KeyboardInterrupt:
        print("\ninterrupted: nothing was written but the cache", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
