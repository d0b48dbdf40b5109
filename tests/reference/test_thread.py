"""The reference walk on the cases Dify's own tests and bug reports name, and on the
corrupted rows real databases hold: each pins one rule of the thread policy with the
exact thread expected, so a one-line change to the walk fails here."""

import itertools
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from chatconform.reference import ReferenceImplementation
from chatconform.reference.thread import UUID_NIL, Row, _walk_by_index, _walk_forward, distinct_rows, extract_thread
from chatconform.strategies import conversation_rows, large_rows

T0 = datetime(2026, 1, 1, tzinfo=UTC)


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


def test_an_empty_parent_is_a_head_even_when_a_row_has_an_empty_id():
    # An empty parent means "no parent": it is never looked up as an id.
    assert ids(extract_thread(rows(("2", "", 2), ("", None, 1)))) == ["2"]
    # The same when the walk needs the index by id (B, a parent, is stored before its child C).
    data = rows(("A", "C", 3), ("B", "", 2), ("C", "B", 2), ("", None, 1))
    assert _walk_forward(data, ids(data)) is None
    assert ids(extract_thread(data)) == ["A", "C", "B"]


def test_the_reference_implementation_provides_this_walk():
    assert ReferenceImplementation.extract_thread is extract_thread


def test_empty_input():
    assert extract_thread([]) == []


def test_uuid_nil_is_the_nil_uuid():
    # Spelled out, not imported: stored legacy rows hold exactly this string.
    assert UUID_NIL == "00000000-0000-0000-0000-000000000000"


def test_legacy_row_spelled_out_continues_with_the_next_older_row():
    data = rows(("2", "00000000-0000-0000-0000-000000000000", 2), ("1", None, 1))
    assert ids(extract_thread(data)) == ["2", "1"]


def test_a_chain_of_5000_rows_comes_back_in_full():
    count = 5_000
    data = rows(*((str(i), str(i - 1) if i else None, i) for i in reversed(range(count))))
    assert ids(extract_thread(data)) == [str(i) for i in reversed(range(count))]


def test_a_legacy_chain_of_5000_rows_comes_back_in_full():
    count = 5_000
    data = rows(*((str(i), UUID_NIL, i) for i in reversed(range(count))))
    assert len(extract_thread(data)) == count


def test_a_branch_switch_deep_in_a_long_chain():
    # 3,000 rows on the thread, then a sibling branch of 100 rows newer than all of them.
    chain = [(f"c{i}", f"c{i - 1}" if i else None, i) for i in range(3_000)]
    branch = [(f"b{i}", f"b{i - 1}" if i else "c1499", 3_000 + i) for i in range(100)]
    newest = [("n", "c2999", 3_100)]
    data = rows(*reversed(chain + branch + newest))
    assert ids(extract_thread(data)) == ["n"] + [f"c{i}" for i in reversed(range(3_000))]


# -- corrupted links: the walk ends, and returns no row twice ------------------------------


def test_newest_row_is_its_own_parent():
    assert ids(extract_thread(rows(("A", "A", 2), ("B", None, 1)))) == ["A"]


def test_a_row_further_down_is_its_own_parent():
    data = rows(("C", "B", 3), ("B", "B", 2), ("A", None, 1))
    assert ids(extract_thread(data)) == ["C", "B"]


def test_two_rows_that_are_each_others_parent():
    data = rows(("B", "A", 2), ("A", "B", 1))
    assert ids(extract_thread(data)) == ["B", "A"]


def test_a_loop_that_avoids_the_newest_row():
    # D -> C -> B -> A -> C: the walk enters the loop at C and must stop before C again.
    data = rows(("D", "C", 4), ("C", "B", 3), ("B", "A", 2), ("A", "C", 1))
    assert ids(extract_thread(data)) == ["D", "C", "B", "A"]


def test_a_loop_through_a_legacy_step():
    # B's UUID_NIL parent is the next older row, C, whose parent is B again.
    data = rows(("A", "B", 3), ("B", UUID_NIL, 2), ("C", "B", 1))
    assert ids(extract_thread(data)) == ["A", "B", "C"]


def test_a_legacy_step_onto_a_row_already_in_the_thread_ends_the_walk():
    data = rows(("A", "C", 3), ("B", UUID_NIL, 2), ("C", "B", 1))
    assert ids(extract_thread(data)) == ["A", "C", "B"]


def test_a_parent_pointing_to_a_newer_row_is_followed_by_id():
    data = rows(("C", "B", 4), ("X", None, 3), ("B", "X", 2), ("A", None, 1))
    assert ids(extract_thread(data)) == ["C", "B", "X"]


def test_duplicate_id_the_newest_copy_wins_a_parent_lookup():
    newer, older = Row("P", "R", T0 + timedelta(seconds=3)), Row("P", None, T0 + timedelta(seconds=1))
    data = [Row("C", "P", T0 + timedelta(seconds=4)), newer, Row("R", None, T0 + timedelta(seconds=2)), older]
    thread = extract_thread(data)
    assert ids(thread) == ["C", "P", "R"]
    assert thread[1] is newer


