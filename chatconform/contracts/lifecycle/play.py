"""Playing a lifecycle: an implementation's methods composed with the reference's, step by step.

A :class:`~chatconform.strategies.lifecycles.Lifecycle` is played on one conversation store
(:func:`play`): each step calls the implementation's method where it has one and the
reference's where it has not (:class:`Composition`), and leaves a :class:`Record` of what
the store held before and after it, what the reference's answer on the same input kept,
and what the step saw (a restart's reloaded history, the payloads of a request, the thread
of a branch). The lifecycle checks read the records; nothing here judges.

What must still be there after a step is carried from step to step (:class:`Ledger`): the
user texts of the current branch, less what the reference's own answer on the same input
drops (the part a compaction summarized, what a trim cut to its budget), and the summaries
the reference's answer holds, each of which must be there once.

A call into the implementation that raises, returns no history or changes its input stops
the play with :class:`StepFailed` (or the engine's own :class:`MalformedResult` and
:class:`ProgramHung`), naming the step, so ``lifecycle.no_crash`` and
``lifecycle.input_untouched`` say where it happened.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from chatconform.errors import MalformedResult, ProgramError, ProgramHung
from chatconform.frame.guard import DEFAULT_TIMEOUT, call_deadline, time_left
from chatconform.frame.snapshot import Frozen
from chatconform.history import Row, history_problem
from chatconform.lazy import pai
from chatconform.providers import PROVIDER_IDS
from chatconform.reference import ReferenceImplementation
from chatconform.reference.trim import valid_starts
from chatconform.strategies.lifecycles import Lifecycle, Step, standing_request
from chatconform.strategies.runs import EPOCH, TOOLS, run_scenario

if TYPE_CHECKING:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse
    from pydantic_ai.models.function import AgentInfo

#: The contract methods a lifecycle composes, by the steps that call them.
METHODS = ("persist_run", "extract_thread", "dump", "load", "sanitize", "compact", "trim", "repair", "to_payload")

_REFERENCE = ReferenceImplementation()

#: The run's instructions a request step maps with its history.
REQUEST_INSTRUCTIONS = "Answer briefly. (instructions)"


class StepFailed(ProgramError):
    """A step's call into the implementation raised; the message says what it raised, and where
    (a ``ProgramError``: ``no_crash`` prints its text as it is)."""


# -- the composition ------------------------------------------------------------------------------

class Composition:
    """An implementation's contract methods, the reference's standing in for the ones it lacks.

    ``providers`` are the providers a request maps for: the implementation's own where its
    ``to_payload`` is the one called, every provider the reference maps for otherwise.
    """

    def __init__(self, obj: Any, providers: frozenset[str] | None = None) -> None:
        self.obj = obj
        self.own = frozenset(m for m in METHODS if callable(getattr(obj, m, None)))
        if "dump" in self.own or "load" in self.own:  # serde is one contract: both or none
            self.own |= {"dump", "load"}
        chosen = providers if "to_payload" in self.own and providers is not None else frozenset(PROVIDER_IDS)
        self.providers = tuple(p for p in PROVIDER_IDS if p in chosen)
        #: What each call did to its input, where it changed it (a play starts it empty).
        self.changes: list[str] = []

    def whose(self, *methods: str) -> str:
        mine = [m for m in methods if m in self.own]
        return f"yours: {', '.join(mine)}" if mine else "the reference's"

    def call(self, where: str, method: str, *args: Any, **kwargs: Any) -> Any:
        """``method`` of the implementation (or the reference), judged as one call: it must
        return, leave its arguments as they were, and (but for ``dump`` and ``to_payload``)
        return a history."""
        if method not in self.own:
            return getattr(_REFERENCE, method)(*args, **kwargs)
        fn = getattr(self.obj, method)
        watch = getattr(self.obj, "watch_input", None)  # a program in a process of its own
        frozen = None
        if callable(watch):
            # Within what the whole program has left: its process is stopped, not abandoned.
            left = time_left()
            watch(max(0.1, left) if left is not None else call_deadline(DEFAULT_TIMEOUT, _size(args)))
        else:  # a private copy, compared afterwards, as the engine's own call is judged
            frozen = Frozen((args, kwargs))
            args, kwargs = frozen.copy()
        try:
            result = fn(*args, **kwargs)
        except (ProgramHung, MalformedResult) as exc:
            raise type(exc)(f"{where}, {method}(): {exc}") from None
        except Exception as exc:
            raised = str(exc) if isinstance(exc, ProgramError) else f"{type(exc).__name__}: {exc}"
            raise StepFailed(f"{raised}, in {method}() at {where}") from exc
        change = self.obj.input_change() if callable(watch) else None
        if change is None and frozen is not None and frozen.changed((args, kwargs)):
            change = "it changed its input"
        if change is not None:
            self.changes.append(f"{where}, {method}(): {change}")
        if method in ("dump", "to_payload"):
            if method == "dump" and not isinstance(result, (bytes, str)):
                raise MalformedResult(f"{where}, dump() returned {type(result).__name__}, not bytes or str")
            return result
        if method == "extract_thread":
            return result
        problem = history_problem(result)
        if problem is not None:
            raise MalformedResult(f"{where}, {method}(): {problem}")
        return result


def _size(args: tuple) -> int:
    return sum(len(a) for a in args if isinstance(a, list))


# -- what must still be there ---------------------------------------------------------------------

def user_texts(history: Sequence[ModelMessage]) -> Counter:
    """Every user text of a history, counted (a text said twice is there twice)."""
    found: Counter = Counter()
    for message in history:
        if not isinstance(message, pai.ModelRequest):
            continue
        for part in message.parts:
            if not isinstance(part, pai.UserPromptPart):
                continue
            items = [part.content] if isinstance(part.content, str) else part.content
            for item in items:
                if isinstance(item, str):
                    found[item] += 1
                elif isinstance(item, pai.TextContent):
                    found[item.content] += 1
    return found


def occurrences(history: Sequence[ModelMessage], text: str) -> int:
    """In how many parts ``text`` appears (a summary is framed by its compaction)."""
    return sum(1 for message in history for part in message.parts
               if isinstance(getattr(part, "content", None), str) and text in part.content)


def standing_count(history: Sequence[ModelMessage], prompt: str) -> int:
    return sum(1 for message in history for part in message.parts
               if isinstance(part, pai.SystemPromptPart) and part.content == prompt)


@dataclass(frozen=True)
class Ledger:
    """The user texts that must be in the stored history, and the summaries that must be there once."""

    texts: Counter = field(default_factory=Counter)
    summaries: frozenset[str] = frozenset()

    @classmethod
    def of(cls, history: Sequence[ModelMessage]) -> Ledger:
        return cls(user_texts(history))

    def carried(self, before: Sequence[ModelMessage], kept: Sequence[ModelMessage], summary: str = "") -> Ledger:
        """After a step whose reference answer on ``before`` is ``kept``: what it dropped may
        go, what it added must come (``summary``, when it holds it, must be there once)."""
        old, new = user_texts(before), user_texts(kept)
        texts = (self.texts - (old - new)) + (new - old)
        summaries = {s for s in (*self.summaries, *([summary] if summary else ())) if occurrences(kept, s)}
        return Ledger(texts, frozenset(summaries))

    def missing(self, history: Sequence[ModelMessage]) -> list[str]:
        return list((self.texts - user_texts(history)).elements())


# -- the records ----------------------------------------------------------------------------------

@dataclass
class Record:
    """One step as it was played."""

    number: int
    step: Step
    whose: str
    before: list[ModelMessage]
    after: list[ModelMessage]
    ledger: Ledger
    #: ``restart``: the history ``load`` gave back.
    reloaded: list[ModelMessage] | None = None
    #: ``request``: the history sent (repaired, with the next prompt), and (provider, body) per provider.
    sent: list[ModelMessage] | None = None
    payloads: list[tuple[str, Any]] = field(default_factory=list)
    #: ``turn``, ``branch``: the thread's ids as the implementation and as the reference walk it.
    thread: tuple[list[str], list[str]] | None = None
    #: Why the next run refused the history this step left, or None.
    blocked: str | None = None

    def title(self) -> str:
        return f"step {self.number} ({self.step.kind}, {self.whose})"


@dataclass
class Trace:
    """A played lifecycle: the records, and the standing prompt to look for."""

    system_prompt: str
    start: list[ModelMessage]
    records: list[Record]
    own: frozenset[str]
    #: What the implementation's calls did to their inputs, where they changed them.
    changes: list[str] = field(default_factory=list)

    def program(self, upto: int | None = None) -> str:
        """The steps as numbered lines, up to step ``upto``."""
        shown = self.records if upto is None else self.records[:upto]
        return "; ".join(f"{r.number}. {r.step.describe()} [{r.whose}]" for r in shown)


# -- the next run ---------------------------------------------------------------------------------

async def _answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return pai.ModelResponse([pai.TextPart("Continuing. (a-next)")])


async def _tool(n: int = 0) -> str:
    return f"result {n}"


_NEXT: list[Agent] = []


def next_agent() -> Agent:
    """An agent with the runs' tools whose model answers every request with text (built once)."""
    if not _NEXT:
        from pydantic_ai import Agent, DeferredToolRequests
        from pydantic_ai.models.function import FunctionModel

        agent: Agent = Agent(FunctionModel(_answer), output_type=[str, DeferredToolRequests])
        for name in TOOLS:
            agent.tool_plain(name=name)(_tool)
        _NEXT.append(agent)
    return _NEXT[0]


