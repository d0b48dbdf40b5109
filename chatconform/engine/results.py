"""What the engine's steps hand each other: a failure, an evaluated case, a search's result,
a unit of a run, a selection, a verdict and a run's outcome.

Plain data only, so a search's result crosses a process boundary (worker processes today;
an implementation run in a child process later) and a report's lines fold again into
verdicts (:func:`chatconform.outputs.report.merge`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from chatconform.errors import ERROR, EngineCaseError
from chatconform.frame.contract import Contract
from chatconform.frame.guard import DEFAULT_TIMEOUT
from chatconform.frame.profiles import Profile
from chatconform.frame.status import Status


@dataclass
class Failure:
    """One check failing on one (shrunk) case."""

    check: str
    message: str
    case: Any  # JSON
    variant: str | None = None
    expected: Any = None
    actual: Any = None
    shrunk: bool = True
    #: Why the case is not the minimal one (not shrunk, or shrinking cut short); None when it is.
    shrink_note: str | None = None
    saved: str | None = None  # where the run saved it, once it has
    level: str = ERROR  # "error" fails the run; "warning" only under --strict
    #: The bug this failure shows, where the check tells it from the failure's shape (None:
    #: the check's own rationale).
    why: str | None = None


    def not_shrunk(self, why: str) -> None:
        """Mark the case as the one the failure was first seen on, and say why."""
        self.shrunk, self.shrink_note = False, why


@dataclass
class Verdict:
    """The verdict of one (implementation, check): a status, why, and the failures behind it."""

    implementation: str  # the name it reports
    spec: str  # how to load it again
    contract: str
    check: str
    status: Status
    message: str = ""
    failures: list[Failure] = field(default_factory=list)
    examples: int = 0  # cases the search drew and ran
    evaluated: int = 0  # of those, cases this check was evaluated on

    def __repr__(self) -> str:
        """One line an assert shows whole: status, check, implementation, why, on how many cases
        (the failures' cases are in :attr:`failures`, and a run prints them)."""
        message = self.message if len(self.message) <= 300 else self.message[:300] + " …"
        why = f": {message}" if message else ""
        cases = f" ({self.evaluated} of {self.examples} cases evaluated)" if self.examples else ""
        return f"<{self.status.value} {self.check} · {self.implementation}{why}{cases}>"

    __str__ = __repr__


@dataclass
class Evaluation:
    """What one case gave: failures in check order, checks whose own code raised, whether
    the call hung, whether its output could be judged, and the checks evaluated on it."""

    failures: list[Failure] = field(default_factory=list)
    broken: dict[str, str] = field(default_factory=dict)
    hung: bool = False
    judged: bool = True
    evaluated: set[str] = field(default_factory=set)
    #: Why each check had nothing to judge on this case (its ``NotApplicable``), by check id.
    passed_over: dict[str, str] = field(default_factory=dict)
    #: The case as JSON, written at the first call (``EngineCaseError`` when it cannot be).
    case_json: Callable[[], Any] | None = field(default=None, repr=False, compare=False)

    def complete(self, failure: Failure) -> Failure:
        """``failure`` with its case written out (see ``evaluate_case(case_later=True)``)."""
        if failure.case is None and self.case_json is not None:
            failure.case = self.case_json()
        return failure


@dataclass
class SearchResult:
    """What one search found, everything its verdicts are folded from."""

    failures: dict[str, Failure] = field(default_factory=dict)
    broken: dict[str, str] = field(default_factory=dict)
    hung: Failure | None = None
    aborted: str | None = None  # Hypothesis itself gave up (health check, bad strategy)
    engine_error: EngineCaseError | None = None
    examples: int = 0  # cases the exploring pass ran through the implementation
    unjudged: int = 0  # of those, cases whose output could not be judged
    evaluated: Counter = field(default_factory=Counter)  # check id -> cases evaluated on
    #: check id -> why it had nothing to judge, the first few distinct reasons the cases gave.
    passed_over: dict[str, set[str]] = field(default_factory=dict)
    replayed: int = 0  # cases the shrinking passes ran
    #: measure -> what the exploring pass's cases reached (``Contract.reached``), for --verbose.
    reached: dict[str, set[str]] = field(default_factory=dict)
    hangs: int = 0  # cases of the exploring pass the implementation hung on (and the search went on)

    @classmethod
    def stopped(cls, reason: str) -> SearchResult:
        """The result of a search that could not run or finish (its verdicts are errors)."""
        return cls(aborted=reason)


@dataclass(frozen=True)
class Unit:
    """One search of a run, (implementation, contract, variant), or one (implementation,
    contract) that does not run, with the reason (``skip``). ``impl`` indexes the run's
    implementations; ``stream`` is the search's random stream (None when derandomized or
    seeded)."""

    impl: int
    contract: str
    variant: str | None = None
    skip: str | None = None
    stream: int | None = None


@dataclass(frozen=True)
class SearchSettings:
    """How every search of a run searches: plain data, sent to a worker process as it is."""

    profile: Profile
    seed: int | None = None  # the user's --seed
    timeout: float = DEFAULT_TIMEOUT  # per call of the implementation
    checks: frozenset[str] | None = None  # the selected check ids (None: all)
    shrink: bool = True
    #: Shrink an implementation's expected failures too (a gate needs only to reach them).
    shrink_expected: bool = False


@dataclass
class Selection:
    """The contracts of a run, and its checks (None: every check of those contracts)."""

    contracts: list[Contract]
    checks: frozenset[str] | None


@dataclass
class RunOutcome:
    """What a run found: its verdicts, the units it searched (a shard's, or all) and every
    unit of the run, each search's result, which shard it was (None: the whole run), and
    the signal that stopped it before its searches were done (None: it was not stopped)."""

    verdicts: list[Verdict]
    units: list[Unit]
    planned: list[Unit]
    results: dict[Unit, SearchResult]
    shard: tuple[int, int] | None = None
    interrupted: str | None = None

    def __repr__(self) -> str:
        """The counts by status and the verdicts that did not pass, one a line."""
        counts = Counter(v.status.value for v in self.verdicts)
        head = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        stopped = f", stopped by {self.interrupted}" if self.interrupted else ""
        lines = [f"<RunOutcome {head or 'no verdicts'}{stopped}>"]
        lines += [f"  {v!r}" for v in self.verdicts if v.status not in (Status.PASS, Status.SKIP, Status.XFAIL)]
        return "\n".join(lines)

    __str__ = __repr__

    @property
    def searched(self) -> int:
        """The searches that finished."""
        return len(self.results)

    @property
    def searches(self) -> int:
        """The searches this run (or shard) was to run."""
        return sum(u.skip is None for u in self.units)
