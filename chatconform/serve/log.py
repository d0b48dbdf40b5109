"""The verdicts of ``chatconform serve`` and their JSON-lines report (``--report``).

The report is a chatconform report, so ``summary`` and ``diff`` read it as any other: a header,
one ``result`` line per (route provider, check), a footer. The "implementation" of a line is
the provider whose route was called; its checks are that provider's rules
(docs/provider-rules.md), ``serve.<rule>``, with ``serve.schema`` for the generic shape rule
(``<letter>0``). Every rule of a provider that was called has a line, ``pass`` while no request
broke it, so ``diff`` sees a rule that starts to break as a regression. Between them, one
``request`` line per judged request (its route, its place in its conversation, its problems
and the body), which the readers pass over.

The file is rewritten whole (atomically, with its footer) a moment after each request and
when the server stops, so it can be read while the server runs. A request line is made by
the writer, not on the request's path, and made once: a rewrite writes the lines made so far
as they are, so it costs a write of the file, not a serialization of every body again.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from chatconform.frame.status import STATUSES, Status
from chatconform.outputs import files as outputs

__all__ = ["ServeLog", "Verdict", "check_id"]

#: Seconds between rewrites of the report while requests come in.
FLUSH_EVERY = 0.2
#: ... or this many times as long as the last rewrite took, when that is longer: a report
#: grown large is rewritten less often, so writing it stays a small share of the server's time.
FLUSH_SHARE = 10
#: The request lines are kept encoded in chunks of about this many bytes.
_CHUNK = 1 << 20
#: The checks of the requests not judged: a route the server lacks, a body over the provider's
#: size cap, a request refused for its Host or Origin.
ROUTE_CHECK, SIZE_CHECK, ORIGIN_CHECK = "serve.route", "serve.size", "serve.origin"


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Verdict:
    """One judged request and how it was answered."""

    number: int  # its place among every request served, from 1
    provider: str
    route: str
    model: str
    stream: bool
    conversation: str  # its conversation's name: a digest of its first user text (docs/serve.md)
    turn: int  # its place in that conversation, from 1 (a request asked again: the same turn)
    problems: tuple  # of provider_schemas.Problem
    status: int  # the HTTP status answered
    answered: str  # what: the reply's kind, or "rejected"
    body: Any
    method: str = "POST"
    #: "judged"; "not judged" (a canned answer to a route the SDK calls besides the chat:
    #: the model list, token counts, embeddings); "no route" (a route the server lacks).
    served: str = "judged"
    entry: int = 0  # the script entry that answered it, from 1 (0: none)
    again: bool = False  # it asked a turn asked before (a retry, or a second run)

    @property
    def rejected(self) -> bool:
        return any(p.severity == "error" for p in self.problems)

    def line(self) -> dict:
        return {"type": "request", "number": self.number, "provider": self.provider, "method": self.method,
                "route": self.route, "served": self.served,
                "model": self.model, "stream": self.stream, "conversation": self.conversation, "turn": self.turn,
                "entry": self.entry, "again": self.again,
                "status": self.status, "answered": self.answered,
                "problems": [{"rule": p.rule, "path": p.path, "message": p.message, "severity": p.severity,
                              "source": p.source} for p in self.problems],
                "body": self.body}


def check_id(provider: str, rule: str) -> str:
    """``serve.schema`` for a provider's generic shape rule, else ``serve.<rule>``."""
    from chatconform.providers import get_provider

    return "serve.schema" if rule == get_provider(provider).generic_rule else f"serve.{rule}"


