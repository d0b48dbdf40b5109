"""The command line: exit codes, reports, replay, and implementations that misbehave."""

import io
import json
import os
import re
import subprocess
import sys
import textwrap
import time

import pytest

from chatconform.cli import main
from chatconform.contracts import all_contracts

FAKE = "chatconform.fakes.thread"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def run(*args):
    return main(list(args))


QUICK = ("--examples", "200")  # for tests of the plumbing, not of what the checks find


def read_report(path):
    return [json.loads(line) for line in open(path)]


@pytest.mark.slow
def test_reference_passes(capsys):
    assert run("run", "--impl", "reference", "--contract", "thread") == 0
    out = capsys.readouterr().out
    assert "thread.reaches_root" in out and "FAIL" not in out


@pytest.mark.slow
def test_dify_fake_fails_with_regression_test(capsys):
    assert run("run", "--impl", f"{FAKE}:UnscopedHeadCheck", "--check", "thread.ancestors_only") == 1
    out = capsys.readouterr().out
    assert "FAIL thread.ancestors_only" in out
    # Its own regression test, or, where an earlier check failed on the same case, that test
    # with this check's id at the end.
    assert ("def test_thread_ancestors_only_regression():" in out
            or '"thread.ancestors_only", case)' in out.split("FAIL thread.ancestors_only")[1])
    assert "check_case(" in out


@pytest.mark.slow
def test_report_has_header_results_and_footer(tmp_path):
    assert run("run", "--impl", "reference", "--contract", "thread", "--report", "r.jsonl", *QUICK) == 0
    lines = read_report(tmp_path / "r.jsonl")
    assert lines[0]["type"] == "header" and lines[0]["profile"] == "ci"
    assert lines[0]["implementations"]["reference"]["contracts"]
    assert lines[-1]["type"] == "footer"
    results = lines[1:-1]
    assert {r["type"] for r in results} == {"result"}
    assert lines[-1]["counts"]["pass"] == len(results) == len(all_contracts()["thread"].checks)
    assert {"implementation", "contract", "check", "status", "message", "example"} <= set(results[0])


def test_the_report_says_when_the_run_started_not_when_it_ended(tmp_path, monkeypatch):
    import importlib
    from datetime import datetime, timedelta

    running = importlib.import_module("chatconform.engine.run")  # the module, not engine.run

    real = running.fold_units
    folding: list[datetime] = []

    def slow_fold(*args, **kwargs):  # the run ends at least 2.5 s after its searches did
        folding.append(datetime.now().astimezone())
        time.sleep(2.5)
        return real(*args, **kwargs)

    monkeypatch.setattr(running, "fold_units", slow_fold)
    before = datetime.now().astimezone().replace(microsecond=0)
    assert run("run", "--impl", "reference", "--contract", "thread", "--report", "r.jsonl", "--examples", "5") == 0
    started = datetime.fromisoformat(read_report(tmp_path / "r.jsonl")[0]["started"])
    # stamps are whole seconds: an end stamp would still be at least 1.5 s past the fold's start
    assert before <= started <= folding[0] + timedelta(seconds=0.5)


@pytest.mark.slow
def test_raising_hanging_and_mutating_implementations_are_failures_and_the_run_goes_on(tmp_path):
    code = run("run", "--contract", "thread", "--timeout", "1", "--report", "r.jsonl", *QUICK,
               "--impl", f"{FAKE}:KeyErrorAtWindowEdge", "--impl", f"{FAKE}:DeadlockOnLegacy",
               "--impl", f"{FAKE}:SortsInPlace", "--impl", "reference")
    assert code == 1
    status = {(r["implementation"], r["check"]): r for r in read_report(tmp_path / "r.jsonl")
              if r["type"] == "result"}
    raised = status[("fake-keyerror-window", "thread.no_crash")]
    assert raised["status"] == "fail" and "KeyError" in raised["message"]
    hung = status[("fake-deadlock-legacy", "thread.no_crash")]
    assert hung["status"] == "fail" and re.search(r"did not return within [0-9.]+s \(hung", hung["message"])
    assert status[("fake-sorts-in-place", "thread.input_untouched")]["status"] == "fail"
    assert all(status[("reference", c)]["status"] == "pass" for _, c in status if _ == "reference")


