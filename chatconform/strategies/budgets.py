"""Message budgets for a keep-recent trim, and whole trim cases.

A trim to ``max_messages`` that slices ``history[-max_messages:]`` starts at
``len(history) - max_messages``. Uniform budgets rarely make that start land where trims
break, so :func:`budgets` draws most of them so that it does: inside a tool pair (near
or far from its call), inside a parallel batch, right after the last user message (a
long agentic tail with no user in it), and the edges: 1, 2, exactly the history's
length and more (nothing to trim). The places are the cut points of
:mod:`chatconform.strategies.cuts`, where compactions broke for the same reasons.

:func:`trim_cases` pairs them with histories that reach those places (agent runs, some
with a tool tail in which one call is answered many messages later) and, now and then,
the empty history.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessage

from chatconform.strategies.cuts import cut_points, history_with_tail

__all__ = ["budget_points", "budgets", "trim_cases"]

#: One case in this many trims the empty history.
_EMPTY_ODDS = 20
#: The longest bulk section a trim case holds: hundreds of messages (benchmarks go further).
_BULK_TURNS = 200


def budget_points(history: Sequence[ModelMessage]) -> list[int]:
    """The budgets most likely to break a trim, most telling first, without repeats."""
    n = len(history)
    at_cuts = [n - cut for cut in cut_points(history) if cut < n]
    # One more than each: a trim that keeps the system prompt on top of the budget starts there.
    points = [*at_cuts, 1, 2, *(b + 1 for b in at_cuts), n, n + 1]
    return list(dict.fromkeys(p for p in points if p >= 1))


def budgets(history: Sequence[ModelMessage]):
    """A strategy of ``max_messages`` for ``history``: mostly one of :func:`budget_points`."""
    anywhere = st.integers(1, len(history) + 2)
    return st.sampled_from(budget_points(history)) | anywhere


@st.composite
def trim_cases(draw) -> tuple[list[ModelMessage], int]:
    """(history, max_messages): a trim to run, the budget where trims break."""
    history = [] if draw(st.integers(0, _EMPTY_ODDS - 1)) == _EMPTY_ODDS - 1 else draw(history_with_tail(_BULK_TURNS))
    return history, draw(budgets(history))
