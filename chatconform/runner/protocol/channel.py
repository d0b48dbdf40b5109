"""One running program: JSON lines to its stdin, JSON lines from its stdout, its stderr kept.

Every read and write has a deadline (``select`` on the pipes, so this needs a POSIX
system). A line longer than the limit is a flood, end of file is an exit, so is the
program's exit while a process it started holds its stdout open, and output that arrives
when no request is waiting for it is reported by :meth:`Channel.stray`. The program runs in
a session of its own, so stopping it stops what it started in its process group: at close,
and for every live program at once on a stop (:func:`kill_all`). On Linux it is started by
a supervisor (:func:`~chatconform.runner.protocol.reaper.supervise`) that also ends what
left the group (a session of its own, a daemon) when the program exits, is stopped, or the
run's process goes. A wait also ends when a stop is asked for
(:mod:`chatconform.frame.stop`), raising :class:`~chatconform.errors.Interrupted`.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from functools import cache
from typing import IO, Any, Protocol

from chatconform.frame import stop
from chatconform.runner.protocol import reaper


class Fault(Exception):
    """The program broke the protocol; ``kind`` says how (exited, hung, flood, ...)."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class _Tail:
    """Drains a pipe on a thread of its own, keeping its last bytes."""

    KEEP = 16 * 1024

    def __init__(self, pipe: IO[bytes]):
        self._pipe = pipe
        self._data = bytearray()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, name="chatconform-stderr", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        fd = self._pipe.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            with self._lock:
                self._data += chunk
                if len(self._data) > 2 * self.KEEP:
                    del self._data[:-self.KEEP]

    def finished(self, wait: float) -> bool:
        self._thread.join(wait)
        return not self._thread.is_alive()

    def lines(self, wait: float = 0.0, count: int = 8, width: int = 300) -> list[str]:
        """The last ``count`` non-blank lines (each cut at ``width``), after waiting up to
        ``wait`` s for the pipe to close."""
        if wait > 0:
            self._thread.join(wait)
        with self._lock:
            text = bytes(self._data[-self.KEEP:]).decode("utf-8", "replace")
        lines = [line.rstrip() for line in text.splitlines() if line.strip()]
        return [line if len(line) <= width else line[:width] + " …" for line in lines[-count:]]


#: The bytes a pipe to or from a program holds (Linux's default is 64 KiB, the most an
#: unprivileged process may ask is 1 MiB by default): a long history, or the body made of it,
#: then passes in a few writes instead of waking both processes every 64 KiB, which cost more
#: CPU than the copy itself.
PIPE_BYTES = 1 << 20


def widen_pipe(fd: int) -> None:
    """Let the pipe of ``fd`` hold :data:`PIPE_BYTES` where the system allows it (Linux);
    elsewhere, or past the system's cap, it keeps its size."""
    if sys.platform == "linux":  # F_SETPIPE_SZ is Linux's alone
        try:
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        except OSError:
            pass


class Process(Protocol):
    """What :class:`Channel` uses of a started program: a :class:`subprocess.Popen` started
    with three pipes, or the built-in host (:class:`~chatconform.runner.protocol.forked.HostProcess`)."""

    pid: int

    @property
    def stdin(self) -> IO[bytes] | None: ...
    @property
    def stdout(self) -> IO[bytes] | None: ...
    @property
    def stderr(self) -> IO[bytes] | None: ...
    def poll(self) -> int | None: ...
    def wait(self, timeout: float | None = None) -> int: ...
    def kill(self) -> None: ...


def _pipe(stream: IO[bytes] | None, name: str) -> IO[bytes]:
    if stream is None:
        raise ValueError(f"the program was started without a pipe for its {name}")
    return stream


