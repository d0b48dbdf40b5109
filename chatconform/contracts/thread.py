"""The ``thread`` contract: ``extract_thread(rows_newest_first) -> rows`` (newest first)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from hypothesis import strategies as st

from chatconform.errors import NotApplicable, Violation
from chatconform.frame.contract import Contract, Example
from chatconform.frame.lifecycle import Conversation, LifecycleStep
from chatconform.frame.wire import WireMethod
from chatconform.history import list_difference
from chatconform.reference.thread import UUID_NIL, Row, distinct_rows, extract_thread
from chatconform.strategies.large import large_rows
from chatconform.strategies.lifecycles import Step
from chatconform.strategies.trees import conversation_rows


class _FrozenRows:
    """A thread case before the call: fresh rows for the implementation, and a record of
    every row's fields, in order, to compare its copy with afterwards."""

    def __init__(self, rows):
        self.rows = rows
        self.record = self._record(rows)

    @staticmethod
    def _record(rows):
        return [(row.id, row.parent_message_id, row.created_at) for row in rows]

    def copy(self):
        return [Row(*fields) for fields in self.record]

    def lent(self):
        """The rows themselves, for the bundled reference (``Frozen.lent``)."""
        return self.rows

    def changed(self, working) -> bool:
        return self._record(working) != self.record


#: Why a thread that holds a row twice is wrong, whichever check meets it first.
_REPEATED = ("a row returned twice: the model reads the same message twice (a walk with no cycle guard, "
             "or one that appends a row it already holds)")


def _ids(rows) -> list[str]:
    return [row.id for row in rows]


def _against_reference(ex: Example) -> str:
    """How the result's ids differ from the reference's: lengths and the first row apart."""
    return list_difference(_ids(ex.reference), _ids(ex.output), "row")


def _window(ex: Example) -> list:
    """The case as the walk sees it: later duplicates of an id dropped (see the reference)."""
    return ex.case_once("window", lambda: distinct_rows(ex.case))


def _first_places(ex: Example) -> dict[str, int]:
    """Each id of the result, with the first place it holds there."""
    def places() -> dict[str, int]:
        first: dict[str, int] = {}
        for index, row in enumerate(ex.output):
            first.setdefault(row.id, index)
        return first
    return ex.once("first_places", places)


def _closes_loop(ex: Example, index: int, following_id: str) -> bool:
    """Whether the row after place ``index`` would be one the thread already holds: a
    corrupted, cyclic link, where the walk ends instead of going round again."""
    return _first_places(ex).get(following_id, index + 1) <= index


#: The call's input: stored rows, newest first.
_ROWS = {
    "description": "Stored thread rows, newest first (created_at descending, ties in any order).",
    "type": "array",
    "items": {
        "type": "object",
        "required": ["id", "created_at"],
        "additionalProperties": False,
        "properties": {
            "id": {"type": "string"},
            "parent_message_id": {"description": "Left out for a head (None); \"\" is a head too; "
                                                 "00000000-0000-0000-0000-000000000000 means the next older row.",
                                  "type": "string"},
            "created_at": {"description": "ISO 8601.", "type": "string"},
        },
    },
}

#: The reply's result: the thread's rows.
_THREAD_RESULT = {
    "description": "The result of extract_thread: the thread's rows, newest first, as they came in (extra fields "
                   "are ignored).",
    "type": "array",
    "items": {
        "type": "object",
        "required": ["id", "created_at"],
        "properties": {
            "id": {"type": "string"},
            "parent_message_id": {"type": ["string", "null"]},
            "created_at": {"type": "string"},
        },
    },
}


def _branch(conversation: Conversation, step: Step) -> Any:
    """A regeneration or an edit: an earlier row's turn asked again, as a new row off its parent."""
    return conversation.branch(step)


