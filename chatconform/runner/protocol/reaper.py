"""Ending what an implementation's process leaves behind, and the supervisor of an ``exec:`` program.

Killing a program's process group ends what it started in the group, not a process that
left it: one started in a session of its own (``setsid``), or a daemon that forked twice
and whose parent exited. Linux lets a process be a *child subreaper* (``prctl``
``PR_SET_CHILD_SUBREAPER``): an orphan below it is given to it, not to init, so it can
kill it. The fork server, each loader and each host are subreapers
(:mod:`~chatconform.runner.protocol.forked`): a host's orphans stay its own while it runs,
and when it ends, whatever it left is given to its loader, which kills it. An ``exec:``
program is started by a supervisor (:func:`supervise`, this file run as a script by
:mod:`~chatconform.runner.protocol.channel`), a subreaper that ends everything the program
left when it exits, when the run asks, or when the run's process is gone. Elsewhere nothing
here acts, and what leaves the group outlives the run (``docs/running.md``, "Isolation").

This file imports only the standard library: the supervisor runs it with ``python -I -S``,
which starts in a few milliseconds.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time
from collections.abc import Collection

#: prctl(2)'s options that make a process a child subreaper and read whether it is one.
_PR_SET_CHILD_SUBREAPER, _PR_GET_CHILD_SUBREAPER = 36, 37


def _prctl(option: int, argument: object) -> bool:
    """prctl(2), through the C library; False where it fails or the system has none."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if argument is None:  # a place for the answer
            argument = ctypes.byref(ctypes.c_int())
        return libc.prctl(option, argument, 0, 0, 0) == 0
    except (OSError, AttributeError, TypeError, ImportError):
        return False


def available() -> bool:
    """Whether this system has child subreapers (Linux 3.4 and later), asked without becoming one."""
    return _prctl(_PR_GET_CHILD_SUBREAPER, None)


def become_subreaper() -> bool:
    """Make this process the one its orphaned descendants are given to; False where the system
    has no such thing. Not inherited by a fork."""
    return _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def children() -> list[int]:
    """The processes whose parent this process is (ended ones not yet reaped too), from
    ``/proc``; none known without it."""
    me = os.getpid()
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{me}/task"):
            with open(f"/proc/{me}/task/{task}/children") as listed:
                found.extend(int(pid) for pid in listed.read().split())
        return found
    except OSError:  # no /proc, or a kernel without the children file: ask every process
        pass
    try:
        pids = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 1 and int(fields[1]) == me:
            found.append(int(pid))
    return found


def end_children(spare: Collection[int] = (), seconds: float = 5.0) -> None:
    """Kill every child of this process but ``spare``, each with the process group it leads,
    and reap it; then the orphans given to this process as they went, until none is left
    (or ``seconds`` have passed: a process that cannot die yet is left to init)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        doomed = [pid for pid in children() if pid not in spare]
        if not doomed:
            return
        for pid in doomed:
            kill_with_group(pid)
        for pid in doomed:
            _reap(pid, deadline)


def kill_with_group(pid: int) -> None:
    """SIGKILL ``pid``, and the process group it leads if it leads one."""
    try:
        if os.getpgid(pid) == pid:
            os.killpg(pid, signal.SIGKILL)
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


def _reap(pid: int, deadline: float) -> None:
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return
        if done or time.monotonic() > deadline:
            return
        time.sleep(0.001)


# -- the supervisor of an exec: program ---------------------------------------------------------

#: What the supervisor says first on its control socket: the program's pid, or why it could
#: not be started (the errno).
STARTED, FAILED = b"started ", b"failed "


def command(control: int, argv: list[str]) -> list[str]:
    """The command that runs ``argv`` under a supervisor holding socket ``control``."""
    return [sys.executable, "-I", "-S", os.path.abspath(__file__), str(control), *argv]


def supervise(control: int, argv: list[str]) -> None:
    """Run ``argv`` (in a session of its own, with this process's stdio, environment and
    folder) as a subreaper's child; say its pid on socket ``control`` (or the errno when it
    cannot be started). When the program exits, when ``control`` says ``kill``, or when it
    closes (the run's process has gone), kill the program and everything it left, then exit
    as the program did (the signal that ended it, or its status; SIGKILL when it was killed)."""
    become_subreaper()
    os.set_inheritable(control, False)
    ended = False

    def asked(*_: object) -> None:
        nonlocal ended
        ended = True

    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    for number in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(number, asked if number != signal.SIGCHLD else lambda *_: None)
    try:
        # Python ignores SIGPIPE and SIGXFSZ; the program gets them at their default, as
        # subprocess gives them (the handlers set here are reset by the exec itself).
        program = os.posix_spawnp(argv[0], argv, dict(os.environ), setsid=True, setsigmask=(),
                                  setsigdef=(signal.SIGPIPE, signal.SIGXFSZ))
    except OSError as exc:
        os.write(control, FAILED + str(exc.errno or 0).encode())
        os._exit(127)
    os.write(control, STARTED + str(program).encode())
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # the pipes are the program's: their end, and a broken pipe, are its own
        os.dup2(null, fd)
    status: int | None = None
    while status is None and not ended:
        readable, _, _ = select.select([control, wake_read], [], [])
        if wake_read in readable:
            os.read(wake_read, 4096)
        if control in readable:
            try:
                os.read(control, 64)  # "kill", or nothing: the run has gone
            except OSError:
                pass
            ended = True
        while status is None:
            try:
                done, raw = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if not done:
                break
            if done == program:
                status = raw
    if status is None:
        kill_with_group(program)
    end_children()
    _exit_as(status)


def _exit_as(status: int | None) -> None:
    """End this process as ``status`` (a wait status) says the program ended; None: killed."""
    number = signal.SIGKILL if status is None else os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    if number is None:
        os._exit(os.WEXITSTATUS(status or 0))
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the program's crash, not this process's core
    except (ImportError, ValueError, OSError):
        pass
    signal.signal(number, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [number])
    os.kill(os.getpid(), number)
    os._exit(128 + number)


if __name__ == "__main__":
    supervise(int(sys.argv[1]), sys.argv[2:])
