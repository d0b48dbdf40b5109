"""The first call of an implementation's process carries its start-up (a library imported on
first use), so it is given twice its deadline; later calls are not."""

from __future__ import annotations

import time
from pathlib import Path

from chatconform.contracts import get_contract
from chatconform.engine.evaluate import evaluate_case
from chatconform.reference.thread import extract_thread
from chatconform.runner import discovery


class ImportsOnFirstUse:
    """Takes 1.5 s on its first call (an SDK imported when first needed), then answers at once."""

    name = "imports-on-first-use"
    version = "1"

    def __init__(self):
        self.loaded = False

    def extract_thread(self, rows):
        if not self.loaded:
            time.sleep(1.5)
            self.loaded = True
        return extract_thread(rows)


def test_the_first_call_of_a_process_carries_its_start_up_and_later_calls_do_not():
    impl = discovery.load(f"{Path(__file__).resolve()}:ImportsOnFirstUse")
    contract = get_contract("thread")
    assert not impl.obj.warm  # started and greeted, but no call answered yet
    first = evaluate_case(impl, contract, [], None, timeout=1.0)
    assert not first.hung and "thread.no_crash" not in {f.check for f in first.failures}  # within 2 s
    assert impl.obj.warm
    second = evaluate_case(impl, contract, [], None, timeout=1.0)
    assert not second.hung and not second.failures
    # Judged slow against its own doubled time: 1.5 s is past a fifth of 2 s, so it warns.
    assert [(f.check, f.level) for f in first.failures] == [("thread.slow", "warning")]
