"""Programs for the lifecycle contract: a conversation's life as a sequence of steps.

A :class:`Lifecycle` is what an application does to one conversation over its life: the
history it starts from (with a standing system prompt), then steps drawn in any order an
application could take them (:data:`STEP_KINDS`):

=============  ==================================================================================
step           what the application does
=============  ==================================================================================
``turn``       a user turn: an agent run on the stored history (a
               :class:`~chatconform.strategies.runs.Scenario`: tool rounds, parallel calls,
               streaming, every ending but ``deferred``), stored with ``persist_run``; with
               ``compact_in_run`` the run first compacts the history, as a history processor does,
               so what the run captures starts with the compacted history, not the stored one
``branch``     a regeneration or an edit: the turn of an earlier row is asked again, so a new row
               branches off that row's parent, and the thread of the newest row is rebuilt
``restart``    the store goes through ``dump`` and ``load``
``client``     a client round trip: the history a browser posts back goes through ``sanitize``
``compact``    compaction at a cut, with a summary
``trim``       ``trim`` to a message budget
``repair``     ``repair`` before the next prompt
``request``    a request: the next prompt mapped with ``to_payload`` for each provider
=============  ==================================================================================

The steps' arguments do not depend on the state they meet (``pick`` is resolved against
the history when the step runs: a cut, a budget, which row to branch from), so a program
is drawn whole, like any other case: judged for every implementation, saved as JSON,
replayed with plain calls, and shrunk by Hypothesis to the shortest sequence of steps
that still fails. Shrinks toward one non-streamed successful turn.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hypothesis import strategies as st

from chatconform.lazy import pai
from chatconform.strategies.histories import histories
from chatconform.strategies.runs import ENDINGS, EPOCH, Scenario, _scenarios
from chatconform.strategies.validation import check_int

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage, ModelRequest

__all__ = ["STANDING_PROMPT", "STEP_KINDS", "TURN_ENDINGS", "Lifecycle", "Step", "lifecycles", "numbered",
           "standing_request", "starts", "steps"]

STEP_KINDS = ("turn", "branch", "restart", "client", "compact", "trim", "repair", "request")

#: The endings a lifecycle's turns are drawn from: all but ``deferred``, whose next run
#: answers the deferred calls rather than taking a prompt (the persist contract's
#: ``continuable`` judges that round trip).
TURN_ENDINGS = tuple(e for e in ENDINGS if e != "deferred")

#: The standing system prompt every drawn conversation starts with.
STANDING_PROMPT = "You are the support assistant of Example Corp. (s-standing)"


@dataclass(frozen=True)
class Step:
    """One step of a lifecycle. ``scenario`` is the run of a ``turn`` or a ``branch`` (its
    ``previous`` is empty: the run meets the stored history); ``pick`` chooses, when the
    step runs, the cut (``compact``, and a turn's ``compact_in_run``), the budget (``trim``)
    or the row whose turn is asked again (``branch``); ``summary`` is a compaction's summary."""

    kind: str
    scenario: Scenario | None = None
    pick: int = 0
    summary: str = ""
    compact_in_run: bool = False

    def __post_init__(self) -> None:
        if self.kind not in STEP_KINDS:
            raise ValueError(f"step {self.kind!r} is not one of {', '.join(STEP_KINDS)}")
        if (self.kind in ("turn", "branch")) != (self.scenario is not None):
            raise ValueError(f"a {self.kind!r} step {'needs' if self.scenario is None else 'takes no'} scenario")
        if isinstance(self.pick, bool) or not isinstance(self.pick, int) or self.pick < 0:
            raise ValueError(f"pick={self.pick!r} must be an int >= 0")
        compacts = self.kind == "compact" or self.compact_in_run
        if compacts and not (isinstance(self.summary, str) and self.summary.strip()):
            raise ValueError(f"a {self.kind!r} step that compacts needs a summary that is not blank")

    def describe(self) -> str:
        """The step in a few words, as a numbered program prints it."""
        if self.scenario is not None:
            sc = self.scenario
            run = (f"{sc.ending}{' at ' + sc.point if sc.ending == 'timeout' else ''}"
                   f"{', streamed' if sc.stream else ''}, {len(sc.rounds)} tool round(s)")
            what = f"a user turn ({run})" if self.kind == "turn" else f"the turn of an earlier row asked again ({run})"
            return what + (", compacting the history first (pick " f"{self.pick})" if self.compact_in_run else "")
        return {
            "restart": "a restart: the store goes through dump and load",
            "client": "a client round trip: the posted history goes through sanitize",
            "compact": f"compaction (pick {self.pick})",
            "trim": f"trim to a budget (pick {self.pick})",
            "repair": "repair before the next prompt",
            "request": "a request: to_payload for each provider",
        }[self.kind]


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


#: Step kinds as they are drawn: a conversation is mostly turns.
_DRAWN_KINDS = ("turn", "turn", "turn", "branch", "restart", "client", "compact", "trim", "repair", "request")


@st.composite
def _step(draw, runs) -> Step:
    kind = draw(st.sampled_from(_DRAWN_KINDS))
    scenario = draw(runs) if kind in ("turn", "branch") else None
    pick = draw(st.integers(0, 40)) if kind in ("turn", "branch", "compact", "trim") else 0
    in_run = kind == "turn" and draw(st.booleans())
    return Step(kind, scenario, pick, "-" if kind == "compact" or in_run else "", in_run)


def steps():
    """A strategy for one :class:`Step` (its texts are numbered by :func:`numbered`). A turn's
    ending is drawn first, each as likely as any other: most leave the conversation in a state
    the next step must handle (cut off after calls, in a tool, mid-stream)."""
    runs = st.sampled_from(TURN_ENDINGS).flatmap(lambda ending: _scenarios(
        endings=(ending,), stream=None, max_rounds=2, max_calls=3, previous=st.just([])))
    return _step(runs)


def numbered(step: Step, index: int) -> Step:
    """``step`` as step ``index`` of a program: its prompt and its summary say where they came
    from, so a lost one is named."""
    if step.scenario is not None:
        prompt = f"Step {index}: go on (u-step-{index})"
        step = dataclasses.replace(step, scenario=dataclasses.replace(step.scenario, prompt=prompt))
    compacts = step.kind == "compact" or step.compact_in_run
    return dataclasses.replace(step, summary=_summary(index) if compacts else "")


def starts(*, max_turns: int = 2):
    """A strategy for the stored conversation a lifecycle starts from: 1 to ``max_turns`` user
    turns, led by the standing system prompt (:data:`STANDING_PROMPT`)."""
    check_int("max_turns", max_turns, 1)
    return histories(min_turns=1, max_turns=max_turns, system_prompts="none", ends_with_request=False,
                     dangling_tail=False, max_bulk_turns=0, max_tool_rounds=2).map(
        lambda history: _with_standing_prompt(history, STANDING_PROMPT))


@st.composite
def _lifecycles(draw, *, max_steps: int, max_turns: int) -> Lifecycle:
    start = draw(starts(max_turns=max_turns))
    step = steps()
    # The length first, then each step: drawn as a list, most programs would be one step
    # long (each step is a large draw), and a bug needs steps in the right order to show.
    drawn = [draw(step) for _ in range(draw(st.integers(1, max_steps)))]
    return Lifecycle(start, [numbered(s, index) for index, s in enumerate(drawn, 1)])


def lifecycles(*, max_steps: int = 12, max_turns: int = 2):
    """A strategy for :class:`Lifecycle`: a stored conversation of 1 to ``max_turns`` user
    turns led by a standing system prompt, then 1 to ``max_steps`` steps in any order."""
    check_int("max_steps", max_steps, 1)
    check_int("max_turns", max_turns, 1)
    return _lifecycles(max_steps=max_steps, max_turns=max_turns)
