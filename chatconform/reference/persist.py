"""The reference ``persist_run``: the history to store once an agent run is over.

``persist_run(previous, captured, outcome)`` gets the history stored before the run
(``previous``), what pydantic-ai's ``capture_run_messages()`` held when the run ended
(``captured``: the run's normalized input history plus every message it wrote), and how
the run ended (``outcome``: ``success``, ``deferred``, ``failure``, ``cancelled`` or
``timeout``). It returns the history to store in place of ``previous``.

Policy, and why (the semantics of dify-agent's ``replace_run_history``, which met each
of these bugs: https://github.com/langgenius/dify/pull/40972,
https://github.com/langgenius/dify/pull/41846):

- **Every terminal outcome stores the capture.** A failed, cancelled or timed-out run
  still did work: its prompt, the responses it got and the tool results it collected.
  Storing only after a success throws that away, and the next run starts from before
  the prompt the user saw answered in part.
- **An empty capture keeps the previous history.** A run stopped before pydantic-ai bound
  any message captured nothing; storing that would wipe the conversation.
- **Run instructions are never stored.** ``ModelRequest.instructions`` holds the
  instructions of the run that sent the request; the application passes its current
  instructions to every run, so stored ones are stale copies of an earlier system
  prompt kept in the conversation store. They are set to None in the stored copy.
- **A run that did not succeed and ends in a complete response with tool calls is
  stored with that response marked ``state="interrupted"``.** Cancelled between the
  response and its tools, the run left calls with no results and a response still
  ``complete``; pydantic-ai then refuses the next prompt ("Cannot provide a new user
  prompt when the message history contains unprocessed tool calls",
  https://github.com/langgenius/dify/issues/41616). Marked interrupted, pydantic-ai closes
  those calls with synthesized interrupted results on the next run
  (https://github.com/pydantic/pydantic-ai/pull/6319). States pydantic-ai wrote itself
  (an interrupted stream, an interrupted tool-results request) are kept as they are.
- **Deferred calls of a finished run stay open.** A run that returned
  ``DeferredToolRequests`` (ask_human) finished; its open calls are answered by the next
  run's ``deferred_tool_results``, which needs them open and the response complete.

Linear in the history. The input is never mutated: a changed message is a copy
(``dataclasses.replace``); the others are the capture's own objects in a new list.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from chatconform.lazy import pai

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

__all__ = ["FINISHED", "OUTCOMES", "persist_run"]

CONTRACT_METHODS = ("persist_run",)

#: How a run may end, as the application knows it.
OUTCOMES = ("success", "deferred", "failure", "cancelled", "timeout")

#: Outcomes of a run that finished (returned a result).
FINISHED = frozenset({"success", "deferred"})


def check_outcome(outcome: object) -> None:
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome={outcome!r} is not one of {', '.join(OUTCOMES)}")


def persist_run(previous: Sequence[ModelMessage], captured: Sequence[ModelMessage],
                outcome: str) -> list[ModelMessage]:
    """The history to store after a run that ended with ``outcome``."""
    check_outcome(outcome)
    if not captured:
        return list(previous)
    stored = [dataclasses.replace(m, instructions=None)
              if isinstance(m, pai.ModelRequest) and m.instructions is not None else m
              for m in captured]
    last = stored[-1]
    if (outcome not in FINISHED and isinstance(last, pai.ModelResponse) and last.state == "complete"
            and last.tool_calls):
        stored[-1] = dataclasses.replace(last, state="interrupted")
    return stored
