"""The tree strategy: long threads come up under the ci profile, cheaply, and still shrink."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis.errors import InvalidArgument

from chatconform import run_conformance
from chatconform.reference.payload import to_payload
from chatconform.reference.thread import UUID_NIL, extract_thread
from chatconform.strategies import conversation_rows


class _TruncatedThread:
    """A thread walk that silently stops after ``limit`` rows."""

    version = "0"
    limit = 0

    def extract_thread(self, rows):
        return extract_thread(rows)[: self.limit]


def _truncating(limit: int):
    return type(f"Truncated{limit}", (_TruncatedThread,), {"name": f"truncated-{limit}", "limit": limit})()


@pytest.mark.slow
@pytest.mark.parametrize("limit", [20, 500, 2000])
def test_a_thread_capped_at_a_fixed_length_fails_reaches_root(limit):
    verdicts = {v.check: v for v in run_conformance(_truncating(limit), checks=["thread.reaches_root"], profile="ci",
                                                    shrink=False)}
    assert verdicts["thread.reaches_root"].status == "fail"


class _TruncatedPayload:
    """Maps only a window of 2,000 messages of the history (the newest, or the oldest)."""

    version = "0"
    providers = {"openai-chat"}
    newest = True

    def to_payload(self, history, *, provider, instructions=None):
        window = history[-2000:] if self.newest else history[:2000]
        return to_payload(window, provider=provider, instructions=instructions)


@pytest.mark.slow
@pytest.mark.parametrize("newest", [True, False])
def test_a_payload_of_the_last_or_first_2000_messages_fails_nothing_lost(newest):
    impl = type("Window", (_TruncatedPayload,), {"name": f"window-{newest}", "newest": newest})()
    verdicts = {v.check: v for v in run_conformance(impl, contracts=["payload"], checks=["payload.nothing_lost"],
                                                    profile="ci", shrink=False)}
    assert verdicts["payload.nothing_lost"].status == "fail"


SETTINGS = settings(max_examples=200)


@SETTINGS
@given(conversation_rows())
def test_rows_are_newest_first_with_unique_ids(rows):
    assert [r.created_at for r in rows] == sorted((r.created_at for r in rows), reverse=True)
    assert len({r.id for r in rows}) == len(rows)


@SETTINGS
@given(conversation_rows(max_bulk_turns=0))
def test_without_bulk_rows_stay_within_max_turns(rows):
    assert len(rows) <= 12


def test_bulk_sections_hold_every_behaviour():
    """Regenerations, branch switches, UUID_NIL rows and ties all occur inside long cases."""
    seen: set[str] = set()

    @settings(max_examples=300)
    @given(conversation_rows(max_turns=0, legacy_prefix=False, limit_window=False, max_bulk_turns=500))
    def search(rows):
        if len(rows) < 100:
            return
        ids = {r.id: r for r in rows}
        by_parent: dict = {}
        for r in rows:
            by_parent.setdefault(r.parent_message_id or None, []).append(r)
        if any(len(v) > 1 for k, v in by_parent.items() if k not in (None, UUID_NIL)):
            seen.add("regenerate")
        if len(by_parent.get(None, [])) > 1:
            seen.add("new head")
        if any(r.parent_message_id == UUID_NIL for r in rows):
            seen.add("uuid-nil")
        if len({r.created_at for r in rows}) < len(rows):
            seen.add("tie")
        thread = extract_thread(rows)
        if len(thread) < len(rows) - 10 and all(r.parent_message_id in ids or not r.parent_message_id
                                                or r.parent_message_id == UUID_NIL for r in rows):
            seen.add("branches")

    search()
    assert {"regenerate", "new head", "uuid-nil", "tie", "branches"} - seen == set()


def test_shrinks_to_a_short_linear_chat():
    from hypothesis import find

    found = find(conversation_rows(), lambda rows: len(rows) >= 2,
                 settings=settings())
    assert len(found) == 2
    assert found[0].parent_message_id == found[1].id and not found[1].parent_message_id


@pytest.mark.parametrize("kwargs", [{"max_bulk_turns": -1}, {"max_bulk_turns": 1.5}, {"min_turns": -1},
                                    {"min_turns": 3, "max_turns": 2}, {"corrupt_links": 1}])
def test_bad_knobs_raise_invalid_argument(kwargs):
    with pytest.raises(InvalidArgument, match=next(iter(kwargs))):
        conversation_rows(**kwargs).example()


def test_corrupted_links_hold_every_kind_of_bad_row():
    """Self-parents, loops (also ones the newest row is not in) and duplicate ids all occur."""
    seen: set[str] = set()

    @settings(max_examples=300)
    @given(conversation_rows(min_turns=1, corrupt_links=True))
    def search(rows):
        if any(r.parent_message_id == r.id for r in rows):
            seen.add("self-parent")
        if len({r.id for r in rows}) < len(rows):
            seen.add("duplicate id")
        thread = extract_thread(rows)
        ids = [r.id for r in thread]
        closing = thread[-1].parent_message_id
        if closing in ids:
            seen.add("loop through the newest row" if closing == ids[0] else "loop below the newest row")

    search()
    assert {"self-parent", "duplicate id", "loop through the newest row", "loop below the newest row"} - seen == set()
