"""The reference ``trim``: keep the newest part of a history within a message budget.

``trim(history, *, max_messages)`` returns::

    [standing system prompt request]   only when the kept part does not already hold it
    history[start:]                    the newest messages, untouched

Policy, and why:

- **A suffix, nothing else.** What is kept is ``history[start:]`` exactly: nothing is
  invented, reordered or rewritten. The one addition is the history's standing system
  prompt (the ``SystemPromptPart``\\ s of the leading requests, before the first
  response), re-added in a request of its own at the front when ``start`` cut it off: an
  agent that loses its instructions after a trim silently changes behaviour.
- **Only at a valid start.** ``start`` is 0 (nothing trimmed), or the index of a
  ``ModelRequest`` where
  (a) no tool call before it is answered at or after it, so no result is kept without
  its call (pydantic-ai issue #2050: slicing a history splits call/return pairs, and
  every provider rejects the orphaned result), and
  (b) the first thing a reader sees from it on, system prompts aside, is a user prompt or
  a compaction summary, so the payload built from the result leads with a user turn
  (GLM 1214 on user-less arrays; Gemini "function call turn comes immediately after a
  user turn"; langchain-core ``trim_messages`` returning a leading ``ToolMessage``,
  langchain issue #33245).
- **The longest valid suffix within the budget.** The result holds at most
  ``max_messages`` messages, the standing-prompt request included: of the valid starts,
  the earliest one whose result fits.
- **When nothing fits, the smallest valid result.** If ``max_messages`` is smaller than
  every valid result (the newest user turn alone, say an agent loop of many tool rounds,
  is longer than the budget), the result is the one from the latest valid start, and it
  exceeds the budget. Returning less would send a history that a provider rejects or
  that has lost the turn in progress (nanobot PR #4229 emptied the history in this
  case); raising would stop the run. The standing prompt is kept in this case too.
- **Bad input is refused.** ``max_messages`` that is not an int of at least 1 raises
  :class:`ValueError` naming the value. An empty history gives an empty result.

Linear in the history: one pass finds the tool pairs, one the first reader-visible item
from each message on; the kept messages are the input's own objects (the result is a new
list), the re-added system prompt parts are copies.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from chatconform.history import visible_items
from chatconform.lazy import pai
from chatconform.reference.compaction import answered_pairs, standing_system_parts

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

__all__ = ["USER_VOICED", "trim", "valid_starts"]

CONTRACT_METHODS = ("trim",)

#: Item kinds a user turn opens with: a user prompt, or a summary sent as user text.
USER_VOICED = frozenset({"user", "summary"})


def check_budget(max_messages: object) -> None:
    if isinstance(max_messages, bool) or not isinstance(max_messages, int) or max_messages < 1:
        raise ValueError(f"max_messages={max_messages!r} is not a message budget: it must be an int of at least 1")


def valid_starts(history: Sequence[ModelMessage]) -> list[int]:
    """Every index a trimmed history may start at, ascending (0 always among them)."""
    n = len(history)
    # spanned[i]: some tool call before i is answered at or after i (a difference array).
    depth = [0] * (n + 1)
    for call, result in answered_pairs(history):
        depth[call + 1] += 1
        depth[result + 1] -= 1
    # opens[i]: the kind of the first item from message i on that is not a system prompt.
    opens: list[str | None] = [None] * (n + 1)
    for index in range(n - 1, -1, -1):
        kinds = [item.kind for item in visible_items(history[index:index + 1]) if item.kind != "system"]
        opens[index] = kinds[0] if kinds else opens[index + 1]
    starts = [0] if n else []
    open_pairs = 0
    for index in range(1, n):
        open_pairs += depth[index]
        if (open_pairs == 0 and isinstance(history[index], pai.ModelRequest)
                and opens[index] in USER_VOICED):
            starts.append(index)
    return starts


def _first_standing(history: Sequence[ModelMessage]) -> int | None:
    """Index of the first leading request holding a system prompt, or None."""
    leading = itertools.takewhile(lambda message: not isinstance(message, pai.ModelResponse), history)
    return next((index for index, message in enumerate(leading)
                 if any(isinstance(part, pai.SystemPromptPart) for part in message.parts)), None)


def trim(history: Sequence[ModelMessage], *, max_messages: int) -> list[ModelMessage]:
    """The newest valid part of ``history`` within ``max_messages`` (see the module docstring)."""
    check_budget(max_messages)
    n = len(history)
    if n <= max_messages:
        return list(history)
    starts = valid_starts(history)
    first_standing = _first_standing(history)

    def size(start: int) -> int:
        return n - start + (first_standing is not None and start > first_standing)

    start = next((s for s in starts if size(s) <= max_messages), starts[-1])
    standing = [copy.deepcopy(part) for part in standing_system_parts(history, start)]
    return [*([pai.ModelRequest(standing)] if standing else []), *history[start:]]
