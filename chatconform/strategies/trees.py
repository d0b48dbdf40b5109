"""Conversation trees grown from simulated user actions, served as stored rows.

Each action is something a user does in a chat UI or through an API: send a message,
regenerate an answer (a sibling; regenerating the first turn makes a new head), switch
to another branch with the sibling navigator, or post through the Service API (which
stores a UUID_NIL parent). A legacy prefix holds rows written before branching existed.
Rows come back newest first, ties in ``created_at`` in any order, optionally cut to the
newest N rows of all branches, as a ``LIMIT`` query returns them.

Most examples are a dozen rows, each action one Hypothesis draw. About one in twelve
also holds a bulk section of hundreds
to thousands of rows played by a seeded PRNG (see :mod:`chatconform.strategies.choices`),
so an implementation that stops after a fixed number of rows meets a longer thread.

Everything shrinks toward a short linear conversation with distinct timestamps: the
bulk section goes first, then each behaviour is switched off, then the actions go to
"send".

With ``corrupt_links`` the stored links go bad afterwards, as they do in real databases
(a botched migration, a client that writes its own ids, two writes racing): a row that
is its own parent, two rows that are each other's parent, a longer loop (with or without
the newest row in it), a parent link to some unrelated row, a second row with an id
already used. Generated trees never hold such rows, so without this variant a walk that
loops forever, or returns a row twice, on a cycle would pass every check.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from chatconform.history import UUID_NIL, Row
from chatconform.strategies.choices import Chooser, DrawChooser, bulk_section
from chatconform.strategies.validation import check_bool, check_int

ROWS_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
_TIE_ORDERS = ("newest created first", "oldest created first", "shuffled")
# How far back an "any" branch switch may jump, counted from the newest row.
_SWITCH_REACH = 64
# In a bulk section one action in this many is drawn like any other step; the rest are
# plain sends, so a long section stays a long thread with events along the way.
_BULK_EVENT_ODDS = 8
# Of those, one in this many goes back to the first turn (a far jump, so kept rare).
_BULK_FIRST_TURN_ODDS = 40


def row_id(index: int) -> str:
    """Deterministic, UUID-shaped id for the index-th row created: the row's number leads
    (``00000003-0000-4000-8000-000000000000``), so ids a person reads apart at a glance, and
    none reads like UUID_NIL. Their order as text is the order they were made in."""
    return f"{index + 1:08x}-0000-4000-8000-000000000000"


@dataclass(frozen=True)
class _Behaviours:
    """The user behaviours switched on for one example."""

    regenerate: bool
    switch_branch: bool
    api_turns: bool
    timestamp_ties: bool

    @property
    def actions(self) -> tuple[str, ...]:
        # Sending is what users mostly do: it is listed twice, and first, so it shrinks to it.
        return ("send", "send") + (("regenerate",) if self.regenerate else ()) + (("api",) if self.api_turns else ())

    @property
    def switches(self) -> tuple[str, ...]:
        return ("stay", "sibling", "any") if self.switch_branch else ("stay",)


@dataclass(frozen=True)
class _Step:
    action: str  # "send", "regenerate" or "api"
    switch: str  # "stay", "sibling" (the "<" navigator), "any" (a row ``back`` rows before the newest), "first"
    back: int
    tie: bool  # reuse the previous row's timestamp when that is meaningful
    head_marker: str | None  # how a new head stores "no parent": None or ""


def _step(choose: Chooser, behaviours: _Behaviours) -> _Step:
    """One user action; every field's first option is the simplest."""
    action = choose.choice(behaviours.actions)
    switch = choose.choice(behaviours.switches)
    back = choose.integer(0, _SWITCH_REACH - 1) if switch == "any" else 0
    tie = choose.boolean() if behaviours.timestamp_ties else False
    head_marker = "" if choose.boolean() else None
    return _Step(action, switch, back, tie, head_marker)


def _bulk_step(choose: Chooser, behaviours: _Behaviours) -> _Step:
    """An action of a bulk section: mostly a plain send (maybe tied), now and then any step."""
    if choose.integer(1, _BULK_EVENT_ODDS) == 1:
        if behaviours.regenerate and behaviours.switch_branch and choose.integer(1, _BULK_FIRST_TURN_ODDS) == 1:
            # Back to the first turn and regenerate it: a new head deep in a long conversation.
            return _Step("regenerate", "first", 0, False, "" if choose.boolean() else None)
        return _step(choose, behaviours)
    tie = behaviours.timestamp_ties and choose.integer(1, _BULK_EVENT_ODDS) == 1
    return _Step("send", "stay", 0, tie, None)


