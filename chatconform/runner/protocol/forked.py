"""Starting the built-in host: a fresh process per Python implementation, forked in milliseconds.

Importing chatconform and pydantic-ai takes a second or two, an adapter's library often as
much again, and an implementation that crashes is started again for the next call, so the
host is not started as a new Python each time. A fork server (:func:`main`, started on
first use by the run's process) imports the host once. For each implementation it forks a
*loader*, which loads and warms up that implementation once (its library imported, its
client built) and then forks a host for every request: a host, and a host started again
after a crash, begins with the implementation loaded and calls nothing it did not call.
The worker processes of ``--jobs`` share the run's fork server (:func:`share`,
:func:`use`), so an implementation is loaded once for the run, and its hosts share the
loader's memory rather than each holding a copy (both freeze their heaps before forking,
so a host's collections leave those pages alone). A loader that fails to load the
implementation within :data:`_LOADING_SECONDS`, or that once it has runs a thread (forking
it would not be safe) or holds a file it opened (its hosts would share it), gives way: the
implementation's hosts are then forked from the server and load it themselves, with the
errors loading gives (exit status 2 or 3 and the reason on stderr). A server keeps at most
:data:`_LOADERS` loaders; one retired to make room ends with its last host. The server and
the loaders run no threads, so forking them is safe where forking the run's process, which
does, would not be.

The fork server and each process it serves talk over a Unix socket pair: a request carries
the spec, the working folder, the environment and the three pipe ends the host gets as its
stdin, stdout and stderr; the server answers with the host's pid and, when the host ends,
with its exit status. The server ends when the run's process does (its socket closes); a
loader ends with the server.

The host is named here (:data:`HOST_MODULE`) the way a command names its program, not
imported: it loads implementations with :mod:`chatconform.runner.discovery`, which
starts hosts with this module.
"""

from __future__ import annotations

import gc
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chatconform.runner.protocol import reaper

#: The module that answers the protocol for a Python implementation (its ``serve(spec)``).
HOST_MODULE = "chatconform.runner.protocol.host"
_MESSAGE_BYTES = 1 << 20  # a request holds the environment


# -- this process's side -------------------------------------------------------------------------

