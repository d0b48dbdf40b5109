"""Persistence fakes: the reference ``persist_run`` with one step changed to a bug that shipped.

Each keeps the rest of :mod:`chatconform.reference.persist`, so it fails the checks its
bug explains (and ``persist.matches_reference``, the catch-all, where it changes the
stored history).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from chatconform.fakes.base import Fake
from chatconform.lazy import pai
from chatconform.reference.persist import FINISHED, check_outcome, persist_run

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage
    from pydantic_core import ErrorDetails


class _OneStepChanged(Fake):
    """The reference ``persist_run`` in its steps: keep the previous history on an empty
    capture, else strip the run's instructions and mark a cut-off tool round. A fake
    below overrides the one step its bug changes."""

    def persist_run(self, previous, captured, outcome):
        check_outcome(outcome)
        if self._keeps_previous(captured, outcome):
            return list(previous)
        return self._mark(self._strip(captured), outcome)

    def _keeps_previous(self, captured: Sequence[ModelMessage], outcome: str) -> bool:
        return not captured

    def _strip(self, captured: Sequence[ModelMessage]) -> list[ModelMessage]:
        return [dataclasses.replace(m, instructions=None)
                if isinstance(m, pai.ModelRequest) and m.instructions is not None else m for m in captured]

    def _mark(self, stored: list[ModelMessage], outcome: str) -> list[ModelMessage]:
        last = stored[-1] if stored else None
        if (outcome not in FINISHED and isinstance(last, pai.ModelResponse) and last.state == "complete"
                and last.tool_calls):
            stored[-1] = dataclasses.replace(last, state="interrupted")
        return stored


class OnlyOnSuccess(_OneStepChanged):
    """Stores the run's history only when the run returned; otherwise keeps the old one."""

    name = "fake-only-on-success"
    reproduces = ("dify-agent first wrote the history back from result.all_messages() after agent.run() "
                  "returned, so a failed, cancelled or timed-out run stored nothing of what it did "
                  "(https://github.com/langgenius/dify/pull/40972 replaced that success-only path)")
    violates = ("persist.saved_on_every_outcome", "persist.matches_reference")

    def _keeps_previous(self, captured, outcome):
        return outcome not in FINISHED or not captured


class KeepsInstructions(_OneStepChanged):
    """Stores the capture with each request's run instructions still on it."""

    name = "fake-keeps-instructions"
    reproduces = ("the capture stored as pydantic-ai leaves it keeps ModelRequest.instructions, the run's "
                  "transient system prompt (dify-agent strips them before storing: "
                  "https://github.com/langgenius/dify/pull/40972; stored instructions coming back in a later "
                  "run: https://github.com/pydantic/pydantic-ai/issues/1943)")
    violates = ("persist.no_instructions", "persist.matches_reference", "lifecycle.no_instructions")

    def _strip(self, captured):
        return list(captured)


class StripsFirstRequestOnly(_OneStepChanged):
    """Strips the instructions of the first captured request that carries them, and stores the
    rest as they are: a run with a tool round keeps them on every later request."""

    name = "fake-strips-first-request-only"
    reproduces = ("pydantic-ai sets the run's instructions on every request of a run, the tool-return requests "
                  "too (https://github.com/pydantic/pydantic-ai/issues/1501, fixed in 0.1.1), so a store that "
                  "clears them on the prompt's request alone keeps them in the history, where a later run meets "
                  "the stale ones (https://github.com/pydantic/pydantic-ai/issues/3273)")
    violates = ("persist.no_instructions", "persist.matches_reference")

    def _strip(self, captured):
        first = next((i for i, m in enumerate(captured)
                      if isinstance(m, pai.ModelRequest) and m.instructions is not None), None)
        return [dataclasses.replace(m, instructions=None) if i == first else m for i, m in enumerate(captured)]


class NoInterruptedMarker(_OneStepChanged):
    """Stores the capture (instructions stripped) without marking a cut-off tool round."""

    name = "fake-no-interrupted-marker"
    reproduces = ("dify-agent's replace_run_history stored a run cancelled after the model returned tool calls, "
                  "before any ran, with its last response still complete; the next message failed with 'Cannot "
                  "provide a new user prompt when the message history contains unprocessed tool calls' "
                  "(https://github.com/langgenius/dify/issues/41616, fixed by "
                  "https://github.com/langgenius/dify/pull/41846)")
    violates = ("persist.interrupted_marker", "persist.continuable", "persist.matches_reference",
                "lifecycle.continuable")

    def _mark(self, stored, outcome):
        return stored


