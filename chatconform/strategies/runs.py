"""Agent runs that really end: scenarios, and a driver that plays them on pydantic-ai.

A :class:`Scenario` is a script for one agent run: the history stored before it, the
prompt and the run's instructions, whether the model streams, the tool rounds the model
asks for, and how the run ends. :func:`run_scenario` plays it on a real pydantic-ai
``Agent`` whose model is a ``FunctionModel`` following the script, inside
``capture_run_messages()``, and returns ``(previous, captured, outcome)``: what an
application holds when the run is over and it must decide what to store.

The endings (:data:`ENDINGS`) are the ones stored histories are written after:

=========================  ===========  =======================================================
ending                     outcome      how the driver makes it happen
=========================  ===========  =======================================================
``success``                success      the model answers with text
``deferred``               deferred     the last round calls ``ask_human``, which defers
                                        (``CallDeferred``): the run returns ``DeferredToolRequests``
``model_error``            failure      the model raises (non-streamed), or its stream raises
                                        after some chunks
``tool_error``             failure      a tool raises once its sibling calls have returned
``usage_limit``            failure      a response crosses ``output_tokens_limit``, or the
                                        ``request_limit`` stops the run before the next request
``cancel_before_start``    cancelled    the task is cancelled before the run has bound any message
                                        (the capture stays empty)
``cancel_before_response`` cancelled    ... while the model is answering
``cancel_mid_stream``      cancelled    ... after some streamed chunks of the answer
``cancel_after_calls``     cancelled    ... after a response with tool calls, before any tool runs
``cancel_in_tool``         cancelled    ... while the round's tools run, none has returned
``cancel_after_results``   cancelled    ... after some calls of the round returned, one still runs
``timeout``                timeout      ``asyncio.timeout`` around the run expires at one of the
                                        six cancellation points above (:data:`POINTS`)
=========================  ===========  =======================================================

Nothing sleeps: a tool or model that is to be interrupted sets an event and waits on one
that never fires, and the driver cancels the task (or reschedules the run's
``asyncio.timeout`` to now) when it sees that event. A tool that raises, or that blocks
after results, first waits until its sibling calls have returned, so which results exist
is decided by the script, not by scheduling. Each run gets its own event loop, a fixed
``conversation_id`` and a ``run_id`` no message of its history carries (pydantic-ai refuses
a run whose id is already there: "Each agent run needs a distinct ``run_id``"), and the
times the run wrote into the captured messages are replaced by a fixed clock, so a scenario
gives the same capture every time (the stored history's own times must lie in the past, as
stored times do).

pydantic-ai refusing the run before it begins is never the run's failure: where it refuses
the history it was given (:data:`HISTORY_REFUSALS`: unprocessed tool calls, a suspended
response) its ``UserError`` is raised to the caller, whose history it is (the lifecycle's
next run is blocked); any other refusal is about the driver's own call, raised as
:class:`~chatconform.errors.DriverError`, chatconform's bug.

What pydantic-ai writes at each point is what the run really leaves (see
https://ai.pydantic.dev/message-history/ and the ``state`` field of ``ModelResponse``
and ``ModelRequest``): a streamed response cut off is stored ``state="interrupted"``, a
crash or cancellation while tools run appends an interrupted request with the results
that finished, a response that crosses a token limit is kept ``state="interrupted"``, and
a cancellation between the response and its tools leaves a complete response whose calls
have no results.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from chatconform.errors import DriverError
from chatconform.history import with_parts
from chatconform.lazy import pai
from chatconform.strategies.histories import histories
from chatconform.strategies.histories import instructions as run_instructions
from chatconform.strategies.validation import check_bool, check_int

if TYPE_CHECKING:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
    from pydantic_ai.models.function import AgentInfo

__all__ = ["ENDINGS", "OUTCOMES", "POINTS", "RunResult", "Scenario", "run_cases", "run_scenario", "scenarios"]

#: How a run may end; each maps to one outcome (:data:`OUTCOME_OF`).
ENDINGS = ("success", "deferred", "model_error", "tool_error", "usage_limit", "cancel_before_start",
           "cancel_before_response", "cancel_mid_stream", "cancel_after_calls", "cancel_in_tool",
           "cancel_after_results", "timeout")

#: What the application knows about how the run ended.
OUTCOMES = ("success", "deferred", "failure", "cancelled", "timeout")

OUTCOME_OF = {"success": "success", "deferred": "deferred", "model_error": "failure", "tool_error": "failure",
              "usage_limit": "failure", "timeout": "timeout",
              **{ending: "cancelled" for ending in ENDINGS if ending.startswith("cancel_")}}

#: Where a cancellation (or the timeout) lands.
POINTS = ("before_start", "before_response", "mid_stream", "after_calls", "in_tool", "after_results")

#: The tools of every run: each behaves as its name says.
TOOLS = ("lookup", "hold", "crash", "ask_human")

#: The clock the captured messages are stamped with (one second per message).
EPOCH = datetime(2026, 2, 2, 12, 0, tzinfo=UTC)

#: How pydantic-ai's refusals of the history itself begin (its content, not the driver's call):
#: a new prompt on unprocessed tool calls or on a suspended response.
HISTORY_REFUSALS = ("Cannot provide a new user prompt when the message history",)

#: Seconds after which a run that neither ended nor reached its cut point is a driver bug.
STUCK_AFTER = 30.0

_LONG_ANSWER = " ".join(["word"] * 160)  # crosses the token limit below on its own
_TOKEN_LIMIT = 120


@dataclass(frozen=True)
class Scenario:
    """One agent run, scripted.

    ``rounds`` are the tool rounds the model asks for before the last response, each the
    number of parallel ``lookup`` calls (all return). ``last_calls`` is how many calls
    the last response makes when the ending needs one (deferred, tool error, the
    cancellations after calls, in a tool, after results, and some usage limits and
    streams cut off); ``last_text`` whether it says something first. ``point`` is where a
    cancellation or timeout lands, ``chunks`` how many stream chunks come before a cut,
    and ``limit`` which usage limit stops the run (``"tokens"`` or ``"requests"``).
    """

    previous: list[ModelMessage]
    prompt: str = "Go (u-run)"
    instructions: str | None = None
    stream: bool = False
    rounds: tuple[int, ...] = ()
    ending: str = "success"
    point: str = "before_start"
    last_calls: int = 1
    last_text: bool = False
    chunks: int = 1
    limit: str = "tokens"

    def __post_init__(self) -> None:
        if self.ending not in ENDINGS:
            raise ValueError(f"ending={self.ending!r} is not one of {ENDINGS}")
        if self.point not in POINTS:
            raise ValueError(f"point={self.point!r} is not one of {POINTS}")
        mid_stream = self.ending == "cancel_mid_stream" or (self.ending == "timeout" and self.point == "mid_stream")
        if mid_stream and not self.stream:
            raise ValueError("a cut mid-stream needs stream=True")
        after_results = self.ending == "cancel_after_results" or (
            self.ending == "timeout" and self.point == "after_results")
        if after_results and self.last_calls < 2:
            raise ValueError("a cut after some results needs last_calls >= 2 (one returns, one runs)")
        if self.ending == "usage_limit" and self.limit == "requests" and not self.rounds:
            raise ValueError("a request limit needs at least one tool round before it")

    @property
    def outcome(self) -> str:
        return OUTCOME_OF[self.ending]

    @property
    def cut_at(self) -> str | None:
        """Where the run is cut from outside (a cancellation or the timeout), or None."""
        if self.ending == "timeout":
            return self.point
        return self.ending.removeprefix("cancel_") if self.ending.startswith("cancel_") else None


@dataclass
class RunResult:
    """What the application holds when the run is over."""

    previous: list[ModelMessage]
    captured: list[ModelMessage]
    outcome: str
    #: What actually stopped the run (the exception type, or ``"returned"``), for tests.
    stopped_by: str = "returned"
    output: Any = None
    #: The scenario that was played.
    scenario: Scenario | None = None


class _Script:
    """The FunctionModel's side of a scenario, and the events the driver watches."""

    def __init__(self, sc: Scenario):
        self.sc = sc
        self.responses = 0  # responses the model has started in this run
        self.reached = asyncio.Event()  # the run is at its cut point
        self.siblings_done = asyncio.Event()
        self.pending_returns = 0
        self.at_last_tools = False

    # -- what the model answers ------------------------------------------------------------
    def _calls(self, step: int) -> list[ToolCallPart]:
        sc = self.sc
        if step < len(sc.rounds):
            return [pai.ToolCallPart("lookup", {"n": i}, f"call_{step}_{i}") for i in range(sc.rounds[step])]
        names = self._last_names()
        return [pai.ToolCallPart(name, {"n": i}, f"call_{step}_{i}") for i, name in enumerate(names)]

    def _last_names(self) -> list[str]:
        """The tools the last response calls, by what the ending needs them to do."""
        sc, n = self.sc, self.sc.last_calls
        cut = sc.cut_at
        if sc.ending == "deferred":
            return ["lookup"] * (n - 1) + ["ask_human"]
        if sc.ending == "tool_error":
            return ["lookup"] * (n - 1) + ["crash"]
        if cut == "in_tool":
            return ["hold"] * n
        if cut == "after_results":
            return ["lookup"] * (n - 1) + ["hold"]
        return ["lookup"] * n

    def _last_has_calls(self) -> bool:
        sc = self.sc
        if sc.ending in ("deferred", "tool_error") or sc.cut_at in ("after_calls", "in_tool", "after_results"):
            return True
        if sc.ending in ("usage_limit", "model_error") or sc.cut_at in ("mid_stream", "before_response"):
            return sc.last_calls > 0
        return False  # success: a text answer

    def last_response_parts(self, step: int) -> list:
        sc = self.sc
        parts: list = []
        calls = self._calls(step) if self._last_has_calls() else []
        if sc.ending == "usage_limit" and sc.limit == "tokens":
            # The calls first: a stream is stopped as soon as its chunks cross the limit.
            return [*calls, pai.TextPart(_LONG_ANSWER)]
        if sc.last_text or not calls:
            parts.append(pai.TextPart(f"Answer of the run (a{step})"))
        return [*parts, *calls]

    def parts_for(self, step: int) -> list:
        if step < len(self.sc.rounds):
            return self._calls(step)
        return self.last_response_parts(step)

    def is_last(self, step: int) -> bool:
        return step == len(self.sc.rounds)

    async def block(self) -> None:
        """Mark the cut point as reached and wait to be cancelled."""
        self.reached.set()
        await asyncio.Event().wait()

    async def model(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        step = self.responses
        self.responses += 1
        if self.is_last(step):
            if self.sc.ending == "model_error":
                raise RuntimeError("the model provider failed (scripted)")
            if self.sc.cut_at == "before_response":
                await self.block()
        return pai.ModelResponse(self.parts_for(step), model_name="scripted")

    async def stream(self, messages: list[ModelMessage], info: AgentInfo):
        step = self.responses
        self.responses += 1
        last = self.is_last(step)
        if last and self.sc.cut_at == "before_response":
            await self.block()
        cut = last and (self.sc.cut_at == "mid_stream" or self.sc.ending == "model_error")
        sent = 0
        for index, part in enumerate(self.parts_for(step)):
            if cut and sent >= self.sc.chunks:
                break
            if isinstance(part, pai.TextPart):
                words = part.content.split(" ")
                for i, word in enumerate(words):
                    if cut and sent >= self.sc.chunks:
                        break
                    yield word if i == 0 else " " + word
                    sent += 1
            else:
                from pydantic_ai.models.function import DeltaToolCall

                yield {index: DeltaToolCall(name=part.tool_name, json_args=part.args_as_json_str(),
                                            tool_call_id=part.tool_call_id)}
                sent += 1
        if cut:
            if self.sc.ending == "model_error":
                raise RuntimeError("the model stream broke off (scripted)")
            await self.block()


_SCRIPT: contextvars.ContextVar[_Script] = contextvars.ContextVar("chatconform_run_script")
_AGENT: list[Agent] = []


def _agent() -> Agent:
    """The agent every scenario runs on (built once: tool schemas are not free); its tools
    find the scenario being played in a context variable, and each run brings its model."""
    if _AGENT:
        return _AGENT[0]
    from pydantic_ai import Agent, CallDeferred, DeferredToolRequests

    agent: Agent = Agent(output_type=[str, DeferredToolRequests])

    async def settle(script: _Script) -> None:
        """A tool that must not run ahead waits for its returning siblings."""
        if script.pending_returns:
            await script.siblings_done.wait()

    @agent.tool_plain
    async def lookup(n: int) -> str:
        """Look something up."""
        script = _SCRIPT.get()
        await asyncio.sleep(0)
        if script.at_last_tools:
            script.pending_returns -= 1
            if script.pending_returns == 0:
                script.siblings_done.set()
        return f"result {n} (r{script.responses}-{n})"

    @agent.tool_plain
    async def hold(n: int) -> str:
        """A long-running tool."""
        script = _SCRIPT.get()
        await settle(script)
        await script.block()
        return "never"

    @agent.tool_plain
    async def crash(n: int) -> str:
        """A tool that fails."""
        await settle(_SCRIPT.get())
        raise RuntimeError("the tool failed (scripted)")

    @agent.tool_plain
    async def ask_human(n: int) -> str:
        """Ask the user; answered in a later run."""
        raise CallDeferred()

    del lookup, hold, crash, ask_human
    _AGENT.append(agent)
    return agent


async def _play(sc: Scenario, script: _Script, captured: list[ModelMessage]) -> RunResult:
    from pydantic_ai import Agent, UsageLimitExceeded, UsageLimits
    from pydantic_ai.exceptions import UserError
    from pydantic_ai.models.function import FunctionModel

    agent = _agent()
    _SCRIPT.set(script)
    model = FunctionModel(script.model, stream_function=script.stream, model_name="scripted")
    limits = None
    if sc.ending == "usage_limit":
        limits = (UsageLimits(output_tokens_limit=_TOKEN_LIMIT) if sc.limit == "tokens"
                  else UsageLimits(request_limit=len(sc.rounds)))
    timer: list[asyncio.Timeout] = []

    async def run() -> Any:
        async with asyncio.timeout(None) as deadline:
            timer.append(deadline)
            async with agent.iter(sc.prompt, model=model, message_history=sc.previous, instructions=sc.instructions,
                                  usage_limits=limits, run_id=fresh_run_id(sc.previous),
                                  conversation_id="conversation-under-test") as agent_run:
                node = agent_run.next_node
                if sc.cut_at == "before_start":
                    await script.block()
                while not Agent.is_end_node(node):
                    if Agent.is_call_tools_node(node) and script.is_last(script.responses - 1):
                        calls = sum(isinstance(p, pai.ToolCallPart) for p in node.model_response.parts)
                        script.at_last_tools = True
                        script.pending_returns = calls - 1 if sc.cut_at == "after_results" or \
                            sc.ending == "tool_error" else 0
                        if script.pending_returns <= 0:
                            script.siblings_done.set()
                        if sc.cut_at == "after_calls":
                            await script.block()
                    if sc.stream and Agent.is_model_request_node(node):
                        async with node.stream(agent_run.ctx) as events:
                            async for _ in events:
                                pass
                    node = await agent_run.next(node)
                return agent_run.result.output if agent_run.result else None

    task = asyncio.ensure_future(run())
    watcher = asyncio.ensure_future(script.reached.wait())
    # A guard, not a clock the outcome depends on: a run that neither ends nor reaches its
    # cut point is a bug of the driver, reported instead of hanging the search.
    await asyncio.wait({task, watcher}, timeout=STUCK_AFTER, return_when=asyncio.FIRST_COMPLETED)
    if not task.done() and not script.reached.is_set():
        task.cancel()
        watcher.cancel()
        raise RuntimeError(f"the scenario neither ended nor reached its cut point in {STUCK_AFTER:g}s: {sc!r}")
    if script.reached.is_set() and not task.done():
        if sc.ending == "timeout":
            timer[0].reschedule(asyncio.get_running_loop().time())
        else:
            task.cancel()
    watcher.cancel()
    stopped, output = "returned", None
    try:
        output = await task
    except asyncio.CancelledError:
        stopped = "CancelledError"
    except UserError as exc:  # a RuntimeError, but no failure of the run: it never began
        if str(exc).startswith(HISTORY_REFUSALS):
            raise  # the history's: its caller's to judge
        raise DriverError(f"pydantic-ai refused the run driver's own call: {exc}") from exc
    except (TimeoutError, UsageLimitExceeded, RuntimeError) as exc:
        stopped = type(exc).__name__
    return RunResult(sc.previous, list(captured), sc.outcome, stopped, output, sc)


def fresh_run_id(history: Sequence[ModelMessage]) -> str:
    """``run-N``, the first N from one past the runs ``history`` holds that none of its messages
    carries: the same for the same history, and never one pydantic-ai refuses."""
    taken = {getattr(message, "run_id", None) for message in history}
    number = len(taken - {None}) + 1
    while f"run-{number}" in taken:
        number += 1
    return f"run-{number}"


def _restamp(messages: Sequence[ModelMessage], started: datetime) -> list[ModelMessage]:
    """The capture with a fixed clock: a time the run wrote (at or after ``started``) becomes
    :data:`EPOCH` plus one second per message; the stored history keeps its own times."""
    def fixed(value: Any, when: datetime) -> Any:
        return when if isinstance(value, datetime) and value >= started else value

    out = []
    for index, message in enumerate(messages):
        when = EPOCH + timedelta(seconds=index)
        parts = [dataclasses.replace(p, timestamp=fixed(p.timestamp, when)) if hasattr(p, "timestamp") else p
                 for p in message.parts]
        out.append(with_parts(message, parts, timestamp=fixed(message.timestamp, when)))
    return out


def run_scenario(sc: Scenario) -> RunResult:
    """Play ``sc`` on a real pydantic-ai agent; what was captured, and the outcome.

    Runs its own event loop (call it from synchronous code, or from another thread). The
    previous history passed in is never modified: the agent gets its own copy.
    """
    from pydantic_ai import capture_run_messages

    async def main() -> RunResult:
        script = _Script(sc)
        started = datetime.now(UTC)
        with capture_run_messages() as captured:
            result = await _play(dataclasses.replace(sc, previous=_copy(sc.previous)), script, captured)
        result.previous, result.scenario = sc.previous, sc
        result.captured = _restamp(result.captured, started)
        return result

    return asyncio.run(main())


def _copy(history: Sequence[ModelMessage]) -> list[ModelMessage]:
    import copy

    return copy.deepcopy(list(history))


# -- the strategies --------------------------------------------------------------------------

@st.composite
def _scenarios(draw, *, endings: tuple[str, ...], stream: bool | None, max_rounds: int, max_calls: int,
               previous) -> Scenario:
    # The outcome first, then the ending within it: the six cancellation endings do not
    # crowd out the other outcomes.
    outcome = draw(st.sampled_from([o for o in OUTCOMES if any(OUTCOME_OF[e] == o for e in endings)]))
    ending = draw(st.sampled_from([e for e in endings if OUTCOME_OF[e] == outcome]))
    streamed = draw(st.booleans()) if stream is None else stream
    if ending == "cancel_mid_stream":
        streamed = True
    points = [p for p in POINTS if streamed or p != "mid_stream"]
    point = draw(st.sampled_from(points)) if ending == "timeout" else "before_start"
    cut = point if ending == "timeout" else ending.removeprefix("cancel_")
    limit = draw(st.sampled_from(("tokens", "requests"))) if ending == "usage_limit" else "tokens"
    least_rounds = 1 if (ending == "usage_limit" and limit == "requests") else 0
    rounds = tuple(draw(st.lists(st.integers(1, max_calls), min_size=least_rounds,
                                 max_size=max(max_rounds, least_rounds))))
    least_calls = 2 if cut == "after_results" else 1
    needs_calls = ending in ("deferred", "tool_error") or cut in ("after_calls", "in_tool", "after_results")
    least = least_calls if needs_calls else 0
    last_calls = draw(st.integers(least, max(max_calls, least)))
    return Scenario(
        previous=draw(previous),
        prompt="Go on (u-run)",
        # Mostly instructions (Hypothesis favours the first branch): with a tool round,
        # pydantic-ai sets them on each request of the run, and each must be stripped.
        instructions=draw(run_instructions(blank=False, absent=False) | run_instructions()),
        stream=streamed,
        rounds=rounds,
        ending=ending,
        point=point,
        last_calls=last_calls,
        last_text=draw(st.booleans()),
        chunks=draw(st.integers(1, 3)),
        limit=limit,
    )


def scenarios(*, endings: Sequence[str] = ENDINGS, stream: bool | None = None, max_rounds: int = 2,
              max_calls: int = 3, max_previous_turns: int = 3):
    """A strategy for :class:`Scenario`: a stored history, a script and an ending.

    - ``endings``: the endings to draw from (all of :data:`ENDINGS` by default); a
      timeout draws its cancellation point.
    - ``stream``: True or False to fix whether the model streams; None draws it (a cut
      mid-stream always streams).
    - ``max_rounds``: tool rounds before the last response; ``max_calls``: parallel calls
      per response.
    - ``max_previous_turns``: user turns in the stored history before the run (0 for an
      empty one); the history is drawn by :func:`~chatconform.strategies.histories`
      with tools, retries, summaries and earlier interrupted runs, ending in a response.

    Shrinks toward a non-streamed success with no previous history and no tool round.
    """
    endings = tuple(endings)
    bad = [e for e in endings if e not in ENDINGS]
    if not endings or bad:
        raise InvalidArgument(f"endings={endings!r} must be a non-empty selection of {ENDINGS}")
    if stream is not None:
        check_bool("stream", stream)
        if stream is False and endings == ("cancel_mid_stream",):
            raise InvalidArgument("endings=('cancel_mid_stream',) needs a stream: pass stream=None or True")
    check_int("max_rounds", max_rounds, 0)
    check_int("max_calls", max_calls, 2)
    check_int("max_previous_turns", max_previous_turns, 0)
    if stream is False:
        endings = tuple(e for e in endings if e != "cancel_mid_stream")
    # One history in four is empty (a first run); the others have earlier turns to keep.
    stored = histories(min_turns=1, max_turns=max(1, max_previous_turns), ends_with_request=False,
                       dangling_tail=False, max_bulk_turns=0, odd_text=False, files=False, max_tool_rounds=2)
    previous = st.just([]) if max_previous_turns == 0 else st.integers(0, 3).flatmap(
        lambda pick: st.just([]) if pick == 0 else stored)
    return _scenarios(endings=endings, stream=stream, max_rounds=max_rounds, max_calls=max_calls,
                      previous=previous)


def run_cases(**knobs):
    """A strategy for :class:`RunResult`: a drawn :func:`scenarios` scenario, played by
    :func:`run_scenario`. Shrinking shrinks the scenario and plays it again."""
    return scenarios(**knobs).map(run_scenario)
