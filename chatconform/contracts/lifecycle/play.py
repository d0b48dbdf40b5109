"""Playing a lifecycle: an implementation's methods composed with the reference's, step by step.

A :class:`~chatconform.strategies.lifecycles.Lifecycle` is played on one conversation store
(:func:`play`). The kinds of step, and the methods they compose, are what the contracts
declare in their own modules (``Contract.lifecycle_steps``: :mod:`chatconform.frame.lifecycle`):
each step is played by its declaration on the :class:`Player`, which calls the implementation's
method where it has one and the reference's where it has not (:class:`Composition`), and
leaves a :class:`Record` of what the store held before and after it, what the reference's
answer on the same input kept, and what the step saw (a restart's reloaded history, the
payloads of a request, the thread of a branch). The lifecycle checks read the records;
nothing here judges.

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
from functools import cache
from typing import TYPE_CHECKING, Any

from chatconform.contracts import all_contracts
from chatconform.errors import ContractLoadError, MalformedResult, ProgramError, ProgramHung
from chatconform.frame.calls import Caller
from chatconform.frame.contract import Contract
from chatconform.frame.lifecycle import LifecycleStep, cut_at, picked
from chatconform.history import Row, history_problem
from chatconform.lazy import pai
from chatconform.providers import PROVIDER_IDS
from chatconform.reference import ReferenceImplementation
from chatconform.strategies.lifecycles import Lifecycle, Step, standing_request
from chatconform.strategies.runs import EPOCH, TOOLS, run_scenario

if TYPE_CHECKING:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse
    from pydantic_ai.models.function import AgentInfo

_REFERENCE = ReferenceImplementation()


# -- what the contracts declare ---------------------------------------------------------------------

@cache
def joined() -> tuple[Contract, ...]:
    """The contracts that declare steps of a conversation's life, in listing order."""
    return tuple(c for c in all_contracts().values() if c.lifecycle_steps)


@cache
def step_kinds() -> dict[str, LifecycleStep]:
    """Every kind of step the contracts declare, by name, in their ``order`` (a program shrinks
    toward the first)."""
    kinds: dict[str, LifecycleStep] = {}
    for contract in joined():
        for kind in contract.lifecycle_steps:
            if kind.name in kinds:
                raise ContractLoadError(f"two contracts declare the lifecycle step {kind.name!r}")
            kinds[kind.name] = kind
    return {kind.name: kind for kind in sorted(kinds.values(), key=lambda k: (k.order, k.name))}


@cache
def results() -> dict[str, str]:
    """What each composed method returns, as its contract's signature says (``history``)."""
    return {call.method: call.result for contract in joined() for call in contract.calls()}


@cache
def method_groups() -> tuple[tuple[str, ...], ...]:
    """The methods a lifecycle composes, one group per contract that declares steps (a
    contract's methods are one: an implementation supplies all of them or none)."""
    return tuple(tuple(call.method for call in contract.calls()) for contract in joined())


def composed_methods() -> tuple[str, ...]:
    """Every method a lifecycle composes."""
    return tuple(method for group in method_groups() for method in group)


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
        self.own = frozenset(method for group in method_groups() if any(callable(getattr(obj, m, None)) for m in group)
                             for method in group)
        chosen = providers if "to_payload" in self.own and providers is not None else frozenset(PROVIDER_IDS)
        self.providers = tuple(p for p in PROVIDER_IDS if p in chosen)
        #: What each call did to its input, where it changed it (a play starts it empty).
        self.changes: list[str] = []

    def whose(self, *methods: str) -> str:
        mine = [m for m in methods if m in self.own]
        return f"yours: {', '.join(mine)}" if mine else "the reference's"

    def call(self, where: str, method: str, *args: Any, **kwargs: Any) -> Any:
        """``method`` of the implementation (or the reference), judged as one call: it must
        return, leave its arguments as they were, and return what its contract's signature
        says (a history, the stored form). Made inside the engine's call of the whole program, with the run's
        timeout, within what the program has left (:class:`~chatconform.frame.calls.Caller`)."""
        if method not in self.own:
            return getattr(_REFERENCE, method)(*args, **kwargs)
        fn = getattr(self.obj, method)
        called = Caller(self.obj).call(lambda given: fn(*given[0], **given[1]), (args, kwargs),
                                       size=_size(args), watch=True, check=_RESULT_CHECKS.get(results()[method]))
        error = called.error
        if isinstance(error, (ProgramHung, MalformedResult)):
            raise type(error)(f"{where}, {method}(): {error}") from None
        if error is not None:
            raised = str(error) if isinstance(error, ProgramError) else f"{type(error).__name__}: {error}"
            raise StepFailed(f"{raised}, in {method}() at {where}") from error
        change = called.input_change()
        if change is not None:
            self.changes.append(f"{where}, {method}(): {change}")
        if called.problem is not None:
            raise MalformedResult(f"{where}, {method}(): {called.problem}")
        return called.output


def _stored_form(result: Any) -> str | None:
    return None if isinstance(result, (bytes, str)) else f"returned {type(result).__name__}, not bytes or str"


