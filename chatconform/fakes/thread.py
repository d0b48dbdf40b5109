"""Thread-extraction fakes: each is a walk that shipped (or nearly shipped) with one bug."""

from __future__ import annotations

import threading
import time

from chatconform.fakes.base import Fake
from chatconform.reference.thread import UUID_NIL, distinct_rows, extract_thread


class UnscopedHeadCheck(Fake):
    """Dify's ``extract_thread_messages`` as of issue #39031: the empty-parent test runs
    for every visited row, so an unrelated regeneration root ends the walk."""

    name = "fake-dify-39031"
    reproduces = ("Dify issue #39031: unscoped empty-parent check truncates the thread at a "
                  "sibling head (https://github.com/langgenius/dify/issues/39031)")
    violates = ("thread.parent_chain", "thread.ancestors_only", "thread.matches_reference")

    def extract_thread(self, rows):
        thread, tracked = [], None
        for row in rows:
            if not row.parent_message_id:
                thread.append(row)
                break
            if not thread or tracked in {row.id, UUID_NIL}:
                thread.append(row)
                tracked = row.parent_message_id
        return thread


class SinglePassTies(Fake):
    """The head check scoped as in Dify PR #39032, but still one forward pass: a parent
    sorted before its child (equal ``created_at``) is never found."""

    name = "fake-single-pass-ties"
    reproduces = ("single-pass walks assume created_at(parent) < created_at(child); "
                  "ties lose the parent (Dify extract_thread_messages: "
                  "https://github.com/langgenius/dify/blob/main/api/core/prompt/utils/extract_thread_messages.py)")
    violates = ("thread.reaches_root", "thread.matches_reference")

    def extract_thread(self, rows):
        if not rows:
            return []
        thread = [rows[0]]
        tracked = rows[0].parent_message_id
        for row in rows[1:]:
            if not tracked:
                break
            if tracked == UUID_NIL or row.id == tracked:
                thread.append(row)
                tracked = row.parent_message_id
        return thread


class KeyErrorAtWindowEdge(Fake):
    """Follows parents through an id map without asking whether the parent was loaded,
    so a LIMIT window that cut the ancestors raises KeyError."""

    name = "fake-keyerror-window"
    reproduces = ("thread walks over `ORDER BY created_at DESC LIMIT n` rows (Dify "
                  "token_buffer_memory) index the id map blindly and raise KeyError")
    violates = ("thread.no_crash",)

    def extract_thread(self, rows):
        if not rows:
            return []
        by_id = {row.id: row for row in rows}
        position = {row.id: i for i, row in enumerate(rows)}
        thread = [rows[0]]
        seen = {rows[0].id}  # ends on corrupted loops: this fake has one bug, not two
        while thread[-1].parent_message_id:
            parent = thread[-1].parent_message_id
            if parent == UUID_NIL:
                following = position[thread[-1].id] + 1
                if following >= len(rows):
                    break
                row = rows[following]
            else:
                row = by_id[parent]
            if row.id in seen:
                break
            thread.append(row)
            seen.add(row.id)
        return thread


class LegacyAsMissing(Fake):
    """Treats a UUID_NIL parent as "parent not loaded" and stops, dropping the whole
    legacy (pre-regeneration) and Service-API history."""

    name = "fake-legacy-as-missing"
    reproduces = ("UUID_NIL marks legacy rows whose parent is the previous row (Dify PR "
                  "#7661); walks that look it up as an id lose all legacy history")
    violates = ("thread.legacy_linear", "thread.reaches_root", "thread.matches_reference")

    def extract_thread(self, rows):
        if not rows:
            return []
        by_id = {row.id: row for row in rows}
        thread = [rows[0]]
        seen = {rows[0].id}  # ends on corrupted loops: this fake has one bug, not two
        while thread[-1].parent_message_id in by_id and thread[-1].parent_message_id not in seen:
            thread.append(by_id[thread[-1].parent_message_id])
            seen.add(thread[-1].id)
        return thread


class OldestFirst(Fake):
    """Returns the right rows oldest first: the caller's ``reversed(...)`` done inside."""

    name = "fake-oldest-first"
    reproduces = ("Dify callers reverse the newest-first thread themselves "
                  "(token_buffer_memory, base_agent_runner); reversing twice sends history backwards")
    violates = ("thread.starts_at_newest", "thread.matches_reference", "lifecycle.thread_ancestors")

    def extract_thread(self, rows):
        return list(reversed(extract_thread(rows)))


