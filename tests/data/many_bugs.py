"""An implementation with several shipped bugs at once: the thread, compaction and payload
fakes side by side, so one run fails about ten checks (for tests of the failure output)."""

from chatconform.fakes.compaction import CompactsInPlace
from chatconform.fakes.payload import DifyAgentPre39136
from chatconform.fakes.thread import UnscopedHeadCheck


class ManyBugs:
    name = "many-bugs"
    version = "0"
    providers = {"qwen-vllm"}
    lifecycle = False  # its ten bugs, each once: the lifecycle would show them again

    def __init__(self):
        self._thread = UnscopedHeadCheck()
        self._compaction = CompactsInPlace()
        self._payload = DifyAgentPre39136()

    def extract_thread(self, rows_newest_first):
        return self._thread.extract_thread(rows_newest_first)

    def compact(self, history, *, cut, summary):
        return self._compaction.compact(history, cut=cut, summary=summary)

    def to_payload(self, history, *, provider, instructions=None):
        return self._payload.to_payload(history, provider=provider, instructions=instructions)
