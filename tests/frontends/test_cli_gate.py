"""The CLI and the pytest plugin as a CI gate: output a person can read and paste, errors
up front, and what a CI user expects (one test or more per point of the CI-gate issue)."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from pydantic_ai.messages import ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart, UserPromptPart

from chatconform.cli import console, main
from chatconform.engine import Failure, Verdict
from chatconform.errors import ConfigError
from chatconform.frame.status import Status
from chatconform.history import history_from_json, history_to_json
from chatconform.outputs.present import TEST_BANNER
from chatconform.outputs.pretty import render
from chatconform.outputs.reporters.terminal import print_failures
from chatconform.outputs.repro import check_case, regression_test
from chatconform.strategies import histories

ROOT = Path(__file__).resolve().parents[2]
MANY_BUGS = ROOT / "tests" / "data" / "many_bugs.py"
QUICK = ("--examples", "60")


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def run(*args):
    return main([str(a) for a in args])


def cli(*args, cwd, env=None, timeout=300):
    """The command in a child process, its stdout a pipe (as in CI)."""
    environ = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.run([sys.executable, "-m", "chatconform.cli", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, env=environ)


SYSTEM_TWICE = {"history": [{"kind": "request", "parts": [
    {"part_kind": "system-prompt", "content": "You are a helpful assistant. (s1)"},
    {"part_kind": "system-prompt", "content": "You are a helpful assistant. (s2)"},
    {"part_kind": "user-prompt", "content": "Hello (u3)"}]}]}


# -- 1. the smallest JSON that loads back ------------------------------------------------------

@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(histories())
def test_history_json_loads_back_equal_and_leaves_defaults_out(history):
    data = history_to_json(history)
    assert history_from_json(json.loads(json.dumps(data)), "history") == history
    for message in data:
        assert next(iter(message)) == "kind" and message.get("state") != "complete"
        assert "usage" not in message or any(message["usage"].values())
        for part in message["parts"]:
            assert next(iter(part)) == "part_kind" and part.get("scope") != "conversation"


def test_history_json_keeps_a_tool_named_like_a_subclass_default():
    # pydantic-ai's ToolSearchCallPart is a "tool-call" whose tool_name defaults to
    # "search_tools": read as the tag's class, it made that name look like a default,
    # dropped it, and the saved case no longer loaded
    history = [ModelRequest([UserPromptPart("find it")]),
               ModelResponse([ToolCallPart("search_tools", {"q": "x"}, "c1"), ToolCallPart("tool_search", {}, "c2")]),
               ModelRequest([ToolReturnPart("search_tools", "found", tool_call_id="c1"),
                             ToolReturnPart("tool_search", "none", tool_call_id="c2")])]
    data = history_to_json(history)
    assert [p["tool_name"] for p in data[1]["parts"] + data[2]["parts"]] == ["search_tools", "tool_search"] * 2
    assert not any("tool_kind" in p for p in data[1]["parts"] + data[2]["parts"])  # None is the default
    assert history_from_json(json.loads(json.dumps(data)), "history") == history


def test_payload_regression_test_is_a_dozen_lines_and_expected_actual_are_labelled():
    record = {"implementation": "chatconform.fakes.payload:DifyAgentPre39136",
              "check": "payload.matches_reference", "variant": "qwen-vllm", "case": SYSTEM_TWICE}
    test = regression_test(record)
    assert len(test.splitlines()) <= 12, test
    compile(test, "test_pasted.py", "exec")
    assert render(SYSTEM_TWICE).splitlines()[1] == '  {"kind": "request", "parts": ['
    with pytest.raises(AssertionError) as raised:  # advice, a warning: it fails only when strict
        check_case(record["implementation"], record["check"], SYSTEM_TWICE, variant="qwen-vllm", strict=True)
    assert 'expected: [{"role": "system", "texts": ["You are a helpful assistant. (s1)\\n\\n' in str(raised.value)


def test_compact_layout_is_json_or_python_and_keeps_long_records_whole():
    value = {"rows": [{"id": "r" * 60, "parent_message_id": None, "created_at": "2026-01-01T00:00:01"}],
             "flag": True}
    assert json.loads(render(value)) == value
    assert eval(render(value, python=True)) == value
    assert render(value).splitlines() == [  # one line per row, however long; the flag after them
        '{"rows": [', "  " + json.dumps(value["rows"][0]), '], "flag": true}']
    call = {"part_kind": "tool-call", "tool_name": "run_sql", "args": {"sql": "select count(*) from tickets"},
            "tool_call_id": "late_10001"}
    message = {"kind": "response", "parts": [call, call], "model_name": "test-model"}
    assert render(message).splitlines() == [  # a call with its arguments is a record: one line
        '{"kind": "response", "parts": [', "  " + json.dumps(call) + ",", "  " + json.dumps(call),
        '], "model_name": "test-model"}']
    deep = {"kind": "response", "parts": [{"args": {"a": {"b": "x" * 100}}}], "model_name": "m"}
    assert len(render(deep).splitlines()) > 3 and json.loads(render(deep)) == deep  # nested deeper: broken up


# -- 2. many failures stay readable ---------------------------------------------------------------

def _verdicts(count: int) -> list[Verdict]:
    from chatconform.contracts import get_contract

    checks = [c.id for c in get_contract("payload").ordered_checks()]
    shared = {"history": [{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "hi"}]}]}
    long = [{"id": f"{i:04}", "created_at": "2026-01-01T00:00:00"} for i in range(200)]
    out = []
    for number in range(count):
        case = long if number == 0 else shared
        failures = [Failure(checks[number], "wrong", case, "anthropic", "a", "b")]
        if number == 1:
            failures += [Failure(checks[number], "wrong", dict(shared, instructions="x" * n), p)
                         for n, p in ((40, "mistral"), (80, "gemini"))]
        out.append(Verdict("impl", "pkg:Impl", "payload", checks[number], Status.FAIL, "wrong", failures))
    return out


def test_one_block_per_failing_check_and_the_rest_summarised(capsys):
    print_failures(console(sys.stdout), _verdicts(10))
    short = capsys.readouterr().out
    assert short.count("\nFAIL ") == 10
    assert short.count(TEST_BANNER) == 1  # not for the long case; once for the case nine checks share
    assert "also fails on 2 other case(s) (for gemini, mistral); --verbose prints them" in short
    assert "minimal input (202 lines, the first 15)" in short
    print_failures(console(sys.stdout), _verdicts(10), verbose=True)
    verbose = capsys.readouterr().out
    assert verbose.count(TEST_BANNER) == 12 and len(verbose.splitlines()) > 3 * len(short.splitlines())


@pytest.mark.release  # how much a failing run prints
@pytest.mark.slow
def test_ten_failing_checks_print_a_few_hundred_lines(tmp_path):
    done = cli("run", "--impl", MANY_BUGS.relative_to(ROOT).as_posix() + ":ManyBugs", cwd=ROOT)
    assert done.returncode == 1
    # One of the ten (payload.matches_reference) is advice: a WARN block.
    blocks = done.stdout.count("\nFAIL ") + done.stdout.count("\nWARN ")
    assert blocks == 10 and len(done.stdout.splitlines()) < 300


# -- 3. the printed test pastes at column 0 and runs from anywhere --------------------------------

def _project(tmp_path, monkeypatch) -> Path:
    """A user's project (a pyproject.toml at its root) with its implementation in impl/mine.py,
    the working folder of the run."""
    project = tmp_path / "project"
    (project / "impl").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[project]\nname = 'mine'\n")
    (project / "impl" / "helpers.py").write_text("from chatconform.fakes.thread import UnscopedHeadCheck\n")
    (project / "impl" / "mine.py").write_text("from helpers import UnscopedHeadCheck as Mine\n")
    monkeypatch.chdir(project)
    return project


def _pasted(printed: str) -> str:
    """The regression test as a reader copies it: from the banner to the check_case line."""
    after = printed.split(TEST_BANNER + "\n", 1)[1].splitlines()
    end = next(i for i, line in enumerate(after) if line.startswith("    check_case("))
    return "\n".join(after[:end + 1]) + "\n"


def _run_pasted(test: str, project: Path, elsewhere: Path) -> subprocess.CompletedProcess:
    """The pasted test, in the project's tests/ folder, run by pytest from a folder outside it."""
    (project / "tests").mkdir(exist_ok=True)
    (project / "tests" / "test_pasted.py").write_text(test)
    elsewhere.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(project / "tests" / "test_pasted.py")], cwd=elsewhere, capture_output=True,
                          text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT)))


