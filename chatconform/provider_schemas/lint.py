"""``chatconform validate``: lint recorded request bodies against one provider's rules.

A file holds one JSON body (pretty-printed or not), a JSON array of bodies, or JSON lines of
many bodies; a bare array whose items are messages, not bodies, is one body's messages. The
format is told by the first non-blank line: if it is a whole JSON value the file is JSON lines and is
read one line at a time (a large log is never held in memory), otherwise the file is one
document. Exit status: 0 clean (warnings allowed), 1 an error-severity problem, 2 a file that
cannot be read or parsed, or a usage error (unknown provider or format).
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from chatconform.errors import ConfigError
from chatconform.inputs import open_bounded

from . import validate
from .problems import MESSAGES_KEY, PROVIDER_IDS, Problem, UnknownProvider, check_provider, json_path

FORMATS = ("pretty", "json")


@dataclass
class _Body:
    line: int | None  # the line of a JSON-lines body; None for a whole-file document
    index: int
    value: Any
    non_json: bool = False  # it holds NaN, Infinity or a number past a double (read as a float)


@dataclass
class _BadJSON:
    line: int
    column: int | None
    message: str


@dataclass
class _Tally:
    files: int = 0
    bodies: int = 0
    errors: int = 0
    warnings: int = 0
    broken: set[str] = field(default_factory=set)  # files that could not be read or parsed


def _parse(text: str, line: int) -> _Body | _BadJSON:
    """Parse ``text`` that starts at file line ``line``; errors carry the file's line and column."""
    non_json: list[str] = []

    def constant(name: str) -> float:
        non_json.append(name)
        return float(name)

    def number(digits: str) -> float:
        value = float(digits)
        if not math.isfinite(value):
            non_json.append(digits)
        return value

    try:
        return _Body(line, 0, json.loads(text, parse_constant=constant, parse_float=number), bool(non_json))
    except json.JSONDecodeError as exc:
        return _BadJSON(line + exc.lineno - 1, exc.colno, exc.msg)
    except RecursionError:
        return _BadJSON(line, None, "JSON nested too deeply")
    except ValueError:  # Python's limit on the digits of an integer
        limit = sys.get_int_max_str_digits()
        found = re.search(rf"\d{{{limit + 1},}}", text)
        offset = text.count("\n", 0, found.start()) if found else 0
        return _BadJSON(line + offset, None, f"a number with more than {limit} digits")


def read_bodies(lines: Iterable[str]) -> Iterator[_Body | _BadJSON]:
    """The bodies of a file given as lines, streamed when the file is JSON lines."""
    lines = iter(lines)
    skipped: list[str] = []
    for number, line in enumerate(lines, 1):
        if number == 1:
            line = line.removeprefix("\ufeff")
        if not line.strip():
            skipped.append(line)
            continue
        first = _parse(line.rstrip("\r\n"), number)
        if isinstance(first, _Body):  # JSON lines: one body per non-blank line
            yield first
            index = 1
            start = number + 1
            for number, line in enumerate(lines, start):
                if line.strip():
                    item = _parse(line.rstrip("\r\n"), number)
                    if isinstance(item, _Body):
                        item.index = index
                    yield item
                    index += 1
            return
        # One document spread over lines: parse the whole text (line numbers stay exact).
        document = _parse("".join(skipped) + line + "".join(lines), 1)
        if isinstance(document, _Body):
            document.line = None
        yield document
        return
    yield _BadJSON(len(skipped) + 1, None, "no JSON body in the file")


def looks_like_bodies(value: Any, provider: str) -> bool:
    """A JSON array whose items are request bodies (objects holding the conversation, or
    naming a model), not messages (objects with a ``role``)."""
    key = MESSAGES_KEY[provider]
    return (isinstance(value, list) and bool(value)
            and all(isinstance(v, dict) and "role" not in v and (key in v or "model" in v) for v in value))


def _spread(name: str, items: Iterable[_Body | _BadJSON], provider: str, fmt: str, out: IO[str],
            err: IO[str]) -> Iterator[_Body | _BadJSON]:
    """A JSON array (a whole file, or a line of JSON lines) is read as request bodies when its
    items look like bodies, else as the messages of one body; the output says, once per file,
    which reading was taken (on stderr for ``--format json``)."""
    said: set[bool] = set()
    for item in items:
        if isinstance(item, _Body) and isinstance(item.value, list):
            as_bodies = looks_like_bodies(item.value, provider)
            if as_bodies not in said:
                said.add(as_bodies)
                reading = ("a JSON array of request bodies, read as bodies" if as_bodies else
                           f"a JSON array of messages, read as one body's {MESSAGES_KEY[provider]}")
                (out if fmt == "pretty" else err).write(f"{name}: {reading}\n")
            if as_bodies:
                yield from (_Body(item.line, index, body) for index, body in enumerate(item.value))
                continue
        yield item


def _problem_line(name: str, line: int | None, problem: Problem) -> str:
    where = f"{name}:{line}" if line is not None else name
    severity = "(warning) " if problem.severity == "warning" else ""
    return f"{where} {problem.rule} {problem.path}  {severity}{problem.message}\n"


def _problem_json(name: str, body: _Body, problem: Problem) -> str:
    record = {
        "file": name,
        "line": body.line,
        "body": body.index,
        "rule": problem.rule,
        "path": problem.path,
        "message": problem.message,
        "severity": problem.severity,
        "provider": problem.provider,
        "source": problem.source,
    }
    return json.dumps(record) + "\n"


