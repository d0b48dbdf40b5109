"""Calls into an implementation under test, so that its failures stay its own.

Each call runs on a daemon thread with a deadline: an exception is captured, a call
past the deadline is abandoned (the thread may block forever without keeping the
process alive), and the suite goes on. A call that keeps its deadline itself (a program in
a process of its own) runs on the caller's thread instead. Once a stop is asked for (SIGINT, SIGTERM:
:mod:`chatconform.frame.stop`) the call is given up at once and raises
:class:`~chatconform.errors.Interrupted`: what it did then is no verdict. A coroutine
result (an ``async def`` contract method, as pydantic-ai's own mappers are) is run to
completion on that thread. Code on that thread can ask :func:`time_left` how long it has
(a program behind the ``exec:`` protocol is stopped before the deadline, so its hang is
reported with its stderr).
"""

from __future__ import annotations

import asyncio
import inspect
import os
import site
import sysconfig
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatconform.errors import Interrupted, ProgramError
from chatconform.frame import stop

DEFAULT_TIMEOUT = 10.0
#: The input size (rows, messages) by which a call's deadline is scaled: real mappers take
#: seconds on histories of thousands of messages (the openai SDK's request transform walks the
#: whole body: openai/openai-python#3616, BerriAI/litellm#29769), and some take time growing
#: with the square of it (a scan of every tool message for each response with calls), which
#: is slow, not hung.
ITEMS_PER_TIMEOUT = 1000
#: The share of its deadline after which a call that returns is slow (``<contract>.slow``).
SLOW_SHARE = 0.2


def call_deadline(timeout: float, size: int) -> float:
    """The hard deadline of one call on an input of ``size`` items: ``timeout`` times
    ``(1 + size / ITEMS_PER_TIMEOUT)`` squared, so a mapper quadratic in its input (slow, and
    ``chatconform bench`` shows it) is not read as hung: 10 s under 100 items, 40 s at 1,000,
    about 250 s at 4,000 (the size counted in whole hundreds, so a short input's deadline is
    ``timeout`` itself)."""
    hundreds = max(size, 0) * 10 // ITEMS_PER_TIMEOUT
    return round(timeout * (1 + hundreds / 10) ** 2, 3)


def slow_limit(deadline: float) -> float:
    """The time after which a call that returned within ``deadline`` counts as slow."""
    return deadline * SLOW_SHARE

_CALL = threading.local()  # the deadline of the guarded call running on this thread


@dataclass
class CallOutcome:
    output: Any = None
    error: BaseException | None = None
    error_trace: str = ""
    timed_out: bool = False
    seconds: float = 0.0

    def describe_error(self) -> str:
        if isinstance(self.error, ProgramError):  # its text names what the program raised
            return str(self.error)
        return f"{type(self.error).__name__}: {self.error}"


def guarded_call(fn: Callable[[], Any], timeout: float = DEFAULT_TIMEOUT, *,
                 enforced: bool = False, outcome: CallOutcome | None = None) -> CallOutcome:
    """Call ``fn`` within ``timeout`` seconds. ``enforced``: the call keeps the deadline
    itself (a program in a process of its own, stopped before :func:`time_left` runs out,
    its waits ended by a stop), so it runs on this thread and no thread is started for it.
    ``outcome``: the outcome to fill in (a :class:`~chatconform.frame.calls.Called`)."""
    outcome = CallOutcome() if outcome is None else outcome

    def target() -> None:
        _CALL.deadline = deadline
        try:
            result = fn()
            if inspect.iscoroutine(result):
                result = asyncio.run(result)
            outcome.output = result
        except BaseException as exc:
            outcome.error = exc
            outcome.error_trace = implementation_frames(exc)

    start = time.perf_counter()
    deadline = time.monotonic() + timeout
    worker = None
    if enforced:
        outer = getattr(_CALL, "deadline", None)
        try:
            target()
        finally:
            _CALL.deadline = outer
        if isinstance(outcome.error, Interrupted):
            raise outcome.error  # a stop, noticed in the call's wait: no verdict
    else:
        worker = threading.Thread(target=target, name="chatconform-call", daemon=True)
        worker.start()
        while worker.is_alive() and (left := deadline - time.monotonic()) > 0:
            worker.join(min(left, _STOP_POLL))  # a signal does not cut a join short: look for a stop
            stop.check()
    stop.check()
    outcome.seconds = time.perf_counter() - start
    if worker is not None and worker.is_alive():
        outcome.timed_out = True
    elif outcome.error is not None:
        _let_go_of_locals(outcome.error)
    return outcome


def _let_go_of_locals(error: BaseException) -> None:
    """Drop the traceback of an exception that ended a call (its frames are written out in
    ``error_trace`` already), and of the exceptions it chains. The traceback holds the frame
    of ``target``, which holds the outcome that holds the exception: a cycle that kept the
    implementation's every local (the case, a history's copy, what it made of it) alive
    until a full collection."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        traceback.clear_frames(current.__traceback__)
        current.__traceback__ = None
        current = current.__cause__ or current.__context__


#: How often a guarded call still running looks for a stop, in seconds.
_STOP_POLL = 0.05


def time_left() -> float | None:
    """Seconds left before the guarded call running on this thread is abandoned; None
    outside a guarded call."""
    deadline = getattr(_CALL, "deadline", None)
    return None if deadline is None else deadline - time.monotonic()


_PACKAGE_DIR = Path(__file__).resolve().parent.parent
#: The suite's own plumbing between a check and the implementation: its frames are not shown.
_ENGINE_DIRS = tuple(str(_PACKAGE_DIR / part) for part in (
    "frame", "contracts", "runner", "engine", "outputs", "api.py", "plugin.py", "bench.py"))
_LIBRARY_KEYS = ("purelib", "platlib", "stdlib", "platstdlib")
#: Where installed libraries and the standard library live: a frame there is shown from its
#: package down (``langchain_aws/chat_models/...``), the same on every machine; the user's
#: own files keep their full path, to be opened.
_LIBRARY_DIRS = tuple(sorted({str(Path(d).resolve()) + os.sep for d in (
    *getattr(site, "getsitepackages", list)(), *(sysconfig.get_paths()[key] for key in _LIBRARY_KEYS))},
    key=len, reverse=True))


def _shown(frame: traceback.FrameSummary) -> traceback.FrameSummary:
    resolved = str(Path(frame.filename).resolve())
    library = next((d for d in _LIBRARY_DIRS if resolved.startswith(d)), None)
    if library is None:
        return frame
    return traceback.FrameSummary(resolved[len(library):], frame.lineno, frame.name, lookup_line=False,
                                  line=frame.line)


def implementation_frames(exc: BaseException, limit: int = 6) -> str:
    """The innermost frames of the implementation: where it failed, not the engine's plumbing."""
    frames = [frame for frame in traceback.extract_tb(exc.__traceback__)
              if not str(Path(frame.filename).resolve()).startswith(_ENGINE_DIRS)]
    return "".join(traceback.format_list([_shown(frame) for frame in frames[-limit:]]))