def refusal(history: list[ModelMessage], prompt: str = "Next question (u-next)") -> str | None:
    """Why a real Agent refuses the next prompt on ``history``, or None when it takes it."""
    try:
        asyncio.run(next_agent().run(prompt, message_history=list(history)))
    except Exception as exc:
        return f"{type(exc).__name__}: {str(exc)[:300]}"
    return None


# -- playing --------------------------------------------------------------------------------------

def _pick(pick: int, choices: Sequence[Any]) -> Any:
    return choices[pick % len(choices)]


def _budget(history: list[ModelMessage], pick: int) -> int:
    """A trim budget at ``len(history) - start`` for a valid start, or one below it: where a
    trim that adds the standing prompt on top of its budget is caught."""
    starts = [s for s in valid_starts(history) if s < len(history)] or [0]
    start = _pick(pick // 2, starts)
    return max(1, len(history) - start - (pick % 2))


def _cut(history: list[ModelMessage], pick: int) -> int:
    return _pick(pick, range(1, len(history) + 1)) if history else 0


def _plant(history: list[ModelMessage], prompt: str) -> list[ModelMessage]:
    """What the application does after taking a client's history: its own standing prompt
    goes back in front when the sanitized history no longer holds it."""
    if standing_count(history, prompt):
        return history
    return [standing_request(prompt), *history]


class Player:
    """One conversation store, played a step at a time (:meth:`advance`), or a whole program (:meth:`play`)."""

    def __init__(self, lifecycle: Lifecycle, composition: Composition) -> None:
        self.lc, self.impl = lifecycle, composition
        composition.changes.clear()
        self.history: list[ModelMessage] = lifecycle.history
        self.ledger = Ledger.of(lifecycle.history)
        self.rows: list[Row] = []
        self.kept: dict[str | None, tuple[list[ModelMessage], Ledger]] = {None: (lifecycle.history, self.ledger)}
        self.head: str | None = None
        self.records: list[Record] = []

    def play(self) -> Trace:
        for number, step in enumerate(self.lc.steps, 1):
            if not self.advance(number, step):
                break
        return self.trace()

    def advance(self, number: int, step: Step) -> bool:
        """Play one step; False when the next run refused the history (the conversation is stuck)."""
        record = getattr(self, f"_{step.kind}")(number, step)
        self.records.append(record)
        if record.blocked is not None:
            return False
        self.ledger = record.ledger
        self.history = record.after
        if self.head is not None:
            self.kept[self.head] = (self.history, self.ledger)
        return True

    def trace(self) -> Trace:
        return Trace(self.lc.system_prompt, self.lc.history, list(self.records), self.impl.own,
                     list(self.impl.changes))

    def _call(self, number: int, step: Step, method: str, *args: Any, **kwargs: Any) -> Any:
        return self.impl.call(f"step {number} ({step.kind})", method, *args, **kwargs)

    def _record(self, number: int, step: Step, whose: str, after: list[ModelMessage], kept: list[ModelMessage],
                summary: str = "", **more: Any) -> Record:
        return Record(number, step, whose, self.history, after, self.ledger.carried(self.history, kept, summary),
                      **more)

    # -- the steps --------------------------------------------------------------------------
    def _turn(self, number: int, step: Step, *, branch_of: Row | None = None) -> Record:
        before, ledger = self.history, self.ledger
        whose = self.impl.whose("persist_run", *(("compact",) if step.compact_in_run else ()),
                                "extract_thread")
        assert step.scenario is not None
        base, kept_base = before, before
        if step.compact_in_run and len(before) > 1:
            cut = _cut(before, step.pick)
            base = self._call(number, step, "compact", before, cut=cut, summary=step.summary)
            kept_base = _REFERENCE.compact(before, cut=cut, summary=step.summary)
            ledger = ledger.carried(before, kept_base, step.summary)
            missing = ledger.missing(base)
            if missing:  # the in-run compaction lost a text: judged where it happened
                return Record(number, step, whose, before, base, ledger)
        from pydantic_ai.exceptions import UserError

        try:
            run = run_scenario(dataclasses.replace(step.scenario, previous=base))
        except UserError as exc:  # the Agent refused the history it was given, before the run began
            return Record(number, step, whose, before, before, ledger, blocked=f"UserError: {str(exc)[:300]}")
        stored = self._call(number, step, "persist_run", before, run.captured, run.outcome)
        kept = _REFERENCE.persist_run(before, run.captured, run.outcome)
        ledger = ledger.carried(base, kept)
        if not run.captured:  # the run stopped before it began: nothing it compacted counts
            ledger = self.ledger.carried(before, kept)
        record = Record(number, step, whose, before, stored, ledger)
        parent = self.head if branch_of is None else branch_of.parent_message_id
        row = Row(f"row-{number}", parent, EPOCH + timedelta(minutes=number))
        self.rows.append(row)
        newest_first = self.rows[::-1]
        reference_ids = [r.id for r in _REFERENCE.extract_thread(newest_first)]
        if "extract_thread" in self.impl.own:
            found = self._call(number, step, "extract_thread", list(newest_first))
            ids = [getattr(r, "id", None) for r in found] if isinstance(found, list) else [repr(found)[:80]]
            record.thread = ([str(i) for i in ids], reference_ids)
        self.head = row.id
        return record

    def _branch(self, number: int, step: Step) -> Record:
        if not self.rows:
            return self._turn(number, step)
        chain = _REFERENCE.extract_thread(self.rows[::-1])
        again = _pick(step.pick, chain)
        self.history, self.ledger = self.kept[again.parent_message_id]
        return self._turn(number, step, branch_of=again)

    def _restart(self, number: int, step: Step) -> Record:
        data = self._call(number, step, "dump", self.history)
        loaded = self._call(number, step, "load", data)
        return self._record(number, step, self.impl.whose("dump", "load"), loaded, self.history, reloaded=loaded)

    def _client(self, number: int, step: Step) -> Record:
        mine = _plant(self._call(number, step, "sanitize", self.history), self.lc.system_prompt)
        kept = _plant(_REFERENCE.sanitize(self.history), self.lc.system_prompt)
        return self._record(number, step, self.impl.whose("sanitize"), mine, kept)

    def _compact(self, number: int, step: Step) -> Record:
        cut = _cut(self.history, step.pick)
        mine = self._call(number, step, "compact", self.history, cut=cut, summary=step.summary)
        kept = _REFERENCE.compact(self.history, cut=cut, summary=step.summary)
        return self._record(number, step, self.impl.whose("compact"), mine, kept, step.summary)

    def _trim(self, number: int, step: Step) -> Record:
        budget = _budget(self.history, step.pick)
        mine = self._call(number, step, "trim", self.history, max_messages=budget)
        kept = _REFERENCE.trim(self.history, max_messages=budget)
        return self._record(number, step, self.impl.whose("trim"), mine, kept)

    def _repair(self, number: int, step: Step) -> Record:
        mine = self._call(number, step, "repair", self.history)
        return self._record(number, step, self.impl.whose("repair"), mine, _REFERENCE.repair(self.history))

    def _request(self, number: int, step: Step) -> Record:
        sent = [*self._call(number, step, "repair", self.history),
                pai.ModelRequest([pai.UserPromptPart(f"Step {number}: a question (u-request-{number})",
                                                     timestamp=EPOCH)], timestamp=EPOCH)]
        payloads = [(p, self._call(number, step, "to_payload", sent, provider=p,
                                          instructions=REQUEST_INSTRUCTIONS)) for p in self.impl.providers]
        return self._record(number, step, self.impl.whose("repair", "to_payload"), self.history, self.history,
                            sent=sent, payloads=payloads)


def play(lifecycle: Lifecycle, composition: Composition) -> Trace:
    """Play every step of ``lifecycle`` on one store (see the module docstring)."""
    return Player(lifecycle, composition).play()


def bound(obj: Any, providers: frozenset[str] | None) -> Callable[[Lifecycle], Trace] | None:
    """The lifecycle of ``obj``'s methods composed with the reference, or None: it has none."""
    composition = Composition(obj, providers)
    if not composition.own:
        return None
    return lambda lifecycle: play(lifecycle, composition)