def _lint_stream(
    name: str, lines: Iterable[str], provider: str, fmt: str, out: IO[str], err: IO[str], tally: _Tally
) -> None:
    """Validate every body of one file, writing its problems and counting them in ``tally``."""
    for item in _spread(name, read_bodies(lines), provider, fmt, out, err):
        if isinstance(item, _BadJSON):
            where = f"{name}:{item.line}" + (f":{item.column}" if item.column is not None else "")
            err.write(f"{where}: {item.message}\n")
            tally.broken.add(name)
            continue
        tally.bodies += 1
        try:
            problems = _non_json(item.value, provider) if item.non_json else []
            problems += validate(item.value, provider)
        except Exception as exc:  # a bug here must not hide the other bodies' results
            where = f"{name}:{item.line}" if item.line is not None else name
            err.write(f"{where}: internal error while validating: {exc!r}\n")
            tally.broken.add(name)
            continue
        for problem in problems:
            if problem.severity == "error":
                tally.errors += 1
            else:
                tally.warnings += 1
            out.write(_problem_line(name, item.line, problem) if fmt == "pretty" else
                      _problem_json(name, item, problem))


#: Why NaN, Infinity and a number past a double's range are rejected: the rule, in its words,
#: and what a provider's strict parser answers.
_NOT_JSON = {
    "nan": ("NaN is not JSON: RFC 8259 section 6 says \"Numeric values that cannot be represented in the "
            "grammar below (such as Infinity and NaN) are not permitted\""),
    "inf": ("Infinity, or a number past a double's range, is not a number a provider reads: RFC 8259 section 6 "
            "says \"Numeric values that cannot be represented in the grammar below (such as Infinity and NaN) "
            "are not permitted\" and \"This specification allows implementations to set limits on the range "
            "and precision of numbers accepted\""),
}
_PARSE_ERROR = ("; a provider's strict parser answers 400 "
                "(OpenAI: \"We could not parse the JSON body of your request.\")")


def _non_json(value: Any, provider: str) -> list[Problem]:
    """An error for each NaN, Infinity or overflowing number in a body (each read as a
    float that is not finite), at its path."""
    found: list[Problem] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            why = _NOT_JSON["nan" if math.isnan(item) else "inf"]
            found.append(Problem("json-number", json_path(path), why + _PARSE_ERROR, provider, source="schema"))
        elif isinstance(item, dict):
            stack.extend((v, (*path, k)) for k, v in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((v, (*path, i)) for i, v in reversed(list(enumerate(item))))
    return found


def _console(stream: IO[str]) -> IO[str]:
    """The process's own stdout/stderr, set to escape characters the terminal cannot show."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="backslashreplace")
    return stream


def _utf8_stdin() -> IO[str]:
    """Standard input read as UTF-8, like files, whatever the locale says."""
    reconfigure = getattr(sys.stdin, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(encoding="utf-8")
    return sys.stdin


def _plural(count: int, word: str, words: str) -> str:
    return f"{count} {word if count == 1 else words}"


def run_validate(
    paths: list[str],
    provider: str,
    fmt: str = "pretty",
    out: IO[str] | None = None,
    err: IO[str] | None = None,
    *,
    stdin: IO[str] | None = None,
) -> int:
    """Lint every file in ``paths`` (``-`` = standard input); returns the exit status."""
    out = _console(sys.stdout) if out is None else out
    err = _console(sys.stderr) if err is None else err
    try:
        check_provider(provider)
    except UnknownProvider:
        err.write(f"chatconform validate: unknown provider {provider!r}; known providers: {', '.join(PROVIDER_IDS)}\n")
        return 2
    if fmt not in FORMATS:
        err.write(f"chatconform validate: unknown format {fmt!r}; use one of: {', '.join(FORMATS)}\n")
        return 2
    if not paths:
        err.write("chatconform validate: no file given (use - for standard input)\n")
        return 2

    tally = _Tally()
    try:
        for path in paths:
            tally.files += 1
            if path == "-":
                name = "<stdin>"
                try:
                    _lint_stream(name, stdin if stdin is not None else _utf8_stdin(), provider, fmt, out, err, tally)
                except BrokenPipeError:
                    raise
                except (OSError, UnicodeDecodeError) as exc:
                    err.write(f"{name}: cannot read: {exc}\n")
                    tally.broken.add(name)
                continue
            try:
                with io.TextIOWrapper(open_bounded(path, "request bodies"), encoding="utf-8", newline=None) as stream:
                    _lint_stream(path, stream, provider, fmt, out, err, tally)
            except BrokenPipeError:
                raise
            except ConfigError as exc:  # not a regular file, or past the size limit
                err.write(f"{exc}\n")
                tally.broken.add(path)
            except OSError as exc:
                err.write(f"{path}: cannot read: {exc.strerror or exc}\n")
                tally.broken.add(path)
            except UnicodeDecodeError as exc:
                err.write(f"{path}: cannot read: not UTF-8 text ({exc.reason} at byte {exc.start})\n")
                tally.broken.add(path)
        if fmt == "pretty":
            summary = (
                f"{_plural(tally.errors, 'error', 'errors')}, {_plural(tally.warnings, 'warning', 'warnings')} "
                f"in {_plural(tally.bodies, 'body', 'bodies')} from {_plural(tally.files, 'file', 'files')}"
            )
            if tally.broken:
                summary += f"; {_plural(len(tally.broken), 'file', 'files')} could not be read or parsed"
            out.write(summary + f" ({provider})\n")
    except BrokenPipeError:  # the reader went away (e.g. `| head`): stop quietly
        if out is sys.stdout:
            # Python would report the failed flush of stdout at exit; send it nowhere instead.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if tally.broken:
        return 2
    return 1 if tally.errors else 0
