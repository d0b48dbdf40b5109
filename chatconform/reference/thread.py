"""Reference thread extraction: the walk every implementation is compared with.

Rows of one conversation arrive newest first (``created_at`` DESC), possibly only the
newest N rows of all branches (a LIMIT window). The thread is the chain of ancestors of
the newest row, found by id, never by position, so ties in ``created_at`` cannot lose
a parent. Only a legacy parent (``UUID_NIL``) is positional: it means "the next older row".

Stored links can go bad (a botched migration, a client that writes its own ids, two
writes racing), and a walk over them must still end. The policy for corrupted rows:

- duplicate ids: the first occurrence in the newest-first order stands for its id, and
  later rows with the same id are dropped before the walk, so neither a parent lookup
  nor a UUID_NIL step reaches them (the newest write of a row is the one that counts);
- cycles (a row that is its own parent, two rows that are each other's parent, a longer
  loop, with or without the newest row in it): the walk stops before returning a row a
  second time, so the thread is every distinct row up to where the loop closes.

A thread therefore never holds the same id twice, and it is never longer than the input.
"""

from __future__ import annotations

from collections.abc import Sequence

from chatconform.history import UUID_NIL, Row, RowLike

__all__ = ["CONTRACT_METHODS", "UUID_NIL", "Row", "RowLike", "distinct_rows", "extract_thread"]

#: What this module provides to the reference implementation.
CONTRACT_METHODS = ("extract_thread",)


def distinct_rows(rows_newest_first: Sequence[RowLike]) -> list[RowLike]:
    """The rows without later duplicates of an id: the first (newest) occurrence stands."""
    first: dict[str, RowLike] = {}
    for row in rows_newest_first:
        first.setdefault(row.id, row)
    return list(first.values())


def extract_thread(rows_newest_first: Sequence[RowLike]) -> list[RowLike]:
    """Return the thread of the newest row, newest first.

    Stops at a head, where the parent is not in the window, or where the next row is
    already in the thread (a corrupted, cyclic link); a UUID_NIL parent continues with
    the next older row of the input.
    """
    rows = rows_newest_first
    if not rows:
        return []
    ids = [row.id for row in rows]
    path = _walk_forward(rows, ids)
    if path is None:
        return _walk_by_index(rows)
    return [rows[index] for index in path]


def _walk_forward(rows: Sequence[RowLike], ids: list[str]) -> list[int] | None:
    """The walk's positions when every parent comes after its child in the input (it is
    older) and is the first row with its id, or None when that does not hold.

    Each parent is then found by scanning on from its child, so the walk reads the ids
    once, in order, and needs no index of every row: on 10^5 rows a dict probed at random
    costs more in cache misses than the scan. Ties in ``created_at``, duplicated ids and
    corrupted links break the premise and are left to :func:`_walk_by_index`.
    """
    path = [0]
    current = 0
    while True:
        parent = rows[current].parent_message_id
        if not parent:
            break
        if parent == UUID_NIL:
            if current + 1 == len(rows):
                break
            current += 1
        else:
            try:
                current = ids.index(parent, current + 1)
            except ValueError:
                if parent in ids:
                    return None  # the parent is not older than its child
                break  # the parent is outside the window
        path.append(current)
    # The first row with an id stands for it: if an id of the walk also occurs before the
    # walk's end anywhere but on the walk, the premise may not hold.
    on_path = {ids[index] for index in path}
    if len(on_path) != len(path) or sum(map(on_path.__contains__, ids[: current + 1])) != len(path):
        return None
    return path


def _walk_by_index(rows: Sequence[RowLike]) -> list[RowLike]:
    """The walk over any rows: an index by id finds each parent wherever it is."""
    # One pass indexes the rows by id; only when an id repeats (the comprehension keeps the
    # last place of each id) is the index rebuilt over the distinct rows.
    position = {row.id: index for index, row in enumerate(rows)}
    if len(position) != len(rows):
        rows = distinct_rows(rows)
        position = {row.id: index for index, row in enumerate(rows)}
    thread = [rows[0]]
    seen = {0}
    current = 0
    while True:
        parent = rows[current].parent_message_id
        if not parent:
            break
        following = current + 1 if parent == UUID_NIL else position.get(parent)
        if following is None or following >= len(rows) or following in seen:
            break
        thread.append(rows[following])
        seen.add(following)
        current = following
    return thread