def test_printed_regression_test_pastes_and_runs_from_another_folder(tmp_path, capsys, monkeypatch):
    project = _project(tmp_path, monkeypatch)
    assert run("run", "--impl", "impl/mine.py:Mine", "--check", "thread.ancestors_only", *QUICK) == 1
    test = _pasted(capsys.readouterr().out)
    # named from the project's root, the same on every machine
    assert 'check_case("impl/mine.py:Mine", "thread.ancestors_only", case)' in test
    assert str(tmp_path) not in test
    done = _run_pasted(test, project, tmp_path / "elsewhere")
    assert done.returncode == 1, done.stdout[-2000:]
    assert "FAIL thread.ancestors_only" in done.stdout
    for folder in ("outputs", "engine", "runner", "frame"):  # check_case hides its own frames
        assert f"chatconform/{folder}/" not in done.stdout
    saved = next((project / ".chatconform" / "failures").glob("*.json"))
    assert json.loads(saved.read_text())["implementation"] == "impl/mine.py:Mine"


def test_a_long_case_gets_a_regression_test_that_loads_the_saved_failure(tmp_path, capsys, monkeypatch):
    project = _project(tmp_path, monkeypatch)
    minimal = [{"id": "00000002-0000-4000-8000-000000000000",
                "parent_message_id": "00000002-0000-4000-8000-000000000000",
                "created_at": "2026-01-01T00:00:02+00:00"},
               {"id": "00000001-0000-4000-8000-000000000000", "created_at": "2026-01-01T00:00:01+00:00"}]
    older = [{"id": f"00000000-0000-4000-8000-{n:012d}", "created_at": f"2025-12-01T00:00:{n:02d}+00:00"}
             for n in range(50, 10, -1)]  # forty unrelated heads, older than the rest
    case = minimal + older
    with pytest.raises(AssertionError, match=r"thread\.ancestors_only"):
        check_case("impl/mine.py:Mine", "thread.ancestors_only", case)
    record = {"implementation": "impl/mine.py:Mine", "check": "thread.ancestors_only", "contract": "thread",
              "variant": None, "message": "rows not on the newest row's branch", "case": case}
    saved = project / ".chatconform" / "failures" / "mine--thread.ancestors_only.json"
    saved.parent.mkdir(parents=True)
    saved.write_text(json.dumps(record))
    failure = Failure("thread.ancestors_only", "rows not on the newest row's branch", case,
                      saved=str(saved.relative_to(project)))
    print_failures(console(sys.stdout), [Verdict("mine", str(project / "impl" / "mine.py") + ":Mine", "thread",
                                                 "thread.ancestors_only", Status.FAIL, "x", [failure])])
    printed = capsys.readouterr().out
    assert "more lines (the whole case is saved in .chatconform/failures/mine--thread.ancestors_only.json" in printed
    test = _pasted(printed)
    assert 'case = saved_case("mine--thread.ancestors_only.json")' in test
    done = _run_pasted(test, project, tmp_path / "elsewhere")
    assert done.returncode == 1 and "FAIL thread.ancestors_only" in done.stdout, done.stdout[-2000:]
    # kept beside the test, it is found there once .chatconform/ is gone
    (project / "tests" / saved.name).write_text(saved.read_text())
    saved.unlink()
    done = _run_pasted(test, project, tmp_path / "elsewhere")
    assert done.returncode == 1 and "FAIL thread.ancestors_only" in done.stdout, done.stdout[-2000:]


