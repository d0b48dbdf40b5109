"""Running chatconform in a process of its own, to signal it, and looking for what is left;
what an implementation does to leave its process group."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

#: Runs ``chatconform`` with SIGINT at its default first: a shell's background job starts
#: with it ignored, and an ignored SIGINT stays ignored (it was a Ctrl-C meant for another job).
_DEFAULT_SIGINT = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                   "os.execv(sys.executable, [sys.executable, '-m', 'chatconform.cli', *sys.argv[1:]])")


def start_chatconform(cwd: Path, *args: str) -> subprocess.Popen:
    """``chatconform ARGS`` as a terminal starts it (SIGINT at its default), in a session of its
    own so that its whole process group can be signalled, stdout and stderr piped."""
    return subprocess.Popen([sys.executable, "-c", _DEFAULT_SIGINT, *args], cwd=cwd, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})


def kill_group(process: subprocess.Popen) -> None:
    """Kill whatever is left of ``process``'s group, and reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if process.poll() is None:
        process.communicate()


def living(pids) -> list[int]:
    """Those of ``pids`` still running (a zombie, dead but not yet reaped, is not)."""
    left = []
    for pid in pids:
        state = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True).stdout.strip()
        if state and not state.startswith("Z"):
            left.append(pid)
    return left


def group_members(pgid: int) -> list[int]:
    """The processes of process group ``pgid`` still running."""
    rows = subprocess.run(["ps", "-A", "-o", "pid=,pgid=,stat="], capture_output=True, text=True).stdout
    return [int(pid) for pid, group, state in (row.split()[:3] for row in rows.splitlines() if row.strip())
            if int(group) == pgid and not state.startswith("Z")]


def gone_within(find: Callable[[], list[int]], seconds: float = 10.0) -> list[int]:
    """Wait up to ``seconds`` for ``find()`` to come back empty; what it finds then."""
    deadline = time.monotonic() + seconds
    while (left := find()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def leave_the_group(noted: str) -> None:
    """Start two processes outside this one's process group, appending their pids to the file
    ``noted``: a ``sleep`` in a session of its own, and a daemon (forked twice, in a new
    session, its parent gone). Run by hostile implementations and programs."""
    session = subprocess.Popen(["sleep", "300"], start_new_session=True)
    read, write = os.pipe()
    middle = os.fork()
    if middle == 0:
        os.setsid()
        if os.fork() == 0:
            os.write(write, str(os.getpid()).encode())
            time.sleep(300)
        os._exit(0)
    os.close(write)
    daemon = int(os.read(read, 64))
    os.close(read)
    os.waitpid(middle, 0)
    with open(noted, "a") as out:
        out.write(f"{session.pid}\n{daemon}\n")
