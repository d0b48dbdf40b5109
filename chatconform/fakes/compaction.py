"""Compaction fakes: the reference ``compact`` with one step changed to a bug that shipped.

Each fake keeps everything else of :mod:`chatconform.reference.compaction`, so it fails
the checks its bug explains (and ``compaction.matches_reference``, the catch-all).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from chatconform.fakes.base import Fake
from chatconform.lazy import pai
from chatconform.reference.compaction import (
    SUMMARY_FRAME,
    check_compaction_input,
    compact,
    safe_cut,
    standing_system_parts,
    summary_request,
)

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage


def _head(history: Sequence[ModelMessage], cut: int) -> list[ModelMessage]:
    """The reference's standing-prompt request for a cut at ``cut``, if any."""
    standing = standing_system_parts(history, cut)
    return [pai.ModelRequest(list(standing))] if standing else []


class SystemRoleSummary(Fake):
    """The summary persisted as a ``SystemPromptPart``, so mappers send it as system."""

    name = "fake-system-role-summary"
    reproduces = ("pydantic-ai-harness SummarizingCompaction wrote its summary as a SystemPromptPart "
                  "(https://github.com/pydantic/pydantic-ai-harness/issues/679, moved to a user turn in "
                  "https://github.com/pydantic/pydantic-ai-harness/pull/676); after a cut past the last user "
                  "message the payload is [system, system, assistant, tool, ...] with no user message, which "
                  "GLM rejects with 1214 (https://github.com/HKUDS/nanobot/pull/3086)")
    violates = ("compaction.user_led", "compaction.matches_reference")

    def compact(self, history, *, cut, summary):
        check_compaction_input(history, cut, summary)
        moved = safe_cut(history, cut)
        as_system = pai.ModelRequest([pai.SystemPromptPart(f"{SUMMARY_FRAME}\n\n{summary}")])
        return [*_head(history, moved), as_system, *history[moved:]]


def _window_safe(history: Sequence[ModelMessage], cut: int, window: int) -> bool:
    """pydantic-ai-harness ``_is_safe_cutoff``: no call in ``[cut - window, cut)`` is answered
    in ``[cut, cut + window)``. A pair further apart than the window is not seen."""
    calls = {part.tool_call_id for message in history[max(0, cut - window):cut]
             if isinstance(message, pai.ModelResponse) for part in message.parts if isinstance(part, pai.ToolCallPart)}
    return not any(isinstance(part, (pai.ToolReturnPart, pai.RetryPromptPart)) and part.tool_call_id in calls
                   for message in history[cut:cut + window] for part in message.parts)


class _MovesCutBackWhileSplit(Fake):
    """The cut moves back one message at a time while :meth:`_splits` says it splits a tool
    pair; what the pair check cannot see stays split."""

    def _splits(self, history: Sequence[ModelMessage], cut: int) -> bool:
        raise NotImplementedError

    def compact(self, history, *, cut, summary):
        check_compaction_input(history, cut, summary)
        moved = cut
        while moved > 0 and self._splits(history, moved):
            moved -= 1
        return [*_head(history, moved), summary_request(summary), *history[moved:]]


class WindowedPairCheck(_MovesCutBackWhileSplit):
    """The cut moves back only while a pair inside a ±5-message window straddles it."""

    name = "fake-windowed-pair-check"
    window = 5
    reproduces = ("pydantic-ai-harness compaction keeps tool pairs together only within a ±5-message window "
                  "(compaction/_shared.py _is_safe_cutoff(search_range=5), "
                  "https://github.com/pydantic/pydantic-ai-harness), so a call whose result comes more than 5 "
                  "messages later is cut from it and the kept tail holds an orphaned result; the same split "
                  "pair in AutoGPT's messages[-15:] slice, answered by Anthropic with 'unexpected tool_use_id "
                  "found in tool_result blocks' (https://github.com/Significant-Gravitas/AutoGPT/issues/11861)")
    violates = ("compaction.pairs_intact", "compaction.matches_reference")

    def _splits(self, history, cut):
        return not _window_safe(history, cut, self.window)