def test_a_relative_file_that_is_nowhere_names_where_it_was_looked_for(tmp_path, monkeypatch):
    _project(tmp_path, monkeypatch)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"impl/gone\.py:Mine: no file impl/gone\.py under .*working folder"):
        check_case("impl/gone.py:Mine", "thread.ancestors_only", [])


# -- 4. text is printed literally ----------------------------------------------------------------

def test_names_messages_and_paths_print_literally(tmp_path, capsys):
    assert run("run", "--impl", "nonexist.py:X") == 2
    assert "nonexist.py:X" in capsys.readouterr().err
    (tmp_path / "odd.py").write_text(textwrap.dedent("""
        from chatconform.fakes.thread import UnscopedHeadCheck

        class Odd(UnscopedHeadCheck):
            name = "[/] [bold]odd:x: :smile:"
    """))
    assert run("run", "--impl", "odd.py:Odd", "--check", "thread.ancestors_only", *QUICK) == 1
    captured = capsys.readouterr()
    assert "[/] [bold]odd:x: :smile:" in captured.out and "[/] [bold]odd:x: :smile:" in captured.err


# -- 5. never hard-wrapped in a pipe -----------------------------------------------------------------

def _report(path: Path, checks: int = 4) -> None:
    lines = [{"type": "header", "suite": "chatconform", "version": "1", "profile": "ci", "implementations": {}}]
    lines += [{"type": "result", "implementation": "an-implementation-with-a-long-name", "contract": "payload",
               "check": f"payload.a_rather_long_check_name_{n}", "status": "fail" if n % 2 else "pass",
               "message": "a message that goes on for well over forty columns, and then some more " * 2,
               "examples": 100, "evaluated": 100} for n in range(checks)]
    lines += [{"type": "footer", "counts": {"pass": 2, "fail": 2}, "seconds": 1.0}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_markdown_summary_in_a_narrow_pipe_has_one_row_per_line(tmp_path):
    _report(tmp_path / "r.jsonl")
    done = cli("summary", "r.jsonl", "--format", "markdown", cwd=tmp_path, env={"COLUMNS": "40"})
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("|")]
    matrix = [r for r in rows if r.count("|") == 3]  # | check | implementation |
    failures = [r for r in rows if r.count("|") == 5]  # | implementation | check | status | message |
    assert len(matrix) == 2 + 4 and len(failures) == 2 + 2 and len(rows) == len(matrix) + len(failures)
    assert all(line.endswith("|") for line in rows)
    pretty = cli("summary", "r.jsonl", cwd=tmp_path, env={"COLUMNS": "40"})
    assert any(len(line) > 40 for line in pretty.stdout.splitlines())


