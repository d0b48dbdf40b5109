"""Programs for the lifecycle contract: a conversation's life as a sequence of steps.

A :class:`Lifecycle` is what an application does to one conversation over its life: the
history it starts from (with a standing system prompt), then steps drawn in any order an
application could take them. The kinds of step are not named here: each contract whose
methods take part declares its own (:class:`StepKind`, in its module:
``chatconform.frame.lifecycle.LifecycleStep``), and the strategies draw from the kinds they
are given (the lifecycle contract gives every declared one:
``chatconform.contracts.lifecycle.step_kinds``).

The steps' arguments do not depend on the state they meet (``pick`` is resolved against
the history when the step runs: a cut, a budget, which row to branch from), so a program
is drawn whole, like any other case: judged for every implementation, saved as JSON,
replayed with plain calls, and shrunk by Hypothesis to the shortest sequence of steps
that still fails. Shrinks toward one non-streamed successful turn.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from chatconform.lazy import pai
from chatconform.strategies.histories import histories
from chatconform.strategies.runs import ENDINGS, EPOCH, Scenario, _scenarios
from chatconform.strategies.validation import check_int

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage, ModelRequest

__all__ = ["STANDING_PROMPT", "TURN_ENDINGS", "Lifecycle", "Step", "StepKind", "lifecycles", "numbered",
           "standing_request", "starts", "steps"]

#: The endings a lifecycle's turns are drawn from: all but ``deferred``, whose next run
#: answers the deferred calls rather than taking a prompt (the persist contract's
#: ``continuable`` judges that round trip).
TURN_ENDINGS = tuple(e for e in ENDINGS if e != "deferred")

#: The standing system prompt every drawn conversation starts with.
STANDING_PROMPT = "You are the support assistant of Example Corp. (s-standing)"


@dataclass(frozen=True)
class Step:
    """One step of a lifecycle, of the kind named ``kind``. ``scenario`` is the run of a kind
    that runs the agent (its ``previous`` is empty: the run meets the stored history); ``pick``
    chooses, when the step runs, what its kind resolves against the history (a cut, a budget,
    the row whose turn is asked again); ``summary`` is a compaction's summary. What each kind
    needs is its :class:`StepKind`'s to check (:meth:`StepKind.problem`)."""

    kind: str
    scenario: Scenario | None = None
    pick: int = 0
    summary: str = ""
    compact_in_run: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.pick, bool) or not isinstance(self.pick, int) or self.pick < 0:
            raise ValueError(f"pick={self.pick!r} must be an int >= 0")
        if not isinstance(self.summary, str):
            raise ValueError(f"summary={self.summary!r} must be a string")


@dataclass(frozen=True)
class StepKind:
    """How one kind of step is drawn, checked and printed."""

    name: str
    #: What the application does, in a few words; ``{pick}`` stands for the step's pick. A kind
    #: that runs the agent is printed with the run's ending and rounds after it.
    description: str
    #: How many times as likely as a kind of weight 1 it is drawn (a conversation is mostly turns).
    weight: int = 1
    #: Where it sits among the kinds drawn, lower first: a program shrinks toward the first.
    order: int = 100
    #: An agent run (a :class:`~chatconform.strategies.runs.Scenario`) is drawn with it.
    runs: bool = False
    #: A ``pick`` is drawn with it.
    picks: bool = False
    #: It compacts, so it carries a summary.
    compacts: bool = False
    #: Its run may compact the history first (``compact_in_run``), as a history processor does.
    compacts_in_run: bool = False

    def problem(self, step: Step) -> str | None:
        """Why ``step`` is not a step of this kind, or None."""
        if self.runs != (step.scenario is not None):
            return f"a {self.name!r} step {'needs' if step.scenario is None else 'takes no'} scenario"
        if (self.compacts or step.compact_in_run) and not step.summary.strip():
            return f"a {self.name!r} step that compacts needs a summary that is not blank"
        return None

    def describe(self, step: Step) -> str:
        """``step`` in a few words, as a numbered program prints it."""
        if step.scenario is None:
            return self.description.format(pick=step.pick)
        sc = step.scenario
        run = (f"{sc.ending}{' at ' + sc.point if sc.ending == 'timeout' else ''}"
               f"{', streamed' if sc.stream else ''}, {len(sc.rounds)} tool round(s)")
        return (f"{self.description} ({run})"
                + (f", compacting the history first (pick {step.pick})" if step.compact_in_run else ""))


@dataclass
class Lifecycle:
    """A conversation's start and the steps it goes through."""

    history: list[ModelMessage]
    steps: list[Step]
    system_prompt: str = STANDING_PROMPT


def standing_request(prompt: str) -> ModelRequest:
    """A request holding only the standing prompt, at a fixed time (a case is the same every run)."""
    return pai.ModelRequest([pai.SystemPromptPart(prompt, timestamp=EPOCH)], timestamp=EPOCH)


