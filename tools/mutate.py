"""Mutation testing of the reference modules: are the oracle's tests strong enough?

The reference defines what every implementation is judged against, so a bug in it
misjudges everyone. This script makes one plausible one-line change at a time to a
reference module (a flipped comparison, ``and`` for ``or``, an off-by-one, a dropped
condition or statement, a typo in a constant, ``match`` for ``search``, a negated ``if``,
a lost ``break``, a loop capped at 64 rounds), runs the tests that guard that module, and
reports every change the tests did not notice (a survivor).

    python tools/mutate.py                                   # every reference module, and the dialects
    python tools/mutate.py --module chatconform/reference/payload.py
    python tools/mutate.py --module chatconform/reference/thread.py --list

How a run stays fast on one core:

- **One collection, one fork per mutant.** The guarding tests are collected once, in one
  pytest session. Each mutant runs in a forked child that swaps the mutated code into the
  loaded module (function bodies replaced in place, changed values rebound wherever they
  were imported), runs the selected tests and exits. A mutant of module-level code (a
  constant other modules may have used while they were imported) gets a fresh import of
  the project and a new test session in its child instead. No source file is ever
  written: an interrupted run cannot leave a mutant behind in the checkout.
- **Only the tests that run the line.** A clean traced run records which lines of the
  module each test executes; a mutant runs only the tests that execute its statement (all
  of them for module-level code), and a mutant no test reaches survives without running.
  The tests are deterministic (the project's Hypothesis profile is derandomized), so a test
  that never reaches a line behaves the same whatever that line says.
- **Only the fast tests.** A guarding file's tests marked ``slow`` are left out: they count
  what the ``ci`` stream generates (a whole search each, half a minute), which no mutant of
  the reference changes, and every mutant they reach would run them.
- **Likely killers first, no shrinking.** The selected tests run until the first failure:
  the test that killed a mutant at this site in an earlier run, then tests that killed a
  mutant on the same line, then the quickest per kill so far. Hypothesis stops at its
  first failing example.
- **A cache of each test's result.** ``.chatconform/mutation-cache.json`` keeps each
  test's result under each mutant, and each test's clean trace, keyed by the mutated
  module, the rest of the project's code (with the tests' shared files) and the test's own
  file. A rerun runs only what a change can affect: after a test file is edited, that
  file's tests; after the code changes, everything. ``--no-cache`` ignores it.

When a module's run with its own guard tests ends, its score goes to
``tools/mutation-scores.json``, from which ``tools/generate_docs.py`` writes the mutation
tables of README.md and docs/mutation.md.

A mutant whose tests outlast the timeout counts as killed (a walk that now loops forever
is caught), and each child runs under a memory limit, so one that loops while appending
fails quickly instead of filling the machine. Mutants run one at a time unless ``--jobs``
says otherwise.

This is development tooling, outside the CI gate.
"""

from __future__ import annotations

import argparse
import ast
import copy
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
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".chatconform" / "mutation-cache.json"
#: Each module's last score, which the docs' mutation tables are generated from
#: (``tools/generate_docs.py``): written when a module's run with its guard tests ends.
SCORES = ROOT / "tools" / "mutation-scores.json"

#: The reference modules no one contract owns, with the fast tests that guard them: the
#: package module gathers every contract's reference into ``ReferenceImplementation``.
SHARED_GUARDS: dict[str, tuple[str, ...]] = {
    "chatconform/reference/__init__.py": ("tests/reference/test_reference_package.py",),
}
#: The dialect modules write the payload reference's bodies and read them back, so they are
#: part of the oracle: each is guarded by these tests and its own ``tests/dialects/test_<name>.py``
#: (``base`` by these alone). Their HTTP answers are not: ``http`` and ``eventstream`` are left out.
DIALECT_GUARDS = ("tests/reference/test_payload.py", "tests/reference/test_payload_policy.py",
                  "tests/reference/test_payload_files.py", "tests/provider_schemas/test_turn_view.py",
                  "tests/dialects/test_dialects.py")
_NOT_ORACLE = ("__init__", "http", "eventstream")


def dialect_guards() -> dict[str, list[str]]:
    """The tests that guard each dialect module that renders or reads bodies."""
    found = {}
    for path in sorted((ROOT / "chatconform" / "dialects").glob("*.py")):
        if path.stem not in _NOT_ORACLE:
            own = [] if path.stem == "base" else [f"tests/dialects/test_{path.stem}.py"]
            found[path.relative_to(ROOT).as_posix()] = [*DIALECT_GUARDS, *own]
    return found