def test_markdown_summary_of_an_empty_shard_has_no_broken_table(tmp_path):
    """A shard with nothing to search writes a report with no result: its step summary says
    so, without a table header over no columns."""
    ran = cli("run", "--impl", "reference", "--contract", "thread", "--shard", "2/2", "--in-process",
              "--report", "r.jsonl", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    done = cli("summary", "r.jsonl", "--format", "markdown", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "No check ran." in done.stdout
    assert not [line for line in done.stdout.splitlines() if line.startswith("|")]


# -- 6. bad values fail before the search, in one line ----------------------------------------------

@pytest.mark.parametrize("args", [
    ["--timeout", "0"], ["--timeout", "-1"], ["--timeout", "nan"], ["--timeout", "inf"], ["--timeout", "x"],
    ["--examples", "0"], ["--examples", "-3"], ["--examples", "1.5"], ["--examples", "many"],
    ["--report", "/proc/chatconform-report.jsonl"], ["--report", "."], ["--report", "no/such/r.jsonl"],
    ["--provider", "openai-assistants"],
])
def test_bad_values_are_one_line_and_exit_2(args, capsys):
    try:
        code = run("run", "--impl", "reference", *args)
    except SystemExit as exc:
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


def test_a_report_that_fails_to_write_after_the_run_keeps_the_results(monkeypatch, capsys):
    from chatconform.errors import ConfigError
    from chatconform.outputs.reporters.jsonl import JsonlReporter

    def fail(*args):
        raise ConfigError("cannot write the report r.jsonl: disk full")

    monkeypatch.setattr(JsonlReporter, "write", fail)
    assert run("run", "--impl", "reference", "--check", "thread.no_crash", "--report", "r.jsonl", *QUICK) == 2
    captured = capsys.readouterr()
    assert "thread.no_crash" in captured.out and "1 pass" in captured.out
    assert "disk full" in captured.err


# -- 7. every path: a folder, an empty file, a binary file, a missing file ----------------------

def _paths(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "folder.py").mkdir()
    (tmp_path / "empty.py").write_text("")
    (tmp_path / "binary.py").write_bytes(b"\x00\xff\xfe\x89PNG\x00" * 20)
    return {"folder": tmp_path / "folder.py", "empty": tmp_path / "empty.py",
            "binary": tmp_path / "binary.py", "missing": tmp_path / "missing.py"}


@pytest.mark.parametrize("kind", ["folder", "empty", "binary", "missing"])
def test_every_subcommand_on_odd_paths_exits_cleanly(kind, tmp_path, capsys):
    path = _paths(tmp_path)[kind]
    commands = [
        ["run", "--impl", f"{path}:X"], ["replay", path], ["summary", path],
        ["summary", path, "--format", "json"], ["diff", path, path],
        ["validate", path, "--provider", "openai-chat"],
        ["run", "--impl", "reference", "--check", "thread.no_crash", "--report", path, *QUICK],  # last: writes
    ]
    for command in commands:
        code = run(*command)
        err = capsys.readouterr().err
        assert "Traceback" not in err
        if command[1] == "--impl" and command[2] == "reference":
            assert code == (2 if kind == "folder" else 0), (command, err)
        else:
            assert code == 2 and len(err.strip().splitlines()) == 1, (command, err)


def test_replay_a_folder_replays_every_saved_case(tmp_path, capsys):
    folder = tmp_path / "cases"
    folder.mkdir()
    for number in (1, 2):
        (folder / f"c{number}.json").write_text(json.dumps({
            "implementation": "reference", "check": "thread.reaches_root",
            "case": [{"id": "a", "created_at": "2026-01-01T00:00:00"}]}))
    assert run("replay", folder) == 0
    assert capsys.readouterr().out.count("now holds for reference") == 2
    (tmp_path / "none").mkdir()
    assert run("replay", tmp_path / "none") == 2
    assert "no saved cases" in capsys.readouterr().err


def test_replay_runs_a_file_spec_only_when_the_command_line_names_it(tmp_path, capsys):
    (tmp_path / "saved").mkdir()
    (tmp_path / "saved" / "impl.py").write_text("from chatconform.reference import ReferenceImplementation as R\n")
    (tmp_path / "saved" / "case.json").write_text(json.dumps({
        "implementation": "impl.py:R", "check": "thread.reaches_root",
        "case": [{"id": "a", "created_at": "2026-01-01T00:00:00"}]}))
    assert run("replay", "saved") == 2
    assert "'impl.py:R'" in capsys.readouterr().err
    assert run("replay", "saved", "--impl", "saved/impl.py:R") == 0, capsys.readouterr().err


# -- 8. the pytest plugin ------------------------------------------------------------------------

def _pytest(*args, cwd):
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--pyargs",
                           "chatconform.conformance", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, PYTHONPATH=str(ROOT)))


