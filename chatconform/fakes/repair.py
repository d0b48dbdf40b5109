"""Repair fakes: the reference ``repair`` with one step changed to a bug that shipped.

Each keeps everything else of :mod:`chatconform.reference.repair`, so it fails the checks
its bug explains (and ``repair.matches_reference``, the catch-all).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from chatconform.fakes.base import Fake
from chatconform.lazy import pai
from chatconform.reference.repair import Matching, Repairer, is_result, repair

if TYPE_CHECKING:
    from pydantic_ai.messages import ToolCallPart


class _Changed(Fake):
    """The reference with the steps its ``Rules`` override changed."""

    Rules: type[Repairer] = Repairer

    def repair(self, history):
        return self.Rules().repair(history)


def _answered_next(history, index: int) -> Counter:
    """The call ids the request right after message ``index`` answers."""
    following = history[index + 1] if index + 1 < len(history) else None
    if not isinstance(following, pai.ModelRequest):
        return Counter()
    return Counter(p.tool_call_id for p in following.parts if is_result(p))


class AnswersTwice(_Changed):
    """Synthesizes a result for every call the next request does not answer, though a later
    request does."""

    name = "fake-answers-twice"
    reproduces = ("a stub result injected for a call whose real result comes later leaves two results for "
                  "one call id, which strict providers reject: hermes-agent's pre-call stub injection "
                  "(https://github.com/NousResearch/hermes-agent/pull/58362), CopilotKit's injectInterrupt "
                  "beside the agent's real ToolCallResult (https://github.com/CopilotKit/CopilotKit/issues/6201)")
    violates = ("repair.every_call_answered_once", "repair.matches_reference")

    class Rules(Repairer):
        def match(self, history) -> Matching:
            found = super().match(history)
            unanswered: dict[int, list[ToolCallPart]] = {}
            for index, message in enumerate(history):
                if isinstance(message, pai.ModelResponse):
                    answered = _answered_next(history, index)
                    for part in message.parts:
                        if isinstance(part, pai.ToolCallPart):
                            if answered[part.tool_call_id]:
                                answered[part.tool_call_id] -= 1
                            else:
                                unanswered.setdefault(index, []).append(part)
            found.unanswered = unanswered
            return found



class KeepsSecondAnswers(_Changed):
    """Drops only results whose id was never called, so a second answer to a call stays."""

    name = "fake-keeps-second-answers"
    reproduces = ("a repair that drops results without a call but not a second result for the same call id "
                  "sends both; Anthropic rejects it ('each tool_use must have a single result', "
                  "https://github.com/QwenLM/qwen-code/pull/8163; https://github.com/NousResearch/hermes-agent/pull/54594)")
    violates = ("repair.every_call_answered_once", "repair.matches_reference")

    class Rules(Repairer):
        def to_drop(self, matching):
            return matching.orphans



class KeepsOrphans(_Changed):
    """Closes unanswered calls but leaves results whose call is missing."""

    name = "fake-keeps-orphans"
    reproduces = ("a result whose call was evicted or never made is rejected ('No tool call found for function "
                  "call output', Anthropic 'unexpected tool_use_id found in tool_result blocks'); pydantic-ai "
                  "added the drop to its repair (https://github.com/pydantic/pydantic-ai/pull/6319)")
    violates = ("repair.no_orphan_results", "repair.matches_reference")

    class Rules(Repairer):
        def to_drop(self, matching):
            return matching.second_answers



class UnmarkedSynthesis(_Changed):
    """Closes an unanswered call with a plain successful result."""

    name = "fake-unmarked-synthesis"
    reproduces = ("Zoo-Code synthesized tool_result blocks for interrupted calls without is_error, so the "
                  "persisted history ended in a success-looking result for a call that never ran "
                  "(https://github.com/Zoo-Code-Org/Zoo-Code/pull/1323)")
    violates = ("repair.synthesized_marked_interrupted", "repair.matches_reference")

    class Rules(Repairer):
        def synthesized(self, call, response):
            return pai.ToolReturnPart(call.tool_name, "Tool call was cancelled.", call.tool_call_id,
                                      timestamp=response.timestamp)



class LeavesLastResponse(_Changed):
    """Closes unanswered calls everywhere but in the last response."""

    name = "fake-leaves-last-response"
    reproduces = ("pydantic-ai's own history clean-up leaves the last response's calls open "
                  "(repair_last_response=False), and a new prompt then fails with 'Cannot provide a new user "
                  "prompt when the message history contains unprocessed tool calls' "
                  "(https://github.com/alchemiststudiosDOTai/tunacode/issues/258, "
                  "https://github.com/pydantic/pydantic-ai-harness/pull/976)")
    violates = ("repair.continuable", "repair.every_call_answered_once", "repair.matches_reference",
                "lifecycle.pairs_intact")

    class Rules(Repairer):
        def match(self, history):
            found = super().match(history)
            last = next((i for i in range(len(history) - 1, -1, -1) if isinstance(history[i], pai.ModelResponse)), None)
            if last is not None:
                found.unanswered.pop(last, None)
            return found



class DropsLateCalls(Fake):
    """Counts a call as answered only by the request right after it: a call answered later
    is dropped, and its real result with it."""

    name = "fake-drops-late-calls"
    reproduces = ("CopilotKit/OpenBot's shared history sanitizer treats a call as answered only within its "
                  "turn, so a call whose result arrived after a later user message is dropped together with "
                  "the real result (https://github.com/CopilotKit/OpenBot/pull/333 review)")
    violates = ("repair.order_preserved", "repair.matches_reference")

    def repair(self, history):
        trimmed = []
        for index, message in enumerate(history):
            if isinstance(message, pai.ModelResponse):
                answered = _answered_next(history, index)
                parts = []
                for part in message.parts:
                    if isinstance(part, pai.ToolCallPart):
                        if not answered[part.tool_call_id]:
                            continue
                        answered[part.tool_call_id] -= 1
                    parts.append(part)
                if len(parts) != len(message.parts):
                    message = replace(message, parts=parts)
            trimmed.append(message)
        return repair(trimmed)


class ResynthesizesEachPass(_Changed):
    """Replaces every synthesized result with a new one stamped with the current time."""

    name = "fake-resynthesizes-each-pass"
    reproduces = ("a repair that writes wall-clock data into what it synthesizes changes an already repaired "
                  "history on every pass and churns the provider's prompt-cache prefix; pydantic-ai derives "
                  "the timestamp from the response so repairing twice is a no-op "
                  "(https://github.com/pydantic/pydantic-ai/pull/6319)")
    violates = ("repair.idempotent", "repair.matches_reference")

    class Rules(Repairer):
        def synthesized(self, call, response):
            return replace(super().synthesized(call, response), timestamp=datetime.now(UTC))

    def repair(self, history):
        def ours(part) -> bool:
            return (isinstance(part, pai.ToolReturnPart) and isinstance(part.metadata, dict)
                    and part.metadata.get(pai.SYNTHESIZED_TOOL_RETURN_METADATA_KEY) is True)

        cleared = [replace(m, parts=[p for p in m.parts if not ours(p)])
                   if isinstance(m, pai.ModelRequest) and any(ours(p) for p in m.parts) else m for m in history]
        return self.Rules().repair(cleared)


class RaisesOnOrphan(Fake):
    """Refuses a history holding a result without a call instead of dropping it."""

    name = "fake-raises-on-orphan"
    reproduces = ("atomic refused to edit a history where a tool result would be orphaned ('Deleting tool call "
                  "... would leave tool result entry ... orphaned', https://github.com/bastani-inc/atomic/issues/1300) "
                  "rather than repair it, so the conversation stayed stuck")
    violates = ("repair.no_crash",)

    def repair(self, history):
        orphans = Repairer().match(history).orphans
        if orphans:
            index, k = orphans[0]
            raise ValueError(f"tool result {history[index].parts[k].tool_call_id} in message {index} is orphaned")
        return repair(history)


class RepairsInPlace(Fake):
    """Repairs the caller's list in place and returns it."""

    name = "fake-repairs-in-place"
    reproduces = ("strands-agents normalized the message history in place, changing the caller's stored "
                  "conversation (https://github.com/strands-agents/harness-sdk/pull/2326)")
    violates = ("repair.input_untouched",)

    def repair(self, history):
        history[:] = repair(history)
        return history