class Channel:
    def __init__(self, argv: list[str], env: dict[str, str] | None = None, *, process: Process | None = None):
        """Start ``argv`` (with the environment ``env``, else this one's); OSError when it
        cannot be started. ``process``: one already started, with Popen's ``stdin``,
        ``stdout``, ``stderr``, ``pid``, ``poll``, ``wait`` and ``kill`` (the built-in host,
        :mod:`chatconform.runner.protocol.forked`)."""
        self.argv = argv
        #: The supervisor's control socket and the program's pid, where a supervisor runs it.
        self._supervisor: tuple[socket.socket, int] | None = None
        if process is None and supervised():
            process = self._supervised(argv, env)
        self.process: Process = process or subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                            stderr=subprocess.PIPE, bufsize=0,
                                                            start_new_session=True, env=env)
        self._stdin = _pipe(self.process.stdin, "stdin")
        self._stdout = _pipe(self.process.stdout, "stdout")
        self._stderr = _pipe(self.process.stderr, "stderr")
        self._in = self._stdin.fileno()
        self._out = self._stdout.fileno()
        widen_pipe(self._in)
        widen_pipe(self._out)
        os.set_blocking(self._in, False)
        self._buffer = bytearray()
        self._scanned = 0  # how much of the buffer is known to hold no newline
        self.stderr = _Tail(self._stderr)
        _LIVE[id(self)] = self

    def _supervised(self, argv: list[str], env: dict[str, str] | None) -> subprocess.Popen[bytes]:
        """``argv`` started by a supervisor, which says the program's pid (or why it could not
        start it, raised as the OSError starting it here would raise)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)  # a message a read
        try:
            supervisor = subprocess.Popen(reaper.command(theirs.fileno(), argv), stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
                                          start_new_session=True, env=env, pass_fds=(theirs.fileno(),))
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        ours.settimeout(_SUPERVISOR_SECONDS)
        try:
            said = ours.recv(64)
        except OSError:
            said = b""
        if said.startswith(reaper.STARTED):
            ours.setblocking(False)  # a kill never waits
            self._supervisor = ours, int(said[len(reaper.STARTED):])
            return supervisor
        ours.close()
        supervisor.kill()
        supervisor.communicate()
        if said.startswith(reaper.FAILED):
            number = int(said[len(reaper.FAILED):])
            raise OSError(number, os.strerror(number), argv[0])
        raise OSError(f"the supervisor that starts {argv[0]!r} did not start "
                      f"(it ended with {exit_text(supervisor.returncode)})")

    # -- framing -------------------------------------------------------------------------
    def send(self, message: Any, deadline: float) -> None:
        data = memoryview(json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
        while data:
            try:
                written = os.write(self._in, data)
            except BlockingIOError:
                written = 0
            except (BrokenPipeError, ConnectionResetError):
                raise Fault("exited", "closed its stdin") from None
            data = data[written:]
            if data:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise Fault("hung", "stopped reading its stdin")
                if not self._wait([], [self._in], remaining) and self.process.poll() is not None:
                    raise Fault("exited", "exited while a process it started holds its stdin open")

    def receive(self, deadline: float, limit: int) -> bytes:
        """The next line the program writes (without its newline)."""
        while True:
            newline = self._buffer.find(b"\n", self._scanned)
            if newline >= 0:
                line = bytes(self._buffer[:newline])
                del self._buffer[:newline + 1]
                self._scanned = 0
                return line
            self._scanned = len(self._buffer)
            if len(self._buffer) > limit:
                raise Fault("flood", f"wrote more than {_size(limit)} without ending the line")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise Fault("hung", "gave no answer in time")
            if self._wait([self._out], [], remaining):
                chunk = os.read(self._out, 1 << 20)
                if not chunk:
                    raise Fault("exited", "closed its stdout")
                self._buffer += chunk
            elif self.process.poll() is not None:  # and nothing more came
                raise Fault("exited", "exited while a process it started holds its stdout open")

    def _wait(self, read: list[int], write: list[int], timeout: float) -> bool:
        """``select`` for up to ``timeout`` s, ended early by a stop, and after
        :data:`_EXIT_POLL` s at most, to look whether the program has exited; whether a pipe
        is ready."""
        wake = stop.wakeup_fd()
        readable, writable, _ = select.select([*read, wake], write, [], min(timeout, _EXIT_POLL))
        stop.check()
        return bool([fd for fd in readable if fd != wake] or writable)

    def stray(self) -> tuple[bytes, bool]:
        """Output no request asked for, as far as it has arrived, and whether stdout is closed."""
        data, closed = bytes(self._buffer), False
        if select.select([self._out], [], [], 0)[0]:
            chunk = os.read(self._out, 1 << 16)
            data, closed = data + chunk, not chunk
        return data, closed

    # -- the process ---------------------------------------------------------------------
    def exit_status(self, wait: float = 0.0) -> int | None:
        try:
            return self.process.wait(timeout=wait) if wait > 0 else self.process.poll()
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        """Stop the program and whatever it started, its whole process group (and, under a
        supervisor, what left the group), now; do not wait.

        Also once the program itself has exited, as a child it forked may still run (the
        group's id is not given to another while any process is left in the group).
        """
        if self._supervisor is not None:  # the supervisor ends what left the group too
            control, program = self._supervisor
            try:
                control.send(b"kill")
            except OSError:
                pass
            reaper.kill_with_group(program)  # should the program have killed its supervisor
            return
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except OSError:
            if self.process.poll() is None:
                self.process.kill()

    def close(self, goodbye: Any = None, grace: float = 2.0) -> None:
        """Say ``goodbye``, close stdin, give the program ``grace`` s to exit, then stop it."""
        if self.process.poll() is None:
            try:
                if goodbye is not None:
                    self.send(goodbye, time.monotonic() + min(grace, 0.5))
            except Fault:
                pass
        try:
            self._stdin.close()
        except OSError:
            pass
        self.exit_status(grace)
        self.kill()  # what is left: the program, or a child it forked when it exited by itself
        self.exit_status(grace)
        _LIVE.pop(id(self), None)
        if self._supervisor is not None:
            self._supervisor[0].close()
        self._stdout.close()
        if self.stderr.finished(wait=0.5):  # never close a pipe a thread still reads
            self._stderr.close()


#: Every channel not yet closed, by id (a program stuck in a call included).
_LIVE: dict[int, Channel] = {}
#: How long a wait on a program goes before it looks whether the program has exited (its
#: pipes may stay open in a process it started), and how long a supervisor has to say it
#: started the program.
_EXIT_POLL = 0.25
_SUPERVISOR_SECONDS = 30.0


@cache
def supervised() -> bool:
    """Whether ``exec:`` programs are started by a supervisor: where the system has child
    subreapers (:mod:`~chatconform.runner.protocol.reaper`) and this Python can be started
    again."""
    return bool(sys.executable) and reaper.available()


def kill_all() -> None:
    """Kill the process group of every program still running: on a stop, or when the process
    ends before it could close them. Safe from any thread, and without a lock."""
    for channel in list(_LIVE.values()):
        channel.kill()


def exit_text(code: int | None) -> str:
    """A Popen return code in words: ``signal 9``, ``status 3``."""
    return f"signal {-code}" if code is not None and code < 0 else f"status {code}"


def _size(limit: int) -> str:
    return f"{limit / 2**20:g} MiB" if limit >= 2**20 else f"{limit} bytes"
