"""The reference ``compact``: the history to persist after summarizing ``history[:cut]``.

``compact(history, *, cut, summary)`` returns::

    [standing system prompt request]   the history's standing prompt, if any and not in the tail
    [summary request]                  one request-side CompactionPart, in the user's voice
    history[cut':]                     the tail, untouched, where cut' <= cut

Policy, and why:

- **No tool pair is split.** The cut moves earlier until no tool call before it has its
  result at or after it (``cut'``). A result without its call is rejected by every
  provider (OpenAI "messages with role 'tool' must be a response to a preceding message
  with 'tool_calls'"), and a pairing check over a small window misses a call whose result
  comes many messages later (pydantic-ai-harness ``_is_safe_cutoff`` looks 5 messages
  either way). Moving the cut earlier keeps more; moving it later would summarize
  messages the caller asked to keep.
- **The standing system prompt, exactly once.** The ``SystemPromptPart``\\ s of the
  history's leading requests (those before its first response) are the standing prompt.
  Those before the cut are re-added in one request of their own at the front; those in
  the tail are already there and are not added again. Re-adding the prompt with a
  preserved first request sends it twice. Other system prompts (dynamic, mid-conversation)
  are conversation content and are summarized with it.
- **The summary once, in the user's voice.** One ``ModelRequest`` holding one
  request-side ``CompactionPart`` whose content is :data:`SUMMARY_FRAME` and the summary,
  with metadata ``{SUMMARY_METADATA_KEY: True}`` (how pydantic-ai-harness marks its
  summaries). A summary stored as a ``SystemPromptPart`` is sent as system: after a cut
  past the last user message the payload holds no user message, which GLM rejects with
  1214 "The messages parameter is illegal", and strict templates (Qwen on vLLM, SGLang)
  reject a second system message (pydantic-ai-harness #679, PR #676).
- **A new summary replaces the old.** Earlier summaries before the cut are summarized
  with everything else and do not survive, so a second compaction stores one summary,
  not a summary beside (or inside) the first. An earlier summary after the cut is tail
  content the caller asked to keep, and stays.
- **Bad input is refused.** A ``cut`` outside ``0..len(history)`` or a blank summary raises
  :class:`ValueError` naming the value: persisting an empty summary loses the history
  silently.

Linear in the history; the input is never mutated (the tail's messages are the input's
own objects: the result is a new list, and persisting it copies them).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import TYPE_CHECKING

from chatconform.history import SUMMARY_METADATA_KEY
from chatconform.lazy import pai

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage, ModelRequest, SystemPromptPart

__all__ = ["SUMMARY_FRAME", "compact", "safe_cut", "standing_system_parts", "summary_request"]

CONTRACT_METHODS = ("compact",)

#: The one framing line stored ahead of the summary text.
SUMMARY_FRAME = "Summary of the conversation so far:"


def check_compaction_input(history: Sequence[ModelMessage], cut: object, summary: object) -> None:
    if isinstance(cut, bool) or not isinstance(cut, int) or not 0 <= cut <= len(history):
        raise ValueError(f"cut={cut!r} is not an index into the history: it must be an int in "
                         f"0..{len(history)} (the history has {len(history)} messages)")
    if not isinstance(summary, str) or not summary.strip():
        raise ValueError(f"summary={summary!r} is empty or blank: persisting it would lose the "
                         f"summarized messages")


def answered_pairs(history: Sequence[ModelMessage]) -> list[tuple[int, int]]:
    """(call index, result index) of every answered tool call, in call order."""
    calls: dict[str, int] = {}
    pairs: list[tuple[int, int]] = []
    for index, message in enumerate(history):
        for part in message.parts:
            if isinstance(message, pai.ModelResponse) and isinstance(part, pai.ToolCallPart):
                calls.setdefault(part.tool_call_id, index)
            elif (isinstance(message, pai.ModelRequest) and isinstance(part, (pai.ToolReturnPart, pai.RetryPromptPart))
                  and part.tool_call_id in calls):
                pairs.append((calls.pop(part.tool_call_id), index))
    return pairs


def safe_cut(history: Sequence[ModelMessage], cut: int) -> int:
    """The latest cut at or before ``cut`` that splits no tool call from its result.

    Moving the cut before one call may split another pair that spans the new cut, so the
    move repeats; the pairs are visited latest-result first, which makes one pass enough.
    """
    moved = cut
    for call, result in sorted(answered_pairs(history), key=lambda pair: pair[1], reverse=True):
        if call < moved <= result:
            moved = call
    return moved


def _leading_end(history: Sequence[ModelMessage]) -> int:
    """Index of the first response: the requests before it are the leading requests."""
    return next((i for i, m in enumerate(history) if isinstance(m, pai.ModelResponse)), len(history))


def standing_system_parts(history: Sequence[ModelMessage], end: int | None = None) -> list[SystemPromptPart]:
    """The standing prompt: the ``SystemPromptPart``\\ s of the leading requests before ``end``."""
    stop = _leading_end(history) if end is None else min(end, _leading_end(history))
    return [part for message in history[:stop] for part in message.parts if isinstance(part, pai.SystemPromptPart)]


def summary_request(summary: str) -> ModelRequest:
    """The summary as it is persisted: one request-side CompactionPart, one frame."""
    return pai.ModelRequest([pai.CompactionPart(content=f"{SUMMARY_FRAME}\n\n{summary}",
                                                metadata={SUMMARY_METADATA_KEY: True})])


def compact(history: Sequence[ModelMessage], *, cut: int, summary: str) -> list[ModelMessage]:
    """The history to persist once ``history[:cut]`` is replaced by ``summary``."""
    check_compaction_input(history, cut, summary)
    moved = safe_cut(history, cut)
    # Copies of the parts, so the new request shares nothing mutable with the input.
    standing = [copy.deepcopy(part) for part in standing_system_parts(history, moved)]
    head: list[ModelMessage] = [pai.ModelRequest(standing)] if standing else []
    return [*head, summary_request(summary), *history[moved:]]