class ThreadContract(Contract):
    name = "thread"
    method = "extract_thread"
    signature = "extract_thread(rows_newest_first) -> list[Row]"
    crash_rationale = ("Dify token_buffer_memory: a walk that indexes the id map without a "
                       "presence check raises KeyError when a LIMIT window cuts the ancestors; "
                       "a walk without a visited set never returns on a cycle in stored links "
                       "(h2o-llmstudio issue #283)")
    mutation_rationale = ("a walk that sorts the caller's rows in place to fix timestamp ties "
                          "reorders the list every later caller reads")
    examples_scale = 5.0  # a case costs microseconds; rare branch shapes need the numbers
    listing_order = 10
    reference_module = "chatconform.reference.thread"
    guard_tests = ("tests/reference/test_thread.py",)
    lifecycle_steps = (LifecycleStep("branch", "the turn of an earlier row asked again", order=10, runs=True,
                                     picks=True, methods=("persist_run", "extract_thread"), play=_branch),)

    def cases(self, variant):
        # Stored links go bad in real databases; one case in four has corrupted links
        # (cycles, stray parents, duplicate ids), so a walk that never ends on a loop or
        # returns a row twice is caught by every run. Trees come first: they shrink to one.
        trees, corrupted = conversation_rows(), conversation_rows(corrupt_links=True)
        return st.one_of(trees, trees, trees, corrupted)

    def call(self, fn, case, variant):
        return fn(case)

    def freeze(self, case):
        # Rows hold three fields and nothing else: a tuple per row is a complete record,
        # several times cheaper than pickling thousands of row objects.
        return _FrozenRows(case)

    def reference(self, case, variant):
        return extract_thread(case)

    def output_problem(self, output, case):
        if not isinstance(output, (list, tuple)):
            return f"returned {type(output).__name__}, expected a list of rows"
        for index, row in enumerate(output):
            if not (hasattr(row, "id") and hasattr(row, "parent_message_id")):
                return (f"item {index} of the result ({type(row).__name__}) is not a row "
                        "(needs .id and .parent_message_id)")
        return None

    def case_to_json(self, case):
        # A head's missing parent is left out: it loads back as None.
        return [
            {"id": row.id, **({"parent_message_id": row.parent_message_id}
                              if row.parent_message_id is not None else {}),
             "created_at": row.created_at.isoformat()}
            for row in case
        ]

    def case_from_json(self, data):
        if not isinstance(data, list):
            raise ValueError("a thread case is a JSON array of rows")
        rows = []
        for index, item in enumerate(data):
            try:
                rows.append(Row(str(item["id"]), item.get("parent_message_id"),
                                datetime.fromisoformat(item["created_at"])))
            except (KeyError, TypeError, ValueError) as exc:
                raise ValueError(f"row {index}: needs id, parent_message_id and an ISO "
                                 f"created_at ({exc})") from None
        return rows

    def size(self, case):
        return len(case)

    def wire(self):
        """The rows travel as the case's JSON; the result is rows in that JSON, so it loads
        back as the input does."""
        return (WireMethod(self.method, self._wire_rows, self.case_from_json, _ROWS, _THREAD_RESULT,
                           reply=_rows_reply),)

    def _wire_rows(self, args: tuple, kwargs: dict) -> tuple[Any, None]:
        (rows,) = args
        return self.case_to_json(rows), None

    def large_case(self, size, seed, variant):
        return large_rows(seed, size)

    def floor(self, case, variant):
        # Finding a parent means comparing row ids with it: one scan that reads every row's id
        # and compares it with the newest row's parent. (The walk needs an index by id only
        # for corrupted rows.)
        if case:
            [row.id for row in case].count(case[0].parent_message_id)


CONTRACT = ThreadContract()


def _rows_reply(output: Any) -> list[dict[str, Any]]:
    """The rows a Python implementation returned, as the host sends them: each row's id, its
    parent (left out for None) and its ``created_at`` (ISO, or as it is, for the schema to judge)."""
    rows = []
    for row in output:
        stamp = getattr(row, "created_at", None)
        rows.append({"id": row.id, **({"parent_message_id": row.parent_message_id}
                                      if row.parent_message_id is not None else {}),
                     "created_at": stamp.isoformat() if isinstance(stamp, datetime) else stamp})
    return rows


@CONTRACT.check(
    "starts_at_newest",
    title="the thread starts at the newest row (and is empty only for no rows)",
    rationale="callers reverse the result and pop the newest placeholder: a thread that "
              "starts elsewhere drops or duplicates the current turn",
)
def starts_at_newest(ex: Example) -> None:
    rows, out = ex.case, ex.output
    if not rows:
        if out:
            raise Violation("no rows in, but rows out", expected=[], actual=_ids(out))
        return
    if not out or out[0].id != rows[0].id:
        raise Violation("the first row of the thread is not the newest row",
                        expected=rows[0].id, actual=out[0].id if out else None)


