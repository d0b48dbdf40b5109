"""The fork server every built-in host is forked from (chatconform.conformance.protocol.forked)."""

from __future__ import annotations

import fcntl
import json
import subprocess
import sys
from pathlib import Path

import pytest

from chatconform.conformance.protocol import channel, forked


def test_the_fork_server_loads_the_history_model_once_and_starts_no_thread():
    """Every host of a history contract reads pydantic-ai histories: loaded in the server, its
    hosts share it instead of each importing its own copy; a thread there would make
    forking unsafe."""
    code = ("import json, sys, threading\n"
            "from chatconform.conformance.protocol import host\n"
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
