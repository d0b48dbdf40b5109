"""Cases drawn once and judged many times (:class:`DrawnCases`).

Under a derandomized profile with no seed, every search of a contract draws the same cases
in the same order, whatever the implementation or the provider: the search key leaves both
out, Hypothesis' random stream comes from the key alone, and an exploring pass raises
nothing, so what it draws does not depend on what the implementation answers. Drawing a
history is about half the cost of judging it, so the first exploring pass of a contract in
a process keeps its cases, and every later one judges those instead of drawing them again.
A failure is still shrunk by a pass of its own, drawn by Hypothesis as before, so what a
run reports is the same with or without the store.

Each kept case carries what the checks derive from the case alone (its items:
:attr:`DrawnCase.shared`), what they derive from it for the provider being judged (the
reference's answer, its turns and problems: :meth:`DrawnCase.for_variant`) and its frozen
copy, so those are computed once for all the implementations judged on it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from chatconform.frame import collector
from chatconform.frame.profiles import Profile


@dataclass
class DrawnCase:
    """One drawn case, and what was derived from it for any implementation."""

    case: Any
    #: Values computed from the case alone (and the variant, where their key says so),
    #: shared by the examples of every implementation judged on it.
    shared: dict[Any, Any] = field(default_factory=dict)
    #: The case frozen once (``Contract.freeze``), for every in-process call's private copy.
    frozen: Any = None
    #: What was derived from the case for one variant (the reference's answer for a provider,
    #: its turns and problems), kept for the variant being judged only: a run judges a
    #: contract variant by variant (``plan.search_order``), so another variant's is not asked
    #: for again, and holding every provider's answers for every case would hold the run's
    #: memory several times over.
    variant: tuple[Any, dict[Any, Any]] | None = None
    #: Hypothesis' choices that drew the case (``hypothesis.internal.conjecture.choice.choices_key``):
    #: a shrinking pass, which draws the same cases again, knows them by it.
    choices: tuple | None = None

    def for_variant(self, variant: str | None) -> dict[Any, Any]:
        """The values derived for ``variant``, the only ones kept from now on."""
        if self.variant is None or self.variant[0] != variant:
            self.variant = (variant, {})
        return self.variant[1]


@dataclass
class DrawnCases:
    """The cases of the contract being searched, per example budget, while a run lasts.

    Kept only inside :meth:`session` (a run, or a worker process of one): a search made on
    its own, as the project's tests make many, draws its cases as it always did, and
    nothing outlives the run that drew it.
    """

    kept: dict[tuple[str, int], list[DrawnCase]] = field(default_factory=dict)
    sessions: int = 0

    @contextmanager
    def session(self) -> Iterator[None]:
        self.sessions += 1
        try:
            with collector.spaced():  # full collections would walk every kept case
                yield
        finally:
            self.sessions -= 1
            if not self.sessions:
                self.kept.clear()

    @property
    def active(self) -> bool:
        return self.sessions > 0

    def get(self, contract: str, examples: int) -> list[DrawnCase] | None:
        return self.kept.get((contract, examples)) if self.active else None

    def forget(self) -> None:
        """Let go of the cases kept, before a search draws a contract's anew: holding the last
        contract's while the next one's are drawn would hold both at the peak."""
        self.kept = {}

    def keep(self, contract: str, examples: int, cases: list[DrawnCase]) -> None:
        """Keep ``cases``, and only them: a run searches contract by contract
        (``plan.search_order``), so an earlier contract's cases are not asked for again, and
        holding every contract's at once would hold the run's every history."""
        if self.active:
            self.kept = {(contract, examples): cases}


#: This process's store: a run's searches share it (a worker of ``--jobs`` has its own).
STORE = DrawnCases()


def shared_stream(profile: Profile, stream: int | None, owner: str) -> bool:
    """Whether a search's exploring pass draws the contract's shared stream: keyed by the
    contract alone (``owner`` empty: derandomized, no seed), no random stream, and no
    database (whose saved failures would be replayed first)."""
    return owner == "" and stream is None and not profile.use_database