def test_plugin_bad_implementation_is_a_usage_error(tmp_path):
    done = _pytest("--chatconform-impl", "no_such_module:Impl", cwd=tmp_path)
    assert done.returncode == 4
    assert (done.stdout + done.stderr).count("cannot import module 'no_such_module'") == 1
    done = _pytest("--chatconform-impl", "reference", "--chatconform-examples", "0", cwd=tmp_path)
    assert done.returncode == 4 and "must be at least 1" in done.stderr


def test_plugin_check_seed_examples_and_profile(tmp_path):
    done = _pytest("--chatconform-impl", "reference", "--chatconform-check", "thread.reaches_root",
                   "--chatconform-check", "thread.no_crash", "--chatconform-seed", "7",
                   "--chatconform-examples", "30", "--chatconform-profile", "dev", "-v", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:]
    assert "2 passed" in done.stdout and "seed 7" in done.stdout


# -- 9. what a CI user expects ----------------------------------------------------------------------

def test_provider_limits_the_payload_searches(tmp_path, capsys):
    assert run("run", "--impl", "reference", "--contract", "payload", "--provider", "anthropic",
               "--provider", "glm", "--report", "r.jsonl", *QUICK) == 0
    err = capsys.readouterr().err
    assert "[anthropic]" in err and "[glm]" in err and "[openai-chat]" not in err
    head = json.loads(Path("r.jsonl").read_text().splitlines()[0])
    assert head["providers"] == ["anthropic", "glm"]
    assert head["implementations"]["reference"]["options"]["providers"] == ["anthropic", "glm"]