class _Server:
    """The running fork server, as this process reaches it: one request at a time, exit
    statuses as they come. ``connection``: a socket to a server another process started
    (:func:`use`), ``environ`` the environment of that process's hosts; else this process
    starts its own, and its hosts get this process's environment."""

    def __init__(self, connection: socket.socket | None = None, environ: dict[str, str] | None = None) -> None:
        self.environ = environ
        self.process: subprocess.Popen | None = None
        if connection is None:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            root = str(Path(__file__).resolve().parents[3])  # the folder that holds this chatconform
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])])
            command = [sys.executable, "-c", f"from {__name__} import main; main()"]
            self.process = subprocess.Popen(command, stdin=theirs.fileno(), env=env, start_new_session=True,
                                            close_fds=True)
            theirs.close()
            connection = ours
        self.socket = connection
        self.lock = threading.Lock()
        self.ended: dict[int, int] = {}
        self.changed = threading.Condition()
        self.replies: dict[int, dict] = {}  # by request number: several threads may wait at once
        self.requests = 0
        self.closed = False
        threading.Thread(target=self._listen, name="chatconform-fork-server", daemon=True).start()

    def alive(self) -> bool:
        if self.process is not None:
            return self.process.poll() is None
        return not self.closed

    def _listen(self) -> None:
        while True:
            try:
                data = self.socket.recv(_MESSAGE_BYTES)
            except OSError:
                data = b""
            with self.changed:
                if not data:
                    self.closed = True
                    self.socket.close()
                    self.changed.notify_all()
                    return
                message = json.loads(data)
                if "ended" in message:
                    self.ended[message["ended"]] = message["status"]
                else:
                    self.replies[message["request"]] = message
                self.changed.notify_all()

    def fork(self, spec: str, entry: str | None, fds: list[int]) -> int:
        with self.lock:
            self.requests += 1
            number = self.requests
            request = {"request": number, "spec": spec, "entry": entry, "stamp": _stamp(spec), "cwd": os.getcwd(),
                       "env": dict(os.environ) if self.environ is None else self.environ}
            socket.send_fds(self.socket, [json.dumps(request).encode()], fds)
        with self.changed:
            self.changed.wait_for(lambda: number in self.replies or self.closed, timeout=_START_SECONDS)
            reply = self.replies.pop(number, None)
        if reply is None:
            raise OSError("the fork server ended" if self.closed else "the fork server did not answer")
        if "error" in reply:
            raise OSError(reply["error"])
        return int(reply["pid"])

    def connect(self) -> socket.socket:
        """A new connection to this server, for another process to :func:`use`."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            with self.lock:
                socket.send_fds(self.socket, [json.dumps({"connect": True}).encode()], [theirs.fileno()])
        finally:
            theirs.close()
        return ours

    def wait(self, pid: int, timeout: float | None) -> int | None:
        with self.changed:
            self.changed.wait_for(lambda: pid in self.ended or self.closed, timeout=timeout)
            return self.ended.get(pid)


def _stamp(spec: str) -> list[int] | None:
    """When the file of a ``file.py:attr`` spec last changed, and its size: a loader that
    loaded an earlier version of the file is not asked for its hosts."""
    module, sep, _ = spec.rpartition(":")
    if not sep or not module.endswith(".py"):
        return None
    try:
        stat = os.stat(module)
    except OSError:
        return None
    return [stat.st_mtime_ns, stat.st_size]


_SERVER: _Server | None = None
_SERVER_LOCK = threading.Lock()
#: How long a loader may take to load its implementation before its hosts are forked from
#: the server instead (loading it themselves: as fast as before, nothing is lost), and how
#: long a request waits for its host's pid.
_LOADING_SECONDS = 20
_START_SECONDS = _LOADING_SECONDS + 30
#: The loaders a server keeps ready at most (the bundled adapters are eight).
_LOADERS = 16


def _server() -> _Server:
    global _SERVER
    with _SERVER_LOCK:
        if _SERVER is None or not _SERVER.alive():
            _SERVER = _Server()
        return _SERVER


def share() -> socket.socket | None:
    """A connection to this process's fork server for a worker process to :func:`use` (so
    the worker's hosts come from the loaders this process's loading started), or None where
    no server runs here."""
    with _SERVER_LOCK:
        if _SERVER is None or not _SERVER.alive():
            return None
        try:
            return _SERVER.connect()
        except OSError:
            return None


def use(connection: socket.socket, environ: dict[str, str]) -> None:
    """Fork this process's hosts through ``connection`` (from :func:`share`), with
    ``environ``, the environment of the process that shared it (the run's: its loaders
    serve hosts of the same environment, and a library this process imported may have set
    a variable of its own); should that server end, the next host starts a server of this
    process's own."""
    global _SERVER
    with _SERVER_LOCK:
        _SERVER = _Server(connection, environ)


class HostProcess:
    """A host forked for ``spec``, with the pipes and methods of a :class:`subprocess.Popen`
    that :class:`~chatconform.runner.protocol.channel.Channel` uses. It leads a session
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


@dataclass
class _Loader:
    """A process that loaded one implementation (in one working folder and environment) and
    forks its hosts; the server's view of it."""

    key: tuple
    pid: int
    link: socket.socket  # to the loader
    started: float
    #: "loading", then "ready"; "retired": it takes no more requests and ends with its last
    #: host; "gone": its hosts are forked from the server.
    state: str = "loading"
    used: float = 0.0  # when it was last asked for a host
    #: Requests waiting for it to be ready: (connection, request, pipe ends).
    waiting: list[tuple[socket.socket, dict, list[int]]] = field(default_factory=list)
    #: Requests sent to it whose pid has not come back, in order (the server keeps the pipe
    #: ends until then).
    sent: deque[tuple[socket.socket, dict, list[int]]] = field(default_factory=deque)


