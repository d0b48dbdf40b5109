"""The ``persist`` contract: ``persist_run(previous, captured, outcome) -> history``.

After an agent run the application stores the conversation for the next run. The
implementation gets the history stored before the run, what pydantic-ai's
``capture_run_messages()`` held when the run ended, and how it ended, and returns the
history to store. The cases are real runs: each is a scenario
(:mod:`chatconform.strategies.runs`) played on a pydantic-ai ``Agent`` with a
``FunctionModel``, streamed or not, cancelled, timed out or failed at a drawn point, so
the captures are the ones pydantic-ai really leaves at each point. The checks judge the
stored history as the next run will meet it: all of it there, no stale instructions, a
cut-off tool round marked so pydantic-ai can close it, a deferred call still open, and
a real ``Agent`` taking it with the next prompt (or the deferred results).
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from chatconform.contracts.lifecycle.play import next_agent
from chatconform.errors import NotApplicable, Violation
from chatconform.frame.contract import Case, Example
from chatconform.frame.history_contract import HistoryContract
from chatconform.frame.lifecycle import Conversation, LifecycleStep
from chatconform.history import first_difference, history_problem, list_difference, message_text
from chatconform.lazy import pai
from chatconform.reference.persist import FINISHED, OUTCOMES, check_outcome, persist_run
from chatconform.strategies.lifecycles import Step
from chatconform.strategies.runs import ENDINGS, EPOCH, run_cases

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage, ToolCallPart


@dataclass
class PersistCase(Case):
    """One finished run: what ``persist_run`` gets, plus what the checks need to know.

    ``instructions`` are the run's instructions (what ``persist.no_instructions`` looks
    for); ``ending`` says how the run ended in more detail than ``outcome`` (one of
    :data:`chatconform.strategies.runs.ENDINGS`), for reading a failure.
    """

    previous: list[ModelMessage]
    captured: list[ModelMessage]
    outcome: str
    instructions: str | None = None
    ending: str = ""


def _turn(conversation: Conversation, step: Step) -> Any:
    """A user turn, stored with ``persist_run``."""
    return conversation.turn(step)


class PersistContract(HistoryContract):
    name = "persist"
    method = "persist_run"
    signature = "persist_run(previous, captured, outcome) -> history"
    crash_rationale = ("persistence runs in the run's finally block; one that raises there loses the "
                       "conversation and hides the run's own error (dify-agent persists from a finally "
                       "block for every terminal outcome: https://github.com/langgenius/dify/pull/40972)")
    mutation_rationale = ("the capture is pydantic-ai's live message list and the previous history the "
                          "application's store; a persistence that marks or strips them in place changes "
                          "what the caller still holds (dify-agent stores copies: "
                          "https://github.com/langgenius/dify/pull/41846)")
    listing_order = 40
    case_type = PersistCase
    history_fields = ("previous", "captured")
    wire_fields: ClassVar[dict[str, Any]] = {"outcome": {"enum": list(OUTCOMES)}}
    result_description = ("The result of persist_run: the history to store, in the same JSON as the input "
                          "histories.")
    reference_module = "chatconform.reference.persist"
    guard_tests = ("tests/contracts/test_persist.py",)
    lifecycle_steps = (LifecycleStep("turn", "a user turn", weight=2, order=0, runs=True, picks=True,
                                     compacts_in_run=True, methods=("compact", "persist_run", "extract_thread"),
                                     play=_turn),)

    def cases(self, variant):
        return run_cases().map(_case_of)

    def call(self, fn, case, variant):
        return fn(case.previous, case.captured, case.outcome)

    def reference(self, case, variant):
        return persist_run(case.previous, case.captured, case.outcome)

    def case_from_json(self, data: Any) -> PersistCase:
        case = super().case_from_json(data)
        try:
            check_outcome(case.outcome)
        except ValueError as exc:
            raise ValueError(f"{exc} (a persist case's 'outcome')") from None
        if case.instructions is not None and not isinstance(case.instructions, str):
            raise ValueError(f"'instructions' must be a string or null, got {type(case.instructions).__name__}")
        if case.ending not in ("", *ENDINGS):
            raise ValueError(f"'ending'={case.ending!r} is not one of {', '.join(ENDINGS)}")
        return case

    def output_problem(self, output, case):
        return history_problem(output)

    # -- the benchmark hook ----------------------------------------------------------------
    def large_case(self, size: int, seed: int, variant: str | None) -> PersistCase:
        """A run over a stored history of about ``size`` messages, cancelled after a
        response with tool calls: the first half stored before, the second half the run's
        own messages (each request carrying the run's instructions)."""
        return large_case(size, seed)

    def floor(self, case: PersistCase, variant: str | None) -> None:
        """One bare pass: every captured message looked at once."""
        for message in case.captured:
            if isinstance(message, pai.ModelRequest) and message.instructions is not None:
                pass


CONTRACT = PersistContract()


def _case_of(result) -> PersistCase:
    sc = result.scenario
    return PersistCase(result.previous, result.captured, result.outcome, sc.instructions, sc.ending)


def large_case(size: int, seed: int) -> PersistCase:
    """See :meth:`PersistContract.large_case` (linear in ``size``)."""
    from chatconform.strategies.large import expand_history

    rng = random.Random(seed)
    history = expand_history(seed, max(2, size - 1))
    half = len(history) // 2
    text = f"Answer briefly. (instructions {rng.randrange(10**6)})"
    run = [dataclasses.replace(m, instructions=text) if isinstance(m, pai.ModelRequest) else m for m in history[half:]]
    calls = [pai.ToolCallPart("lookup", {"n": i}, f"large_call_{i}") for i in range(rng.randint(1, 3))]
    last = pai.ModelResponse(calls, model_name="scripted", timestamp=history[-1].timestamp or EPOCH)
    return PersistCase(history[:half], [*history[:half], *run, last],
                       "cancelled", text, "cancel_after_calls")


# -- what the checks share -------------------------------------------------------------------

def _same_parts(a: ModelMessage, b: ModelMessage) -> bool:
    return type(a) is type(b) and a.parts == b.parts


def _open_calls(history: list[ModelMessage]) -> list[ToolCallPart]:
    """Tool calls with no later result, in order."""
    answered: set[str] = set()
    open_calls: list[ToolCallPart] = []
    for message in reversed(history):
        if isinstance(message, pai.ModelRequest):
            answered.update(p.tool_call_id for p in message.parts
                            if isinstance(p, (pai.ToolReturnPart, pai.RetryPromptPart)))
        else:
            open_calls.extend(p for p in reversed(message.parts)
                              if isinstance(p, pai.ToolCallPart) and p.tool_call_id not in answered)
    return open_calls[::-1]


def _describe(message: ModelMessage) -> str:
    kinds = ", ".join(type(p).__name__ for p in message.parts) or "no parts"
    return f"{message.kind} ({message.state}: {kinds})"


# -- saved_on_every_outcome ------------------------------------------------------------------

@CONTRACT.check(
    "saved_on_every_outcome",
    title="whatever the outcome, the captured history is what is stored (instructions and state aside)",
    rationale="dify-agent first stored the history only after agent.run() returned, so a failed, "
              "cancelled or timed-out run lost its prompt and everything it did "
              "(https://github.com/langgenius/dify/pull/40972)",
)
def saved_on_every_outcome(ex: Example) -> None:
    captured, output = ex.case.captured, ex.output
    if not captured:
        raise NotApplicable("nothing was captured")
    index = first_difference(captured, output, _same_parts)
    if index == len(captured) == len(output):
        return
    how = list_difference(captured, output, "message", show=message_text, same=_same_parts)
    lengths = len(output) != len(captured)
    raise Violation(f"after a run that ended {ex.case.outcome} ({ex.case.ending or 'ending not given'}), "
                    f"what was stored is not what was captured: {how}",
                    expected=len(captured) if lengths else _describe(captured[index]),
                    actual=len(output) if lengths else _describe(output[index]))


# -- empty_capture_keeps_previous ------------------------------------------------------------

@CONTRACT.check(
    "empty_capture_keeps_previous",
    title="a run that captured nothing leaves the stored history as it was",
    rationale="a run stopped before pydantic-ai bound any message captures nothing; storing that "
              "empty list wipes the conversation (dify-agent keeps the previous history then: "
              "https://github.com/langgenius/dify/pull/40972)",
)
def empty_capture_keeps_previous(ex: Example) -> None:
    if ex.case.captured:
        raise NotApplicable("the run captured messages")
    if ex.output != list(ex.case.previous):
        raise Violation(f"a run that captured nothing changed the stored history from "
                        f"{len(ex.case.previous)} to {len(ex.output)} messages",
                        expected=len(ex.case.previous), actual=len(ex.output))


# -- no_instructions -------------------------------------------------------------------------

@CONTRACT.check(
    "no_instructions",
    title="the run's instructions are not stored",
    rationale="instructions are the current run's system prompt; stored, they come back as stale copies "
              "in later runs (dify-agent strips ModelRequest.instructions before storing: "
              "https://github.com/langgenius/dify/pull/40972; a stored request that carries "
              "instructions: https://github.com/pydantic/pydantic-ai/issues/1943)",
)
def no_instructions(ex: Example) -> None:
    text = (ex.case.instructions or "").strip()
    carried = any(isinstance(m, pai.ModelRequest) and m.instructions for m in ex.case.captured)
    if not carried and not text:
        raise NotApplicable("the run had no instructions")
    for index, message in enumerate(ex.output):
        if isinstance(message, pai.ModelRequest) and message.instructions is not None:
            raise Violation(f"stored request {index} carries instructions",
                            expected=None, actual=message.instructions[:200])
        if text and any(isinstance(getattr(p, "content", None), str) and text in p.content for p in message.parts):
            raise Violation(f"stored message {index} holds the run's instructions as content",
                            expected="not stored", actual=text[:200])


# -- interrupted_marker ----------------------------------------------------------------------

@CONTRACT.check(
    "interrupted_marker",
    title="a run that did not finish and ends in a response with tool calls stores it state='interrupted'; "
          "interrupted states pydantic-ai wrote are kept",
    rationale="cancelled after the model returned tool calls and before any ran, the capture ends in a "
              "complete response with unanswered calls, and pydantic-ai refuses the next prompt: 'Cannot "
              "provide a new user prompt when the message history contains unprocessed tool calls' "
              "(https://github.com/langgenius/dify/issues/41616, fixed in "
              "https://github.com/langgenius/dify/pull/41846)",
)
def interrupted_marker(ex: Example) -> None:
    captured, output = ex.case.captured, ex.output
    if not captured:
        raise NotApplicable("nothing was captured")
    applies = False
    last = captured[-1]
    if ex.case.outcome not in FINISHED and isinstance(last, pai.ModelResponse) and last.tool_calls:
        applies = True
        stored = output[-1] if output else None
        if not (isinstance(stored, pai.ModelResponse) and stored.state == "interrupted"
                and stored.tool_calls == last.tool_calls):
            raise Violation(f"the run ended {ex.case.outcome} in a response with "
                            f"{len(last.tool_calls)} unanswered tool call(s), stored without the marker",
                            expected="the response, state='interrupted'",
                            actual=_describe(stored) if stored is not None else "no message")
    if len(output) == len(captured):
        for index, (before, after) in enumerate(zip(captured, output, strict=False)):
            if before.state == "interrupted":
                applies = True
                if after.state != "interrupted":
                    raise Violation(f"message {index} was interrupted and is stored {after.state!r}",
                                    expected="interrupted", actual=after.state)
    if not applies:
        raise NotApplicable("no interrupted message, and no unfinished run ending in tool calls")


# -- deferred_left_open ----------------------------------------------------------------------

@CONTRACT.check(
    "deferred_left_open",
    title="a run that ended in deferred tool requests stores its open calls open, the response holding them "
          "and every message after it complete",
    rationale="the next run answers deferred calls (ask_human) with deferred_tool_results, which needs "
              "them unanswered and not interrupted; only a run that did not finish is marked "
              "(https://github.com/langgenius/dify/pull/41846; pydantic-ai keeps the deferred shape "
              "unrepaired for the same reason: https://github.com/pydantic/pydantic-ai/pull/6319)",
)
def deferred_left_open(ex: Example) -> None:
    if ex.case.outcome != "deferred":
        raise NotApplicable("the run did not end in deferred tool requests")
    deferred = _open_calls(ex.case.captured)
    if not deferred:
        raise NotApplicable("the capture holds no open call")
    still_open = {c.tool_call_id for c in _open_calls(ex.output)}
    closed = [c.tool_call_id for c in deferred if c.tool_call_id not in still_open]
    if closed:
        raise Violation(f"deferred call(s) {', '.join(closed)} are no longer open", expected="open",
                        actual="answered or gone")
    first = next(i for i, m in enumerate(ex.output) if isinstance(m, pai.ModelResponse)
                 and any(p.tool_call_id in still_open for p in m.tool_calls))
    marked = next((i for i in range(first, len(ex.output)) if ex.output[i].state != "complete"), None)
    if marked is not None:
        what = "the response holding the deferred calls" if marked == first else f"message {marked} after it"
        raise Violation(f"{what} is stored state={ex.output[marked].state!r}, so the next run closes the "
                        "deferred calls instead of taking their results",
                        expected="complete", actual=ex.output[marked].state)


# -- continuable -----------------------------------------------------------------------------

def _continue(history: list[ModelMessage], outcome: str) -> None:
    """The next run on the stored history: a new prompt, or the deferred calls' results.
    Raises what the run raises."""
    agent = next_agent()
    if outcome == "deferred" and (pending := _open_calls(history)):
        from pydantic_ai import DeferredToolResults

        results = DeferredToolResults(calls={c.tool_call_id: "Yes. (u-human)" for c in pending})
        run = agent.run(None, message_history=history, deferred_tool_results=results)
    else:
        run = agent.run("Next question (u-next)", message_history=history)
    asyncio.run(run)


@CONTRACT.check(
    "continuable",
    title="a real pydantic-ai Agent takes the stored history with the next prompt (or the deferred results)",
    rationale="a stored history that ends in unanswered tool calls makes the next run raise 'Cannot provide "
              "a new user prompt when the message history contains unprocessed tool calls', and the "
              "conversation is stuck (https://github.com/langgenius/dify/issues/41616; "
              "https://github.com/alchemiststudiosDOTai/tunacode/issues/258)",
)
def continuable(ex: Example) -> None:
    # On a thread of its own with its own event loop, within the run's deadline.
    outcome = ex.calls.guarded(lambda: _continue(list(ex.output), ex.case.outcome), size=len(ex.output))
    how = "with the deferred results" if ex.case.outcome == "deferred" else "with a new prompt"
    if outcome.timed_out:
        raise Violation(f"the next run {how} did not finish within {outcome.deadline:g}s",
                        expected="the run continues", actual="hung")
    if outcome.error is not None:
        raise Violation(f"the next run {how} raised {outcome.describe_error()[:300]}",
                        expected="the run continues", actual=type(outcome.error).__name__)


# -- round_trip ------------------------------------------------------------------------------

@CONTRACT.check(
    "round_trip",
    title="the stored history survives ModelMessagesTypeAdapter's JSON unchanged",
    rationale="a history is stored as JSON; one holding a value that does not serialize cannot be saved, "
              "or comes back different (an exception object in a stored part: "
              "https://github.com/pydantic/pydantic-ai/issues/1859)",
)
def round_trip(ex: Example) -> None:
    try:
        loaded = pai.ModelMessagesTypeAdapter.validate_json(pai.ModelMessagesTypeAdapter.dump_json(ex.output))
    except Exception as exc:
        raise Violation(f"the stored history does not round-trip: {type(exc).__name__}: {str(exc)[:300]}",
                        expected="dump_json then validate_json", actual=type(exc).__name__) from None
    if loaded != ex.output:
        index = first_difference(ex.output, loaded)
        raise Violation("the stored history comes back different from JSON: "
                        + list_difference(ex.output, loaded, "message", show=message_text),
                        expected="the same history", actual=f"message {index} changed")


# -- idempotent ------------------------------------------------------------------------------

@CONTRACT.check(
    "idempotent",
    title="persisting the stored history again, with the same outcome, changes nothing",
    rationale="a save that appends the whole run history to what is stored doubles the conversation "
              "every time it runs (all_messages() appended where new_messages() was meant: "
              "https://github.com/pydantic/pydantic-ai/issues/1562)",
)
def idempotent(ex: Example) -> None:
    fn = ex.impl.method(CONTRACT) if ex.impl is not None else None
    if fn is None:
        raise NotApplicable("no implementation to call again")
    again_case = PersistCase(list(ex.case.previous), list(ex.output), ex.case.outcome)
    outcome = ex.calls.call(lambda case: CONTRACT.call(fn, case, None), again_case, size=CONTRACT.size(again_case))
    if outcome.error is not None or outcome.timed_out:
        raise NotApplicable("the second call did not return (persist.no_crash judges that)")
    again = outcome.output
    if again != ex.output:
        how = (list_difference(ex.output, again, "message", show=message_text) if isinstance(again, list)
               else f"it returned {type(again).__name__} for {len(ex.output)} messages")
        raise Violation(f"persisting the stored history again changes it: {how}", expected=len(ex.output),
                        actual=len(again) if isinstance(again, list) else type(again).__name__)


# -- matches_reference -----------------------------------------------------------------------

@CONTRACT.check(
    "matches_reference",
    title="the same stored history as the reference",
    rationale="the reference is dify-agent's replace_run_history policy: the capture for every outcome, the "
              "previous history for an empty capture, no instructions, an unfinished tool round marked "
              "interrupted, deferred calls left open",
)
def matches_reference(ex: Example) -> None:
    expected, actual = ex.reference, ex.output
    if expected == actual:
        return
    index = first_difference(expected, actual)
    raise Violation("the stored history differs from the reference: "
                    + list_difference(expected, actual, "message", show=message_text),
                    expected=_describe(expected[index]) if index < len(expected) else "no message",
                    actual=_describe(actual[index]) if index < len(actual) else "no message")