def test_provider_an_implementation_does_not_map_is_a_skip(tmp_path, capsys):
    (tmp_path / "qwen_only.py").write_text(textwrap.dedent("""
        from chatconform.reference import ReferenceImplementation

        class QwenOnly(ReferenceImplementation):
            providers = {"qwen-vllm"}
    """))
    assert run("run", "--impl", "qwen_only.py:QwenOnly", "--contract", "payload", "--provider", "glm") == 3
    assert "declares none of the providers selected with --provider (glm)" in capsys.readouterr().err


GLM_CRASH = textwrap.dedent("""
    from chatconform.reference import ReferenceImplementation

    class GlmCrash(ReferenceImplementation):
        name = "glm-crash"
        providers = {"openai-chat", "glm"}
        expected_failures = {"payload.no_crash": "raises for glm"}

        def to_payload(self, history, *, provider, instructions=None):
            if provider == "glm":
                raise RuntimeError("no glm here")
            return super().to_payload(history, provider=provider, instructions=instructions)
""")


@pytest.mark.slow
def test_an_expected_failure_of_a_provider_left_out_by_provider_is_undecided_not_an_unexpected_pass(tmp_path, capsys):
    (tmp_path / "glm_crash.py").write_text(GLM_CRASH)
    common = ("run", "--impl", "glm_crash.py:GlmCrash", "--contract", "payload", "--check", "payload.no_crash",
              "--check", "payload.system_first")  # the whole budget: a quick look decides no expected failure

    def no_crash(report):
        lines = [json.loads(line) for line in Path(report).read_text().splitlines()]
        return next(line for line in lines if line.get("check") == "payload.no_crash")

    assert run(*common, "--provider", "openai-chat", "--report", "narrow.jsonl") == 0
    verdict = no_crash("narrow.jsonl")
    assert verdict["status"] == "skip", verdict
    assert verdict["message"].startswith("undecided without glm (left out by --provider): an expected failure "
                                         "that held for the providers run; run every provider to decide")
    head = json.loads(Path("narrow.jsonl").read_text().splitlines()[0])
    assert head["implementations"]["glm-crash"]["left_out"] == {"providers": ["glm"]}
    # the provider it fails for, named or not left out: the expected failure is met
    # (glm alone: system_first is judged on no case, as every call raised)
    for narrowing, code in ((("--provider", "glm"), 1), ((), 0)):
        assert run(*common, *narrowing, "--report", "met.jsonl") == code
        assert no_crash("met.jsonl")["status"] == "xfail"
    # shards of a narrowed run merge to the same undecided verdict
    for index in (1, 2):
        assert run(*common, "--impl", "reference", "--provider", "openai-chat", "--shard", f"{index}/2",
                   "--report", f"s{index}.jsonl") == 0
    capsys.readouterr()
    assert run("summary", "s1.jsonl", "s2.jsonl", "--format", "json") == 0
    merged = json.loads(capsys.readouterr().out)
    assert merged["matrix"]["glm-crash"] == {"payload.no_crash": "skip", "payload.system_first": "pass"}