def _with_standing_prompt(history: list[ModelMessage], prompt: str) -> list[ModelMessage]:
    first = history[0] if history else None
    if isinstance(first, pai.ModelRequest):
        planted = pai.SystemPromptPart(prompt, timestamp=first.timestamp or EPOCH)
        return [dataclasses.replace(first, parts=[planted, *first.parts]), *history[1:]]
    return [standing_request(prompt), *history]


def _summary(index: int) -> str:
    return f"The user asked about the build; it was fixed. (summary {index})"


@st.composite
def _step(draw, drawn: tuple[StepKind, ...], runs) -> Step:
    return draw(_step_of(draw(st.sampled_from(drawn)), runs))


@st.composite
def _step_of(draw, kind: StepKind, runs) -> Step:
    scenario = draw(runs) if kind.runs else None
    pick = draw(st.integers(0, 40)) if kind.picks else 0
    in_run = kind.compacts_in_run and draw(st.booleans())
    return Step(kind.name, scenario, pick, "-" if kind.compacts or in_run else "", in_run)


def steps(kinds: Sequence[StepKind]):
    """A strategy for one :class:`Step` of one of ``kinds`` (its texts are numbered by
    :func:`numbered`), each as likely as its weight says; shrinks toward the first kind. A
    run's ending is drawn first, each as likely as any other: most leave the conversation in
    a state the next step must handle (cut off after calls, in a tool, mid-stream)."""
    if not kinds:
        raise InvalidArgument("steps() needs at least one kind of step")
    return _step(_weighted(kinds), _RUNS)


def _weighted(kinds: Sequence[StepKind]) -> tuple[StepKind, ...]:
    """Each kind as many times as its weight."""
    return tuple(kind for kind in kinds for _ in range(kind.weight))


#: A step's agent run: its ending first, each as likely as any other, on the stored history.
_RUNS = st.sampled_from(TURN_ENDINGS).flatmap(lambda ending: _scenarios(
    endings=(ending,), stream=None, max_rounds=2, max_calls=3, previous=st.just([])))


def numbered(step: Step, index: int) -> Step:
    """``step`` as step ``index`` of a program: its prompt and its summary say where they came
    from, so a lost one is named."""
    if step.scenario is not None:
        prompt = f"Step {index}: go on (u-step-{index})"
        step = dataclasses.replace(step, scenario=dataclasses.replace(step.scenario, prompt=prompt))
    return dataclasses.replace(step, summary=_summary(index) if step.summary else "")


def starts(*, max_turns: int = 2):
    """A strategy for the stored conversation a lifecycle starts from: 1 to ``max_turns`` user
    turns, led by the standing system prompt (:data:`STANDING_PROMPT`)."""
    check_int("max_turns", max_turns, 1)
    return histories(min_turns=1, max_turns=max_turns, system_prompts="none", ends_with_request=False,
                     dangling_tail=False, max_bulk_turns=0, max_tool_rounds=2).map(
        lambda history: _with_standing_prompt(history, STANDING_PROMPT))


@st.composite
def _lifecycles(draw, kinds: Sequence[StepKind], *, max_steps: int, max_turns: int) -> Lifecycle:
    start = draw(starts(max_turns=max_turns))
    # The length first, at least three steps where allowed (a bug lives between steps: drawn
    # from one, a third of the programs were one step long), then each step. The
    # step after a run (a turn, a branch) is drawn from every kind alike: what a run leaves
    # (cut off after its calls, in a tool, mid-stream) is met by each kind of step, not mostly
    # by another turn.
    weighted, alike = st.sampled_from(_weighted(kinds)), st.sampled_from(tuple(kinds))
    drawn: list[Step] = []
    for _ in range(draw(st.integers(min(3, max_steps), max_steps))):
        after_run = bool(drawn) and drawn[-1].scenario is not None
        drawn.append(draw(_step_of(draw(alike if after_run else weighted), _RUNS)))
    return Lifecycle(start, [numbered(s, index) for index, s in enumerate(drawn, 1)])


def lifecycles(kinds: Sequence[StepKind], *, max_steps: int = 12, max_turns: int = 2):
    """A strategy for :class:`Lifecycle`: a stored conversation of 1 to ``max_turns`` user
    turns led by a standing system prompt, then 3 to ``max_steps`` steps (fewer where that is
    the most) of ``kinds`` in any order, each as likely as its weight says but for the step
    after an agent run, drawn from every kind alike. Shrinks toward three successful turns."""
    check_int("max_steps", max_steps, 1)
    check_int("max_turns", max_turns, 1)
    if not kinds:
        raise InvalidArgument("lifecycles() needs at least one kind of step")
    return _lifecycles(tuple(kinds), max_steps=max_steps, max_turns=max_turns)