@pytest.mark.slow
def test_module_attr_from_a_file_outside_the_package(tmp_path, capsys):
    (tmp_path / "my_threads.py").write_text(textwrap.dedent("""
        from chatconform.reference import extract_thread

        class MyThreads:
            name = "mine"
            version = "1.2"

            def extract_thread(self, rows):
                return extract_thread(rows)

        def factory():
            return MyThreads()
    """))
    assert run("run", "--impl", "my_threads:MyThreads", "--contract", "thread", *QUICK) == 0
    assert run("run", "--impl", "my_threads:factory", "--contract", "thread", *QUICK) == 0
    assert run("run", "--impl", str(tmp_path / "my_threads.py") + ":MyThreads",
               "--contract", "thread", *QUICK) == 0
    assert "mine" in capsys.readouterr().out


@pytest.mark.slow
def test_replay_reproduces_a_saved_failure(tmp_path, capsys):
    assert run("run", "--impl", f"{FAKE}:UnscopedHeadCheck", "--check", "thread.ancestors_only") == 1
    saved = sorted((tmp_path / ".chatconform" / "failures").glob("*.json"))
    assert saved
    capsys.readouterr()
    assert run("replay", str(saved[0])) == 2  # a module:attr in a saved case is not loaded unasked
    assert run("replay", str(saved[0]), "--impl", f"{FAKE}:UnscopedHeadCheck") == 1
    assert "FAIL" in capsys.readouterr().out
    assert run("replay", str(saved[0]), "--impl", "reference") == 0


@pytest.mark.slow
def test_printed_regression_test_runs_and_fails_on_the_bug(tmp_path):
    from chatconform.outputs import repro

    assert run("run", "--impl", f"{FAKE}:UnscopedHeadCheck", "--check", "thread.ancestors_only") == 1
    record = repro.load_record(next((tmp_path / ".chatconform" / "failures").glob("*.json")))
    (tmp_path / "test_regression.py").write_text(repro.regression_test(record))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "test_regression.py"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout[-2000:]
    assert "FAIL thread.ancestors_only · fake-dify-39031" in done.stdout
    fixed = repro.regression_test(dict(record, implementation="reference"))
    (tmp_path / "test_regression.py").write_text(fixed)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "test_regression.py"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:]


@pytest.mark.parametrize("args, message", [
    (["run", "--impl", "no-such-impl"], "no implementation named 'no-such-impl'"),
    (["run", "--impl", "json:nothing_here"], "has no attribute 'nothing_here'"),
    (["run", "--impl", "no_such_module_xyz:Impl"], "cannot import module"),
    (["run", "--impl", "json:__name__"], "none of the contract methods"),
    (["run", "--impl", "json:dumps"], "the factory raised TypeError"),
    (["run", "--impl", "reference", "--check", "thread.reaches_rot"], "did you mean thread.reaches_root"),
    (["run", "--impl", "reference", "--contract", "nope"], "unknown contract 'nope'"),
    (["replay", "."], "no saved cases"),
    (["replay", "missing.json"], "no such file"),
    (["run", "--impl", "reference", "--report", "no/such/dir/r.jsonl"], "cannot write the report"),
    (["summary", "missing.jsonl"], "no such file"),
])
def test_configuration_errors_exit_2(args, message, capsys):
    assert run(*args) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_usage_error_exits_2():
    with pytest.raises(SystemExit) as exc:
        run("run", "--profile", "fast")
    assert exc.value.code == 2


def test_nothing_selected_exits_3(tmp_path, capsys):
    (tmp_path / "payload_only.py").write_text(textwrap.dedent("""
        class PayloadOnly:
            name, version = "payload-only", "1"
            def to_payload(self, history, *, provider, instructions=None):
                return {}
    """))
    assert run("run", "--impl", "payload_only:PayloadOnly", "--contract", "thread") == 3
    assert "nothing to run" in capsys.readouterr().err


