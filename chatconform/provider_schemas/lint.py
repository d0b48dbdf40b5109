"""``chatconform validate``: judge recorded request bodies, and recorded traffic, by the providers' rules.

Two kinds of input, in files, folders or standard input:

* **request bodies**: a file of one JSON body (pretty-printed or not), a JSON array of bodies,
  or JSON lines of bodies; a bare array whose items are messages, not bodies, is one body's
  messages. The format is told by the first non-blank line: if it is a whole JSON value the
  file is JSON lines and is read one line at a time (a large log is never held in memory),
  otherwise the file is one document. A body carries no URL, so ``--provider`` says where it
  went.
* **recorded traffic** (:mod:`.traffic`): VCR.py cassettes (YAML or JSON, plain or gzipped),
  HAR files, recorded interactions. Each request's provider and model are read off its URL
  and body (:mod:`.endpoints`; ``--provider`` overrides the provider); requests that are not
  chat requests are counted and skipped; the interactions of one file are judged in order.
  Each verdict is shown beside the status the provider answered with, and a disagreement is
  said: an error on a request the provider accepted, or a rejection about the messages that
  validate finds no error in.

A folder is searched for the files :data:`.traffic.TRAFFIC_SUFFIXES` names. Exit status: 0
clean (warnings allowed, and errors on requests the provider was recorded rejecting), 1 an
error-severity problem on any other body, 2 a file that cannot be read or parsed, or a usage
error (unknown provider or format, a body with no provider).
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from chatconform.errors import ConfigError
from chatconform.inputs import open_bounded
from chatconform.providers import get_provider

from . import replay_problems, validate
from .endpoints import endpoint
from .problems import MESSAGES_KEY, PROVIDER_IDS, Problem, UnknownProvider, check_provider, json_path
from .traffic import (
    MAX_BYTES,
    NOT_JSON,
    TRAFFIC_SUFFIXES,
    Exchange,
    TrafficError,
    answer_message,
    exchanges,
    is_traffic,
    is_yaml_name,
    load_yaml,
    read_bytes,
)

__all__ = ["FORMATS", "Judged", "judge_paths", "read_bodies", "run_validate"]

FORMATS = ("pretty", "json")

#: What a recorded verdict is, beside the status the provider answered with.
AGREES = "agrees"
ERROR_ON_ACCEPTED = "error on accepted"
MISSED_REJECTION = "missed rejection"
OTHER_REJECTION = "rejected for another reason"
#: The words of a rejection about the conversation itself (its messages, their roles and
#: blocks), as against a key, a quota, a model name or a sampling parameter.
_ABOUT_MESSAGES = re.compile(
    r"messages|contents|\brole|tool_call|tool_use|tool_result|toolResult|toolUse|function (?:call|response)|"
    r"conversation|content block|\bparts?\b|Extra inputs|thought_signature|\btools?\b|schema for function|"
    r"function_declarations|function\.name|function name|alternate|text parameter|Additional input|content type",
    re.IGNORECASE,
)


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


@dataclass(frozen=True)
class Judged:
    """The verdict on one body: its problems and, for recorded traffic, what the provider did."""

    file: str
    #: The body's place: its interaction in recorded traffic, its item in a file of bodies.
    index: int
    #: The line of a JSON-lines file it came from; None for a whole-file document.
    line: int | None
    provider: str
    model: str | None
    problems: tuple[Problem, ...]
    #: Recorded traffic only: whether it was, the HTTP status and the answer's error message.
    recorded: bool = False
    status: int | None = None
    answer: str | None = None
    #: Whether the recorded answer names the conversation's parts (its message or its ``param``).
    names_messages: bool = False

    @property
    def errors(self) -> int:
        return sum(problem.severity == "error" for problem in self.problems)

    @property
    def rejected(self) -> bool:
        return self.status is not None and 400 <= self.status < 500

    @property
    def about_messages(self) -> bool:
        """A rejection about the conversation (400 or 422, its message or ``param`` naming its parts)."""
        return self.status in (400, 422) and self.names_messages

    @property
    def verdict(self) -> str | None:
        """How validate's verdict stands beside the recorded status; None when nothing was recorded
        or there is nothing to say (an accepted body without errors)."""
        if self.status is None:
            return None
        if self.errors:
            return AGREES if self.rejected else ERROR_ON_ACCEPTED
        if self.rejected and self.about_messages:
            return MISSED_REJECTION
        return OTHER_REJECTION if self.status >= 400 else None

    @property
    def counts_against(self) -> bool:
        """An error the exit status counts: on a body not recorded as rejected."""
        return bool(self.errors) and not self.rejected


@dataclass
class _Tally:
    files: int = 0
    bodies: int = 0
    errors: int = 0
    warnings: int = 0
    failing: int = 0  # errors on bodies the provider was not recorded rejecting
    skipped: Counter[str] = field(default_factory=Counter)  # requests that are not chat requests
    providers: Counter[str] = field(default_factory=Counter)
    recorded: Counter[str] = field(default_factory=Counter)  # accepted / rejected / ..., and verdicts
    broken: set[str] = field(default_factory=set)  # files that could not be read or parsed


# --- reading bodies ----------------------------------------------------------------------


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


def read_bodies(lines: Iterable[str], limit: int = MAX_BYTES) -> Iterator[_Body | _BadJSON]:
    """The JSON values of a file given as lines, streamed when the file is JSON lines; a
    document (or one line) longer than ``limit`` characters is refused, not held."""
    lines = iter(lines)
    skipped: list[str] = []
    for number, line in enumerate(lines, 1):
        if number == 1:
            line = line.removeprefix("\ufeff")
        if len(line) > limit:
            yield _BadJSON(number, None, f"a line longer than the limit of {limit} characters")
            return
        if not line.strip():
            skipped.append(line)
            continue
        first = _parse(line.rstrip("\r\n"), number)
        if isinstance(first, _Body):  # JSON lines: one body per non-blank line
            yield first
            index = 1
            start = number + 1
            for number, line in enumerate(lines, start):
                if len(line) > limit:
                    yield _BadJSON(number, None, f"a line longer than the limit of {limit} characters")
                    return
                if line.strip():
                    item = _parse(line.rstrip("\r\n"), number)
                    if isinstance(item, _Body):
                        item.index = index
                    yield item
                    index += 1
            return
        # One document spread over lines: parse the whole text (line numbers stay exact).
        parts, size = [*skipped, line], sum(map(len, skipped)) + len(line)
        for more in lines:
            size += len(more)
            if size > limit:
                yield _BadJSON(number, None, f"a document longer than the limit of {limit} characters")
                return
            parts.append(more)
        document = _parse("".join(parts), 1)
        if isinstance(document, _Body):
            document.line = None
        yield document
        return
    yield _BadJSON(len(skipped) + 1, None, "no JSON body in the file")


def _bounded_lines(stream: IO[str], limit: int) -> Iterator[str]:
    """The lines of ``stream``, none read past ``limit + 1`` characters (the reader refuses it)."""
    while line := stream.readline(limit + 1):
        yield line


def looks_like_bodies(value: Any, provider: str) -> bool:
    """A JSON array whose items are request bodies (objects holding the conversation, or
    naming a model), not messages (objects with a ``role``)."""
    key = MESSAGES_KEY[provider]
    return (isinstance(value, list) and bool(value)
            and all(isinstance(v, dict) and "role" not in v and (key in v or "model" in v) for v in value))


def _spread(name: str, items: Iterable[_Body | _BadJSON], provider: str | None, said: list[str]
            ) -> Iterator[_Body | _BadJSON]:
    """A JSON array (a whole file, or a line of JSON lines) is read as request bodies when its
    items look like bodies, else as the messages of one body; ``said`` receives, once per
    file, which reading was taken."""
    readings: set[bool] = set()
    for item in items:
        if provider is not None and isinstance(item, _Body) and isinstance(item.value, list):
            as_bodies = looks_like_bodies(item.value, provider)
            if as_bodies not in readings:
                readings.add(as_bodies)
                said.append("a JSON array of request bodies, read as bodies" if as_bodies else
                            f"a JSON array of messages, read as one body's {MESSAGES_KEY[provider]}")
            if as_bodies:
                yield from (_Body(item.line, index, body) for index, body in enumerate(item.value))
                continue
        yield item


# --- judging -------------------------------------------------------------------------------


class _NoProvider(Exception):
    """A request body with no URL to tell its provider, and no ``--provider``."""


def _judge_exchange(name: str, exchange: Exchange, provider: str | None, line: int | None,
                    tally: _Tally, earlier: dict[str, list[str]]) -> Judged | None:
    """The verdict on one recorded request, held against the answers before it in its file
    (``earlier``, by provider: one file is one conversation, judged in order)."""
    found = endpoint(exchange.method, exchange.url, exchange.body)
    chosen = provider if provider and found.dialect == get_provider(provider).dialect else found.provider
    if chosen is None or exchange.body is NOT_JSON:
        tally.skipped[found.skipped or "a chat request without a JSON body"] += 1
        return None
    problems = validate(exchange.body, chosen, model=found.model)
    if isinstance(exchange.body, dict):
        problems += replay_problems(exchange.body, chosen, found.model, earlier.get(chosen, []))
    if exchange.answer and exchange.status is not None and 200 <= exchange.status < 300:
        earlier.setdefault(chosen, []).append(exchange.answer)
    return Judged(name, exchange.index, line, chosen, found.model, tuple(problems), recorded=True,
                  status=exchange.status, answer=answer_message(exchange.answer) if exchange.status else None,
                  names_messages=bool(exchange.answer and _ABOUT_MESSAGES.search(exchange.answer)))


def _judge_values(name: str, items: Iterable[_Body | _BadJSON], provider: str | None, tally: _Tally,
                  notes: list[str], bad: list[_BadJSON]) -> Iterator[Judged]:
    """The verdicts on the bodies and recorded exchanges of one file, in file order."""
    start = 0
    earlier: dict[str, list[str]] = {}
    for item in _spread(name, items, provider, notes):
        if isinstance(item, _BadJSON):
            bad.append(item)
            continue
        if is_traffic(item.value):
            for exchange in exchanges(item.value, start):
                judged = _judge_exchange(name, exchange, provider, item.line, tally, earlier)
                if judged is not None:
                    yield judged
                start = exchange.index + 1
            continue
        if provider is None:
            raise _NoProvider
        problems = _non_json(item.value, provider) if item.non_json else []
        yield Judged(name, item.index, item.line, provider, None, (*problems, *validate(item.value, provider)))


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


def _values_of(path: str) -> Iterator[_Body | _BadJSON]:
    """The JSON or YAML values of one file, bounded: a YAML file is one document, a
    gzipped file is read whole (its size bounded once decompressed), any other is streamed."""
    if is_yaml_name(path) or path.lower().endswith((".gz", ".har")):
        data = read_bytes(path)
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise TrafficError(f"{path}: cannot read: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        if is_yaml_name(path):
            value = load_yaml(text, path)
            if not is_traffic(value):
                raise TrafficError(f"{path}: not recorded traffic: a YAML file without VCR `interactions`")
            yield _Body(None, 0, value)
            return
        yield from read_bodies(text.splitlines(keepends=True))
        return
    stream = _open_text(path)
    with stream:
        yield from read_bodies(_bounded_lines(stream, MAX_BYTES))


def _open_text(path: str) -> IO[str]:
    """``path`` opened as UTF-8 text if it is a regular file within the size limit
    (:func:`chatconform.inputs.open_bounded`: a FIFO is refused, never read)."""
    try:
        return io.TextIOWrapper(open_bounded(path, "request bodies"), encoding="utf-8", newline=None)
    except ConfigError as exc:
        raise TrafficError(str(exc)) from None


def _files(path: str) -> Iterator[str]:
    """``path`` itself, or the traffic files of a folder, in name order (links to folders are
    not followed, so a loop of links ends)."""
    if not os.path.isdir(path) or os.path.islink(path):
        yield path
        return
    for folder, subfolders, names in os.walk(path):
        subfolders.sort()
        for name in sorted(names):
            if name.lower().endswith(TRAFFIC_SUFFIXES):
                yield os.path.join(folder, name)


def judge_paths(paths: Iterable[str], provider: str | None = None) -> Iterator[Judged]:
    """Every verdict on the files and folders ``paths``; raises :class:`TrafficError` (one line)
    on the first file that cannot be read, and on a request body when no provider is given."""
    tally = _Tally()
    for path in paths:
        for name in _files(path):
            bad: list[_BadJSON] = []
            try:
                yield from _judge_values(name, _values_of(name), provider, tally, [], bad)
            except _NoProvider:
                raise TrafficError(_no_provider(name)) from None
            if bad:
                raise TrafficError(f"{name}:{bad[0].line}: {bad[0].message}")


def _no_provider(name: str) -> str:
    return (f"{name}: not recorded traffic (no VCR interactions, HAR log or request and response), and no "
            "--provider to judge it as request bodies")


# --- output --------------------------------------------------------------------------------


def _where(judged: Judged) -> str:
    if judged.recorded:
        return f"{judged.file} #{judged.index}"
    return f"{judged.file}:{judged.line}" if judged.line is not None else judged.file


def _problem_line(judged: Judged, problem: Problem) -> str:
    severity = "(warning) " if problem.severity == "warning" else ""
    return f"{_where(judged)} {problem.rule} {problem.path}  {severity}{problem.message}\n"


def _verdict_line(judged: Judged) -> str:
    answer = f' "{judged.answer}"' if judged.answer and judged.status and judged.status >= 400 else ""
    found = f"{judged.errors} error{'' if judged.errors == 1 else 's'}" if judged.errors else "no error"
    says = {
        AGREES: "agrees",
        ERROR_ON_ACCEPTED: "DISAGREES: an error on a request the provider accepted",
        MISSED_REJECTION: "DISAGREES: the provider rejected the messages and no error was found",
        OTHER_REJECTION: "the provider rejected it for another reason",
    }[judged.verdict or ""]
    return (f"{_where(judged)} ({judged.provider}, {judged.model or 'model not named'}): recorded "
            f"{judged.status}{answer}; validate: {found}: {says}\n")


def _problem_json(judged: Judged, problem: Problem) -> str:
    record: dict[str, Any] = {"file": judged.file, "line": judged.line}
    record["interaction" if judged.recorded else "body"] = judged.index
    record |= {
        "rule": problem.rule,
        "path": problem.path,
        "message": problem.message,
        "severity": problem.severity,
        "provider": problem.provider,
        "source": problem.source,
    }
    if judged.recorded:
        record |= {"model": judged.model, "status": judged.status}
    return json.dumps(record) + "\n"


def _verdict_json(judged: Judged) -> str:
    return json.dumps({"file": judged.file, "interaction": judged.index, "provider": judged.provider,
                       "model": judged.model, "status": judged.status, "answer": judged.answer,
                       "errors": judged.errors, "verdict": judged.verdict}) + "\n"


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


class _Writer:
    """Writes the problems and verdicts of one run, and counts them."""

    def __init__(self, provider: str | None, fmt: str, out: IO[str], err: IO[str]) -> None:
        self.provider, self.fmt, self.out, self.err = provider, fmt, out, err
        self.tally = _Tally()

    def lint(self, name: str, items: Iterable[_Body | _BadJSON]) -> None:
        """Judge every body of one file, writing its problems and counting them."""
        notes: list[str] = []
        bad: list[_BadJSON] = []
        judged_items = _judge_values(name, items, self.provider, self.tally, notes, bad)
        while True:
            try:
                judged = next(judged_items)
            except StopIteration:
                break
            except _NoProvider:
                self.err.write(_no_provider(name) + "\n")
                self.tally.broken.add(name)
                break
            except (TrafficError, OSError, UnicodeDecodeError):
                raise  # the file cannot be read: the caller says so in one line
            except Exception as exc:  # a bug here must not hide the other files' results
                self.err.write(f"{name}: internal error while validating: {exc!r}\n")
                self.tally.broken.add(name)
                break
            finally:
                self._flush(name, notes, bad)
            self.write(judged)
        self._flush(name, notes, bad)

    def _flush(self, name: str, notes: list[str], bad: list[_BadJSON]) -> None:
        for note in notes:
            (self.out if self.fmt == "pretty" else self.err).write(f"{name}: {note}\n")
        notes.clear()
        for item in bad:
            where = f"{name}:{item.line}" + (f":{item.column}" if item.column is not None else "")
            self.err.write(f"{where}: {item.message}\n")
            self.tally.broken.add(name)
        bad.clear()

    def write(self, judged: Judged) -> None:
        tally = self.tally
        tally.bodies += 1
        tally.providers[judged.provider] += 1
        for problem in judged.problems:
            if problem.severity == "error":
                tally.errors += 1
            else:
                tally.warnings += 1
            self.out.write(_problem_line(judged, problem) if self.fmt == "pretty" else _problem_json(judged, problem))
        tally.failing += judged.counts_against
        if judged.status is not None:
            tally.recorded["accepted" if 200 <= judged.status < 300 else
                           "rejected" if judged.rejected else "other"] += 1
            tally.recorded["about messages"] += judged.rejected and judged.about_messages
        if judged.verdict is not None:
            tally.recorded[judged.verdict] += 1
            self.out.write(_verdict_line(judged) if self.fmt == "pretty" else _verdict_json(judged))

    def summary(self) -> str:
        tally = self.tally
        text = (f"{_plural(tally.errors, 'error', 'errors')}, {_plural(tally.warnings, 'warning', 'warnings')} "
                f"in {_plural(tally.bodies, 'body', 'bodies')} from {_plural(tally.files, 'file', 'files')}")
        skipped = sum(tally.skipped.values())
        if skipped:
            kinds = ", ".join(f"{what} {count}" for what, count in tally.skipped.most_common(4))
            text += f"; {_plural(skipped, 'other request', 'other requests')} skipped ({kinds})"
        if tally.broken:
            text += f"; {_plural(len(tally.broken), 'file', 'files')} could not be read or parsed"
        shown = self.provider or ", ".join(f"{p} {n}" for p, n in sorted(tally.providers.items()))
        text += f" ({shown})\n" if shown else "\n"
        recorded = tally.recorded
        if recorded["accepted"] or recorded["rejected"] or recorded["other"]:
            text += (f"recorded: {recorded['accepted']} accepted, {recorded['rejected']} rejected "
                     f"({recorded['about messages']} about the messages), {recorded['other']} other; "
                     f"disagreements: {_plural(recorded[ERROR_ON_ACCEPTED], 'error', 'errors')} on accepted "
                     f"requests, {recorded[MISSED_REJECTION]} rejected with no error found\n")
        return text


def run_validate(
    paths: list[str],
    provider: str | None,
    fmt: str = "pretty",
    out: IO[str] | None = None,
    err: IO[str] | None = None,
    *,
    stdin: IO[str] | None = None,
) -> int:
    """Judge every file or folder in ``paths`` (``-`` = standard input); returns the exit status."""
    out = _console(sys.stdout) if out is None else out
    err = _console(sys.stderr) if err is None else err
    if provider is not None:
        try:
            check_provider(provider)
        except UnknownProvider:
            err.write(f"chatconform validate: unknown provider {provider!r}; "
                      f"known providers: {', '.join(PROVIDER_IDS)}\n")
            return 2
    if fmt not in FORMATS:
        err.write(f"chatconform validate: unknown format {fmt!r}; use one of: {', '.join(FORMATS)}\n")
        return 2
    if not paths:
        err.write("chatconform validate: no file given (use - for standard input)\n")
        return 2

    writer = _Writer(provider, fmt, out, err)
    tally = writer.tally
    try:
        for path in paths:
            if path == "-":
                tally.files += 1
                try:
                    stream = stdin if stdin is not None else _utf8_stdin()
                    writer.lint("<stdin>", read_bodies(_bounded_lines(stream, MAX_BYTES)))
                except BrokenPipeError:
                    raise
                except (OSError, UnicodeDecodeError) as exc:
                    err.write(f"<stdin>: cannot read: {exc}\n")
                    tally.broken.add("<stdin>")
                continue
            names = list(_files(path))
            if not names:  # a folder holding no file of a kind validate reads
                err.write(f"{path}: no recorded traffic or request bodies in this folder (files named "
                          f"{', '.join('*' + s for s in TRAFFIC_SUFFIXES)})\n")
                tally.broken.add(path)
            for name in names:
                tally.files += 1
                try:
                    writer.lint(name, _values_of(name))
                except BrokenPipeError:
                    raise
                except TrafficError as exc:
                    err.write(f"{exc}\n")
                    tally.broken.add(name)
                except OSError as exc:
                    err.write(f"{name}: cannot read: {exc.strerror or exc}\n")
                    tally.broken.add(name)
                except UnicodeDecodeError as exc:
                    err.write(f"{name}: cannot read: not UTF-8 text ({exc.reason} at byte {exc.start})\n")
                    tally.broken.add(name)
        if fmt == "pretty":
            out.write(writer.summary())
    except BrokenPipeError:  # the reader went away (e.g. `| head`): stop quietly
        if out is sys.stdout:
            # Python would report the failed flush of stdout at exit; send it nowhere instead.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if tally.broken:
        return 2
    return 1 if tally.failing else 0