def _first_calls_split(history: Sequence[ModelMessage], cut: int) -> bool:
    """Whether the first call of a response before ``cut`` is answered at or after it: a
    batch's later calls are not looked at."""
    firsts = {next(p.tool_call_id for p in message.parts if isinstance(p, pai.ToolCallPart))
              for message in history[:cut] if isinstance(message, pai.ModelResponse)
              and any(isinstance(p, pai.ToolCallPart) for p in message.parts)}
    return any(isinstance(part, (pai.ToolReturnPart, pai.RetryPromptPart)) and part.tool_call_id in firsts
               for message in history[cut:] for part in message.parts)


class PairsFirstCallOnly(_MovesCutBackWhileSplit):
    """The cut moves back while it splits a response's first call from its result; the other
    calls of a parallel batch are not paired, so one answered late is cut from its result."""

    name = "fake-pairs-first-call-only"
    reproduces = ("omnigent's pair-aware truncation recognised a call/output pair only at the first call, so with "
                  "parallel calls [call A, call B, output A, output B] it dropped a call and kept its output, "
                  "which providers reject (https://github.com/omnigent-ai/omnigent/issues/2448)")
    violates = ("compaction.pairs_intact", "compaction.matches_reference")

    def _splits(self, history, cut):
        return _first_calls_split(history, cut)


class ReaddsSystemPromptWithTask(Fake):
    """The first user request is preserved ahead of the summary, and the standing prompt is
    re-added on top of it: a prompt stored with that request is then sent twice."""

    name = "fake-readds-system-prompt-with-task"
    reproduces = ("compactions that preserve the first request re-prepend the standing prompt as well, so it "
                  "is sent twice (pydantic-ai-harness 0.62 kept [system prompt], [first user request], [summary]; "
                  "the same bug in inspect_ai: https://github.com/UKGovernmentBEIS/inspect_ai/pull/4804)")
    # Keeping the first request is itself a cut not respected.
    violates = ("compaction.system_prompt_once", "compaction.cut_respected", "compaction.matches_reference")

    def compact(self, history, *, cut, summary):
        check_compaction_input(history, cut, summary)
        moved = safe_cut(history, cut)
        first_response = next((i for i, m in enumerate(history) if isinstance(m, pai.ModelResponse)), len(history))
        task = list(history[:min(first_response, moved)])  # the leading requests, preserved whole
        return [*_head(history, len(history)), *task, summary_request(summary), *history[moved:]]


class SummaryFramedTwice(Fake):
    """The stored summary is a continuation message with its own frame, wrapped in another."""

    name = "fake-summary-framed-twice"
    reproduces = ("moltis stored '[Conversation Summary]' around get_compact_continuation_message(summary), "
                  "which frames the summary again (https://github.com/moltis-org/moltis/pull/653)")
    violates = ("compaction.summary_once", "compaction.matches_reference")

    def compact(self, history, *, cut, summary):
        check_compaction_input(history, cut, summary)
        moved = safe_cut(history, cut)
        wrapped = f"This session continues an earlier conversation, summarized below.\n\n{summary}"
        request = summary_request(wrapped)
        part = request.parts[0]
        assert isinstance(part, pai.CompactionPart), "the reference's summary is one CompactionPart"
        part.content = f"[Conversation Summary]\n\n{part.content}"
        return [*_head(history, moved), request, *history[moved:]]


class NeverCompacts(Fake):
    """Returns the history unchanged: the summary is computed, then never applied."""

    name = "fake-never-compacts"
    reproduces = ("a compaction whose result is never applied keeps the whole history, so the context keeps "
                  "growing until the provider rejects it: 'compaction failed: empty summary, history unchanged' "
                  "(https://github.com/justrach/codegraff/issues/379); a documented summarizing strategy that "
                  "never compacted (https://github.com/MervinPraison/PraisonAI/issues/1843)")
    violates = ("compaction.cut_respected", "compaction.summary_once", "compaction.matches_reference")

    def compact(self, history, *, cut, summary):
        check_compaction_input(history, cut, summary)
        return list(history)


