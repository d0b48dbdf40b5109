"""Reference thread extraction: the walk every implementation is compared with.

Rows of one conversation arrive newest first (``created_at`` DESC), possibly only the
newest N rows of all branches (a LIMIT window). The thread is the chain of ancestors of
the newest row, found by id, never by position, so ties in ``created_at`` cannot lose
a parent. Only a legacy parent (``UUID_NIL``) is positional: it means "the next older row".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

UUID_NIL = "00000000-0000-0000-0000-000000000000"

#: What this module provides to the reference implementation.
CONTRACT_METHODS = ("extract_thread",)


class RowLike(Protocol):
    id: str
    parent_message_id: str | None
    created_at: Any


@dataclass(slots=True)
class Row:
    """A stored thread row; any object with these three attributes works the same."""

    id: str
    parent_message_id: str | None
    created_at: datetime


def extract_thread(rows_newest_first: Sequence[RowLike]) -> list[RowLike]:
    """Return the thread of the newest row, newest first.

    Stops at a head, or where the parent is not in the window; a UUID_NIL parent
    continues with the next older row of the input.
    """
    rows = list(rows_newest_first)
    if not rows:
        return []
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