class _Forks:
    """The fork server's state: the connections it serves (the run's process first), its
    loaders by implementation, and which connection each host's exit status goes to."""

    def __init__(self, host: Any, first: socket.socket, wake: tuple[int, int]) -> None:
        self.host, self.first, self.wake = host, first, wake
        self.connections: list[socket.socket] = [first]
        self.loaders: dict[tuple, _Loader] = {}  # the one each implementation's hosts come from
        self.listening: list[_Loader] = []  # every loader still running (retired ones too)
        self.children: set[int] = set()  # hosts forked here, and the loaders
        self.owners: dict[int, socket.socket] = {}  # a host's pid: whom its end is told

    def serve(self) -> None:
        while True:
            loading = [loader for loader in self.loaders.values() if loader.state == "loading"]
            timeout = (max(0.0, min(loader.started for loader in loading) + _LOADING_SECONDS - time.monotonic())
                       if loading else None)
            sockets: list[Any] = [*self.connections, *(loader.link for loader in self.listening)]
            readable, _, _ = select.select([*sockets, self.wake[0]], [], [], timeout)
            if self.wake[0] in readable:
                os.read(self.wake[0], 4096)
            self._reap()
            for loader in loading:
                if loader.state == "loading" and time.monotonic() - loader.started > _LOADING_SECONDS:
                    self._give_way(loader)
            for ready in readable:
                if ready is self.wake[0]:
                    continue
                sender = next((one for one in self.listening if one.link is ready), None)
                if sender is not None:
                    self._from_loader(sender)
                elif ready in self.connections and not self._from_connection(ready):
                    return  # (a socket closed earlier in this round is neither)

    # -- requests --------------------------------------------------------------------------
    def _from_connection(self, connection: socket.socket) -> bool:
        """Serve one request; False when the run's process has gone (the server ends)."""
        try:
            data, fds, _, _ = socket.recv_fds(connection, _MESSAGE_BYTES, 3)
        except OSError:
            data, fds = b"", []
        if not data:
            if connection is self.first:
                return False
            self.connections.remove(connection)
            connection.close()
            return True
        request = json.loads(data)
        if request.get("connect"):
            self.connections.append(socket.socket(fileno=fds[0]))
            return True
        key = (request["spec"], request.get("entry"), str(request.get("stamp")), request["cwd"],
               tuple(sorted(request["env"].items())))
        loader = self.loaders.get(key)
        if loader is None:
            self._make_room()
            loader = self.loaders[key] = self._start_loader(key, request)
        loader.used = time.monotonic()
        if loader.state == "gone":
            self._fork_host(connection, request, fds)
        elif loader.state == "loading":
            loader.waiting.append((connection, request, fds))
        else:
            self._send(loader, connection, request, fds)
        return True

    def _fork_host(self, connection: socket.socket, request: dict, fds: list[int]) -> None:
        """A host forked here, which loads its implementation itself."""
        pid = os.fork()
        if pid == 0:
            self._leave(keep=fds)
            _become_host(request, fds, lambda: self.host.serve(request["spec"], request.get("entry")))
        self._started(connection, request, pid, fds)
        self.children.add(pid)

    def _started(self, connection: socket.socket, request: dict, pid: int, fds: list[int]) -> None:
        for fd in fds:
            os.close(fd)
        self.owners[pid] = connection
        self._tell(connection, {"request": request["request"], "pid": pid})

    def _tell(self, connection: socket.socket, message: dict) -> None:
        try:
            connection.send(json.dumps(message).encode())
        except OSError:
            pass  # that process has gone: nobody waits for the answer

    # -- loaders ---------------------------------------------------------------------------
    def _start_loader(self, key: tuple, request: dict) -> _Loader:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            pid = os.fork()
        except OSError:  # its hosts are forked from here
            ours.close()
            theirs.close()
            return _Loader(key, 0, ours, time.monotonic(), state="gone")
        if pid == 0:
            ours.detach()
            self._leave(keep=[theirs.fileno()])
            _become_loader(self.host, request, theirs)
        theirs.close()
        self.children.add(pid)
        loader = _Loader(key, pid, ours, time.monotonic())
        self.listening.append(loader)
        return loader

    def _make_room(self) -> None:
        """Retire the loader asked least lately while :data:`_LOADERS` are ready or loading:
        a process that loads many implementations (a test session) does not keep one running
        for each."""
        running = [loader for loader in self.loaders.values() if loader.state in ("loading", "ready")]
        idle = [loader for loader in running if loader.state == "ready" and not loader.sent]
        if len(running) < _LOADERS or not idle:
            return
        oldest = min(idle, key=lambda loader: loader.used)
        del self.loaders[oldest.key]
        oldest.state = "retired"
        try:
            oldest.link.send(json.dumps({"retire": True}).encode())
        except OSError:
            self._drop(oldest)

    def _send(self, loader: _Loader, connection: socket.socket, request: dict, fds: list[int]) -> None:
        try:
            socket.send_fds(loader.link, [b"{}"], fds)
        except OSError:
            self._give_way(loader)
            self._fork_host(connection, request, fds)
            return
        loader.sent.append((connection, request, fds))

    def _from_loader(self, loader: _Loader) -> None:
        try:
            data = loader.link.recv(_MESSAGE_BYTES)
        except OSError:
            data = b""
        if not data:
            if loader.state == "retired":  # it has ended with its last host
                self._drop(loader)
            else:
                self._give_way(loader)
            return
        message = json.loads(data)
        if "ready" in message:
            loader.state = "ready"
            waiting, loader.waiting = loader.waiting, []
            for connection, request, fds in waiting:
                self._send(loader, connection, request, fds)
        elif "pid" in message:
            connection, request, fds = loader.sent.popleft()
            self._started(connection, request, message["pid"], fds)
        elif "ended" in message:
            owner = self.owners.pop(message["ended"], None)
            if owner is not None:
                self._tell(owner, message)
        else:  # it could not load the implementation, or it runs a thread
            self._give_way(loader)

    def _give_way(self, loader: _Loader) -> None:
        """From now on, the loader's implementation is forked from here. A request it was
        sent but has not answered fails (it may have forked the host, which owns the pipes);
        one still waiting gets a host from here."""
        if loader.state == "gone":
            return
        loader.state = "gone"
        self._drop(loader)
        try:
            os.kill(loader.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for connection, request, fds in loader.sent:
            for fd in fds:
                os.close(fd)
            self._tell(connection, {"request": request["request"],
                                    "error": "the process that loaded the implementation ended"})
        loader.sent.clear()
        waiting, loader.waiting = loader.waiting, []
        for connection, request, fds in waiting:
            self._fork_host(connection, request, fds)

    def _drop(self, loader: _Loader) -> None:
        """Stop listening to ``loader``."""
        if loader in self.listening:
            self.listening.remove(loader)
        loader.link.close()

    # -- processes -------------------------------------------------------------------------
    def _reap(self) -> None:
        """Reap the hosts and loaders that ended, telling each host's end to the process it
        was forked for; take over the hosts of a loader that ended before them (given to this
        subreaper); kill every other child: what a host or a loader left behind."""
        self.children.update(pid for pid in reaper.children() if pid in self.owners)
        for pid in list(self.children):
            done, raw = os.waitpid(pid, os.WNOHANG)
            if not done:
                continue
            self.children.discard(pid)
            owner = self.owners.pop(pid, None)
            if owner is not None:
                self._tell(owner, {"ended": pid, "status": _status(raw)})
            # A loader's end is read from its socket instead, after all it said before it ended.
        reaper.end_children(spare=self.children | self.owners.keys())

    def _leave(self, keep: list[int]) -> None:
        """In a child: close every file the server holds but ``keep`` and stdio (its
        connections, its loaders' sockets, its wake-up pipe, the pipe ends of requests not
        yet served), so that none of them outlives the server in it: a host's pipe end held
        open elsewhere would never report the host's end."""
        signal.set_wakeup_fd(-1)
        for held in [*self.connections, *(loader.link for loader in self.listening)]:
            held.detach()  # closed below, by number
        _close_all_but({0, 1, 2, *keep})


def _close_all_but(keep: set[int]) -> None:
    for fd in _open_files() or range(os.sysconf("SC_OPEN_MAX")):  # without /proc, every number
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _wake_on_children() -> tuple[int, int]:
    """A pipe a SIGCHLD writes to, so that a ``select`` on it wakes when a child ends."""
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    return wake_r, wake_w


def _serve_forks(channel: socket.socket) -> None:
    import importlib

    host = importlib.import_module(HOST_MODULE)  # imported once: every fork has it
    host.warm()
    gc.freeze()  # see _become_loader
    wake = _wake_on_children()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    reaper.become_subreaper()
    try:
        _Forks(host, channel, wake).serve()
    finally:  # the run's process has gone: so does every process started for it
        reaper.end_children()


def _open_files() -> set[int]:
    """The file descriptors this process holds (none known without /proc)."""
    try:
        return {int(name) for name in os.listdir("/proc/self/fd")}
    except OSError:
        return set()


def _threads() -> int:
    """The threads this process runs (the system's count: a library's native threads too)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def _become_loader(host: Any, request: dict, server: socket.socket) -> None:
    """In the forked child: load the request's implementation in its working folder and
    environment (its output discarded: a host that loads it itself says what went wrong),
    say whether hosts may be forked from here, then fork one for each request until the
    server goes."""
    try:
        reaper.become_subreaper()
        _quiet_stdio()
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        wake = _wake_on_children()
        host.limit_memory()
        held = _open_files()
        impl = host.load(request["spec"], request.get("entry"))
        _quiet_stdio()  # again, should loading have closed one: a host's pipes become 0, 1 and 2
        unusable = ("it runs a thread once loaded" if _threads() > 1 else
                    "it holds files it opened while loading" if _open_files() - held else None)
        if unusable is not None:  # its hosts would share the thread's locks, the files' offsets
            server.send(json.dumps({"unusable": unusable}).encode())
        else:
            gc.freeze()  # its hosts' collections leave what it loaded alone: those pages stay shared
            server.send(json.dumps({"ready": True}).encode())
            _fork_hosts(host, impl, server, wake, started=set(reaper.children()))
    except BaseException:
        try:
            server.send(json.dumps({"unusable": "it did not load"}).encode())
        except OSError:
            pass
    reaper.end_children()  # what the implementation started as it loaded, and what its hosts left
    os._exit(0)


def _quiet_stdio() -> None:
    null = os.open(os.devnull, os.O_RDWR)
    for target in (0, 1, 2):
        if target != null:
            os.dup2(null, target)
    if null > 2:
        os.close(null)


def _fork_hosts(host: Any, impl: Any, server: socket.socket, wake: tuple[int, int], started: set[int]) -> None:
    """Fork a host for each request of the server, and tell it when each ends; until the
    server goes, or retires this loader and its last host has ended. Kill any other child
    but ``started`` (what the implementation started as it loaded): what a host left behind,
    given to this subreaper when the host ended."""
    children: set[int] = set()
    retired = False
    while not (retired and not children):
        waited: list[Any] = [server, wake[0]]
        readable, _, _ = select.select(waited, [], [])
        if wake[0] in readable:
            os.read(wake[0], 4096)
        for pid in list(children):
            done, raw = os.waitpid(pid, os.WNOHANG)
            if done:
                children.discard(pid)
                server.send(json.dumps({"ended": pid, "status": _status(raw)}).encode())
        reaper.end_children(spare=children | started)
        if server not in readable:
            continue
        data, fds, _, _ = socket.recv_fds(server, _MESSAGE_BYTES, 3)
        if not data:
            return  # the server has gone
        if not fds:
            retired = retired or bool(json.loads(data).get("retire"))
            continue
        pid = os.fork()
        if pid == 0:
            signal.set_wakeup_fd(-1)
            server.close()
            for fd in wake:
                os.close(fd)
            _become_host(None, fds, lambda: host.serve_loaded(impl))
        for fd in fds:
            os.close(fd)
        children.add(pid)
        server.send(json.dumps({"pid": pid}).encode())


def _become_host(request: dict | None, fds: list[int], serve: Any) -> None:
    """In the forked child: a session of its own, the subreaper of what the implementation
    starts, the pipes as fd 0, 1 and 2, the run's working folder and environment
    (``request``'s; None: this process's already), default signals; then ``serve()``, kill
    what the implementation left running, and exit with its status."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        os.setsid()
        reaper.become_subreaper()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        if request is not None:
            os.chdir(request["cwd"])
            os.environ.clear()
            os.environ.update(request["env"])
        code = serve()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            sys.stderr.flush()
            reaper.end_children()
        finally:
            os._exit(code)


def main() -> None:
    """The fork server's process: its stdin is its end of the socket pair. It ends quietly
    when the process it serves has gone (the socket closed under a send or a read)."""
    try:
        _serve_forks(socket.socket(fileno=os.dup(0)))
    except OSError:
        pass
