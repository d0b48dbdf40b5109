"""The command line: exit codes, reports, replay, and implementations that misbehave."""

import json
import subprocess
import sys
import textwrap
import time

import pytest

from chatconform.cli import main
from chatconform.conformance.contracts import all_contracts

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
    assert run("run", "--impl", f"{FAKE}:UnscopedHeadCheck", "--contract", "thread") == 1
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

    running = importlib.import_module("chatconform.conformance.engine.run")  # the module, not engine.run

    real = running.fold_units

    def slow_fold(*args, **kwargs):  # the run ends 2.5 s after it started
        time.sleep(2.5)
        return real(*args, **kwargs)

    monkeypatch.setattr(running, "fold_units", slow_fold)
    before = datetime.now().astimezone().replace(microsecond=0)
    assert run("run", "--impl", "reference", "--contract", "thread", "--report", "r.jsonl", "--examples", "5") == 0
    started = datetime.fromisoformat(read_report(tmp_path / "r.jsonl")[0]["started"])
    assert before <= started < before + timedelta(seconds=2)


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
    assert hung["status"] == "fail" and "did not return within 1s" in hung["message"]
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
    from chatconform.conformance import repro

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
            providers = {"openai-chat", "openai-responses"}
    """))
    assert run("run", "--impl", "bad_providers:AsString", "--contract", "payload") == 2
    assert "providers must be a set of provider ids" in capsys.readouterr().err
    assert run("run", "--impl", "bad_providers:Unknown", "--contract", "payload") == 2
    assert "unknown provider(s) openai-responses" in capsys.readouterr().err


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
    assert run("run", "--impl", "known:Known", "--contract", "thread", "--report", "k.jsonl") == 0
    assert {r["status"] for r in read_report("k.jsonl")[1:-1]} == {"pass", "xfail"}
    assert run("run", "--impl", "known:WronglyExpected", "--contract", "thread") == 1
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


@pytest.mark.slow
def test_console_script_and_pytest_plugin(tmp_path):
    done = subprocess.run(["chatconform", "run", "--impl", "reference", "--contract", "thread", *QUICK],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    plugin = subprocess.run(
        [sys.executable, "-m", "pytest", "--pyargs", "chatconform.conformance", "-p", "no:cacheprovider",
         "--chatconform-impl", f"{FAKE}:UnscopedHeadCheck", "--chatconform-contract", "thread", "-rA"],
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