def test_list_json_summary_json_and_the_summary_gate(tmp_path, capsys):
    assert run("list", "--format", "json") == 0
    listing = json.loads(capsys.readouterr().out)
    assert {"implementations", "checks", "fakes"} <= set(listing)
    assert any(c["id"] == "thread.reaches_root" and c["violated_by"] for c in listing["checks"])
    _report(tmp_path / "r.jsonl")
    assert run("summary", "r.jsonl", "--format", "json") == 0
    summary = json.loads(capsys.readouterr().out)
    assert [f["check"] for f in summary["failures"]] == ["payload.a_rather_long_check_name_1",
                                                         "payload.a_rather_long_check_name_3"]
    assert summary["failures"][0]["message"].startswith("a message that goes on")
    assert run("summary", "r.jsonl", "--fail-on-failure") == 1
    assert run("summary", "r.jsonl", "--format", "markdown") == 0


def test_version_is_importable():
    import chatconform

    assert isinstance(chatconform.__version__, str) and chatconform.__version__


# -- 12. validate: complete requests and arrays of bodies -------------------------------------------

def test_validate_a_complete_request_needs_its_request_fields_and_arrays_of_bodies(tmp_path, capsys):
    user = {"role": "user", "content": "hi"}
    Path("bodies.json").write_text(json.dumps([{"model": "claude-sonnet-4-5", "messages": [user]},
                                               {"messages": [user]}], indent=1))
    assert run("validate", "bodies.json", "--provider", "anthropic") == 1
    out = capsys.readouterr().out
    assert "bodies.json: a JSON array of request bodies, read as bodies" in out
    assert "A14 $.max_tokens  max_tokens: Field required" in out and "in 2 bodies" in out
    Path("messages.json").write_text(json.dumps([user]))
    assert run("validate", "messages.json", "--provider", "anthropic") == 0
    assert "a JSON array of messages, read as one body's messages" in capsys.readouterr().out
    Path("history_only.json").write_text(json.dumps({"messages": [user]}))  # what to_payload returns
    assert run("validate", "history_only.json", "--provider", "anthropic") == 0


# -- 10. the GitHub Action ----------------------------------------------------------------------------

def test_action_yml_is_a_composite_action_running_real_commands():
    import re

    from chatconform.cli import _parser

    text = (ROOT / "action.yml").read_text()
    try:
        import yaml
    except ImportError:
        yaml = None
    if yaml is not None:
        action = yaml.safe_load(text)
        assert action["runs"]["using"] == "composite" and "impl" in action["inputs"]
    assert "using: composite" in text and "$GITHUB_STEP_SUMMARY" in text and "upload-artifact" in text
    parser = _parser()
    commands = {name: sub for action in parser._subparsers._group_actions
                for name, sub in action.choices.items()}
    used = [*re.findall(r"^\s+chatconform (\w+)(.*)$", text, re.M),
            ("run", " ".join(re.findall(r"\((run [^)]*)\)", text)))]
    for command, rest in used:
        assert command in commands, command
        known = {o for a in commands[command]._actions for o in a.option_strings}
        assert set(re.findall(r"(--[a-z-]+)", rest)) <= known, (command, rest)
    assert "--junitxml=chatconform-junit.xml" in (ROOT / "docs" / "ci.md").read_text()


