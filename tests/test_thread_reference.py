"""The reference walk on the cases Dify's own tests and bug reports name."""

from datetime import datetime, timedelta, timezone

from hypothesis import given, settings

from chatconform.reference.thread import UUID_NIL, Row, extract_thread
from chatconform.strategies import conversation_rows

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def rows(*spec):
    """rows(("C", "A", 3), ...) -> newest-first Row list; the third item is the time."""
    return [Row(i, p, T0 + timedelta(seconds=t)) for i, p, t in spec]


def ids(thread):
    return [row.id for row in thread]


def test_issue_39031_three_rows():
    # a head, its regeneration, a follow-up on the first head
    assert ids(extract_thread(rows(("C", "A", 3), ("X", None, 2), ("A", None, 1)))) == ["C", "A"]


def test_issue_39031_four_rows():
    data = rows(("C", "B", 4), ("X", None, 3), ("B", "A", 2), ("A", None, 1))
    assert ids(extract_thread(data)) == ["C", "B", "A"]


def test_parent_sorted_before_child_on_equal_timestamps():
    data = rows(("D", "C", 3), ("B", "A", 2), ("C", "B", 2), ("A", None, 1))
    assert ids(extract_thread(data)) == ["D", "C", "B", "A"]


def test_window_edge_stops_without_error():
    assert ids(extract_thread(rows(("3", "2", 3), ("2", "1", 2)))) == ["3", "2"]


def test_legacy_rows_are_linear():
    data = rows(("3", UUID_NIL, 3), ("2", UUID_NIL, 2), ("1", UUID_NIL, 1))
    assert ids(extract_thread(data)) == ["3", "2", "1"]


def test_mixed_with_legacy_skips_sibling():
    data = rows(("5", "4", 5), ("4", "2", 4), ("3", "2", 3), ("2", UUID_NIL, 2), ("1", UUID_NIL, 1))
    assert ids(extract_thread(data)) == ["5", "4", "2", "1"]


def test_empty_string_parent_is_a_head():
    assert ids(extract_thread(rows(("2", "", 2), ("1", UUID_NIL, 1)))) == ["2"]


def test_empty_input():
    assert extract_thread([]) == []


@settings(max_examples=300)
@given(conversation_rows())
def test_thread_is_a_chain_from_the_newest_row(data):
    thread = extract_thread(data)
    assert (thread[0] is data[0]) if data else thread == []
    position = {row.id: i for i, row in enumerate(data)}
    for row, following in zip(thread, thread[1:]):
        if row.parent_message_id == UUID_NIL:
            assert position[following.id] == position[row.id] + 1
        else:
            assert following.id == row.parent_message_id


@settings(max_examples=300)
@given(conversation_rows())
def test_generated_rows_are_newest_first_with_unique_ids(data):
    assert [r.created_at for r in data] == sorted((r.created_at for r in data), reverse=True)
    assert len({r.id for r in data}) == len(data)
    assert all(r.id != UUID_NIL for r in data)