#: Why a result is not what the steps after it can take, by what the method's signature says it
#: returns (a request body, a thread: read as they come).
_RESULT_CHECKS: dict[str, Callable[[Any], str | None]] = {"history": history_problem, "bytes | str": _stored_form}


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


def answers(history: Sequence[ModelMessage]) -> Counter:
    """Every text the model answered in a history, counted."""
    return Counter(part.content for message in history if isinstance(message, pai.ModelResponse)
                   for part in message.parts if isinstance(part, pai.TextPart))


def occurrences(history: Sequence[ModelMessage], text: str) -> int:
    """In how many parts ``text`` appears (a summary is framed by its compaction)."""
    return sum(1 for message in history for part in message.parts
               if isinstance(content := getattr(part, "content", None), str) and text in content)


def standing_count(history: Sequence[ModelMessage], prompt: str) -> int:
    return sum(1 for message in history for part in message.parts
               if isinstance(part, pai.SystemPromptPart) and part.content == prompt)


@dataclass(frozen=True)
class Ledger:
    """The user texts that must be in the stored history, the summaries that must be there once,
    and how often each user text and answer was said on the branch (stored more often, it is
    stored twice)."""

    texts: Counter = field(default_factory=Counter)
    summaries: frozenset[str] = frozenset()
    #: Each user text and each answer of the model, as often as the branch said it: what a
    #: step drops is still counted (an implementation may keep what the reference drops).
    said: Counter = field(default_factory=Counter)
    answered: Counter = field(default_factory=Counter)
    #: Every summary a compaction of the branch wrote.
    written: frozenset[str] = frozenset()

    @classmethod
    def of(cls, history: Sequence[ModelMessage]) -> Ledger:
        texts = user_texts(history)
        return cls(texts, said=texts, answered=answers(history))

    def carried(self, before: Sequence[ModelMessage], kept: Sequence[ModelMessage], summary: str = "") -> Ledger:
        """After a step whose reference answer on ``before`` is ``kept``: what it dropped may
        go, what it added must come (``summary``, when it holds it, must be there once)."""
        old, new = user_texts(before), user_texts(kept)
        texts = (self.texts - (old - new)) + (new - old)
        summaries = {s for s in (*self.summaries, *([summary] if summary else ())) if occurrences(kept, s)}
        return Ledger(texts, frozenset(summaries), self.said + (new - old),
                      self.answered + (answers(kept) - answers(before)),
                      self.written | ({summary} if summary else set()))

    def missing(self, history: Sequence[ModelMessage]) -> list[str]:
        return list((self.texts - user_texts(history)).elements())

    def doubled(self, history: Sequence[ModelMessage]) -> list[tuple[str, str, int, int]]:
        """(``user text`` or ``answer``, the text, times stored, times said) for each text the
        branch said that ``history`` stores more often than it was said."""
        found = []
        for what, said, stored in (("user text", self.said, user_texts(history)),
                                   ("answer", self.answered, answers(history))):
            found += [(what, text, count, said[text]) for text, count in stored.items()
                      if text in said and count > said[text]]
        return found

    def nested(self, history: Sequence[ModelMessage]) -> list[tuple[str, ...]]:
        """The summaries of the branch that one part of ``history`` holds together, for each part
        that holds more than one (a summary pasted into a later one)."""
        if len(self.written) < 2:
            return []
        return [held for message in history for part in message.parts
                if isinstance(content := getattr(part, "content", None), str)
                and len(held := tuple(s for s in sorted(self.written) if s in content)) > 1]


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
    #: The step in a few words (its kind's :meth:`~chatconform.strategies.lifecycles.StepKind.describe`).
    description: str
    #: The methods its kind calls (``LifecycleStep.methods``).
    methods: tuple[str, ...] = ()
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
        return "; ".join(f"{r.number}. {r.description} [{r.whose}]" for r in shown)


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
    """Why a real Agent refuses the next prompt on ``history``, or None when it takes it: the
    run goes as far as taking the history and the prompt, where pydantic-ai refuses them, and
    stops before asking its model (a whole run costs twice as much, and is asked after every step)."""
    async def take() -> None:
        agent = next_agent()
        async with agent.iter(prompt, message_history=list(history)) as run:
            if not agent.is_end_node(run.next_node):  # a run starts at its first node, never at its end
                await run.next(run.next_node)

    try:
        asyncio.run(take())
    except Exception as exc:
        return f"{type(exc).__name__}: {str(exc)[:300]}"
    return None


# -- playing --------------------------------------------------------------------------------------

