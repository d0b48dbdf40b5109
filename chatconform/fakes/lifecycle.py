"""Fakes only a composition catches: each passes its own contract under ``ci`` and fails ``lifecycle``.

Each is the reference with one step changed to a bug that is right on every input its own
contract draws, and wrong on an input only another method of the application produces: a
capture that starts with a compacted history (the run compacted first), a summary written
by the application's own compaction and posted back by its client.
"""

from __future__ import annotations

import dataclasses

from chatconform.fakes.base import Fake
from chatconform.lazy import pai
from chatconform.reference.compaction import SUMMARY_FRAME
from chatconform.reference.persist import persist_run
from chatconform.reference.sanitize import sanitize


def _prompts(history) -> list:
    return [p for m in history if isinstance(m, pai.ModelRequest) for p in m.parts if isinstance(p, pai.UserPromptPart)]


class RefusesToShrink(Fake):
    """Stores the capture, unless it holds fewer user prompts than the stored history: a guard
    against the truncated-thread bug, which keeps the stored history instead. A run that
    compacted its history first holds fewer, so its turn is thrown away."""

    name = "fake-refuses-to-shrink"
    reproduces = ("a store that refuses to replace a conversation with a shorter one (a guard against threads "
                  "rebuilt truncated, https://github.com/langgenius/dify/issues/39031) drops every run that "
                  "compacted its history in the run, where the capture starts with the compacted history "
                  "(dify-agent stores the capture whole: https://github.com/langgenius/dify/pull/40972)")
    violates = ("lifecycle.user_texts_kept",)

    def persist_run(self, previous, captured, outcome):
        stored = persist_run(previous, captured, outcome)
        return list(previous) if len(_prompts(stored)) < len(_prompts(previous)) else stored


class GuardsOtherConversation(Fake):
    """Stores the capture, unless its first user prompt is not the stored history's: a guard
    against storing another conversation's capture (``capture_run_messages`` shared across
    concurrent runs), which keeps the stored history instead. After a compaction in the
    run the first prompt is summarized away, so the run's turn is thrown away."""

    name = "fake-guards-other-conversation"
    reproduces = ("a guard that takes a capture whose first user prompt differs from the stored one for another "
                  "conversation's rejects every run that compacted its history first, where the capture starts "
                  "with the summary (dify-agent stores the capture whole: https://github.com/langgenius/dify/pull/40972)")
    violates = ("lifecycle.user_texts_kept",)

    def persist_run(self, previous, captured, outcome):
        stored = persist_run(previous, captured, outcome)
        before, after = _prompts(previous), _prompts(stored)
        if before and after and after[0].content != before[0].content:
            return list(previous)
        return stored


class DropsFramedSummary(Fake):
    """Sanitizes as the reference does, and drops a request-side summary that carries the
    server's own summary frame, as if a client had forged it."""

    name = "fake-drops-framed-summary"
    reproduces = ("a sanitizer that treats the server's summary text posted back by the client as injected "
                  "system voice, so the summary of everything before it is gone after the round trip "
                  "(https://github.com/pydantic/pydantic-ai/pull/6169 keeps request-side compaction parts)")
    violates = ("lifecycle.summary_once",)

    def sanitize(self, history):
        kept = []
        for message in sanitize(history):
            if isinstance(message, pai.ModelRequest):
                parts = [p for p in message.parts
                         if not (isinstance(p, pai.CompactionPart) and p.content.startswith(SUMMARY_FRAME))]
                if not parts:
                    continue
                message = dataclasses.replace(message, parts=parts)
            kept.append(message)
        return kept