@st.composite
def _drawn_step(draw, behaviours: _Behaviours) -> _Step:
    return _step(DrawChooser(draw), behaviours)


def _grow(legacy: int, steps: list[_Step]) -> list[Row]:
    """Play the actions; return the rows in creation order."""
    rows: list[Row] = []
    linear: list[bool] = []  # UUID_NIL rows need a timestamp no other row shares
    # Siblings share a parent (heads are siblings of each other): each row's place among
    # them, so the "<" navigator finds the previous sibling in constant time.
    siblings: dict[str | None, list[int]] = {}
    place: list[int] = []

    def add(parent: str | None, clock: int) -> None:
        group = siblings.setdefault(parent or None, [])
        place.append(len(group))
        group.append(len(rows))
        rows.append(Row(row_id(len(rows)), parent, ROWS_EPOCH + timedelta(seconds=clock)))

    clock = 0
    for _ in range(legacy):
        clock += 1
        add(UUID_NIL, clock)
        linear.append(True)
    current = len(rows) - 1
    for step in steps:
        if step.switch == "sibling" and rows:
            # The newest older row with the same parent, else stay.
            if place[current]:
                current = siblings[rows[current].parent_message_id or None][place[current] - 1]
        elif step.switch == "any" and rows:
            current = len(rows) - 1 - step.back % len(rows)
        elif step.switch == "first" and rows:
            current = 0
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
        add(parent, clock)
        linear.append(is_linear)
        current = len(rows) - 1
    return rows


def _newest_first(created: list[Row], bulk_rows: range, choose: Chooser, bulk_choose: Chooser) -> list[Row]:
    """Rows newest first; each group of equal timestamps in a chosen order.

    The database may return a tie in any order: newest created first (what shrinking
    goes to), oldest created first (parents before their children: the order single-pass
    walks miss), or shuffled. A group holding bulk rows is ordered by the bulk chooser,
    so a long section costs no draws here either.
    """
    order = sorted(range(len(created)), key=lambda i: (created[i].created_at, i), reverse=True)
    rows: list[Row] = []
    start = 0
    while start < len(order):
        end = start
        stamp = created[order[start]].created_at
        while end < len(order) and created[order[end]].created_at == stamp:
            end += 1
        group = order[start:end]
        if len(group) > 1:
            chooser = bulk_choose if any(i in bulk_rows for i in group) else choose
            how = chooser.choice(_TIE_ORDERS)
            if how == "oldest created first":
                group.reverse()
            elif how == "shuffled":
                group = chooser.permutation(group)
        rows.extend(created[i] for i in group)
        start = end
    return rows


def _walk(rows: list[Row]) -> list[int]:
    """Positions of the newest row's thread: where a corruption is noticed.

    The generator's own walk, so that what it targets does not depend on the oracle it
    tests; it stops at the first repeated position, so it also ends on corrupted rows.
    """
    position: dict[str, int] = {}
    for index, row in enumerate(rows):
        position.setdefault(row.id, index)
    path: list[int] = []
    visited: set[int] = set()
    current: int | None = 0 if rows else None
    while current is not None and current < len(rows) and current not in visited:
        path.append(current)
        visited.add(current)
        parent = rows[current].parent_message_id
        current = None if not parent else current + 1 if parent == UUID_NIL else position.get(parent)
    return path


@st.composite
def _cycle(draw, rows: list[Row]) -> list[Row]:
    """A row of the thread links back to itself or to a newer row of the thread.

    The loop is every thread row from the target to the source: one row (a self-parent),
    two (each other's parent) or more; a target other than the newest row makes a loop
    the walk enters from outside, which a guard on the newest row alone never sees.
    """
    path = _walk(rows)
    source = draw(st.integers(0, len(path) - 1))
    target = draw(st.integers(0, source))
    rows = list(rows)
    rows[path[source]] = replace(rows[path[source]], parent_message_id=rows[path[target]].id)
    return rows


@st.composite
def _stray_link(draw, rows: list[Row]) -> list[Row]:
    """A row of the thread points at any row of the window: a loop or a jump elsewhere."""
    path = _walk(rows)
    source = path[draw(st.integers(0, len(path) - 1))]
    target = draw(st.integers(0, len(rows) - 1))
    rows = list(rows)
    rows[source] = replace(rows[source], parent_message_id=rows[target].id)
    return rows


@st.composite
def _duplicate_id(draw, rows: list[Row]) -> list[Row]:
    """A second row with an id already used, newer or older than the first, inserted at
    a place where its timestamp keeps the rows newest first."""
    original = rows[draw(st.integers(0, len(rows) - 1))]
    at = draw(st.integers(0, len(rows)))
    stamp = rows[at].created_at if at < len(rows) else rows[-1].created_at
    parent = draw(st.sampled_from([original.parent_message_id, None, UUID_NIL,
                                   *(row.id for row in rows[:4])]))
    return [*rows[:at], Row(original.id, parent, stamp), *rows[at:]]