class Player:
    """One conversation store, played a step at a time (:meth:`advance`), or a whole program
    (:meth:`play`): the :class:`~chatconform.frame.lifecycle.Conversation` the declared steps
    are played on."""

    def __init__(self, lifecycle: Lifecycle, composition: Composition) -> None:
        self.lc, self.impl = lifecycle, composition
        composition.changes.clear()
        self.kinds = step_kinds()
        self.providers = composition.providers
        self.history: list[ModelMessage] = lifecycle.history
        self.ledger = Ledger.of(lifecycle.history)
        self.rows: list[Row] = []
        self.kept: dict[str | None, tuple[list[ModelMessage], Ledger]] = {None: (lifecycle.history, self.ledger)}
        self.head: str | None = None
        self.records: list[Record] = []
        #: The step being played: its number, its kind's declaration, and the step.
        self.number = 0
        self._kind: LifecycleStep | None = None
        self._playing: Step | None = None

    def play(self) -> Trace:
        for number, step in enumerate(self.lc.steps, 1):
            if not self.advance(number, step):
                break
        return self.trace()

    def advance(self, number: int, step: Step) -> bool:
        """Play one step; False when the next run refused the history (the conversation is stuck)."""
        kind = self.kinds.get(step.kind)
        if kind is None:
            raise ValueError(f"step {number}: no contract declares a lifecycle step {step.kind!r} "
                             f"(declared: {', '.join(self.kinds)})")
        self.number, self._kind, self._playing = number, kind, step
        record: Record = kind.play(self, step)
        record.methods = kind.methods
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

    # -- what a step may do (chatconform.frame.lifecycle.Conversation) ------------------------
    def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        assert self._kind is not None, "no step is being played"
        return self.impl.call(f"step {self.number} ({self._kind.name})", method, *args, **kwargs)

    def reference(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return getattr(_REFERENCE, method)(*args, **kwargs)

    def record(self, after: list[ModelMessage], kept: list[ModelMessage], summary: str = "", *,
               whose: str | None = None, **seen: Any) -> Record:
        assert self._kind is not None and self._playing is not None, "no step is being played"
        return Record(self.number, self._playing, whose or self.impl.whose(*self._kind.methods), self.history, after,
                      self.ledger.carried(self.history, kept, summary), self._kind.describe(self._playing), **seen)

    def with_standing_prompt(self, history: list[ModelMessage]) -> list[ModelMessage]:
        if standing_count(history, self.lc.system_prompt):
            return history
        return [standing_request(self.lc.system_prompt), *history]

    def turn(self, step: Step, *, branch_of: Row | None = None) -> Record:
        number = self.number
        before, ledger = self.history, self.ledger
        whose = self.impl.whose("persist_run", *(("compact",) if step.compact_in_run else ()),
                                "extract_thread")
        assert self._kind is not None, "no step is being played"
        described = self._kind.describe(step)
        assert step.scenario is not None
        base, kept_base = before, before
        if step.compact_in_run and len(before) > 1:
            cut = cut_at(before, step.pick)
            base = self.call("compact", before, cut=cut, summary=step.summary)
            kept_base = _REFERENCE.compact(before, cut=cut, summary=step.summary)
            ledger = ledger.carried(before, kept_base, step.summary)
            missing = ledger.missing(base)
            if missing:  # the in-run compaction lost a text: judged where it happened
                return Record(number, step, whose, before, base, ledger, described)
        from pydantic_ai.exceptions import UserError

        try:
            run = run_scenario(dataclasses.replace(step.scenario, previous=base))
        except UserError as exc:  # the Agent refused the history it was given, before the run began
            return Record(number, step, whose, before, before, ledger, described,
                          blocked=f"UserError: {str(exc)[:300]}")
        stored = self.call("persist_run", before, run.captured, run.outcome)
        kept = _REFERENCE.persist_run(before, run.captured, run.outcome)
        ledger = ledger.carried(base, kept)
        if not run.captured:  # the run stopped before it began: nothing it compacted counts
            ledger = self.ledger.carried(before, kept)
        record = Record(number, step, whose, before, stored, ledger, described)
        parent = self.head if branch_of is None else branch_of.parent_message_id
        row = Row(f"row-{number}", parent, EPOCH + timedelta(minutes=number))
        self.rows.append(row)
        newest_first = self.rows[::-1]
        reference_ids = [r.id for r in _REFERENCE.extract_thread(newest_first)]
        if "extract_thread" in self.impl.own:
            found = self.call("extract_thread", list(newest_first))
            ids = [getattr(r, "id", None) for r in found] if isinstance(found, list) else [repr(found)[:80]]
            record.thread = ([str(i) for i in ids], reference_ids)
        self.head = row.id
        return record

    def branch(self, step: Step) -> Record:
        if not self.rows:
            return self.turn(step)
        chain = _REFERENCE.extract_thread(self.rows[::-1])
        again = picked(step.pick, chain)
        self.history, self.ledger = self.kept[again.parent_message_id]
        return self.turn(step, branch_of=again)


def play(lifecycle: Lifecycle, composition: Composition) -> Trace:
    """Play every step of ``lifecycle`` on one store (see the module docstring)."""
    return Player(lifecycle, composition).play()


def bound(obj: Any, providers: frozenset[str] | None) -> Callable[[Lifecycle], Trace] | None:
    """The lifecycle of ``obj``'s methods composed with the reference, or None: it has none."""
    composition = Composition(obj, providers)
    if not composition.own:
        return None
    return lambda lifecycle: play(lifecycle, composition)