class ServeLog:
    """The verdicts so far, the conversations' turn counters, and the report file."""

    def __init__(self, path: str | Path | None, *, version: str, seed: int | None = None,
                 settings: dict | None = None) -> None:
        self.path = outputs.target(path) if path is not None else None
        self.version, self.seed, self.settings = version, seed, settings or {}
        self.started, self.clock = datetime.now(UTC), time.monotonic()
        self.verdicts: list[Verdict] = []
        self._chunks: list[bytes] = []  # the request lines of verdicts[:self._made], encoded
        self._made = 0
        self._count = 0
        self._lock = threading.Lock()
        self._making = threading.Lock()
        self._dirty = threading.Event()
        self._stopped = threading.Event()
        self._writer: threading.Thread | None = None
        self._error: str | None = None
        self._saved: set[int] = set()  # the requests whose body is saved beside the report
        #: Where a line for the console goes (a route the server lacks); the command sets its own.
        self.notice: Callable[[str], None] = _stderr

    def next_number(self) -> int:
        """The request's number among every request served, from 1."""
        with self._lock:
            self._count += 1
            return self._count

    def add(self, verdict: Verdict) -> None:
        with self._lock:
            self.verdicts.append(verdict)
        if self.path is not None:
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_loop, name="chatconform-serve-report",
                                                daemon=True)
                self._writer.start()
            self._dirty.set()

    def _write_loop(self) -> None:
        while not self._stopped.is_set():
            self._dirty.wait()
            self._dirty.clear()
            if not self._stopped.is_set():
                began = time.monotonic()
                self.flush()
                self._stopped.wait(max(FLUSH_EVERY, FLUSH_SHARE * (time.monotonic() - began)))

    def flush(self) -> None:
        """Write the report now (a write error is kept for :meth:`close` to raise)."""
        if self.path is None:
            return
        try:
            outputs.write_atomic(self.path, self.chunks())
        except Exception as exc:
            self._error = str(exc)
        else:
            self._error = None  # a report written whole after a failed write is a report

    @property
    def write_error(self) -> str | None:
        """Why the report could not be written (None: it could, or there is none)."""
        return self._error

    def close(self) -> None:
        """Stop the writer and write the report a last time; a ConfigError if a write failed."""
        self._stopped.set()
        self._dirty.set()
        if self._writer is not None:
            self._writer.join(timeout=5)
        self.flush()
        if self._error is not None:
            from chatconform.errors import ConfigError

            raise ConfigError(self._error)

    def chunks(self) -> list[bytes]:
        """The report as it stands, in chunks: the request lines made before are not made again."""
        with self._lock:
            verdicts = list(self.verdicts)
        with self._making:  # the writer thread and a last flush from close() may both be here
            self._make_lines(verdicts)
            requests = list(self._chunks)
        results = result_lines(verdicts)
        self._save_examples(results, verdicts)
        head = self.header(sorted({v.provider for v in verdicts}, key=_order))
        counts = {str(s): sum(1 for r in results if r["status"] == s) for s in STATUSES}
        foot = {"type": "footer", "counts": counts, "seconds": round(time.monotonic() - self.clock, 3),
                "requests": len(verdicts)}
        tail = b"".join([*(json_line(r) for r in results), json_line(foot)])
        return [json_line(head), *requests, tail]

    @property
    def bodies(self) -> Path | None:
        """The folder beside the report where the first body breaking each rule is saved."""
        return None if self.path is None else self.path.with_name(self.path.stem + ".bodies")

    def _save_examples(self, results: list[dict], verdicts: list[Verdict]) -> None:
        """Save the body of each failing or warning line's first request beside the report, as
        a recorded request ``chatconform validate`` reads (its route says the model, where the
        path names it), and name it and that command in the line. Each body is written once."""
        folder = self.bodies
        if folder is None:
            return
        by_number = {v.number: v for v in verdicts}
        for line in results:
            verdict = by_number.get(line.get("request", 0))
            if verdict is None:
                continue
            saved = folder / f"request-{verdict.number}.json"
            if verdict.number not in self._saved:
                folder.mkdir(exist_ok=True)
                record = {"request": {"method": verdict.method, "uri": f"http://127.0.0.1{verdict.route}",
                                      "parsed_body": verdict.body}}
                outputs.write_atomic(saved, json_line(record), "a saved request body")
                self._saved.add(verdict.number)
            shown = os.path.relpath(saved) if not os.path.relpath(saved).startswith("..") else str(saved)
            line["saved"] = shown
            line["command"] = f"chatconform validate --provider {verdict.provider} {shlex.quote(shown)}"

    def _make_lines(self, verdicts: list[Verdict]) -> None:
        """Encode the request lines of the verdicts not made yet, onto the last chunk while it is small."""
        new = b"".join(json_line(v.line()) for v in verdicts[self._made:])
        self._made = len(verdicts)
        if self._chunks and len(self._chunks[-1]) < _CHUNK:
            self._chunks[-1] += new
        elif new:
            self._chunks.append(new)

    def header(self, providers: list[str]) -> dict:
        from chatconform.providers import get_provider

        return {
            "type": "header", "suite": "chatconform", "version": self.version, "profile": "serve",
            "seed": self.seed if self.seed is not None else "derandomized",
            "started": self.started.isoformat(timespec="seconds"),
            "implementations": {p: {"version": self.version, "spec": f"chatconform serve ({get_provider(p).title})",
                                    "contracts": ["serve"], "options": {}, "expected_failures": {}}
                                for p in providers},
            "serve": self.settings,
        }


def json_line(value: Any) -> bytes:
    """One report line as UTF-8; a string holding a lone surrogate (a body may: JSON's
    ``"\\ud800"`` escape reads as one) is written escaped, as JSON allows, not dropped."""
    text = json.dumps(value, ensure_ascii=False, default=str) + "\n"
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(value, default=str) + "\n").encode("ascii")


def _order(provider: str) -> int:
    from chatconform.providers import get_provider

    return get_provider(provider).order


