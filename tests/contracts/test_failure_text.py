"""What a failure says: where two lists differ, and what a cut list left out."""

import pytest

from chatconform import check_case
from chatconform.history import UUID_NIL, and_more, list_difference

# -- where two lists differ ----------------------------------------------------------------------


def test_a_list_cut_short_says_both_lengths_and_the_first_item_missing():
    expected, actual = [f"r{i}" for i in range(51)], [f"r{i}" for i in range(50)]
    assert list_difference(expected, actual, "row") == (
        "expected 51 rows, got 50; first difference at row 50: expected 'r50', got nothing (the list ends)")
    assert list_difference(actual, expected, "row") == (
        "expected 50 rows, got 51; first difference at row 50: expected nothing (the list ends), got 'r50'")


def test_lists_of_one_length_say_so_and_name_the_two_items_where_they_part():
    assert list_difference(["a", "b", "c"], ["a", "x", "c"], "message") == (
        "3 messages in both; first difference at message 1: expected 'b', got 'x'")
    assert list_difference(["a"], ["b"]) == "1 item in both; first difference at item 0: expected 'a', got 'b'"


def test_items_are_shown_briefly_and_compared_as_the_caller_says():
    long = "x" * 500
    text = list_difference([long], ["y"], show=str, width=20)
    assert text == f"1 item in both; first difference at item 0: expected {'x' * 20} …, got y"
    same_case = list_difference(["A", "b"], ["a", "c"], same=lambda x, y: x.lower() == y.lower())
    assert same_case.endswith("first difference at item 1: expected 'b', got 'c'")
    assert list_difference(["A"], ["a"], same=lambda x, y: x.lower() == y.lower()) == (
        "1 item in both; every item matches")


def _legacy_rows(count: int) -> list[dict]:
    """``count`` rows, newest first, each the child of the next; the second oldest is a legacy
    row (UUID_NIL: its parent is the row before it in time)."""
    rows = []
    for number in range(count, 0, -1):
        row = {"id": f"r{number:02d}", "created_at": f"2026-01-01T00:{number // 60:02d}:{number % 60:02d}+00:00"}
        if number > 1:
            row["parent_message_id"] = UUID_NIL if number == 2 else f"r{number - 1:02d}"
        rows.append(row)
    return rows


def test_a_thread_one_row_short_says_so_where_expected_and_actual_look_alike():
    """A walk that stops at a legacy row returns 50 of the 51 rows: the expected and actual
    lines are cut alike for display, so the message has to say what differs."""
    with pytest.raises(AssertionError) as failed:
        check_case("chatconform.fakes.thread:LegacyAsMissing", "thread.matches_reference", _legacy_rows(51),
                   in_process=True)
    what = next(line for line in str(failed.value).splitlines() if line.startswith("  what: "))
    assert what == ("  what: the thread differs from the reference: expected 51 rows, got 50; "
                    "first difference at row 50: expected 'r01', got nothing (the list ends)")


# -- what a cut list left out ----------------------------------------------------------------------


def test_and_more_names_what_it_counts():
    assert and_more(["a"], "problem") == ""
    assert and_more(["a", "b"], "problem") == " (and 1 more problem)"
    assert and_more(4, "unanswered call") == " (and 3 more unanswered calls)"


def test_a_check_that_shows_one_problem_of_several_counts_the_rest_as_problems():
    call = {"part_kind": "tool-call", "tool_name": "t", "args": {}}
    result = {"part_kind": "tool-return", "tool_name": "t", "content": "r"}
    history = [{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "Q"}]},
               {"kind": "response", "parts": [call | {"tool_call_id": "c1"}, call | {"tool_call_id": "c2"}]},
               {"kind": "request", "parts": [result | {"tool_call_id": "c1"}, result | {"tool_call_id": "c2"}]},
               {"kind": "response", "parts": [{"part_kind": "text", "content": "A"}]}]
    with pytest.raises(AssertionError, match=r"what: message 0: tool result c1 has no earlier call "
                                             r"\(and 1 more pairing problem\)\n"):
        check_case("chatconform.fakes.trim:KeepLastN", "trim.pairs_intact", {"history": history, "max_messages": 2},
                   in_process=True)
