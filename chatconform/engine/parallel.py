"""Searching a run's units in worker processes (``chatconform run --jobs N``).

Each worker is a fresh interpreter (the ``spawn`` start method: the parent holds threads,
and perhaps programs started for ``exec:`` implementations, which a forked child would
copy in whatever state they were in). A worker is sent implementation *specs*, never
objects: it loads each one again, as the parent did, and runs one search at a time. The
cases a search draws depend only on the unit (see :mod:`chatconform.engine.search`),
so a verdict does not depend on which worker ran it, or when; the parent folds the results
in plan order. A worker forwards its search's events (:class:`ExampleRan`) to the parent,
which gives them to the run's handlers with the :class:`SearchStarted` and
:class:`SearchFinished` of each unit, so progress reads as in a serial run.

A worker ignores Ctrl-C from its start (a terminal sends it to the whole process group):
the parent decides. On a stop (:mod:`chatconform.frame.stop`) the parent stops waiting
and ends its workers with SIGTERM, on which a worker kills the ``exec:`` programs it started
and ends; one that has not ended within a few seconds is killed. A worker also ends, with
its programs, as soon as its parent does, however the parent ended. A worker that dies (a
crash in native code, the out-of-memory killer) is an error of the search it was running,
with its exit code; the others go on in a new worker.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Any

from chatconform.engine.drawn import STORE
from chatconform.engine.events import Event, Handler, SearchFinished, SearchStarted, emit
from chatconform.engine.results import Failure, SearchResult, SearchSettings, Unit
from chatconform.engine.search import search_unit
from chatconform.errors import ConfigError, Interrupted
from chatconform.frame import stop
from chatconform.runner import discovery
from chatconform.runner.discovery import Implementation
from chatconform.runner.protocol import channel, forked
from chatconform.runner.protocol.program import Program


@dataclass(frozen=True)
class Task:
    """What a worker needs for one search: everything is plain data."""

    unit: Unit
    spec: str
    selected: dict[str, frozenset[str]]
    settings: SearchSettings
    hosted: bool = False


def run_units(impls: list[Implementation], units: list[Unit], settings: SearchSettings, *, jobs: int,
              handlers: Sequence[Handler] = ()) -> dict[Unit, SearchResult]:
    """Search ``units`` in up to ``jobs`` worker processes; each unit's result (on a stop, of
    the units that finished)."""
    specs = {index: discovery.portable_spec(impls[index]) for index in sorted({u.impl for u in units})}
    tasks = [Task(u, specs[u.impl], dict(impls[u.impl].selected), settings, impls[u.impl].hosted) for u in units]
    results: dict[Unit, SearchResult] = {}
    for index in specs:  # each worker loads its own: this process's would sit idle, holding memory
        if isinstance(impls[index].obj, Program):
            impls[index].obj.release()
    pool = _Pool(min(jobs, len(tasks)))

    def started(task: Task) -> None:
        emit(handlers, SearchStarted(impls[task.unit.impl].name, task.unit.contract, task.unit.variant))

    try:
        for task, result, seconds in pool.run(tasks, started=started, forward=lambda e: emit(handlers, e)):
            results[task.unit] = result
            emit(handlers, SearchFinished(impls[task.unit.impl].name, task.unit.contract, task.unit.variant,
                                          result, seconds))
    finally:
        pool.close()
    return results


class _Worker:
    def __init__(self, context) -> None:
        self.conn, child = context.Pipe()
        # The run's fork server, whose loaders hold the implementations this process loaded:
        # the worker's hosts are forked from them rather than each loading its own.
        fork_server = forked.share()
        self.process = context.Process(target=_serve, args=(child, fork_server, dict(os.environ)), daemon=True,
                                       name="chatconform-worker")
        with _main_left_out(), _ctrl_c_ignored_at_birth():
            self.process.start()
        child.close()
        if fork_server is not None:
            fork_server.close()
        self.task: Task | None = None
        self.started = 0.0
        #: The implementations it has loaded (a hosted one keeps its process while the worker
        #: lives) and the (contract, variant) it searched last.
        self.specs: set[str] = set()
        self.last: tuple[str, str | None] | None = None


def _next_task(pending: deque[Task], worker: _Worker) -> Task:
    """Take the pending task ``worker`` is best placed to search: of the contract the queue is
    at (a worker keeps one contract's drawn cases at a time), one whose implementation it has
    loaded already (another worker would start that implementation's process again, and keep
    it beside this one's), of the variant it searched last first (whose reference answers it
    keeps); else the next in the queue. Which worker searches a unit changes no verdict."""
    contract = pending[0].unit.contract
    best, best_score = 0, (False, False)
    for position, task in enumerate(pending):
        if task.unit.contract != contract:
            break  # the queue is in search order: one contract's units come together
        score = (task.spec in worker.specs, (task.unit.contract, task.unit.variant) == worker.last)
        if score > best_score:
            best, best_score = position, score
            if score == (True, True):
                break
    task = pending[best]
    del pending[best]
    worker.specs.add(task.spec)
    worker.last = (task.unit.contract, task.unit.variant)
    return task


class _Pool:
    """Worker processes, each searching one unit at a time, fed from one queue."""

    def __init__(self, size: int) -> None:
        self.context = multiprocessing.get_context("spawn")
        self.size = size
        self.workers: list[_Worker] = []

    def run(self, tasks: list[Task], started: Callable[[Task], None], forward: Callable[[Event], None]):
        """Yield (task, result, seconds) as each search ends, until a stop; give the workers'
        events to ``forward``."""
        pending = deque(tasks)

        def feed(worker: _Worker) -> None:
            if pending:
                worker.task, worker.started = _next_task(pending, worker), time.perf_counter()
                worker.conn.send(worker.task)
                started(worker.task)
            else:
                worker.task = None

        for _ in range(self.size):
            self.workers.append(_Worker(self.context))
            feed(self.workers[-1])
        while busy := [w for w in self.workers if w.task is not None]:
            ready = wait([w.conn for w in busy] + [w.process.sentinel for w in busy] + [stop.wakeup_fd()])
            if stop.requested():
                return
            for worker in busy:
                if worker.conn not in ready and worker.process.sentinel not in ready:
                    continue
                result = self._answer(worker, forward)
                if result is _STILL_SEARCHING:
                    continue
                task, seconds = worker.task, time.perf_counter() - worker.started
                if result is None:  # the process ended without answering
                    worker.process.join(5)
                    result = SearchResult.stopped(f"the worker process searching it died "
                                                  f"({_exit_text(worker.process.exitcode)})")
                    self._retire(worker)
                    if pending:
                        self.workers.append(_Worker(self.context))
                        feed(self.workers[-1])
                else:
                    feed(worker)
                yield task, result, seconds

    @staticmethod
    def _answer(worker: _Worker, forward: Callable[[Event], None]) -> Any:
        """Read what the worker sent: its events go to ``forward``; then its result, or
        None when it ended without answering, or :data:`_STILL_SEARCHING`."""
        try:
            while worker.conn.poll():
                kind, payload = worker.conn.recv()
                if kind == "result":
                    return payload
                forward(payload)
        except (EOFError, OSError):
            return None
        return None if not worker.process.is_alive() else _STILL_SEARCHING

    def _retire(self, worker: _Worker) -> None:
        worker.task = None
        worker.conn.close()
        self.workers.remove(worker)

    def close(self) -> None:
        """Stop every worker: politely when idle, with SIGTERM when still searching (a stop)."""
        for worker in self.workers:
            try:
                if worker.task is None:
                    worker.conn.send(None)
                else:
                    worker.process.terminate()
            except OSError:
                worker.process.terminate()
        deadline = time.monotonic() + 5
        for worker in self.workers:
            worker.process.join(max(0.0, deadline - time.monotonic()))
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
            worker.conn.close()
        self.workers.clear()


@contextmanager
def _main_left_out() -> Iterator[None]:
    """Start a worker without running the parent's ``__main__`` again in it.

    ``spawn`` re-imports the main script in each child, so that objects pickled from it can
    be found; a worker is sent specs only, and a user's script without an
    ``if __name__ == "__main__":`` guard would start a run in every worker. The start
    reads where ``__main__`` came from at that moment only, so it is hidden for that moment.
    """
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    saved = {name: vars(main)[name] for name in ("__spec__", "__file__") if name in vars(main)}
    if "__file__" in saved:
        del main.__file__
    if "__spec__" in saved:
        main.__spec__ = None
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(main, name, value)


@contextmanager
def _ctrl_c_ignored_at_birth() -> Iterator[None]:
    """Start a worker that ignores SIGINT from its first instruction, before it could raise a
    KeyboardInterrupt (and print its traceback) while still importing: an ignored signal is
    the one disposition a new program inherits. Meanwhile the parent holds a SIGINT back
    rather than dropping it: it arrives when the parent's own handler is back.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_DFL if previous is None else previous)
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _exit_text(code: int | None) -> str:
    if code is None:
        return "no exit code"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


#: What :meth:`_Pool._answer` gives while the worker's search goes on.
_STILL_SEARCHING = object()


# -- the worker side ---------------------------------------------------------------------------

def _serve(conn, fork_server=None, environ=None) -> None:
    """A worker's loop: load, search, answer; until told to stop (None) or the pipe closes.
    ``fork_server``: a connection to the run's fork server, which its hosts are forked by,
    with ``environ``, the run's environment.

    SIGTERM (the parent's stop, or anyone's) stops the search under way: the worker kills
    the programs it started and ends by that signal, answering nothing.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides what Ctrl-C stops
    _exit_with_the_parent()
    if fork_server is not None:
        forked.use(fork_server, environ or dict(os.environ))
    try:
        with stop.handling((signal.SIGTERM,)):
            _answer_tasks(conn)
    except Interrupted:
        channel.kill_all()
        os.kill(os.getpid(), signal.SIGTERM)  # its own handler is gone: the worker ends by SIGTERM


def _answer_tasks(conn) -> None:
    with STORE.session():  # the cases this worker draws, judged for every unit it is given
        _answer_each(conn)


def _answer_each(conn) -> None:
    loaded: dict[tuple[str, tuple], Any] = {}
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        result = _search(task, loaded, _forwarder(conn))
        try:
            conn.send(("result", result))
        except OSError:  # the parent is gone: nobody is left to read the result
            return


def _forwarder(conn) -> Handler:
    """A handler that sends each event of the search to the parent."""
    def forward(event: Event) -> None:
        try:
            conn.send(("event", event))
        except OSError:
            pass  # the parent is gone: sending the result will end this worker
    return forward


def _exit_with_the_parent() -> None:
    """End this worker as soon as its parent ends, however it ended.

    A parent killed outright (SIGTERM from a CI runner, SIGKILL) cannot stop its workers,
    and a search can run for minutes: a thread waits on the parent's sentinel instead.
    """
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        wait([parent.sentinel])
        channel.kill_all()  # os._exit runs no clean-up: the programs this worker started go now
        os._exit(1)

    threading.Thread(target=watch, name="chatconform-parent-watch", daemon=True).start()


def _search(task: Task, loaded: dict, forward: Handler) -> SearchResult:
    key = (task.spec, task.hosted, tuple(sorted((k, tuple(sorted(v))) for k, v in task.selected.items())))
    if key not in loaded:
        try:
            impl = discovery.load(task.spec, in_process=not task.hosted)
            for option, allowed in task.selected.items():
                impl.select(option, allowed)
            loaded[key] = impl
        except Exception as exc:
            loaded[key] = f"{type(exc).__name__}: {exc}" if not isinstance(exc, ConfigError) else str(exc)
    impl = loaded[key]
    if isinstance(impl, str):
        return SearchResult.stopped(f"the worker process could not load {task.spec}: {impl}")
    try:
        result = search_unit(impl, task.unit, task.settings, [forward])
    except Exception as exc:
        return SearchResult.stopped(f"the search raised {type(exc).__name__}: {exc}")
    return _sendable(result)


def _sendable(result: SearchResult) -> SearchResult:
    """The result with every expected/actual value that cannot be pickled made of built-in
    containers (a failure shows it the same), or else turned into its ``repr``."""
    failures: list[Failure] = list(result.failures.values()) + ([result.hung] if result.hung else [])
    for failure in failures:
        for name in ("expected", "actual"):
            value = getattr(failure, name)
            if _pickles(value):
                continue
            plain = _built_in(value)
            setattr(failure, name, plain if _pickles(plain) else repr(value))
    return result


def _pickles(value: Any) -> bool:
    try:
        pickle.dumps(value)
    except Exception:
        return False
    return True


def _built_in(value: Any) -> Any:
    """``value`` with every dict, list and tuple (of a subclass too) made the built-in type."""
    if isinstance(value, dict):
        return {key: _built_in(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_built_in(item) for item in value]
        return tuple(items) if isinstance(value, tuple) else items
    return value
