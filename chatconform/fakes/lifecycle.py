"""Fakes only a composition catches: each fails ``lifecycle`` under ``ci``.

Each is the reference with one step changed to a bug that is right on (nearly) every input
its own contract draws, and wrong on an input only another method of the application
produces: a capture that starts with a compacted history (the run compacted first), a
summary written by the application's own compaction and posted back by its client, a
response a cancelled run stored interrupted, a summary compacted again.
"""

from __future__ import annotations

import dataclasses

from chatconform.fakes.base import Fake
from chatconform.lazy import pai
from chatconform.reference.compaction import SUMMARY_FRAME, compact
from chatconform.reference.persist import persist_run
from chatconform.reference.sanitize import sanitize
from chatconform.reference.trim import trim


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
                         if not (isinstance(p, pai.CompactionPart) and (p.content or "").startswith(SUMMARY_FRAME))]
                if not parts:
                    continue
                message = dataclasses.replace(message, parts=parts)
            kept.append(message)
        return kept


class TrimForgetsInterruption(Fake):
    """Trims as the reference does, and rebuilds each kept response from its parts, times and
    model, as a store that keeps those and not a message's state does: a response a cancelled
    run stored ``state="interrupted"`` is complete again, with calls that never ran."""

    name = "fake-trim-forgets-interruption"
    reproduces = ("a trim that copies the kept responses without their state turns a run cancelled after its tool "
                  "calls back into a complete response with unanswered calls, and the next run refuses 'Cannot "
                  "provide a new user prompt when the message history contains unprocessed tool calls' "
                  "(https://github.com/langgenius/dify/issues/41616; marked interrupted, pydantic-ai closes those "
                  "calls itself: https://github.com/pydantic/pydantic-ai/pull/6319); a repair or a branch after it "
                  "hides it from a check at the end of the conversation")
    violates = ("lifecycle.continuable",)

    def trim(self, history, *, max_messages):
        return [dataclasses.replace(message, state="complete")
                if isinstance(message, pai.ModelResponse) and message.state == "interrupted" else message
                for message in trim(history, max_messages=max_messages)]


class AppendsCompactedCapture(Fake):
    """Stores the capture where it starts with the stored conversation (its first user prompt is
    the stored one's), and appends it to the stored history otherwise: a guard for a framework
    that hands over only the run's new messages. A run that compacted its history first
    captures the summary and the kept turns, which do not start with the stored conversation,
    so the kept turns are stored twice."""

    name = "fake-appends-compacted-capture"
    reproduces = ("a store that appends a capture not starting with the stored history (taking it for the run's "
                  "new messages only) stores the kept turns twice after a compaction in the run, whose capture starts "
                  "with the summary: every message sent twice from then on (all_messages() appended where "
                  "new_messages() was meant: https://github.com/pydantic/pydantic-ai/issues/1562)")
    violates = ("lifecycle.stored_once",)

    def persist_run(self, previous, captured, outcome):
        stored = persist_run(previous, captured, outcome)
        before, after = _prompts(previous), _prompts(captured)
        if before and after and after[0].content != before[0].content:
            return [*previous, *stored]
        return stored


class NestsSummaries(Fake):
    """Compacts as the reference does, and keeps the earlier summaries it compacts away by
    pasting them, frame and all, ahead of the new summary: an incremental summary that carries
    the old one verbatim instead of summarizing it."""

    name = "fake-nests-summaries"
    reproduces = ("a compaction that pastes the earlier summary into the new one stores a summary nested in a "
                  "summary: what the earlier one said is sent twice, and each compaction nests one more frame "
                  "(moltis PR #653 wrapped a summary in a frame of its own)")
    violates = ("lifecycle.summary_not_nested",)

    def compact(self, history, *, cut, summary):
        earlier = [part.content for message in history[:cut] for part in message.parts
                   if isinstance(part, pai.CompactionPart) and part.content is not None
                   and part.content.startswith(SUMMARY_FRAME)]
        return compact(history, cut=cut, summary="\n\n".join([*earlier, summary]))