@CONTRACT.check(
    "parent_chain",
    title="each row's parent is the next row (a head only ever last)",
    rationale="Dify issue #39031: an unrelated regeneration root is appended after a row "
              "whose parent it is not",
)
def parent_chain(ex: Example) -> None:
    out = ex.output
    for index in range(len(out) - 1):
        row, following = out[index], out[index + 1]
        parent = row.parent_message_id
        if not parent:
            raise Violation(f"row {row.id} is a head but the thread goes on to {following.id}",
                            expected="the thread ends at the head", actual=_ids(out))
        if parent == UUID_NIL:
            continue  # legacy rows are judged by thread.legacy_linear
        if following.id != parent:
            repeated = following.id in {r.id for r in out[:index + 1]}
            raise Violation(f"row {row.id} has parent {parent} but is followed by {following.id}"
                            + (", a row already in the thread" if repeated else ""),
                            expected=parent, actual=following.id, why=_REPEATED if repeated else None)



@CONTRACT.check(
    "reaches_root",
    title="no truncation: the walk never stops while the parent is present",
    rationale="Dify issue #39031 and single-pass walks: the thread ends early, so the model "
              "loses history and sys.dialogue_count is too small",
)
def reaches_root(ex: Example) -> None:
    rows, out = _window(ex), ex.output
    if not out:
        return  # starts_at_newest judges an empty result
    last = out[-1]
    parent = last.parent_message_id
    if not parent:
        return
    if parent == UUID_NIL:
        position = next((i for i, row in enumerate(rows) if row.id == last.id), None)
        if position is not None and position + 1 < len(rows) \
                and not _closes_loop(ex, len(out) - 1, rows[position + 1].id):
            raise Violation(f"the thread stops at legacy row {last.id} though older rows follow",
                            expected=rows[position + 1].id, actual="end of thread")
        return
    if any(row.id == parent for row in rows) and not _closes_loop(ex, len(out) - 1, parent):
        raise Violation(f"the thread stops at {last.id} though its parent {parent} is in the window "
                        f"({_against_reference(ex)})", expected=_ids(ex.reference), actual=_ids(out))


@CONTRACT.check(
    "ancestors_only",
    title="no row from another branch",
    rationale="Dify issue #39031: a sibling head from a regeneration is sent as history, "
              "so the model answers from the wrong branch",
)
def ancestors_only(ex: Example) -> None:
    allowed = set(_ids(ex.reference))
    strangers = [row.id for row in ex.output if row.id not in allowed]
    if strangers:
        raise Violation(f"rows not on the newest row's branch: {', '.join(strangers)} ({_against_reference(ex)})",
                        expected=_ids(ex.reference), actual=_ids(ex.output))


@CONTRACT.check(
    "legacy_linear",
    title="a UUID_NIL parent is followed by the next older row",
    rationale="Dify PR #7661 semantics: legacy and Service-API rows (UUID_NIL) are linear; "
              "a walk that treats UUID_NIL as a missing parent drops the legacy history",
)
def legacy_linear(ex: Example) -> None:
    rows, out = _window(ex), ex.output
    legacy = {row.id for row in out if row.parent_message_id == UUID_NIL}
    if not legacy:
        raise NotApplicable("no legacy row in the thread")
    # positions of the legacy rows only: a table of every row outgrows the caches at 10^5 rows
    position = {row.id: index for index, row in enumerate(rows) if row.id in legacy}
    for index, row in enumerate(out):
        if row.parent_message_id != UUID_NIL or row.id not in position:
            continue
        older = position[row.id] + 1
        if older >= len(rows):
            continue
        expected = None if _closes_loop(ex, index, rows[older].id) else rows[older].id
        following = out[index + 1].id if index + 1 < len(out) else None
        if following != expected:
            raise Violation(f"legacy row {row.id} is not followed by the next older row",
                            expected=expected or "end of thread (the loop closes)",
                            actual=following or "end of thread")


@CONTRACT.check(
    "no_duplicates",
    title="no row is returned twice (the walk ends where corrupted links loop)",
    rationale="a cycle guard tested after the append (as suggested in review of "
              "uzh-bf/klicker-uzh PR #4863) returns the row that closes a corrupted loop "
              "twice, so the model sees that turn twice",
)
def no_duplicates(ex: Example) -> None:
    ids = _ids(ex.output)
    repeated = sorted(row_id for row_id, count in Counter(ids).items() if count > 1)
    if repeated:
        raise Violation(f"rows returned more than once: {', '.join(repeated)} ({_against_reference(ex)})",
                        expected=_ids(ex.reference), actual=ids)


@CONTRACT.check(
    "matches_reference",
    title="the same thread as the reference walk",
    rationale="the reference defines the thread; any other answer is history the model "
              "should not see, or misses",
)
def matches_reference(ex: Example) -> None:
    expected, actual = _ids(ex.reference), _ids(ex.output)
    if expected != actual:
        raise Violation(f"the thread differs from the reference: {_against_reference(ex)}",
                        expected=expected, actual=actual)

