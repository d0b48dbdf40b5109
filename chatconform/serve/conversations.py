"""Which conversation a request belongs to, and which script entry answers it, read off the
request's history alone.

Each request resends its conversation so far. Its turns (the turn view, system text left out:
an application may put the date in it) form a path; a request whose history extends the
history of a request seen before (the longest such) continues that one's conversation, one
turn deeper. A request that extends none starts a new conversation, whose script starts
from its first entry: running an application twice against one server plays the script
twice. A request with the history of one seen before asks the same turn again (an SDK's
retry, or a second run): it gets the same entry, unless that entry was an interruption (an
error status, a cut connection), after which the script moves on to the next entry, so a
script can say "529, then the answer" and a client that retries meets both. A rejected
request uses no entry.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from chatconform.dialects.base import BodyTurn

__all__ = ["Conversations", "Place", "turn_keys"]


def turn_keys(turns: Sequence[BodyTurn]) -> list[bytes]:
    """One key per non-system turn: a digest of the history up to and including it."""
    keys: list[bytes] = []
    previous = b""
    for turn in turns:
        if turn.role == "system":
            continue
        seen = repr((turn.role, turn.texts, turn.tool_calls, turn.tool_results, turn.media)).encode(
            "utf-8", "surrogatepass")
        previous = hashlib.blake2b(previous + seen, digest_size=16).digest()
        keys.append(previous)
    return keys


@dataclass
class _Node:
    """A history answered before: its conversation, its depth, the last script entry it got."""

    conversation: str
    turn: int
    entry: int  # counted from 1
    interrupted: bool


@dataclass(frozen=True)
class Place:
    """Where a request is: its conversation, its turn (from 1), the script entry that answers it
    (from 1), and whether it asks a turn asked before."""

    conversation: str
    turn: int
    entry: int
    again: bool
    key: bytes | None


class Conversations:
    """Every history answered so far, by its key."""

    def __init__(self) -> None:
        self._nodes: dict[bytes, _Node] = {}
        self._names: set[str] = set()
        self._lock = threading.Lock()

    def place(self, keys: Sequence[bytes], name: str) -> Place:
        """The place of a request whose history has these keys; ``name``: the conversation's
        name if it is a new one (a suffix is added to a name taken)."""
        with self._lock:
            last = keys[-1] if keys else None
            node = self._nodes.get(last) if last is not None else None
            if node is not None:
                entry = node.entry + 1 if node.interrupted else node.entry
                return Place(node.conversation, node.turn, entry, True, last)
            parent = next((self._nodes[k] for k in reversed(keys[:-1]) if k in self._nodes), None)
            if parent is not None:
                return Place(parent.conversation, parent.turn + 1, parent.entry + 1, False, last)
            unique, count = name, 1
            while unique in self._names:
                count += 1
                unique = f"{name}-{count}"
            self._names.add(unique)
            return Place(unique, 1, 1, False, last)

    def answered(self, place: Place, interrupted: bool) -> None:
        """``place`` was answered with its entry (``interrupted``: an error status or a cut)."""
        self._keep(place, _Node(place.conversation, place.turn, place.entry, interrupted))

    def rejected(self, place: Place) -> None:
        """``place`` was rejected: it used no entry, so asked again (or extended) it gets the
        entry it would have had."""
        self._keep(place, _Node(place.conversation, place.turn, place.entry - 1, True))

    def _keep(self, place: Place, node: _Node) -> None:
        if place.key is None:
            return
        with self._lock:
            self._nodes[place.key] = node
