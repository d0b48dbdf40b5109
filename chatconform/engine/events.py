"""What the engine tells its handlers while it works: typed, frozen events.

A run emits :class:`RunStarted`, then per search :class:`SearchStarted`, an
:class:`ExampleRan` per case and :class:`SearchFinished`, and last :class:`RunFinished`
with the outcome. A handler is any callable taking one event (a reporter, in
:mod:`chatconform.outputs.reporters`); one that ignores an event type simply does
nothing with it, so a new output format is a new handler and never touches the engine.
The search events hold plain data, so a worker process forwards them to the parent's
handlers. The benchmark (:mod:`chatconform.bench`) reports its progress with
the ``Bench*`` events, through the same handlers.

Modelled on Schemathesis' engine events (``src/schemathesis/engine/events.py`` in
https://github.com/schemathesis/schemathesis), where the CLI output is one handler of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from chatconform.engine.results import RunOutcome, SearchResult

if TYPE_CHECKING:
    from chatconform.engine.results import Selection
    from chatconform.frame.profiles import Profile
    from chatconform.runner.discovery import Implementation


@dataclass(frozen=True)
class RunStarted:
    """A run is planned: what it runs, and how many searches (``searches``: this process's
    share, a shard's or all; ``planned``: searches in the whole run's plan)."""

    implementations: list[Implementation]
    selection: Selection
    profile: Profile
    seed: int | None
    jobs: int
    shard: tuple[int, int] | None
    searches: int
    planned: int


@dataclass(frozen=True)
class _SearchEvent:
    """What every event of one search names: the search of (implementation, contract, variant)."""

    implementation: str  # the implementation's name
    contract: str
    variant: str | None

    @property
    def label(self) -> str:
        """``implementation · contract [variant]``: how progress output names the search."""
        return search_label(self.implementation, self.contract, self.variant)


@dataclass(frozen=True)
class SearchStarted(_SearchEvent):
    """One search of (implementation, contract, variant) began."""


@dataclass(frozen=True)
class ExampleRan(_SearchEvent):
    """The search is running one more case through the implementation: of its exploring pass,
    or of a pass that shrinks a failure (``shrinking``); ``failing``: the checks seen failing
    on its earlier cases, each with its level (``error`` or ``warning``)."""

    failing: dict[str, str] = field(default_factory=dict, hash=False)
    shrinking: bool = False


@dataclass(frozen=True)
class SearchFinished(_SearchEvent):
    """One search ended, with its result and how long it took."""

    result: SearchResult
    seconds: float


@dataclass(frozen=True)
class RunFinished:
    """The run is over: its verdicts (folded in plan order) and how long it took."""

    outcome: RunOutcome
    seconds: float


@dataclass(frozen=True)
class BenchInput:
    """The benchmark is building the large input of one size."""

    contract: str
    variant: str | None
    size: int


@dataclass(frozen=True)
class BenchRound:
    """One timing round over the held sizes starts, for one implementation (or the floor)."""

    contract: str
    variant: str | None
    implementation: str
    round: int
    rounds: int
    sizes: list[int]


@dataclass(frozen=True)
class BenchTimed:
    """A benchmark series got its timing at one size (``timing``), or was stopped there
    (``skipped`` says why)."""

    series: Any  # chatconform.bench.Series
    size: int
    timing: Any = None  # chatconform.bench.Timing
    skipped: str | None = None


Event = (RunStarted | SearchStarted | ExampleRan | SearchFinished | RunFinished
         | BenchInput | BenchRound | BenchTimed)
Handler = Callable[[Event], None]


def search_label(implementation: str, contract: str, variant: str | None) -> str:
    return f"{implementation} · {contract}" + (f" [{variant}]" if variant else "")


def emit(handlers: Iterable[Handler], event: Event) -> None:
    """Give ``event`` to every handler, in order (a handler may rely on those before it)."""
    for handler in handlers:
        handler(event)