def guards() -> dict[str, list[str]]:
    """The tests that guard each reference module, from the contracts: each contract names
    its reference module and the fast tests that pin it (``Contract.reference_module``,
    ``Contract.guard_tests``), since the selected ones run once per mutant; then the
    modules of :data:`SHARED_GUARDS` and the dialect modules (:func:`dialect_guards`)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))  # this checkout's package, not an installed one
    from chatconform.contracts import all_contracts

    found: dict[str, list[str]] = {path: list(tests) for path, tests in SHARED_GUARDS.items()}
    found.update(dialect_guards())
    for contract in all_contracts().values():
        if contract.reference_module is not None:
            path = contract.reference_module.replace(".", "/") + ".py"
            found.setdefault(path, [])
            found[path] += [test for test in contract.guard_tests if test not in found[path]]
    return found


#: Mutants that cannot change behaviour, with the reason: left out of the score. Keyed by
#: (module, the enclosing function's qualified name, the change, the code that holds it:
#: the expression around a changed constant, with the constant in brackets, or the block
#: header above a dropped statement; widened to the statement's first line only where two
#: like changes of one function share that code). Edits elsewhere, lines moved, comments
#: and layout keep the entry; an edit to the code itself makes a key that no longer
#: matches anything, which simply stops applying. ``--list`` prints each mutant's key.
_PAYLOAD = "chatconform/reference/payload.py"
_COMPACTION = "chatconform/reference/compaction.py"
_TRIM = "chatconform/reference/trim.py"
_REPAIR = "chatconform/reference/repair.py"
_SANITIZE = "chatconform/reference/sanitize.py"
_PACKAGE = "chatconform/reference/__init__.py"
_ANTHROPIC = "chatconform/dialects/anthropic_messages.py"
_BEDROCK = "chatconform/dialects/bedrock_converse.py"
_LAST_IS_TEXT = ("an assistant message is last only when it holds no tool call (every call is followed by "
                 "its result), so each of its blocks is text")
_SAME_KIND = ("a turn never mixes results with other items (tool turns hold only results, user turns none, "
              "and Gemini never merges the two), so its first and last items are of one kind")
_UNREACHED = ("part_items is only called for parts part_role gives a voice, and it has a branch for each "
              "of those: the line is out of reach of to_payload")
_EARLY_SKIP = "a response's parts are never user prompts, which the next test skips too: the early skip saves the walk"
EQUIVALENT: dict[tuple[str, str, str, str], str] = {
    (_PAYLOAD, "Turn", "drop statement `__slots__ = ('role',)`", "<body>"):
        "slots save memory a turn; the role is set and read the same without them",
    (_PAYLOAD, "_json_copy", "drop statement `if isinstance(value, str):`", "<body>"):
        "a string's JSON round trip gives an equal string: the shortcut saves the copy",
    (_PAYLOAD, "_json_copy", "drop statement `return value`", "if isinstance(value, str):"):
        "a string's JSON round trip gives an equal string: the shortcut saves the copy",
    (_PAYLOAD, "_json_copy", "`False` -> `True`", "json.dumps(value, ensure_ascii=[False])"):
        "the JSON round trip gives back the same characters whether or not it escapes them on the way",
    (_PAYLOAD, "links_sent_as_text", "drop statement `continue`", "if not isinstance(message, ModelRequest):"):
        _EARLY_SKIP,
    (_PAYLOAD, "links_sent_as_text", "drop statement `if not isinstance(message, ModelRequest)`",
     "for message in history:"):
        _EARLY_SKIP,
    (_PAYLOAD, "links_sent_as_text", "drop condition `isinstance(part.content, str)`",
     "not isinstance(part, UserPromptPart) or isinstance(part.c..."):
        "a string prompt's characters are strings, never links: the early skip saves the walk",
    (_PAYLOAD, "PayloadMapper.file_part", "drop condition `b''`", "item.data or b''"):
        "a file without a URL always holds its bytes (its data is never None here)",
    (_PAYLOAD, "_arguments", "`200` -> `201`", ":[200]"):
        "the serializer's messages are far shorter than the 200 characters kept",
    (_PAYLOAD, "_arguments", "`200` -> `199`", ":[200]"):
        "the serializer's messages are far shorter than the 200 characters kept",
    (_PAYLOAD, "PayloadMapper.to_payload", "drop statement `get_provider(provider)`", "<body>"):
        "merges_turns looks the provider up on every path before anything is returned, so an unknown id "
        "still raises the same UnknownProvider",
    (_PAYLOAD, "PayloadMapper.part_role", "drop statement `return None`", "<body>"):
        "the function then falls off its end, which returns None too",
    (_PAYLOAD, "PayloadMapper.part_items", "drop statement `raise TypeError(f'no items for {type(par`", "<body>"):
        _UNREACHED,
    (_PAYLOAD, "PayloadMapper.part_items", "'no items for ' -> 'no items for!'",
     "f'[no items for ]{type(part).__name__}'"):
        _UNREACHED,
    (_PAYLOAD, "PayloadMapper.turns", "drop statement `continue`", "if isinstance(part, ToolReturnPart):"):
        "the part then reaches part_role, which gives a ToolReturnPart no voice, and is skipped just the "
        "same",
    (_PAYLOAD, "PayloadMapper._kept_apart", "`1` -> `0`", "previous.items[-[1]]"):
        _SAME_KIND,
    (_PAYLOAD, "PayloadMapper._kept_apart", "`0` -> `-1`", "turn.items[[0]]"):
        _SAME_KIND,
    (_ANTHROPIC, "AnthropicMessages.render", "drop condition `messages[-1]['content'][-1]['type'] =...`",
     "messages and messages[-1]['role'] == 'assistant' and (mes..."):
        _LAST_IS_TEXT,
    (_ANTHROPIC, "AnthropicMessages.render", "`1` -> `0`",
     "if messages and messages[-1]['role'] == 'assistant' and (messages[-1]['content'][-[1]]['type'] ==..."):
        _LAST_IS_TEXT,
    (_BEDROCK, "BedrockConverse.render", "`1` -> `2`", "item.media_type.split('/', [1])"):
        "a media type holds one slash, so splitting at most twice splits it the same way",
    (_COMPACTION, "answered_pairs", "drop condition `isinstance(message, ModelResponse)`",
     "isinstance(message, ModelResponse) and isinstance(part, T..."):
        "a ToolCallPart is a response part: no ModelRequest holds one",
    (_COMPACTION, "answered_pairs", "drop condition `isinstance(message, ModelRequest)`",
     "isinstance(message, ModelRequest) and isinstance(part, (T..."):
        "ToolReturnPart and RetryPromptPart are request parts: no ModelResponse holds one",
    (_COMPACTION, "safe_cut", "`<` -> `<=`", "call < moved <= result"):
        "when moved == call the move sets moved to the value it already has",
    (_COMPACTION, "safe_cut", "`1` -> `0`", "pair[[1]]"):
        "latest call first is also a one-pass order: a pair visited earlier has a later call, so no "
        "later move (always to an earlier call) can land inside it",
    (_REPAIR, "match_calls", "`1` -> `0`", "pending[-[1]]"):
        "every call held for an id comes from one response: the first and the last have the same index",
    (_REPAIR, "match_calls", "`2` -> `3`", ":[2]"):
        "no two calls share a (message, part) position, so the call itself is never compared",
    (_REPAIR, "match_calls", "`<` -> `<=`", "first_call.get(tool_call_id, len(history)) < index"):
        "a call and a result are never in one message",
    (_REPAIR, "_first_calls", "drop condition `part.tool_call_id in ids`",
     "isinstance(part, ToolCallPart) and part.tool_call_id in ids"):
        "only the ids asked for are looked up: the condition keeps the table small, not the answer right",
    (_TRIM, "valid_starts", "`1` -> `2`", "depth = [0] * (n + [1])"):
        "the extra slot of the difference array is never read",
    (_TRIM, "valid_starts", "`1` -> `0`", "call + [1]"):
        "the message of the call is a response, never a start, so whether it counts as inside the pair "
        "is moot",
    (_TRIM, "valid_starts", "`1` -> `2`", "opens: list[str | None] = [None] * (n + [1])"):
        "the extra slot is never read",
    (_TRIM, "valid_starts", "`1` -> `2`", "range(n - 1, -[1], -1)"):
        "the extra pass at index -1 writes the sentinel slot after its only read (by the last message)",
    (_TRIM, "valid_starts", "`1` -> `0`", "range(n - 1, -[1], -1)"):
        "opens[0] is never read: 0 is a start whatever the history opens with",
    (_TRIM, "valid_starts", "`1` -> `2`",
     "kinds = [item.kind for item in visible_items(history[index:index + [1]]) if item.kind != 'system']"):
        "a first non-system item found in the next message is opens[index + 1], which the fallback gives "
        "anyway",
    (_SANITIZE, "Sanitizer.request_part", "'model_retry' -> 'model_retrx'",
     "replace(part.retry, cause=['model_retry'])"):
        "the cause is not kept: only model_response()'s text is, and pydantic-ai's RetryFeedbackPart.model_response "
        "fences every cause but 'no_output' and 'validation_error' as it fences a 'model_retry', in the same words",
    (_SANITIZE, "_same", "`False` -> `True`", "zip(parts, original, strict=[False])"):
        "the lengths are compared first, so zip only ever pairs lists of one length, where strict changes nothing",
    (_PACKAGE, "<module>", "'__module__' -> '__module_^'",
     "{'__doc__': 'Defines the expected behaviour of every cont..."):
        "type() sets a class's __module__ from the __name__ of the module that calls it, which is the value "
        "given: the mutant only adds an attribute nothing reads",
    (_TRIM, "trim", "`<=` -> `<`", "n <= max_messages"):
        "with n == max_messages the search that follows picks start 0 (its size n fits) and builds the "
        "same list",
}

#: Mutants that do change behaviour, left unkilled on purpose, with the reason: they
#: count as survivors in the score and are listed as accepted. Keyed as EQUIVALENT is.
ACCEPTED: dict[tuple[str, str, str, str], str] = {
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


def _short(node: ast.AST, limit: int = 40, first_line: bool = False) -> str:
    text = ast.unparse(node)
    if first_line:
        text = text.splitlines()[0] if text else text
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _marked(around: ast.AST, node: ast.AST) -> ast.AST:
    """A copy of ``around`` with ``node`` (inside it) written as ``[node]``."""
    inside_fstring = any(node in getattr(joined, "values", ()) for joined in ast.walk(around)
                         if isinstance(joined, ast.JoinedStr))
    marker = (ast.Constant(f"[{node.value}]") if inside_fstring  # type: ignore[attr-defined]
              else ast.Name(f"[{ast.unparse(node)}]", ast.Load()))
    return copy.deepcopy(around, {id(node): marker})  # the copy holds the marker where the node was


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
    scope: str = "<module>"  # the qualified name of the enclosing function or class
    context: str = ""  # the original code around the change: the expression holding it
    statement: str = ""  # the first line of the statement holding it, the change marked


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
        self.scope: list[str] = []  # the names of the enclosing functions and classes
        self.path: list[ast.AST] = []  # the nodes from the top-level statement down to this one

    def offer(self, node: ast.AST, description: str, make: Callable[[], ast.AST]) -> ast.AST | None:
        index = len(self.sites)
        self.sites.append(Site(node.lineno, node.col_offset, description, self.statements[-1],
                               self.functions == 0, ".".join(self.scope) or "<module>", self.context(node),
                               self.statement(node)))
        return make() if index == self.target else None

    def statement(self, node: ast.AST) -> str:
        """The first line of the innermost statement holding the change, a changed
        constant marked: what tells apart two like changes of one function."""
        holder = next(p for p in reversed(self.path) if isinstance(p, ast.stmt))
        return _short(_marked(holder, node) if isinstance(node, ast.Constant) else holder, 100, first_line=True)

    def context(self, node: ast.AST) -> str:
        """The original code that holds the change, unparsed (so layout and comments do
        not matter): for a constant, the expression around it with the constant marked
        (``range(n - 1, -[1], -1)``); for a statement, the header of the block that holds
        it; for an operator or a condition, the expression itself."""
        if isinstance(node, ast.Constant):
            # the nearest expression around it (around ``-1``, the one around that)
            parents = [p for p in reversed(self.path[:-1])
                       if isinstance(p, ast.expr) and not isinstance(p, ast.UnaryOp)]
            if not parents:
                return _short(node, 60)
            return _short(_marked(parents[0], node), 60)
        if isinstance(node, ast.stmt):
            blocks = [p for p in reversed(self.path[:-1]) if isinstance(p, ast.stmt)]
            return _short(blocks[0], 60, first_line=True) if blocks else "<body>"
        return _short(node, 60, first_line=True)

    def visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, (ast.Import, ast.ImportFrom)) or _is_docstring(node) or _is_dunder_all(node):
            return node  # imports, docstrings and ``__all__``: declarations, not behaviour
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            inside = not isinstance(node, ast.ClassDef)
            self.functions += inside
            self.scope.append(node.name)
            node.body = [self.visit(statement) for statement in node.body]
            self.scope.pop()
            self.functions -= inside
            return node  # annotations, decorators and bases are declarations, not behaviour
        if isinstance(node, ast.stmt):
            self.statements.append(_statement_lines(node))  # before a child is replaced
        self.path.append(node)
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
            self.path.pop()
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
    source: str  # the whole mutated module
    lines: frozenset[int] = frozenset()  # lines a test must execute to run the mutated code
    at_import: bool = False  # module-level code: every test runs it
    scope: str = "<module>"  # the qualified name of the enclosing function or class
    #: The original code holding the change (see :meth:`_Sites.context`), widened to its
    #: statement, and then numbered, only where that is needed to tell like changes apart.
    context: str = ""

    @property
    def where(self) -> str:
        return f"{self.module}:{self.line}"

    @property
    def key(self) -> tuple[str, str, str, str]:
        """How EQUIVALENT and ACCEPTED name a mutant: the module, the enclosing function's
        qualified name, the change, and the code that holds it. Stable while that code
        is unchanged, wherever it moves and whatever else changes."""
        return (self.module, self.scope, self.description, self.context)

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()


def _called_at_import(body: list[ast.stmt]) -> set[str]:
    """The module's top-level functions that its module-level code calls: they run while
    the module is imported (as ``_gathered`` builds the reference's class), so their
    mutants need a fresh import, as module-level code does."""
    functions = {s.name for s in body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return {node.func.id for statement in body
            if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            for node in ast.walk(statement)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions}


def mutants(module: str, root: Path = ROOT, original: str | None = None) -> list[Mutant]:
    """Every distinct mutant of one module (read under ``root``), in source order.

    Each mutant is the module as ``ast.unparse`` writes it, with one change. Only the
    top-level statement holding the change is unparsed again and spliced into the
    unparsed module, which gives the same text as unparsing the whole mutated module."""
    original = (root / module).read_text() if original is None else original
    body = ast.parse(original).body
    baseline = ast.unparse(ast.parse(original))
    # Where each top-level statement's text starts in ``baseline``, after the blank
    # lines that separate it from the one before.
    ends = [len(ast.unparse(ast.Module(body[:i + 1], []))) for i in range(len(body))]
    found: list[tuple[Site, str]] = []
    seen = {baseline}
    for i, statement in enumerate(body):
        survey = _Sites()
        survey.visit(statement)
        if not survey.sites:
            continue
        own = ast.unparse(statement)
        end = ends[i]
        start = end - len(own)
        for index, site in enumerate(survey.sites):
            changed = _Sites(target=index).visit(ast.parse(original).body[i])
            source = baseline[:start] + ast.unparse(ast.fix_missing_locations(changed)) + baseline[end:]
            if source in seen:
                continue  # a change that unparses to code already tried (or to the original)
            seen.add(source)
            found.append((site, source))
    found.sort(key=lambda pair: (pair[0].line, pair[0].column))
    at_import = _called_at_import(body)
    return [Mutant(module, site.line, site.column, site.description, source, site.lines,
                   site.at_import or site.scope.split(".")[0] in at_import,
                   site.scope, context) for (site, source), context in zip(found, _contexts([s for s, _ in found]),
                                                                         strict=True)]


def _contexts(sites: list[Site]) -> list[str]:
    """Each site's context for its key: the code around the change; the first line of its
    statement where two like changes of one function share that code; and a number
    (``#2``, in source order) where they share the statement too."""
    def repeated(keys: list[tuple[str, ...]]) -> set[tuple[str, ...]]:
        counts: dict[tuple[str, ...], int] = defaultdict(int)
        for key in keys:
            counts[key] += 1
        return {key for key, count in counts.items() if count > 1}

    narrow = [(s.scope, s.description, s.context) for s in sites]
    shared = repeated(narrow)
    wide = [(s.scope, s.description, s.statement if key in shared else s.context) for s, key in zip(sites, narrow,
                                                                                                   strict=True)]
    still = repeated(wide)
    numbered: dict[tuple[str, ...], int] = defaultdict(int)
    contexts = []
    for key in wide:
        if key in still:
            numbered[key] += 1
            contexts.append(f"{key[2]} #{numbered[key]}")
        else:
            contexts.append(key[2])
    return contexts


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
        self.created = {id(v) for v in namespace.values()
                        if isinstance(v, type) and v.__module__ == self.module.__name__}
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


def _digest(*parts: bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part + b"\0")
    return digest.hexdigest()[:24]


def _base_fingerprint(module: str) -> str:
    """What every test's result depends on besides the mutated module and the test's own
    file: the project's other code, and the tests' shared files (conftest, helpers)."""
    parts = []
    for folder in ("chatconform", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative != module and not (folder == "tests" and path.name.startswith("test_")):
                parts += [relative.encode(), path.read_bytes()]
    return _digest(*parts)


class Cache:
    """Each test's result under each mutant, and each test's clean run (time and lines).

    A result is keyed by the mutated module, the rest of the project (:func:`_base_fingerprint`)
    and the test's own file, so a rerun runs only what a change can affect: after a test
    file is edited, that file's tests; after the code is edited, everything. A mutant with a
    known failing test is killed without running; with every test known to pass, it survives.
    """

    def __init__(self, path: Path, enabled: bool, base: str, files: dict[str, str]):
        self.path, self.enabled, self.base, self.files = path, enabled, base, files
        self.data: dict = {"results": {}, "clean": {}, "killers": {}}
        if enabled and path.is_file():
            try:
                loaded = json.loads(path.read_text())
                if set(loaded) == set(self.data):
                    self.data = loaded
            except (OSError, ValueError):
                pass

    def _key(self, fingerprint: str, test: str) -> str:
        return f"{fingerprint}|{self.base}|{test}|{self.files[test.split('::')[0]]}"

    def result(self, mutant: Mutant, test: str) -> str | None:
        """"pass", "fail", "timeout", or None when unknown."""
        return self.data["results"].get(self._key(mutant.fingerprint, test)) if self.enabled else None

    def record(self, mutant: Mutant, test: str, result: str) -> None:
        self.data["results"][self._key(mutant.fingerprint, test)] = result
        if result == "fail":
            self.data["killers"]["\0".join(mutant.key)] = test

    def killer(self, mutant: Mutant) -> str | None:
        """The test that last killed a mutant at this site (the module may have changed since)."""
        return self.data["killers"].get("\0".join(mutant.key))

    def clean(self, source_fingerprint: str, test: str) -> dict | None:
        return self.data["clean"].get(self._key(source_fingerprint, test)) if self.enabled else None

    def record_clean(self, source_fingerprint: str, test: str, row: dict) -> None:
        self.data["clean"][self._key(source_fingerprint, test)] = {"seconds": row["seconds"], "lines": row["lines"]}

    def save(self) -> None:
        if not self.enabled:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self.data, separators=(",", ":"), sort_keys=True))
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


def _module_name(path: str) -> str:
    """The dotted name a module path is imported by (a package's ``__init__.py``: the package)."""
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def _fresh_session(mutant: Mutant, tests: list[str], say: Callable[[dict], None]) -> str | None:
    """In a child: the project's modules and tests imported afresh, the mutant in place of
    the module, and the tests run in a new session. For module-level code, whose values
    other modules may have used while they were imported (a fresh import is the faithful
    way to see its effect)."""
    import importlib.abc
    import importlib.util

    import pytest

    name = _module_name(mutant.module)
    package = mutant.module.endswith("/__init__.py")
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
            inside = [str((ROOT / mutant.module).parent)] if package else None  # a package's __path__
            return importlib.util.spec_from_file_location(fullname, ROOT / mutant.module, loader=Loader(),
                                                          submodule_search_locations=inside)

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
        name = _module_name(self.module)
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
        by_id = {item.nodeid: item for item in items}
        files = {}
        for test in by_id:
            path = test.split("::")[0]
            files.setdefault(path, _digest((ROOT / path).read_bytes()))
        cache = Cache(CACHE, not options.no_cache, _base_fingerprint(self.module), files)
        clean_key = _digest(self.source.encode())

        # The clean run, traced: which lines each test runs, and how long it takes (the
        # tracer slows it several times, which the timeouts allow for). Known ones are cached.
        clean = {test: cache.clean(clean_key, test) for test in by_id}
        untraced = [by_id[test] for test, row in clean.items() if row is None]
        if untraced:
            baseline = _fork(lambda say: _traced_baseline(untraced, self.filename), options.memory_mb).wait()
            if baseline is None:
                self.failed = "the traced clean run crashed"
                return
            broken = [row["test"] for row in baseline if not row["passed"]]
            if broken:
                self.failed = "the guarding tests fail without any mutant: " + ", ".join(broken)
                return
            for row in baseline:
                cache.record_clean(clean_key, row["test"], row)
                clean[row["test"]] = row
            cache.save()
        self.seconds = {test: row["seconds"] for test, row in clean.items()}
        runs = {test: frozenset(row["lines"]) for test, row in clean.items()}
        print(f"{self.module}: clean traced run of {len(untraced)} of {len(items)} tests "
              f"{time.perf_counter() - start:.1f}s (the rest cached)", flush=True)

        found = mutants(self.module, original=self.source)
        line_killers: dict[int, set[str]] = defaultdict(set)
        kills: dict[str, int] = defaultdict(int)
        pending: list[tuple[Mutant, list[str]]] = []
        for mutant in found:
            tests = [t for t in by_id if mutant.at_import or runs[t] & mutant.lines]
            known = {t: cache.result(mutant, t) for t in tests}
            failing = [t for t in tests if known[t] in ("fail", "timeout")]
            if not tests:
                self.outcomes.append(Outcome(mutant, "uncovered", 0.0, "no guarding test runs this line"))
            elif failing:
                verdict = "timeout" if known[failing[0]] == "timeout" else "killed"
                self.outcomes.append(Outcome(mutant, verdict, 0.0, failing[0], True))
            elif all(result == "pass" for result in known.values()):
                self.outcomes.append(Outcome(mutant, "survived", 0.0, "", True))
            else:
                pending.append((mutant, [t for t in tests if known[t] is None]))
        print(f"{self.module}: {len(found)} mutants, {len(found) - len(pending)} known without running "
              f"(from the cache, or reached by no test), {len(pending)} to run; "
              f"tests: {' '.join(self.options.guards)}", flush=True)

        def order(mutant: Mutant, tests: list[str]) -> list[str]:
            hint = cache.killer(mutant)
            # then tests that killed a mutant on this line, then by time per kill so far
            return sorted(tests, key=lambda t: (t != hint, t not in line_killers[mutant.line],
                                                self.seconds[t] / (1 + kills[t])))

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

        @dataclass
        class Running:
            child: Child
            mutant: Mutant
            began: float
            deadline: float
            test: str | None = None  # the test running now

        running: dict[int, Running] = {}
        queue = list(pending)
        done = 0
        try:
            while queue or running:
                while queue and len(running) < max(1, options.jobs):
                    mutant, tests = queue.pop(0)
                    child = _fork(work(mutant, order(mutant, tests)), options.memory_mb)
                    now = time.perf_counter()
                    setup = _FRESH_SESSION_SECONDS if mutant.at_import else 5.0
                    running[child.fd] = Running(child, mutant, now, now + setup)
                wait = max(0.0, min(state.deadline for state in running.values()) - time.perf_counter())
                ready, _, _ = select.select(list(running), [], [], wait)
                for fd in list(running):
                    state = running[fd]
                    mutant, outcome = state.mutant, None
                    if fd in ready:
                        for message in state.child.read():
                            if state.test is not None:
                                cache.record(mutant, state.test, "pass")  # the next one started, or all ended
                                state.test = None
                            if "start" in message:
                                state.test = message["start"]
                                state.deadline = time.perf_counter() + self.budget(state.test)
                            elif "done" in message:
                                killer = message["done"]["killer"]
                                if killer in by_id:
                                    cache.record(mutant, killer, "fail")
                                    line_killers[mutant.line].add(killer)
                                    kills[killer] += 1
                                outcome = Outcome(mutant, "killed" if killer else "survived",
                                                  time.perf_counter() - state.began, killer or "")
                        if outcome is None and state.child.closed:
                            outcome = Outcome(mutant, "killed", time.perf_counter() - state.began,
                                              "(the test run crashed)")
                    if outcome is None and time.perf_counter() >= state.deadline:
                        if state.test is not None:
                            cache.record(mutant, state.test, "timeout")
                        outcome = Outcome(mutant, "timeout", time.perf_counter() - state.began,
                                          state.test or "(timeout)")
                    if outcome is None:
                        continue
                    state.child.end()
                    del running[fd]
                    self.outcomes.append(outcome)
                    done += 1
                    if done % 20 == 0:
                        cache.save()
                    mark = {"killed": ".", "timeout": "T", "survived": "S"}[outcome.verdict]
                    print(mark, end="", flush=True)
        finally:
            for state in running.values():
                state.child.end()
            cache.save()
        print()


def score(outcomes: list[Outcome]) -> dict[str, int]:
    """The mutants, those killed of the non-equivalent ones (``counted``) and the equivalent ones."""
    counted = [o for o in outcomes if not equivalence(o.mutant)]
    return {"mutants": len(outcomes), "killed": sum(o.verdict in ("killed", "timeout") for o in counted),
            "counted": len(counted), "equivalent": len(outcomes) - len(counted)}


def record_score(module: str, figures: dict[str, int], seconds: float, jobs: int, path: Path = SCORES) -> None:
    """Keep ``module``'s score in ``path`` (one module a line, in the order first measured).
    The hand-kept ``before`` (the score when first measured) stays; a ``note`` on the time
    of the last run goes, as it said how that run went."""
    scores = json.loads(path.read_text("utf-8")) if path.is_file() else {}
    entry = {key: value for key, value in scores.get(module, {}).items() if key == "before"}
    scores[module] = {**figures, "seconds": round(seconds), "jobs": jobs, **entry}
    lines = [f"  {json.dumps(name)}: {json.dumps(value, ensure_ascii=False)}" for name, value in scores.items()]
    path.write_text("{\n" + ",\n".join(lines) + "\n}\n", "utf-8")


def report(module: str, outcomes: list[Outcome], seconds: float) -> int:
    """Prints the score and every survivor; the number of unexplained survivors."""
    outcomes = sorted(outcomes, key=lambda o: (o.mutant.line, o.mutant.column))
    equivalent = {id(o): equivalence(o.mutant) for o in outcomes}
    figures = score(outcomes)
    killed, counted = figures["killed"], figures["counted"]
    hung = sum(o.verdict == "timeout" for o in outcomes if not equivalent[id(o)])
    share = 100.0 * killed / counted if counted else 100.0
    cached = sum(o.cached for o in outcomes)
    print(f"{module}: {killed}/{counted} non-equivalent mutants killed ({share:.1f}%), "
          f"{hung} by timeout; {figures['equivalent']} marked equivalent; "
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
            if not (note or accepted):
                print(f"      key: {outcome.mutant.key!r}")
    return unexplained


def run_module(module: str, options: argparse.Namespace) -> int:
    import pytest

    runner = Runner(module, options)
    start = time.perf_counter()
    code = pytest.main(["-q", "-p", "no:randomly", "-p", "no:cacheprovider", "-m", "not slow", *options.guards],
                       plugins=[runner])
    if runner.failed:
        print(f"{module}: {runner.failed}", file=sys.stderr)
        return 2
    if code not in (0, pytest.ExitCode.OK) and not runner.outcomes:
        print(f"{module}: pytest could not collect the guarding tests (exit {code})", file=sys.stderr)
        return 2
    seconds = time.perf_counter() - start
    report(module, runner.outcomes, seconds)
    if not options.pytest_args:  # the module's own guard tests: its score, for the docs
        record_score(module, score(runner.outcomes), seconds, options.jobs)
        print(f"{module}: score kept in {SCORES.relative_to(ROOT)}; the docs' tables: python tools/generate_docs.py")
    return 0


def _interrupted(signum, frame) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--module", action="append",
                        help="module to mutate (repeatable; default: every reference module with guard tests)")
    parser.add_argument("--list", action="store_true", help="print the mutants without running anything")
    parser.add_argument("--jobs", type=int, default=1, help="mutants run at once (default 1)")
    parser.add_argument("--timeout", type=float, help="seconds per mutant (default: 3x its tests' clean traced run "
                                                      "plus 10, at least 20)")
    parser.add_argument("--memory-mb", type=int, default=4096, help="extra address space each mutant may use")
    parser.add_argument("--pytest-args", help="tests to run instead of the module's guard tests")
    parser.add_argument("--no-cache", action="store_true", help="run every mutant, ignoring and keeping no cache")
    options = parser.parse_args(argv)
    guarding = guards()
    modules = options.module or list(guarding)
    for module in modules:
        if not (ROOT / module).is_file():
            parser.error(f"no such module: {module}")
        if module not in guarding and not options.pytest_args:
            parser.error(f"no tests are known to guard {module}: name them in its contract's guard_tests (or in "
                         "SHARED_GUARDS, for a module no one contract owns) or pass --pytest-args")
    if options.list:
        for module in modules:
            for mutant in mutants(module):
                note = equivalence(mutant)
                print(f"{mutant.where}:{mutant.column}  {mutant.description}  key: {mutant.key!r}"
                      + (f"  [equivalent: {note}]" if note else ""))
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
    options.guards = options.pytest_args.split() if options.pytest_args else guarding[modules[0]]
    try:
        return run_module(modules[0], options)
    except KeyboardInterrupt:
        print("\ninterrupted: nothing was written but the cache", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