def _tally(called: list[Verdict], served: str) -> str:
    """The routes of the requests served so, each with its count: ``GET /v1/models (2)``."""
    routes = Counter(f"{v.method} {v.route}" for v in called if v.served == served)
    return ", ".join(f"{route} ({count})" for route, count in routes.items())


def _served_lines(provider: str, called: list[Verdict], judged: int) -> list[dict]:
    """The lines of the requests not judged: ``serve.route`` (a warning naming each route the
    server lacks, else a pass naming the routes answered but not judged), ``serve.size`` (a
    failure: bodies over the provider's cap, which the provider rejects) and ``serve.origin``
    (a warning: requests refused for their Host or Origin)."""
    def line(check: str, status: Status, message: str) -> dict:
        return {"type": "result", "implementation": provider, "contract": "serve", "check": check,
                "status": str(status), "level": None if status == Status.PASS else
                "error" if status == Status.FAIL else "warning", "message": message, "example": None,
                "variant": None, "examples": len(called), "evaluated": len(called), "why": _SERVED_WHY[check]}

    missed, canned = _tally(called, "no route"), _tally(called, "not judged")
    routes = f"{judged} requests judged" + (f"; answered but not judged: {canned}" if canned else "")
    large, refused = _tally(called, "too large"), _tally(called, "refused")
    return [
        line(ROUTE_CHECK, Status.WARN if missed else Status.PASS,
             f"routes chatconform serve does not serve (answered 404, not judged): {missed}; {routes}" if missed
             else routes),
        line(SIZE_CHECK, Status.FAIL if large else Status.PASS,
             f"request bodies over the provider's size cap (answered as the provider does, not judged): {large}"
             if large else f"every body of {len(called)} requests within the provider's size cap"),
        line(ORIGIN_CHECK, Status.WARN if refused else Status.PASS,
             f"requests refused for their Host or Origin (a page in a browser; --allow-origin lets one post): "
             f"{refused}" if refused else "no request refused for its Host or Origin"),
    ]


def rule_why(provider: str, rule: str) -> str:
    """Why a rule is checked: what the provider requires, its own answer, and the evidence."""
    from chatconform.provider_schemas.rules import RULES

    info = RULES.get(provider, {}).get(rule)
    if info is None:
        return f"{rule}: a rule of {provider} (docs/provider-rules.md)"
    answer = "rejects the request" if info.severity == "error" else "may accept it, but"
    return (f"{rule}, {info.summary}: {provider} {answer} with \"{info.error}\" ({info.text} text; "
            f"evidence: {info.source})")


#: Why each check of the requests not judged is there.
_SERVED_WHY = {
    "serve.route": "a request to a route chatconform serve does not serve was answered 404 and not judged: the "
                   "application calls an API the server does not stand in for, so its requests there are untested",
    "serve.size": "the provider rejects a request body over its size cap before reading it (docs/serve.md#limits)",
    "serve.origin": "a page in a browser could post to a local endpoint that needs no key; the server refuses it "
                    "unless --allow-origin names the page (docs/serve.md#limits)",
}


def result_lines(verdicts: list[Verdict]) -> list[dict]:
    """One line per (provider, rule) of every provider called: pass, warn (only warnings) or
    fail, with the first breaking request as the example."""
    from chatconform.provider_schemas.rules import RULES

    lines = []
    for provider in sorted({v.provider for v in verdicts}, key=_order):
        called = [v for v in verdicts if v.provider == provider]
        judged = [v for v in called if v.served == "judged"]
        lines += _served_lines(provider, called, len(judged))
        broken: dict[str, list[tuple[Verdict, Any]]] = {}
        for verdict in judged:
            for problem in verdict.problems:
                broken.setdefault(problem.rule, []).append((verdict, problem))
        for rule in [*RULES.get(provider, {}), *(r for r in broken if r not in RULES.get(provider, {}))]:
            hits = broken.get(rule, [])
            requests = len({v.number for v, _ in hits})
            status = (Status.PASS if not hits else
                      Status.FAIL if any(p.severity == "error" for _, p in hits) else Status.WARN)
            line = {"type": "result", "implementation": provider, "contract": "serve",
                    "check": check_id(provider, rule), "status": str(status), "level": None, "message": None,
                    "example": None, "variant": None, "examples": len(judged), "evaluated": len(judged)}
            line["why"] = rule_why(provider, rule)
            if hits:
                first, problem = hits[0]
                line |= {"request": first.number, "route": first.route, "model": first.model}
                line |= {"level": problem.severity,
                         "message": f"{rule} at {problem.path}: {problem.message} ({requests} of {len(judged)} "
                                    f"requests; first: request {first.number}, turn {first.turn} of conversation "
                                    f"{first.conversation}, {first.route})",
                         "example": first.body}
            else:
                line["message"] = f"held on {len(judged)} requests"
            lines.append(line)
    return lines