def test_duplicate_id_an_older_copy_is_never_reached_by_a_legacy_step():
    # B's UUID_NIL step goes to the next older distinct row (A), past the stale copy of C.
    data = rows(("C", "B", 4), ("B", UUID_NIL, 3), ("C", "A", 2), ("A", None, 1))
    assert ids(extract_thread(data)) == ["C", "B", "A"]


def test_duplicate_of_the_newest_row_does_not_bring_it_back():
    data = rows(("A", "B", 3), ("B", "A", 2), ("A", None, 1))
    assert ids(extract_thread(data)) == ["A", "B"]


def test_distinct_rows_keeps_the_first_occurrence_in_order():
    data = rows(("A", None, 4), ("B", None, 3), ("A", "B", 2), ("C", None, 1), ("B", None, 0))
    assert [(r.id, r.parent_message_id) for r in distinct_rows(data)] == [("A", None), ("B", None), ("C", None)]


@settings(max_examples=300)
@given(conversation_rows())
def test_thread_is_a_chain_from_the_newest_row(data):
    thread = extract_thread(data)
    assert (thread[0] is data[0]) if data else thread == []
    position = {row.id: i for i, row in enumerate(data)}
    for row, following in itertools.pairwise(thread):
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


@settings(max_examples=300)
@given(conversation_rows(min_turns=1, corrupt_links=True))
def test_on_corrupted_links_the_thread_is_a_chain_without_repeats(data):
    thread = extract_thread(data)
    thread_ids = ids(thread)
    assert len(set(thread_ids)) == len(thread_ids)
    assert thread[0] is data[0]
    window = distinct_rows(data)
    assert all(any(row is kept for kept in window) for row in thread)
    position = {row.id: i for i, row in enumerate(window)}
    for row, following in itertools.pairwise(thread):
        if row.parent_message_id == UUID_NIL:
            assert position[following.id] == position[row.id] + 1
        else:
            assert following.id == row.parent_message_id
    # It ends only at a head, at the window's edge, or where the loop closes.
    last = thread[-1]
    parent = last.parent_message_id
    if parent == UUID_NIL:
        older = position[last.id] + 1
        assert older >= len(window) or window[older].id in thread_ids
    elif parent:
        assert parent not in position or parent in thread_ids


# The walk reads forward when the rows allow it and falls back to an index by id when they
# do not (ties, duplicated ids, corrupted links): both must give the same thread.

@settings(max_examples=400)
@given(st.one_of(conversation_rows(), conversation_rows(corrupt_links=True)))
def test_the_forward_walk_and_the_walk_by_index_agree(data):
    assert ids(extract_thread(data)) == ids(_walk_by_index(data)) if data else extract_thread(data) == []


@given(st.integers(0, 2**32), st.sampled_from([0.0, 0.001, 0.01, 0.2]), st.sampled_from([0.0, 0.1, 0.9]))
@settings(max_examples=200)
def test_the_two_walks_agree_on_large_rows(seed, corrupt_links, ties):
    data = large_rows(seed, 300, corrupt_links=corrupt_links, ties=ties)
    assert ids(extract_thread(data)) == ids(_walk_by_index(data))


def test_a_clean_window_is_walked_forward_and_a_corrupted_one_by_index():
    clean = large_rows(7, 5000, ties=0.0)
    assert _walk_forward(clean, ids(clean)) is not None
    windowed = clean[:2500]  # a LIMIT window: the walk ends where a parent is outside it
    assert _walk_forward(windowed, ids(windowed)) is not None
    looped = rows(("B", "A", 2), ("A", "B", 1))
    assert _walk_forward(looped, ids(looped)) is None
    duplicated = rows(("C", "B", 3), ("B", "A", 2), ("A", None, 1), ("B", None, 0))
    assert _walk_forward(duplicated, ids(duplicated)) == [0, 1, 2]
    newest_copy_first = rows(("D", "B", 4), ("B", None, 3), ("C", "B", 2), ("B", "A", 1), ("A", None, 0))
    assert _walk_forward(newest_copy_first, ids(newest_copy_first)) == [0, 1]
    assert _walk_forward(rows(("C", "A", 3), ("A", None, 2), ("A", "B", 1), ("B", None, 0)),
                         ["C", "A", "A", "B"]) == [0, 1]
    later_copy_on_the_walk = rows(("C", "A", 3), ("A", "X", 2), ("X", None, 1), ("A", None, 0))
    assert _walk_forward(later_copy_on_the_walk, ids(later_copy_on_the_walk)) == [0, 1, 2]
    # Scanning on from C finds the older copy of B; the newer copy, off the walk, stands.
    earlier_copy = rows(("X", "C", 4), ("B", None, 3), ("C", "B", 2), ("B", "A", 1), ("A", None, 0))
    assert _walk_forward(earlier_copy, ids(earlier_copy)) is None
    assert [(row.id, row.parent_message_id) for row in extract_thread(earlier_copy)] == [
        ("X", "C"), ("C", "B"), ("B", None)]
