"""Stopping a run on SIGINT or SIGTERM between two steps, never in the middle of one.

The handlers :func:`handling` installs only note the signal and write a byte to a pipe. A
KeyboardInterrupt raised wherever the main thread happens to be can land in Hypothesis'
garbage-collector callback, which swallows it, and the run goes on. A noted stop is acted on
where the engine can stop cleanly: at the start of each example and after each guarded call
(:func:`check` raises :class:`~chatconform.errors.Interrupted`), and in every wait that could
last (the parallel parent's, an ``exec:`` program's), which also watch :func:`wakeup_fd`.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from chatconform.errors import Interrupted

#: The signals a run stops on.
SIGNALS = (signal.SIGINT, signal.SIGTERM)

_noted: list[str] = []  # the name of the first signal since the handlers were installed
_pipe: list[int] = []  # [read end, write end], made on first use


def requested() -> str | None:
    """The name of the signal that asked this process to stop, or None."""
    return _noted[0] if _noted else None


def check() -> None:
    """Raise :class:`Interrupted` once a stop has been asked for."""
    if _noted:
        raise Interrupted(_noted[0])


def exit_code(name: str) -> int:
    """The shell's code for a process ended by signal ``name``: 130 for SIGINT, 143 for SIGTERM."""
    return 128 + signal.Signals[name].value


def wakeup_fd() -> int:
    """A file descriptor that turns readable once a stop is asked for (``select`` on it)."""
    if not _pipe:
        read, write = os.pipe()
        os.set_blocking(read, False)
        os.set_blocking(write, False)
        _pipe.extend((read, write))
    return _pipe[0]


def _note(signum: int, frame: object) -> None:
    """The handler: note the signal and wake the waits; no lock, no raise, no I/O that blocks."""
    if not _noted:
        _noted.append(signal.Signals(signum).name)
    try:
        os.write(_pipe[1], b"!")
    except OSError:  # the pipe is full: it is readable already
        pass


def _reset() -> None:
    _noted.clear()
    try:
        while os.read(wakeup_fd(), 4096):
            pass
    except BlockingIOError:
        pass


@contextmanager
def handling(signals: tuple[signal.Signals, ...] = SIGNALS) -> Iterator[None]:
    """Stop on ``signals`` while the block runs, then put the previous handlers back.

    A signal ignored on entry stays ignored, as Python leaves an ignored SIGINT: a shell
    starts a background job so, to keep the Ctrl-C meant for the foreground from it. Only the
    main thread can install a handler; elsewhere this does nothing. A stop noted inside is
    forgotten on leaving, so read :func:`requested` before.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    wakeup_fd()
    _reset()
    previous = {number: signal.signal(number, _note) for number in signals
                if signal.getsignal(number) != signal.SIG_IGN}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, signal.SIG_DFL if handler is None else handler)
        _reset()
