"""Conversation trees grown from simulated user actions, served as stored rows.

Each drawn action is something a user does in a chat UI or through an API: send a
message, regenerate an answer (a sibling; regenerating the first turn makes a new head),
switch to another branch with the sibling navigator, or post through the Service API
(which stores a UUID_NIL parent). A legacy prefix holds rows written before branching
existed. Rows come back newest first, ties in ``created_at`` in a drawn order, optionally
cut to the newest N rows of all branches, as a ``LIMIT`` query returns them.

Everything shrinks toward a short linear conversation with distinct timestamps.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from chatconform.reference.thread import UUID_NIL, Row

_EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)
_TIE_ORDERS = ("newest created first", "oldest created first", "shuffled")


def row_id(index: int) -> str:
    """Deterministic, UUID-shaped id for the index-th row created (never UUID_NIL)."""
    return str(uuid.UUID(int=index + 1))


@dataclass(frozen=True)
class _Step:
    action: str
    switch_to: int  # 0 = stay; 1 = the previous sibling (the "<" navigator); k = row (k - 2) mod n
    tie: bool  # reuse the previous row's timestamp when that is meaningful
    head_marker: str | None  # how a new head stores "no parent": None or ""


def _steps(*, regenerate: bool, switch_branch: bool, api_turns: bool, timestamp_ties: bool):
    # Sending is what users mostly do: it is listed twice, and first, so it shrinks to it.
    actions = ["send", "send"] + (["regenerate"] if regenerate else []) + (["api"] if api_turns else [])
    # One flat tuple per step keeps generation cheap; every field shrinks to its simplest.
    return st.tuples(
        st.sampled_from(actions),
        st.sampled_from(["stay", "sibling", "any"]) if switch_branch else st.just("stay"),
        st.integers(0, 63),
        st.booleans() if timestamp_ties else st.just(False),
        st.booleans(),
    ).map(lambda t: _Step(t[0], 0 if t[1] == "stay" else 1 if t[1] == "sibling" else t[2] + 2,
                          t[3], "" if t[4] else None))


def _previous_sibling(rows: list[Row], current: int) -> int:
    """The newest older row with the same parent (heads are siblings of each other)."""
    parent = rows[current].parent_message_id or None
    for index in range(current - 1, -1, -1):
        if (rows[index].parent_message_id or None) == parent:
            return index
    return current


def _grow(legacy: int, steps: list[_Step]) -> list[tuple[Row, int]]:
    """Play the actions; return (row, creation index) pairs in creation order."""
    rows: list[Row] = []
    stamps: list[int] = []
    linear: list[bool] = []  # UUID_NIL rows need a timestamp no other row shares
    clock = 0
    for _ in range(legacy):
        clock += 1
        rows.append(Row(row_id(len(rows)), UUID_NIL, _EPOCH + timedelta(seconds=clock)))
        stamps.append(clock)
        linear.append(True)
    current = len(rows) - 1
    for step in steps:
        if step.switch_to == 1 and rows:
            current = _previous_sibling(rows, current)
        elif step.switch_to and rows:
            current = (step.switch_to - 2) % len(rows)
        if not rows:
            parent = step.head_marker if step.action != "api" else UUID_NIL
        elif step.action == "api":
            parent = UUID_NIL
        elif step.action == "regenerate" and rows[current].parent_message_id != UUID_NIL:
            parent = rows[current].parent_message_id
            if not parent:
                parent = step.head_marker
        else:
            parent = rows[current].id
        is_linear = parent == UUID_NIL
        tie = step.tie and rows and not is_linear and not linear[-1]
        if not tie:
            clock += 1
        rows.append(Row(row_id(len(rows)), parent, _EPOCH + timedelta(seconds=clock)))
        stamps.append(clock)
        linear.append(is_linear)
        current = len(rows) - 1
    return [(row, index) for index, row in enumerate(rows)]


@st.composite
def _conversation_rows(draw, *, min_turns, max_turns, regenerate, switch_branch, legacy_prefix,
                       api_turns, timestamp_ties, limit_window):
    # Swarm testing: each example switches some behaviours off, so the rest come up often
    # enough to meet (and switching off is what shrinking does first).
    def feature(allowed: bool) -> bool:
        return allowed and draw(st.booleans())

    regenerate, switch_branch, legacy_prefix = feature(regenerate), feature(switch_branch), feature(legacy_prefix)
    api_turns, timestamp_ties, limit_window = feature(api_turns), feature(timestamp_ties), feature(limit_window)
    legacy = draw(st.integers(0, min(3, max_turns))) if legacy_prefix else 0
    steps = draw(st.lists(
        _steps(regenerate=regenerate, switch_branch=switch_branch, api_turns=api_turns,
               timestamp_ties=timestamp_ties),
        min_size=max(0, min_turns - legacy), max_size=max_turns - legacy,
    ))
    created = _grow(legacy, steps)
    # Newest first. Among equal timestamps the database may return any order: newest
    # created first (what shrinking goes to), oldest created first (parents before their
    # children: the order single-pass walks miss), or shuffled.
    created.sort(key=lambda pair: (pair[0].created_at, pair[1]), reverse=True)
    rows: list[Row] = []
    start = 0
    while start < len(created):
        end = start
        while end < len(created) and created[end][0].created_at == created[start][0].created_at:
            end += 1
        group = [row for row, _ in created[start:end]]
        if len(group) > 1:
            order = draw(st.sampled_from(_TIE_ORDERS))
            if order == "oldest created first":
                group.reverse()
            elif order == "shuffled":
                group = draw(st.permutations(group))
        rows.extend(group)
        start = end
    if limit_window and rows:
        limit = draw(st.none() | st.integers(1, len(rows)))
        if limit is not None:
            rows = rows[:limit]
    return rows


def conversation_rows(
    *,
    min_turns: int = 0,
    max_turns: int = 12,
    regenerate: bool = True,
    switch_branch: bool = True,
    legacy_prefix: bool = True,
    api_turns: bool = True,
    timestamp_ties: bool = True,
    limit_window: bool = True,
):
    """Rows of one conversation, newest first, as ``extract_thread`` receives them.

    ``min_turns``/``max_turns`` bound the rows created (before any LIMIT window);
    each other knob switches one user behaviour on or off.
    """
    if min_turns < 0 or max_turns < min_turns:
        raise InvalidArgument(f"need 0 <= min_turns <= max_turns, got {min_turns=} {max_turns=}")
    return _conversation_rows(
        min_turns=min_turns, max_turns=max_turns, regenerate=regenerate,
        switch_branch=switch_branch, legacy_prefix=legacy_prefix, api_turns=api_turns,
        timestamp_ties=timestamp_ties, limit_window=limit_window,
    )


def expand_conversation(seed: int, size: int) -> list[Row]:
    """A large conversation (``size`` rows, newest first) grown by a PRNG from ``seed``.

    For benchmarks and the deep profile: Hypothesis draws only (seed, size), so a case of
    10^5 rows costs two choices, not 10^5.
    """
    import random

    rng = random.Random(seed)
    rows: list[Row] = []
    clock = 0
    current = -1
    for index in range(size):
        roll = rng.random()
        if current >= 0 and roll < 0.05:
            current = rng.randrange(len(rows))  # switch branch
        if current < 0 or (roll < 0.08 and not rows[current].parent_message_id):
            parent = None  # first turn, or a regeneration of it
        elif roll < 0.15:
            parent = rows[current].parent_message_id or None  # regenerate
        elif roll < 0.18:
            parent = UUID_NIL  # a Service-API turn
        else:
            parent = rows[current].id
        if parent == UUID_NIL or roll > 0.1 or not rows:
            clock += 1
        rows.append(Row(row_id(index), parent, _EPOCH + timedelta(seconds=clock)))
        current = index
    rows.reverse()
    return rows


def large_conversations(*, min_rows: int = 1_000, max_rows: int = 100_000):
    """Large conversations expanded from a drawn (seed, size); see ``expand_conversation``."""
    if min_rows < 0 or max_rows < min_rows:
        raise InvalidArgument(f"need 0 <= min_rows <= max_rows, got {min_rows=} {max_rows=}")
    return st.builds(expand_conversation, st.integers(0, 2**32 - 1), st.integers(min_rows, max_rows))