def test_bad_providers_exit_2(tmp_path, capsys):
    (tmp_path / "bad_providers.py").write_text(textwrap.dedent("""
        from chatconform.reference import ReferenceImplementation

        class AsString(ReferenceImplementation):
            providers = "openai-chat"

        class Unknown(ReferenceImplementation):
            providers = {"openai-chat", "openai-assistants"}
    """))
    assert run("run", "--impl", "bad_providers:AsString", "--contract", "payload") == 2
    assert "providers must be a set of provider ids" in capsys.readouterr().err
    assert run("run", "--impl", "bad_providers:Unknown", "--contract", "payload") == 2
    assert "unknown provider(s) openai-assistants" in capsys.readouterr().err


@pytest.mark.slow
def test_expected_failures_are_strict(tmp_path, capsys):
    (tmp_path / "known.py").write_text(textwrap.dedent("""
        from chatconform.fakes.thread import UnscopedHeadCheck
        from chatconform.reference import ReferenceImplementation

        REASON = "https://github.com/langgenius/dify/issues/39031"

        # On duplicate ids Dify's single pass also returns both copies of a row.
        ALSO = ("thread.reaches_root", "thread.legacy_linear", "thread.no_duplicates")

        class Known(UnscopedHeadCheck):
            expected_failures = {c: REASON for c in UnscopedHeadCheck.violates + ALSO}

        class WronglyExpected(ReferenceImplementation):
            expected_failures = {"thread.reaches_root": REASON}

        class Misspelled(ReferenceImplementation):
            expected_failures = {"thread.reaches_rot": REASON}
    """))
    # The expected failures and one check that holds: the search ends once each expected one failed.
    known = [a for c in ("thread.reaches_root", "thread.no_duplicates", "thread.no_crash")
             for a in ("--check", c)]
    assert run("run", "--impl", "known:Known", *known, "--report", "k.jsonl") == 0
    statuses = {r["check"]: r["status"] for r in read_report("k.jsonl")[1:-1]}
    assert statuses == {"thread.reaches_root": "xfail", "thread.no_duplicates": "xfail", "thread.no_crash": "pass"}
    assert run("run", "--impl", "known:WronglyExpected", "--check", "thread.reaches_root") == 1
    assert "unexpected pass" in capsys.readouterr().out
    assert run("run", "--impl", "known:Misspelled", "--contract", "thread") == 2


@pytest.mark.slow
def test_summary_and_diff(tmp_path, capsys):
    run("run", "--impl", "reference", "--contract", "thread", "--report", "old.jsonl", *QUICK)
    run("run", "--impl", "reference", "--contract", "thread", "--report", "same.jsonl", *QUICK)
    old = read_report("old.jsonl")
    regressed = [dict(r, status="fail") if r.get("check") == "thread.reaches_root" else r for r in old]
    (tmp_path / "new.jsonl").write_text("".join(json.dumps(r) + "\n" for r in regressed))
    capsys.readouterr()
    assert run("summary", "old.jsonl", "--format", "markdown") == 0
    assert "| `thread.reaches_root` | pass |" in capsys.readouterr().out
    assert run("summary", "new.jsonl", "--format", "json") == 0
    assert json.loads(capsys.readouterr().out)["failures"][0]["check"] == "thread.reaches_root"
    assert run("summary", "new.jsonl", "--format", "json", "--fail-on-failure") == 1
    assert json.loads(capsys.readouterr().out)["matrix"]["reference"]["thread.reaches_root"] == "fail"
    assert run("diff", "old.jsonl", "same.jsonl") == 0
    assert "no differences" in capsys.readouterr().out
    assert run("diff", "old.jsonl", "new.jsonl") == 1
    assert "regressed   thread.reaches_root" in capsys.readouterr().out


def test_truncated_report_is_an_error(tmp_path, capsys):
    run("run", "--impl", "reference", "--contract", "thread", "--report", "r.jsonl", *QUICK)
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    (tmp_path / "cut.jsonl").write_text("\n".join(lines[:-1]) + "\n")
    assert run("summary", "cut.jsonl") == 2
    assert "truncated" in capsys.readouterr().err


def test_list_shows_implementations_checks_and_fakes(capsys):
    assert run("list") == 0
    out = capsys.readouterr().out
    assert "reference" in out and "thread.ancestors_only" in out and "fake-dify-39031" in out