class SortsInPlace(Fake):
    """Fixes the tie problem by sorting the caller's list in place, oldest first."""

    name = "fake-sorts-in-place"
    reproduces = ("sorting the caller's rows in place (list.sort) to walk oldest to newest "
                  "reorders the list every later caller reads")
    violates = ("thread.input_untouched",)

    def extract_thread(self, rows):
        newest_first = list(rows)
        rows.sort(key=lambda row: row.created_at)
        return extract_thread(newest_first)


_WALK_LOCK = threading.Lock()


class DeadlockOnLegacy(Fake):
    """Holds a non-reentrant lock for the walk and takes it again to look up the previous
    row of a legacy parent: the call never returns."""

    name = "fake-deadlock-legacy"
    reproduces = ("a cached row lookup guarded by a non-reentrant threading.Lock, "
                  "re-entered from inside the walk, deadlocks the request")
    violates = ("thread.no_crash",)

    def extract_thread(self, rows):
        with _WALK_LOCK:
            if any(row.parent_message_id == UUID_NIL for row in rows):
                with _WALK_LOCK:  # never acquired: the walk hangs here
                    pass
            return extract_thread(rows)


class _StoreWalk(Fake):
    """A walk that fetches each parent from the store, one lookup per step, as ORM walks
    do (``message = message.parent``, a query per row).

    Every hundred steps it pauses, as a store's round trips would: a walk that never
    ends then takes a few percent of a core, not all of it, once the engine has given up
    on the call (an abandoned Python thread cannot be stopped, and a busy one slows every
    later test in the process).
    """

    _PAUSE_EVERY, _PAUSE = 100, 0.01

    def extract_thread(self, rows):
        rows = distinct_rows(rows)
        if not rows:
            return []
        position = {row.id: index for index, row in enumerate(rows)}
        thread, current, steps = [rows[0]], 0, 0
        while True:
            parent = rows[current].parent_message_id
            if not parent:
                return thread
            steps += 1
            if steps % self._PAUSE_EVERY == 0:
                time.sleep(self._PAUSE)
            following = current + 1 if parent == UUID_NIL else position.get(parent)
            if following is None or following >= len(rows) or self.stop(thread, rows[following]):
                return thread
            thread.append(rows[following])
            current = following

    def stop(self, thread, row) -> bool:
        """Whether the walk ends before ``row`` (its cycle guard)."""
        raise NotImplementedError


class NoCycleGuard(_StoreWalk):
    """Follows parents until a head, with no record of the rows already visited: rows
    that are each other's parent keep it going for ever."""

    name = "fake-no-cycle-guard"
    reproduces = ("a parent walk without a visited set hangs on a cycle in stored links: "
                  "two rows that are each other's parent hang the reader at 99% CPU "
                  "(https://github.com/voodoodyne/subetha/issues/42); the same walk over "
                  "chained conversations (https://github.com/h2oai/h2o-llmstudio/issues/283)")
    violates = ("thread.no_crash",)

    def stop(self, thread, row) -> bool:
        return False


class GuardsOnlyTheNewest(_StoreWalk):
    """Stops when the walk comes back to the row it started from, and nowhere else: a
    loop that the walk enters from outside never brings it back, so it never ends."""

    name = "fake-guard-newest-only"
    reproduces = ("a cycle check that compares each parent with the starting row only "
                  "(\"did we come back?\") misses a loop further down the thread, which the "
                  "walk enters and never leaves")
    violates = ("thread.no_crash",)

    def stop(self, thread, row) -> bool:
        return row.id == thread[0].id


class GuardAfterAppend(Fake):
    """Has a visited set, but tests it after adding the row: the row that closes a loop
    is returned a second time before the walk stops."""

    name = "fake-guard-after-append"
    reproduces = ("a visited-set guard placed after the append (the cycle guard suggested "
                  "in review of https://github.com/uzh-bf/klicker-uzh/pull/4863 adds the "
                  "message, then checks it) returns the row that closes a loop twice")
    violates = ("thread.no_duplicates", "thread.matches_reference")

    def extract_thread(self, rows):
        rows = distinct_rows(rows)
        if not rows:
            return []
        position = {row.id: index for index, row in enumerate(rows)}
        thread, visited, current = [], set(), 0
        while True:
            thread.append(rows[current])
            if current in visited:
                return thread
            visited.add(current)
            parent = rows[current].parent_message_id
            following = None if not parent else current + 1 if parent == UUID_NIL else position.get(parent)
            if following is None or following >= len(rows):
                return thread
            current = following