_CORRUPTIONS = (_cycle, _stray_link, _duplicate_id)


@st.composite
def _corrupted(draw, rows: list[Row]) -> list[Row]:
    """One to three corruptions, each drawn on the rows the previous one left."""
    for _ in range(draw(st.integers(1, 3))):
        # Drawn at once, so the late binding is harmless. Bound as a default argument instead,
        # the rows become part of the strategy (its description), and the thread searches
        # stopped shrinking: a 691-row minimal case where the loop-bound lambda gives 2 rows.
        rows = draw(st.sampled_from(_CORRUPTIONS).flatmap(lambda corrupt: corrupt(rows)))  # noqa: B023
    return rows


@st.composite
def _conversation_rows(draw, *, min_turns, max_turns, regenerate, switch_branch, legacy_prefix,
                       api_turns, timestamp_ties, limit_window, max_bulk_turns, corrupt_links):
    # A bulk section is drawn first, so shrinking removes it before anything else.
    bulk = bulk_section(draw, max_bulk_turns)
    bulk_choose = bulk.chooser()

    # Swarm testing: each example switches some behaviours off, so the rest come up often
    # enough to meet (and switching off is what shrinking does first).
    def feature(allowed: bool) -> bool:
        return allowed and draw(st.booleans())

    regenerate, switch_branch, legacy_prefix = feature(regenerate), feature(switch_branch), feature(legacy_prefix)
    api_turns, timestamp_ties, limit_window = feature(api_turns), feature(timestamp_ties), feature(limit_window)
    behaviours = _Behaviours(regenerate, switch_branch, api_turns, timestamp_ties)
    legacy = draw(st.integers(0, min(3, max_turns))) if legacy_prefix else 0
    # The bulk section comes right after the drawn legacy rows (its own legacy rows first),
    # so the newest rows, where a thread starts, stay drawn and shrink step by step.
    bulk_legacy = bulk_choose.integer(0, bulk.size // 4) if legacy_prefix and bulk.size else 0
    bulk_steps = [_bulk_step(bulk_choose, behaviours) for _ in range(bulk.size - bulk_legacy)]
    steps = draw(st.lists(_drawn_step(behaviours), min_size=max(0, min_turns - legacy),
                          max_size=max_turns - legacy))
    created = _grow(legacy + bulk_legacy, bulk_steps + steps)
    bulk_rows = range(legacy, legacy + bulk.size)
    rows = _newest_first(created, bulk_rows, DrawChooser(draw), bulk_choose)
    if limit_window and rows:
        limit = draw(st.none() | st.integers(1, len(rows)))
        if limit is not None:
            rows = rows[:limit]
    if corrupt_links and rows:
        rows = draw(_corrupted(rows))
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
    max_bulk_turns: int = 3_000,
    corrupt_links: bool = False,
):
    """Rows of one conversation, newest first, as ``extract_thread`` receives them.

    - ``min_turns``/``max_turns`` bound the rows created one Hypothesis draw each
      (before any LIMIT window);
    - ``max_bulk_turns``: about one example in twelve also holds a bulk section of 1 to
      ``max_bulk_turns`` rows, played by a PRNG from one drawn seed, with every behaviour
      switched on for the example (0 turns bulk sections off);
    - ``corrupt_links``: every non-empty example then also holds one to three corrupted
      links (cycles, stray parents, duplicate ids), so rows are no longer a tree;
    - each other knob switches one user behaviour on or off.
    """
    check_int("min_turns", min_turns, 0)
    check_int("max_turns", max_turns, 0)
    if max_turns < min_turns:
        raise InvalidArgument(f"need 0 <= min_turns <= max_turns, got {min_turns=} {max_turns=}")
    check_int("max_bulk_turns", max_bulk_turns, 0)
    for name, value in (("regenerate", regenerate), ("switch_branch", switch_branch), ("legacy_prefix", legacy_prefix),
                        ("api_turns", api_turns), ("timestamp_ties", timestamp_ties), ("limit_window", limit_window),
                        ("corrupt_links", corrupt_links)):
        check_bool(name, value)
    return _conversation_rows(
        min_turns=min_turns, max_turns=max_turns, regenerate=regenerate,
        switch_branch=switch_branch, legacy_prefix=legacy_prefix, api_turns=api_turns,
        timestamp_ties=timestamp_ties, limit_window=limit_window, max_bulk_turns=max_bulk_turns,
        corrupt_links=corrupt_links,
    )
