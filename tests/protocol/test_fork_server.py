"""The fork server every built-in host is forked from (chatconform.runner.protocol.forked)."""

from __future__ import annotations

import fcntl
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chatconform.runner.protocol import channel, forked


def test_the_fork_server_loads_the_history_model_once_and_starts_no_thread():
    """Every host of a history contract reads pydantic-ai histories: loaded in the server, its
    hosts share it instead of each importing its own copy; a thread there would make
    forking unsafe."""
    code = ("import json, sys, threading\n"
            "from chatconform.runner.protocol import host\n"
            "before = 'pydantic_ai.messages' in sys.modules\n"
            "host.warm()\n"
            "print(json.dumps([before, 'pydantic_ai.messages' in sys.modules, threading.active_count()]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [False, True, 1]


@pytest.mark.skipif(not hasattr(fcntl, "F_GETPIPE_SZ"), reason="pipe sizes are Linux's")
@pytest.mark.parametrize("hosted", [True, False], ids=["built-in host", "program"])
def test_the_pipes_to_an_implementations_process_hold_a_long_history_at_once(hosted):
    """A 64 KiB pipe woke both processes for every 64 KiB of a history sent, or of the body
    sent back: more CPU than the copy itself."""
    if hosted:
        example = Path(__file__).resolve().parents[2] / "examples" / "python" / "impl.py"
        process = forked.HostProcess(f"{example}:InProcessThreads")
        opened = channel.Channel(process.args, process=process)
    else:
        opened = channel.Channel([sys.executable, "-c", "import sys; sys.stdin.read()"])
    try:
        for fd in (opened.process.stdin.fileno(), opened.process.stdout.fileno()):
            assert fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ) >= min(channel.PIPE_BYTES, _system_cap())
    finally:
        opened.process.kill()
        opened.process.wait()


def _system_cap() -> int:
    try:
        return int(Path("/proc/sys/fs/pipe-max-size").read_text())
    except OSError:
        return 1 << 16


# -- loaders: an implementation loaded once for the run --------------------------------------

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "python" / "impl.py"
THREADS = f"{EXAMPLE}:InProcessThreads"


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _server_pid() -> int:
    server = forked._server()
    assert server.process is not None
    return server.process.pid


@pytest.fixture
def hosts():
    """Hosts started by a test, killed at its end."""
    started: list[forked.HostProcess] = []
    yield started
    for process in started:
        process.kill()
        process.wait(5)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads parents from /proc")
def test_the_hosts_of_one_implementation_are_forked_from_one_loader(hosts):
    """Loading an adapter imports its library (a second or more): the loader does it once,
    and each host, the one started again after a crash too, is its fork."""
    hosts += [forked.HostProcess(THREADS), forked.HostProcess(THREADS)]
    loaders = {_parent(process.pid) for process in hosts}
    assert len(loaders) == 1
    (loader,) = loaders
    assert loader != _server_pid() and _parent(loader) == _server_pid()
    hosts[0].kill()
    assert hosts[0].wait(5) == -9
    hosts.append(forked.HostProcess(THREADS))
    assert _parent(hosts[-1].pid) == loader


def _host_parent_in_a_worker(connection, environ, spec, answer) -> None:
    forked.use(connection, environ)
    process = forked.HostProcess(spec)
    try:
        answer.send(_parent(process.pid))
    finally:
        process.kill()
        process.wait(5)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads parents from /proc")
def test_a_worker_process_forks_its_hosts_from_the_runs_loaders(hosts, monkeypatch):
    """``--jobs`` workers are fresh interpreters: through the run's fork server they start
    their hosts from the loaders the run's own loading started, instead of each loading
    every implementation again."""
    import multiprocessing

    # The spawned worker imports its target from this module, so it needs the project root
    # on the path it inherits (pytest's importlib mode puts it there for no one).
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2]))

    hosts.append(forked.HostProcess(THREADS))
    loader = _parent(hosts[0].pid)
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    connection = forked.share()
    assert connection is not None
    worker = context.Process(target=_host_parent_in_a_worker, args=(connection, dict(os.environ), THREADS, theirs))
    worker.start()
    connection.close()
    try:
        assert ours.poll(60)
        assert ours.recv() == loader
    finally:
        worker.join(30)
    assert worker.exitcode == 0


def test_a_host_that_ends_closes_its_pipes_for_good(hosts):
    """The server holds a request's pipe ends until its host has started; a process forked
    meanwhile (the loader the request started) must not keep them: the host's end would
    never reach the run."""
    hosts.append(forked.HostProcess(THREADS))
    hosts[0].kill()
    assert hosts[0].wait(5) == -9
    ready, _, _ = select.select([hosts[0].stderr], [], [], 5)
    assert ready and hosts[0].stderr.read() == b""


def _implementation(name: str, prelude: str = "") -> str:
    """A module whose class ``Impl`` implements ``thread``, after ``prelude`` ran at import."""
    return (f"{prelude}\n\nclass Impl:\n    name, version = {name!r}, '1'\n\n"
            "    def extract_thread(self, rows):\n        return []\n")


STARTS_A_THREAD = _implementation("starts-a-thread", "import threading, time\n"
                                  "threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads parents from /proc")
def test_an_implementation_that_runs_a_thread_once_loaded_loads_in_each_host(tmp_path, hosts):
    """Forking a process that runs a thread can deadlock the child (a lock the thread held
    stays held): such an implementation's loader gives way, and each host is forked from
    the server and loads it itself, as every host did before loaders."""
    path = tmp_path / "starts_a_thread.py"
    path.write_text(STARTS_A_THREAD)
    hosts.append(forked.HostProcess(f"{path}:Impl"))
    assert _parent(hosts[0].pid) == _server_pid()
    opened = channel.Channel(hosts[0].args, process=hosts[0])
    try:
        from chatconform.runner.protocol.program import hello

        opened.send(hello(), time.monotonic() + 30)
        reply = json.loads(opened.receive(time.monotonic() + 30, 1 << 20))
        assert reply["name"] == "starts-a-thread" and reply["contracts"] == ["thread"]
    finally:
        opened.close()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads parents from /proc")
def test_a_file_changed_since_its_loader_loaded_it_gets_a_loader_of_its_own(tmp_path, hosts):
    """A loader holds the file as it was: a host of the file as it is now must not be its fork."""
    path = tmp_path / "edited.py"
    path.write_text(_implementation("edited"))
    hosts.append(forked.HostProcess(f"{path}:Impl"))
    path.write_text(path.read_text().replace("return []", "return list(rows)[:0]"))
    hosts.append(forked.HostProcess(f"{path}:Impl"))
    first, second = (_parent(process.pid) for process in hosts)
    assert first != second and _server_pid() not in (first, second)


OPENS_A_FILE = _implementation("opens-a-file", "import tempfile\nLOG = tempfile.TemporaryFile()")


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="reads open files from /proc")
def test_an_implementation_that_holds_a_file_it_opened_when_loaded_loads_in_each_host(tmp_path, hosts):
    """Forked hosts would share the file's offset (a database's lock, a socket's stream):
    such an implementation's loader gives way, and each host opens its own."""
    path = tmp_path / "opens_a_file.py"
    path.write_text(OPENS_A_FILE)
    hosts += [forked.HostProcess(f"{path}:Impl"), forked.HostProcess(f"{path}:Impl")]
    assert {_parent(process.pid) for process in hosts} == {_server_pid()}