@pytest.mark.parametrize("argv", [["list"]], ids=" ".join)
def test_list_to_a_pipe_keeps_to_columns_and_every_name_whole(argv, capsys, monkeypatch):
    from chatconform.fakes import all_fakes

    monkeypatch.setenv("COLUMNS", "90")
    assert run(*argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 90
    names = [check.id for contract in all_contracts().values() for check in contract.checks] + list(all_fakes())
    assert all(re.search(rf"(^|[^\w.]){re.escape(name)}([^\w.]|$)", "\n".join(lines), re.MULTILINE) for name in names)


def test_list_to_a_pipe_is_a_hundred_columns_wide_unless_columns_says(tmp_path):
    env = {key: value for key, value in os.environ.items() if key != "COLUMNS"}
    done = subprocess.run([sys.executable, "-m", "chatconform", "list"], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    widths = [len(line) for line in done.stdout.splitlines()]
    assert max(widths) == 100  # it was one line per row, 3,000 characters and more


@pytest.mark.slow
def test_console_script_and_pytest_plugin(tmp_path):
    done = subprocess.run(["chatconform", "run", "--impl", "reference", "--contract", "thread", *QUICK],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    plugin = subprocess.run(
        [sys.executable, "-m", "pytest", "--pyargs", "chatconform.conformance", "-p", "no:cacheprovider",
         "--chatconform-impl", f"{FAKE}:UnscopedHeadCheck", "--chatconform-check", "thread.ancestors_only",
         "--chatconform-check", "thread.no_crash", "-rA"],
        capture_output=True, text=True, timeout=300)
    assert plugin.returncode == 1, plugin.stdout[-2000:]
    assert "FAILED" in plugin.stdout and "thread.ancestors_only]" in plugin.stdout
    assert "PASSED" in plugin.stdout and "thread.no_crash]" in plugin.stdout


def test_validate_command(tmp_path, capsys):
    (tmp_path / "late.json").write_text('[{"role":"user","content":"hi"},{"role":"system","content":"late"}]')
    (tmp_path / "ok.json").write_text('{"messages": [{"role": "user", "content": "hi"}]}')
    (tmp_path / "cut.json").write_text('{"messages": [{"role": "user",\n "content": "hi"}')
    assert run("validate", "late.json", "--provider", "qwen-vllm") == 1
    out = capsys.readouterr().out
    assert "Q3" in out and "System message must be at the beginning." in out
    assert run("validate", "ok.json", "--provider", "openai-chat") == 0
    assert run("validate", "cut.json", "--provider", "openai-chat") == 2
    assert "cut.json:2:" in capsys.readouterr().err


# -- output in a log and in a terminal -----------------------------------------------------------

#: KeepLastN with a slower call, and two of its three failures declared expected.
SLOW_KEEP = '''
import time

from chatconform.fakes.trim import KeepLastN


class SlowKeep(KeepLastN):
    name = "slow-keep"
    expected_failures = {"trim.user_led": "known", "trim.matches_reference": "known"}

    def trim(self, history, *, max_messages):
        time.sleep(0.005)
        return super().trim(history, max_messages=max_messages)


class AllKnown(KeepLastN):
    name = "all-known"
    expected_failures = {check: "known" for check in KeepLastN.violates}


class TrimOnly:
    name, version = "trim-only", "1"

    def trim(self, history, *, max_messages):
        from chatconform.reference import ReferenceImplementation

        return ReferenceImplementation().trim(history, max_messages=max_messages)
'''

#: Two of KeepLastN's failing checks: one that SlowKeep and AllKnown declare, one that only AllKnown does.
TWO_CHECKS = ("--check", "trim.pairs_intact", "--check", "trim.user_led")

PROGRESS = re.compile(r"^  still searching (?P<label>.+?): (?P<examples>\d+) examples(?:, shrinking \((?P<replayed>\d+)"
                      r" replayed\))?, (?P<seconds>\d+\.\d)s so far, (?P<note>.+?)(?: \((?P<done>\d+) of (?P<of>\d+) "
                      r"searches done\))?$")


class _Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def _visible(text: str) -> str:
    """``text`` without the terminal's escape sequences (styles, the live line's cursor moves)."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text).replace("\r", "\n")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_off_a_terminal_a_running_search_says_what_it_has_done_at_an_interval(tmp_path, capsys, monkeypatch, jobs):
    from chatconform.outputs.reporters import terminal

    (tmp_path / "slow.py").write_text(SLOW_KEEP)
    monkeypatch.setattr(terminal, "PROGRESS_SECONDS", 0.05)
    # --jobs 2: the searches run in worker processes, whose events the run's own process hears
    assert run("run", "--impl", "slow.py:SlowKeep", "--impl", "reference", *TWO_CHECKS, "--examples", "5",
               "--in-process", "--jobs", jobs) == 1
    err = capsys.readouterr().err.splitlines()
    progress = [m for line in err if (m := PROGRESS.match(line))]
    slow = [m for m in progress if m["label"] == "slow-keep · trim"]
    assert len(slow) >= 3, err
    assert all(m["of"] == "2" and int(m["done"]) < 2 for m in progress)
    assert [float(m["seconds"]) for m in slow] == sorted(float(m["seconds"]) for m in slow)
    assert all(int(m["examples"]) <= 5 for m in slow)
    shrinking = [m for m in slow if m["replayed"]]  # it shrinks its failures: cases replayed, not examples
    # the failures seen so far, told apart as in the finished search's line; all of them by the shrinking
    assert shrinking and {m["note"] for m in shrinking} == {"1 failing, 1 expected failure, as declared"}
    assert {m["note"] for m in slow} <= {"ok", "1 failing", "1 expected failure, as declared", shrinking[0]["note"]}
    assert re.search(r"^  slow-keep · trim: 5 examples, \d+\.\ds, 1 failing, 1 expected failure, as declared$",
                     "\n".join(err), re.M)


def test_the_interval_is_long_by_default_and_a_terminal_gets_none_of_these_lines(tmp_path, capsys, monkeypatch):
    from chatconform.outputs.reporters import terminal

    assert terminal.PROGRESS_SECONDS >= 10
    monkeypatch.setattr(terminal, "PROGRESS_SECONDS", 0.0)
    monkeypatch.setattr(sys, "stderr", _Terminal())  # its live line says what is running instead
    monkeypatch.setenv("COLUMNS", "100")
    assert run("run", "--impl", "reference", "--contract", "trim", "--examples", "5", "--in-process") == 0
    shown = _visible(sys.stderr.getvalue())
    assert "reference · trim: 5 examples" in shown and "still searching" not in shown


def test_a_search_whose_failures_are_all_declared_says_so_and_not_failing(tmp_path, capsys):
    (tmp_path / "slow.py").write_text(SLOW_KEEP)
    assert run("run", "--impl", "slow.py:AllKnown", *TWO_CHECKS, "--examples", "5", "--in-process") == 0
    captured = capsys.readouterr()
    line = next(x for x in captured.err.splitlines() if x.startswith("  all-known · trim:"))
    assert line.endswith(", 2 expected failures, as declared") and "failing" not in line
    assert captured.out.splitlines()[-1].startswith("2 xfail in ")


def test_the_failures_note_tells_what_fails_the_run_from_what_was_declared():
    from chatconform.outputs.reporters.terminal import failures_note

    declared = {"trim.user_led", "trim.matches_reference", "trim.keeps_latest"}
    assert failures_note({}, declared) == ("ok", "green")
    assert failures_note({"trim.user_led": "error", "trim.matches_reference": "warning"}, declared) == (
        "2 expected failures, as declared", "yellow")
    assert failures_note({"trim.pairs_intact": "error", "trim.user_led": "error", "trim.matches_reference": "error",
                          "trim.keeps_latest": "error"}, declared) == (
        "1 failing, 3 expected failures, as declared", "red")
    assert failures_note({"trim.suffix_only": "warning", "trim.within_budget": "warning"}, ()) == (
        "2 warnings", "yellow")

def test_a_contract_an_implementation_does_not_provide_is_one_line_not_skip_rows(tmp_path, capsys):
    import xml.etree.ElementTree as ET

    (tmp_path / "slow.py").write_text(SLOW_KEEP)
    assert run("run", "--impl", "slow.py:TrimOnly", "--impl", "reference", "--contract", "trim", "--contract",
               "thread", "--examples", "5", "--in-process", "--report", "r.jsonl", "--junit-xml", "j.xml") == 0
    not_provided = "trim-only does not provide thread (it has no method for it)"
    out = capsys.readouterr().out
    assert not_provided in out.splitlines() and "skip" not in out
    counts = out.splitlines()[-2]  # then "report: r.jsonl"
    assert re.fullmatch(r"\d+ pass in \d+\.\ds", counts), counts
    thread_rows = [line for line in out.splitlines() if "thread.reaches_root" in line]
    assert len(thread_rows) == 1 and thread_rows[0].count("pass") == 1  # reference's cell; trim-only's is empty

    lines = read_report("r.jsonl")  # the report keeps its skip lines, as other tools read them
    skipped = [r for r in lines if r["type"] == "result" and r["status"] == "skip"]
    assert {r["implementation"] for r in skipped} == {"trim-only"} and {r["contract"] for r in skipped} == {"thread"}
    assert skipped[0]["message"] == "trim-only has no extract_thread()"
    assert lines[-1]["counts"]["skip"] == len(skipped) == len(all_contracts()["thread"].checks)

    root = ET.parse(tmp_path / "j.xml").getroot()
    assert root.get("skipped") == "0"
    suite = root.find("./testsuite[@name='trim-only']")
    assert suite.get("tests") == str(len(all_contracts()["trim"].checks)) and suite.get("skipped") == "0"
    assert all(case.get("name").startswith("trim.") for case in suite.iter("testcase"))
    assert suite.find("system-out").text == not_provided

    assert run("summary", "r.jsonl") == 0
    summary = capsys.readouterr().out
    assert not_provided in summary.splitlines() and "skip" not in summary
    assert run("summary", "r.jsonl", "--format", "markdown") == 0
    markdown = capsys.readouterr().out
    assert f"- {not_provided}" in markdown.splitlines() and "skip" not in markdown
    assert "| `thread.reaches_root` |  | pass |" in markdown
    assert run("summary", "r.jsonl", "--format", "json") == 0
    assert json.loads(capsys.readouterr().out)["not_provided"] == {"trim-only": ["thread"]}

    # A report whose header does not say which contracts each implementation provides (an
    # older chatconform's) reads as before: its skip lines show.
    for line in lines[:1]:
        for entry in line["implementations"].values():
            del entry["contracts"]
    (tmp_path / "old.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert run("summary", "old.jsonl") == 0
    old = capsys.readouterr().out
    assert not_provided not in old and f"{len(skipped)} skip" in old.splitlines()[-1]
    lines[0]["implementations"]["trim-only"]["contracts"] = "trim"  # a damaged header: refused, as any field
    (tmp_path / "bad.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert run("summary", "bad.jsonl") == 2
    assert "field implementations.trim-only.contracts: expected a list" in capsys.readouterr().err

def test_on_a_terminal_text_wraps_at_its_width_and_what_is_pasted_stays_whole(tmp_path, capsys, monkeypatch):
    args = ("run", "--impl", "chatconform.fakes.trim:KeepLastN", "--check", "trim.pairs_intact", "--examples", "5",
            "--in-process")
    assert run(*args) == 1
    piped = capsys.readouterr().out.splitlines()
    assert any(len(line) > 100 for line in piped if line.startswith("  why:"))  # a log keeps whole lines

    monkeypatch.setenv("COLUMNS", "60")
    monkeypatch.setattr(sys, "stdout", _Terminal())
    assert run(*args) == 1
    shown = _visible(sys.stdout.getvalue()).splitlines()
    long = [line for line in shown if len(line) > 60]
    # What is pasted (the replay command, the case, the regression test) is printed whole, as in
    # a log; everything else fits the width.
    assert long and all(line in piped for line in long)
    assert all(line.startswith(("  re-run:", "    ")) for line in long), long
    assert not any(line.startswith(("  why:", "  what:", "  expected:", "  actual:")) for line in long)
    why = shown.index(next(line for line in shown if line.startswith("  why:")))
    assert shown[why + 1].startswith(" " * 12) and shown[why + 1][12] != " "  # wrapped under its text
    assert all(len(line) <= 60 for line in shown[:shown.index(next(x for x in shown if x.startswith("FAIL")))])
