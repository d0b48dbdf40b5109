"""Message budgets for a keep-recent trim, and whole trim cases.

A trim to ``max_messages`` that slices ``history[-max_messages:]`` starts at
``len(history) - max_messages``. Uniform budgets rarely make that start land where trims
break, so :func:`budgets` draws most of them so that it does: inside a tool pair (near
or far from its call), inside a parallel batch, right after the last user message (a
long agentic tail with no user in it), and the edges: 1, 2, exactly the history's
length and more (nothing to trim). The places are the cut points of
:mod:`chatconform.strategies.cuts`, where compactions broke for the same reasons.

The rest sit at a start a trim may take (:func:`trim_starts`: a request that opens a user
turn with no tool pair across it) and one below: a budget of exactly
``len(history) - start`` is filled by the suffix alone, so a trim that counts the suffix
and then puts the standing system prompt back in front goes one over it. The start is
drawn from all of them, so across cases every start is met, not only the last.

:func:`trim_cases` pairs them with histories that reach those places (agent runs, some
with a tool tail in which one call is answered many messages later) and, now and then,
the empty history.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hypothesis import strategies as st

from chatconform.history import visible_items
from chatconform.lazy import pai
from chatconform.strategies.cuts import cut_points, history_with_tail, tool_pairs

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

__all__ = ["budget_points", "budgets", "trim_cases", "trim_starts"]

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


def trim_starts(history: Sequence[ModelMessage]) -> list[int]:
    """0 and every later request from which the first item, system prompts aside, is a user
    prompt or a summary, with no tool call before it answered at or after it: where a trim
    may start."""
    spanned = {index for call, result, _ in tool_pairs(history) for index in range(call + 1, result + 1)}
    starts = []
    opening = None  # the kind of the first item, system prompts aside, from this message on
    for index in range(len(history) - 1, 0, -1):
        opening = next((i.kind for i in visible_items(history[index:index + 1]) if i.kind != "system"), opening)
        if index not in spanned and isinstance(history[index], pai.ModelRequest) and opening in ("user", "summary"):
            starts.append(index)
    return [0, *reversed(starts)] if history else []


def budgets(history: Sequence[ModelMessage]):
    """A strategy of ``max_messages`` for ``history``: mostly one of :func:`budget_points`, or
    ``len(history) - start`` (or one below) for a start of :func:`trim_starts`."""
    anywhere = st.integers(1, len(history) + 2)
    starts = trim_starts(history)[1:]  # from 0 the budget is the whole length, a budget point already
    at_starts = st.builds(lambda start, below: max(1, len(history) - start - below),
                          st.sampled_from(starts), st.integers(0, 1)) if starts else st.nothing()
    return st.sampled_from(budget_points(history)) | at_starts | anywhere


@st.composite
def trim_cases(draw) -> tuple[list[ModelMessage], int]:
    """(history, max_messages): a trim to run, the budget where trims break."""
    history = [] if draw(st.integers(0, _EMPTY_ODDS - 1)) == _EMPTY_ODDS - 1 else draw(history_with_tail(_BULK_TURNS))
    return history, draw(budgets(history))
