"""What a failure says: where two lists differ, what a cut list left out, and a warning's level."""

import warnings

import pytest

from chatconform import check_case
from chatconform.engine import Failure, RunOutcome, Verdict
from chatconform.errors import ConformanceWarning
from chatconform.frame.status import Status
from chatconform.history import UUID_NIL, and_more, list_difference
from chatconform.outputs.present import compared
from chatconform.runner import discovery

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


def test_the_expected_and_actual_lines_of_long_threads_show_where_they_part():
    """The 51 expected ids and the 50 actual ones agree up to the end: a window around the
    first difference, not the same first ten ids twice."""
    def uuid(n: int) -> str:
        return f"000000{n:02d}-0000-4000-8000-000000000000"

    expected, actual = [uuid(i) for i in range(51, 0, -1)], [uuid(i) for i in range(51, 1, -1)]
    fields = dict(compared(expected, actual))
    assert fields["differs"] == "first at position 50 (counting from 0) of 51 expected and 50 actual items"
    assert fields["expected"] == f"[… 48 before, {uuid(3)}, {uuid(2)}, {uuid(1)}]"
    assert fields["actual"] == f"[… 48 before, {uuid(3)}, {uuid(2)}]"
    assert dict(compared(["a", "b"], ["a", "c"])) == {"expected": '["a", "b"]', "actual": '["a", "c"]'}


def test_a_row_returned_twice_is_said_to_be_one_not_a_regeneration_bug():
    rows = _legacy_rows(3)

    class Twice:
        name, version = "twice", "0"

        def extract_thread(self, rows_newest_first):
            return [rows_newest_first[0], rows_newest_first[0], *rows_newest_first[1:]]

    with pytest.raises(AssertionError) as failed:
        check_case(Twice(), "thread.parent_chain", rows, in_process=True)
    why = next(line for line in str(failed.value).splitlines() if line.startswith("  why: "))
    assert why.startswith("  why: a row returned twice: the model reads the same message twice")
    assert "39031" not in why


def test_a_verdict_reads_in_one_line_where_an_assert_shows_it():
    failure = Failure("thread.reaches_root", "the thread stops", [{"id": "x" * 50}] * 1000)
    verdict = Verdict("mine", "mine.py:Mine", "thread", "thread.reaches_root", Status.FAIL,
                      "the thread stops at r02 though older rows follow", [failure], examples=100, evaluated=97)
    assert repr(verdict) == str(verdict) == ("<fail thread.reaches_root · mine: the thread stops at r02 though "
                                             "older rows follow (97 of 100 cases evaluated)>")
    outcome = RunOutcome([verdict, Verdict("mine", "s", "thread", "thread.no_crash", Status.PASS)], [], [], {})
    assert repr(outcome).splitlines() == ["<RunOutcome 1 fail, 1 pass>", f"  {verdict!r}"]


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


# -- a warning passes, as it does in a run --------------------------------------------------------

FAKE = "chatconform.fakes.payload:SortSystemFirst39372"  # two system messages: a warning on openai-chat
TWO_SYSTEM_PROMPTS = {"history": [
    {"kind": "request", "parts": [{"part_kind": "system-prompt", "content": "S1"},
                                  {"part_kind": "user-prompt", "content": "hi"}]},
    {"kind": "response", "parts": [{"part_kind": "text", "content": "ok"}]},
    {"kind": "request", "parts": [{"part_kind": "system-prompt", "content": "S2"},
                                  {"part_kind": "user-prompt", "content": "more"}]}]}


def test_check_case_passes_on_a_warning_with_a_python_warning_and_strict_fails_on_it():
    with pytest.warns(ConformanceWarning, match=r"^WARN payload.system_first \[openai-chat\]") as caught:
        check_case(FAKE, "payload.system_first", TWO_SYSTEM_PROMPTS, variant="openai-chat", in_process=True)
    assert caught[0].filename == __file__  # the warning points at the test's own line
    with pytest.raises(AssertionError, match=r"^WARN payload.system_first \[openai-chat\]"):
        check_case(FAKE, "payload.system_first", TWO_SYSTEM_PROMPTS, variant="openai-chat", in_process=True,
                   strict=True)


def test_the_regression_test_printed_for_a_warning_passes_as_pasted(monkeypatch):
    from chatconform.engine import Failure, Verdict
    from chatconform.frame.status import Status
    from chatconform.outputs.present import describe

    failure = Failure("payload.system_first", "system content at $.messages[0], $.messages[1]",
                      TWO_SYSTEM_PROMPTS, variant="openai-chat", level="warning")
    verdict = Verdict("fake", FAKE, "payload", "payload.system_first", Status.WARN, failure.message, [failure])
    test = describe(verdict, failure).test
    assert "# a warning: passes with a ConformanceWarning" in test
    load = discovery.load
    monkeypatch.setattr(discovery, "load", lambda spec, **_: load(spec, in_process=True))  # isolation aside
    namespace: dict = {}
    exec(compile(test, "pasted_test.py", "exec"), namespace)
    with pytest.warns(ConformanceWarning):
        namespace["test_payload_system_first_regression"]()


def test_the_plugin_passes_a_warning_with_the_same_python_warning_and_fails_it_under_strict():
    from chatconform.engine import Failure, Verdict
    from chatconform.frame.status import Status
    from chatconform.plugin import assert_verdict

    failure = Failure("payload.system_first", "two system messages", TWO_SYSTEM_PROMPTS, variant="openai-chat",
                      level="warning")
    verdict = Verdict("fake", FAKE, "payload", "payload.system_first", Status.WARN, failure.message, [failure])
    with pytest.warns(ConformanceWarning, match="payload.system_first: two system messages"):
        assert_verdict(verdict)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning under strict: a failure
        with pytest.raises(pytest.fail.Exception, match=r"WARN payload.system_first"):
            assert_verdict(verdict, strict=True)


def test_replay_prints_a_warning_as_warn_and_fails_on_it_only_under_strict(tmp_path, capsys):
    import json

    from chatconform.cli import main

    saved = tmp_path / "warning.json"
    saved.write_text(json.dumps({"implementation": FAKE, "check": "payload.system_first", "variant": "openai-chat",
                                 "case": TWO_SYSTEM_PROMPTS}))
    replay = ["replay", str(saved), "--impl", FAKE, "--in-process"]
    assert main(replay) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"WARN {saved}: WARN payload.system_first [openai-chat]"), out
    assert main([*replay, "--strict"]) == 1
    assert capsys.readouterr().out.startswith(f"FAIL {saved}: WARN payload.system_first")