class DropsOrphanedResults(Fake):
    """A fixed split index that may land inside a tool batch, then the tool results left at
    the head of the kept tail without their call are dropped."""

    name = "fake-drops-orphaned-results"
    reproduces = ("kimi-code applied a fixed split index that could land inside a parallel tool batch, and "
                  "the fix dropped the orphaned tool results that then opened the kept tail "
                  "(https://github.com/MoonshotAI/kimi-code/pull/1054): the kept results are lost")
    violates = ("compaction.tail_preserved", "compaction.matches_reference")

    def compact(self, history, *, cut, summary):
        check_compaction_input(history, cut, summary)
        kept_calls = {part.tool_call_id for message in history[cut:] if isinstance(message, pai.ModelResponse)
                      for part in message.parts if isinstance(part, pai.ToolCallPart)}
        tail = []
        for message in history[cut:]:
            if isinstance(message, pai.ModelRequest):
                parts = [p for p in message.parts
                         if not (isinstance(p, (pai.ToolReturnPart, pai.RetryPromptPart)) and p.tool_name
                                 and p.tool_call_id not in kept_calls)]
                if not parts:
                    continue
                if len(parts) != len(message.parts):
                    message = pai.ModelRequest(parts, timestamp=message.timestamp, state=message.state)
            tail.append(message)
        return [*_head(history, cut), summary_request(summary), *tail]



class RaisesOnSplitPair(Fake):
    """Refuses a cut that splits a tool pair instead of moving it: the run stops."""

    name = "fake-raises-on-split-pair"
    reproduces = ("atomic: 'Compaction failed: Deleting tool call ... would leave tool result entry ... "
                  "orphaned', in the main chat, /compact and auto-compaction "
                  "(https://github.com/bastani-inc/atomic/issues/1300)")
    violates = ("compaction.no_crash",)

    def compact(self, history, *, cut, summary):
        check_compaction_input(history, cut, summary)
        moved = safe_cut(history, cut)
        if moved != cut:
            raise RuntimeError(f"Compaction failed: deleting the tool call at message {moved} would leave "
                               f"its tool result orphaned")
        return [*_head(history, cut), summary_request(summary), *history[cut:]]


class CompactsInPlace(Fake):
    """Compacts the caller's list in place (``history[:] = ...``) and returns it."""

    name = "fake-compacts-in-place"
    reproduces = ("a compaction that rewrites the history it was given in place changes the messages a "
                  "provider or the store still holds (https://github.com/ahmadrosid/nakama/issues/589, "
                  "https://github.com/ChatLunaLab/chatluna/pull/820)")
    violates = ("compaction.input_untouched",)

    def compact(self, history, *, cut, summary):
        history[:] = compact(history, cut=cut, summary=summary)
        return history


class ReplacesEarlierSummaries(Fake):
    """The reference's compaction, with every earlier summary of the kept tail dropped: the new
    summary stands in for it, as an incremental summarizer's would (it is handed the previous
    summary to update), so the earlier text survives only inside the new one."""

    name = "fake-replaces-earlier-summaries"
    reproduces = ("incremental summarizing replaces the previous summary with the new one instead of keeping "
                  "it (pydantic-ai-harness SummarizingCompaction, incremental=True, feeds it to the summarizer "
                  "as a <previous-summary> block to update): not a loss the result can show, so a warning")
    violates = ("compaction.matches_reference",)
    warns = ("compaction.tail_preserved",)

    def compact(self, history, *, cut, summary):
        compacted = compact(history, cut=cut, summary=summary)
        tail = history[safe_cut(history, cut):]  # the reference keeps it verbatim, last
        out = list(compacted[:len(compacted) - len(tail)])
        for message in tail:
            if isinstance(message, pai.ModelRequest):
                parts = [p for p in message.parts if not isinstance(p, pai.CompactionPart)]
                if not parts:
                    continue
                if len(parts) != len(message.parts):
                    message = pai.ModelRequest(parts, timestamp=message.timestamp, state=message.state)
            out.append(message)
        return out