class MarksDeferredInterrupted(_OneStepChanged):
    """Marks the trailing message of every run that did not end in plain output."""

    name = "fake-marks-deferred-interrupted"
    reproduces = ("marking the trailing message of every run that did not return plain output (as "
                  "https://github.com/pydantic/pydantic-ai-harness/pull/976 marks retained failed and cancelled "
                  "turns) treats a run that finished with deferred tool requests (ask_human) as cut off: its "
                  "open call, or the request of the results that came back beside it, is stored interrupted, "
                  "so pydantic-ai closes the call instead of taking the user's answer (dify-agent marks only "
                  "runs that did not finish: https://github.com/langgenius/dify/pull/41846; pydantic-ai keeps "
                  "the deferred shape complete so it is never repaired: "
                  "https://github.com/pydantic/pydantic-ai/pull/6319)")
    violates = ("persist.deferred_left_open", "persist.matches_reference")

    def _mark(self, stored, outcome):
        last = stored[-1]
        if outcome != "success" and last.state == "complete" and (
                isinstance(last, pai.ModelRequest) or last.tool_calls):
            stored[-1] = dataclasses.replace(last, state="interrupted")
        return stored


class EmptyCaptureWipes(_OneStepChanged):
    """Stores the capture even when the run captured nothing."""

    name = "fake-empty-capture-wipes"
    reproduces = ("a run cancelled or failed before pydantic-ai bound any message leaves an empty capture; "
                  "storing it wipes the conversation (dify-agent keeps the previous history then: "
                  "https://github.com/langgenius/dify/pull/40972)")
    violates = ("persist.empty_capture_keeps_previous", "persist.matches_reference")

    def _keeps_previous(self, captured, outcome):
        return False


class AppendsRunHistory(Fake):
    """Appends the whole captured run history to the stored history."""

    name = "fake-appends-run-history"
    reproduces = ("the capture (like result.all_messages()) already starts with the stored history; appending "
                  "it to what is stored doubles the conversation on every save "
                  "(https://github.com/pydantic/pydantic-ai/issues/1562)")
    violates = ("persist.idempotent", "persist.saved_on_every_outcome", "persist.matches_reference")

    def persist_run(self, previous, captured, outcome):
        return [*previous, *persist_run([], captured, outcome)] if captured else list(previous)


class StoresTheError(Fake):
    """Records why a run failed inside the stored history, exception object included."""

    name = "fake-stores-the-error"
    reproduces = ("a stored part whose content holds the exception object, as pydantic-ai's validation error "
                  "details do (ctx={'error': ValueError(...)}), cannot be written as JSON: "
                  "'PydanticSerializationError: Unable to serialize unknown type: <class 'ValueError'>' "
                  "(https://github.com/pydantic/pydantic-ai/issues/1859)")
    violates = ("persist.round_trip", "persist.matches_reference")

    def persist_run(self, previous, captured, outcome):
        stored = persist_run(previous, captured, outcome)
        if outcome in FINISHED or not captured:
            return stored
        error = ValueError(f"the run ended: {outcome}")
        detail: ErrorDetails = {"type": "value_error", "loc": ("run",), "msg": str(error), "input": None,
                                "ctx": {"error": error}}
        feedback = pai.RetryFeedbackPart(content=[detail], retry=pai.RetryInfo(cause="validation_error"))
        return [*stored, pai.ModelRequest([feedback])]


class IndexesEmptyCapture(Fake):
    """Reads the capture's last message without checking there is one."""

    name = "fake-indexes-empty-capture"
    reproduces = ("persisting from a finally block must handle a run stopped before any message was captured "
                  "(https://github.com/langgenius/dify/pull/40972); looking at captured[-1] first raises "
                  "IndexError there and loses the conversation along with the run's own error")
    violates = ("persist.no_crash", "lifecycle.no_crash")

    def persist_run(self, previous, captured, outcome):
        last = captured[-1]
        del last
        return persist_run(previous, captured, outcome)


class MarksInPlace(Fake):
    """Strips instructions and sets the marker on the captured messages themselves."""

    name = "fake-marks-in-place"
    reproduces = ("the capture is pydantic-ai's live message list (and result.all_messages() shares its "
                  "messages); setting instructions=None and state='interrupted' on those objects changes what "
                  "the caller still holds (dify-agent stores replaced copies and tests that the source keeps "
                  "its instructions: https://github.com/langgenius/dify/pull/41846)")
    violates = ("persist.input_untouched", "lifecycle.input_untouched")

    def persist_run(self, previous, captured, outcome):
        check_outcome(outcome)
        if not captured:
            return list(previous)
        for message in captured:
            if isinstance(message, pai.ModelRequest):
                message.instructions = None
        last = captured[-1]
        if (outcome not in FINISHED and isinstance(last, pai.ModelResponse) and last.state == "complete"
                and last.tool_calls):
            last.state = "interrupted"
        return list(captured)