# -- 11. help for every option --------------------------------------------------------------------------

def test_every_option_has_help_and_the_description_says_what_it_does():
    import argparse

    from chatconform.cli import _parser

    parser = _parser()
    assert "conformance checks" in parser.description
    for action in parser._subparsers._group_actions:
        for name, sub in action.choices.items():
            for option in sub._actions:
                assert option.help and option.help != argparse.SUPPRESS, (name, option.dest)
    docs = (ROOT / "README.md").read_text() + "".join(p.read_text() for p in (ROOT / "docs" / "contracts").glob("*.md"))
    for words in ("max_tokens", "UUID_NIL", "LIMIT window", "--fail-on-failure", "created_at"):
        assert words in docs, words


def test_markdown_summary_has_one_payload_table_per_provider_with_a_column_per_library():
    from chatconform.outputs.report import Report
    from chatconform.outputs.reporters.markdown import markdown

    def search(impl, provider, failures=(), evaluated=("payload.nothing_lost", "payload.tool_pairing")):
        return {"type": "search", "implementation": impl, "contract": "payload", "variant": provider,
                "result": {"failures": [{"check": c, "message": m, "case": {}, "level": level}
                                        for c, m, level in failures],
                           "examples": 10, "unjudged": 0, "evaluated": {c: 10 for c in evaluated}}}

    header = {"type": "header", "version": "1", "profile": "ci", "implementations": {
        "lib-a": {"expected_failures": {"payload.tool_pairing": "why"}}, "lib-b": {}}}
    report = Report(header, [], {"counts": {}}, [
        search("lib-a", "anthropic", [("payload.tool_pairing", "A9 at $.messages[2]: ids without results", "error")]),
        search("lib-b", "anthropic", [("payload.nothing_lost", "an image is missing", "error")]),
        search("lib-a", "openai-chat", [("payload.tool_pairing", "reused id", "warning")]),
    ])
    text = markdown(report)
    anthropic = text[text.index("#### `anthropic`"):text.index("#### `openai-chat`")]
    assert "| check | lib-a | lib-b |" in anthropic
    assert "| `payload.tool_pairing` | xfail | pass |" in anthropic
    assert "| `payload.nothing_lost` | pass | **fail** |" in anthropic
    assert "lib-a · `payload.tool_pairing` (xfail): A9 at $.messages[2]" in anthropic
    openai = text[text.index("#### `openai-chat`"):]
    assert "| check | lib-a |" in openai and "| `payload.tool_pairing` | warn |" in openai
    assert "reused id" not in openai  # a warning is in the findings below, not a deviation here
    assert "provider by provider" not in markdown(Report(header, [], {"counts": {}}, []))


def test_the_per_provider_tables_list_the_checks_in_the_contracts_order_whatever_order_a_search_gives():
    from chatconform.outputs.report import Report, provider_matrix

    header = {"type": "header", "version": "1", "profile": "ci", "implementations": {"lib": {}}}
    ordered = ["payload.no_crash", "payload.schema_valid", "payload.tool_pairing", "payload.nothing_lost"]
    results = [{"type": "result", "implementation": "lib", "contract": "payload", "check": c, "status": "pass"}
               for c in ordered]
    # a search's evaluated checks come as a set made them: in no fixed order
    shuffled = [ordered[2], ordered[0], ordered[3], ordered[1]]
    search = {"type": "search", "implementation": "lib", "contract": "payload", "variant": "glm",
              "result": {"failures": [], "examples": 5, "unjudged": 0, "evaluated": {c: 5 for c in shuffled}}}
    (table,) = provider_matrix(Report(header, results, {"counts": {}}, [search]))
    assert table.checks == ordered
