"""The fork server every built-in host is forked from (chatconform.conformance.protocol.forked)."""

from __future__ import annotations

import json
import subprocess
import sys


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
