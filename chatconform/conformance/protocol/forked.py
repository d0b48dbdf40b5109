"""Starting the built-in host: a fresh process per Python implementation, forked in milliseconds.

Importing chatconform and pydantic-ai takes a second or two, and an implementation that
crashes is started again for the next call, so the host is not started as a new Python
each time. A fork server (:func:`main`, one per
process that runs searches, started on first use) imports the host once; each host is a
fork of it, which then loads only its spec. The fork server runs no threads, so forking
it is safe where forking this process, which does, would not be.

The fork server and this process talk over a Unix socket pair: a request carries the
spec, the working folder, the environment and the three pipe ends the host gets as its
stdin, stdout and stderr; the server answers with the host's pid and, when the host
ends, with its exit status (the host is the server's child, not this process's). The
server ends when this process does (its socket closes).

The host is named here (:data:`HOST_MODULE`) the way a command names its program, not
imported: it loads implementations with :mod:`chatconform.conformance.discovery`, which
starts hosts with this module.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import traceback
from pathlib import Path
from typing import Any

#: The module that answers the protocol for a Python implementation (its ``serve(spec)``).
HOST_MODULE = "chatconform.conformance.protocol.host"
#: The host's exit status when the spec does not load, and when its library is missing;
#: the start of its stderr line that says why.
LOAD_FAILED, MISSING_LIBRARY = 2, 3
LOAD_ERROR = "chatconform host: "
#: The memory a host may map, in MiB, unless the run sets another (``run --memory-limit``,
#: which sets this variable; 0: no cap).
DEFAULT_MEMORY_MIB = 4096
MEMORY_VARIABLE = "CHATCONFORM_HOST_MEMORY_MIB"
_MESSAGE_BYTES = 1 << 20  # a request holds the environment


# -- this process's side -------------------------------------------------------------------------

class _Server:
    """The running fork server: one request at a time, exit statuses as they come."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        root = str(Path(__file__).resolve().parents[3])  # the folder that holds this chatconform
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])])
        command = [sys.executable, "-c", f"from {__name__} import main; main()"]
        self.process = subprocess.Popen(command, stdin=theirs, env=env, start_new_session=True, close_fds=True)
        theirs.close()
        self.socket = ours
        self.lock = threading.Lock()
        self.started: dict[int, None] = {}
        self.ended: dict[int, int] = {}
        self.changed = threading.Condition()
        self.reply: list[dict] = []
        threading.Thread(target=self._listen, name="chatconform-fork-server", daemon=True).start()

    def _listen(self) -> None:
        while True:
            try:
                data = self.socket.recv(_MESSAGE_BYTES)
            except OSError:
                data = b""
            with self.changed:
                if not data:
                    self.reply.append({"error": "the fork server ended"})
                    self.socket.close()
                    self.changed.notify_all()
                    return
                message = json.loads(data)
                if "ended" in message:
                    self.ended[message["ended"]] = message["status"]
                else:
                    self.reply.append(message)
                self.changed.notify_all()

    def fork(self, spec: str, entry: str | None, fds: list[int]) -> int:
        request = json.dumps({"spec": spec, "entry": entry, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
        with self.lock:
            socket.send_fds(self.socket, [request], fds)
            with self.changed:
                self.changed.wait_for(lambda: self.reply, timeout=30)
                if not self.reply:
                    raise OSError("the fork server did not answer")
                reply = self.reply.pop(0)
        if "error" in reply:
            raise OSError(reply["error"])
        return int(reply["pid"])

    def wait(self, pid: int, timeout: float | None) -> int | None:
        with self.changed:
            self.changed.wait_for(lambda: pid in self.ended or self.socket.fileno() < 0, timeout=timeout)
            return self.ended.get(pid)


_SERVER: _Server | None = None
_SERVER_LOCK = threading.Lock()


def _server() -> _Server:
    global _SERVER
    with _SERVER_LOCK:
        if _SERVER is None or _SERVER.process.poll() is not None:
            _SERVER = _Server()
        return _SERVER


class HostProcess:
    """A host forked for ``spec``, with the pipes and methods of a :class:`subprocess.Popen`
    that :class:`~chatconform.conformance.protocol.channel.Channel` uses. It leads a session
    of its own, as a started program does, so killing its group stops what it started.
    OSError when it cannot be started."""

    def __init__(self, spec: str, entry: str | None = None) -> None:
        pipes = [os.pipe() for _ in range(3)]  # stdin, stdout, stderr: (read, write) each
        theirs = [pipes[0][0], pipes[1][1], pipes[2][1]]
        self.server = _server()
        try:
            self.pid = self.server.fork(spec, entry, theirs)
        except OSError:
            for fd in (*theirs, pipes[0][1], pipes[1][0], pipes[2][0]):
                os.close(fd)
            raise
        finally:
            for fd in theirs:
                if _is_open(fd):
                    os.close(fd)
        self.args = ["chatconform-host", spec]
        self.stdin = os.fdopen(pipes[0][1], "wb", buffering=0)
        self.stdout = os.fdopen(pipes[1][0], "rb", buffering=0)
        self.stderr = os.fdopen(pipes[2][0], "rb", buffering=0)

    def poll(self) -> int | None:
        return self.server.wait(self.pid, 0)

    def wait(self, timeout: float | None = None) -> int:
        code = self.server.wait(self.pid, timeout)
        if code is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return code

    def kill(self) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


# -- the fork server -------------------------------------------------------------------------------

def _status(raw: int) -> int:
    """A wait status as Popen words it: the exit code, or minus the signal."""
    return -os.WTERMSIG(raw) if os.WIFSIGNALED(raw) else os.WEXITSTATUS(raw)


def _serve_forks(channel: socket.socket) -> None:
    import importlib

    host = importlib.import_module(HOST_MODULE)  # imported once: every fork has it
    host.warm()
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    children: set[int] = set()
    while True:
        readable, _, _ = select.select([channel, wake_r], [], [])
        if wake_r in readable:
            os.read(wake_r, 4096)
        for pid in list(children):
            done, raw = os.waitpid(pid, os.WNOHANG)
            if done:
                children.discard(pid)
                channel.send(json.dumps({"ended": pid, "status": _status(raw)}).encode())
        if channel not in readable:
            continue
        try:
            data, fds, _, _ = socket.recv_fds(channel, _MESSAGE_BYTES, 3)
        except OSError:
            return
        if not data:
            return
        request = json.loads(data)
        pid = os.fork()
        if pid == 0:
            channel.close()
            os.close(wake_r)
            os.close(wake_w)
            _become_host(host, request, fds)
        for fd in fds:
            os.close(fd)
        children.add(pid)
        channel.send(json.dumps({"pid": pid}).encode())


def _become_host(host: Any, request: dict, fds: list[int]) -> None:
    """In the forked child: a session of its own, the pipes as fd 0, 1 and 2, the run's
    working folder and environment, default signals; then serve the spec and exit."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        os.setsid()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        code = host.serve(request["spec"], request.get("entry"))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - the host's own failure, on its stderr
        traceback.print_exc()
    finally:
        try:
            sys.stderr.flush()
        finally:
            os._exit(code)


def main() -> None:
    """The fork server's process: its stdin is its end of the socket pair. It ends quietly
    when the process it serves has gone (the socket closed under a send or a read)."""
    try:
        _serve_forks(socket.socket(fileno=os.dup(0)))
    except OSError:
        pass
