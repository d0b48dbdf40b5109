"""What a contract declares to join the lifecycle: the steps its methods take part in.

The ``lifecycle`` contract plays a conversation's whole life, one step after another, on one
store (``chatconform.contracts.lifecycle.play``). It names no step and no method itself: a
contract whose methods take part sets :attr:`~chatconform.frame.contract.Contract.lifecycle_steps`
in its own module, a :class:`LifecycleStep` per kind of step (how it is drawn and printed,
which methods it calls, and how it is played on the :class:`Conversation`), and the player
composes the methods of every contract that declares one. A step is judged by every
invariant of the lifecycle after it (the user texts kept, the summary and the standing
prompt once, the next run accepted), so a contract that joins is judged as part of the
conversation with nothing else written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from chatconform.strategies.lifecycles import Step, StepKind

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage


class Conversation(Protocol):
    """The store a step is played on, as the step sees it."""

    #: The stored history the step meets.
    history: list[ModelMessage]
    #: The providers a request maps for.
    providers: tuple[str, ...]

    @property
    def number(self) -> int:
        """The step's number in its program, from 1."""

    def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """``method`` of the implementation where it has it (else the reference's), judged as
        one call: a raise, a hang, an edit of its input or a result of the wrong kind stops
        the play, naming the step."""

    def reference(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """The reference's answer to the same call: what must still be there after it."""

    def record(self, after: list[ModelMessage], kept: list[ModelMessage], summary: str = "", *,
               whose: str | None = None, **seen: Any) -> Any:
        """The step's record: the store holds ``after`` now, where the reference's answer to
        the same calls kept ``kept`` (``summary``: the summary it stored). ``seen``: what the
        lifecycle's checks read besides (``reloaded``, ``sent``, ``payloads``)."""

    def with_standing_prompt(self, history: list[ModelMessage]) -> list[ModelMessage]:
        """``history`` with the application's standing system prompt put back in front where it
        no longer holds it (what an application does with a history a client posted)."""

    def turn(self, step: Step) -> Any:
        """A user turn: the step's agent run on the stored history, stored with ``persist_run``
        (the history compacted first where the step says so), and a new row in the thread."""

    def branch(self, step: Step) -> Any:
        """An earlier row's turn asked again: the store goes back to what it held there, and a
        turn is played on it as a new row off that row's parent."""


@dataclass(frozen=True)
class LifecycleStep(StepKind):
    """A kind of step a contract adds to a conversation's life (see the module docstring)."""

    #: The methods the step calls, in the order it calls them: a failure says whose they were
    #: (``yours: trim`` or ``the reference's``).
    methods: tuple[str, ...] = field(kw_only=True)
    #: Plays one step on the conversation and returns its record (:meth:`Conversation.record`).
    play: Callable[[Conversation, Step], Any] = field(kw_only=True)


def picked(pick: int, choices: Sequence[Any]) -> Any:
    """The choice a step's ``pick`` names, whatever the number of choices."""
    return choices[pick % len(choices)]


def cut_at(history: Sequence[Any], pick: int) -> int:
    """A compaction's cut, from 1 to the history's length (0 for an empty history)."""
    return picked(pick, range(1, len(history) + 1)) if history else 0
