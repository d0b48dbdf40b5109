"""Files read back (saved failures, reports, recorded bodies) are data: replaying, summarising
or comparing them runs nothing they name, and a damaged or forged file is one line, exit 2."""

import json
from pathlib import Path

import pytest

from chatconform.cli import main

CASE = [{"id": "a", "created_at": "2026-01-01T00:00:00"}]
DEEP = "[" * 100_000 + "]" * 100_000
HUGE = "9" * 5000


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def run(*args):
    return main([str(a) for a in args])


def one_line_error(capsys, *names: str) -> str:
    """The single stderr line of a command that failed cleanly, holding every one of ``names``."""
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    for name in names:
        assert name in err, (name, err)
    return err


def saved(path: Path, implementation="reference", **fields) -> Path:
    record = {"implementation": implementation, "check": "thread.reaches_root", "case": CASE} | fields
    path.write_text(json.dumps(record))
    return path


def lines_text(lines: list) -> str:
    return "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)


HEADER = {"type": "header", "suite": "chatconform", "version": "1", "profile": "ci",
          "implementations": {"reference": {"spec": "reference"}}}


def result(check="thread.reaches_root", status="pass", **fields):
    return {"type": "result", "implementation": "reference", "contract": "thread", "check": check,
            "status": status, "message": "", "examples": 10, "evaluated": 10} | fields


def footer(counts=None):
    return {"type": "footer", "counts": {"pass": 2} if counts is None else counts, "seconds": 1.0}


def report(path: Path, *lines) -> Path:
    """A report with a header, these lines (default: two passing results) and a footer."""
    body = list(lines) if lines else [result(), result("thread.no_crash")]
    path.write_text(lines_text([HEADER, *body, footer()]))
    return path


# -- replay runs only what the command line names ---------------------------------------------------

@pytest.mark.parametrize("spec", ["exec:touch {tmp}/pwned", "../x.py:X", "os:getpid", "pathlib:Path"])
def test_replay_runs_nothing_a_saved_case_names(spec, tmp_path, capsys):
    (tmp_path / "x.py").write_text(f"open({str(tmp_path / 'pwned')!r}, 'w').close()\nX = object\n")
    (tmp_path / "cases").mkdir()
    case = saved(tmp_path / "cases" / "c.json", spec.format(tmp=tmp_path))
    assert run("replay", case) == 2
    err = one_line_error(capsys, str(case), spec.format(tmp=tmp_path), "--impl")
    assert "Traceback" not in err
    assert not (tmp_path / "pwned").exists()
    assert run("replay", case, "--impl", "reference") == 0
    assert "now holds for reference" in capsys.readouterr().out
    assert not (tmp_path / "pwned").exists()


def test_replay_of_a_case_saved_for_the_reference_needs_no_impl(tmp_path, capsys):
    assert run("replay", saved(tmp_path / "c.json")) == 0
    assert "now holds for reference" in capsys.readouterr().out


def test_replay_checks_every_file_before_running_any(tmp_path, capsys):
    (tmp_path / "cases").mkdir()
    saved(tmp_path / "cases" / "a.json")
    saved(tmp_path / "cases" / "b.json", "exec:touch pwned")
    assert run("replay", tmp_path / "cases") == 2
    one_line_error(capsys, "b.json", "--impl")
    assert capsys.readouterr().out == ""


# -- a damaged saved failure --------------------------------------------------------------------------

@pytest.mark.parametrize("text, field", [
    (json.dumps({"implementation": "reference", "check": ["thread.reaches_root"], "case": CASE}), "check"),
    (json.dumps({"implementation": "reference", "check": "thread.reaches_root", "case": CASE,
                 "variant": {"a": 1}}), "variant"),
    (json.dumps({"implementation": ["reference"], "check": "thread.reaches_root", "case": CASE}),
     "implementation"),
    (json.dumps({"implementation": "reference", "case": CASE}), "check"),
    ('{"implementation": "reference", "check": "thread.reaches_root", "case": ' + DEEP + "}", "nested"),
    ('{"implementation": "reference", "check": "thread.reaches_root", "case": ' + HUGE + "}", "digits"),
    ('{"implementation": "reference", "check": "thread.reach', "not JSON"),
    ('{"implementation": "reference",\n "case": [],\n "check": 3}', "c.json:3: field check"),
    ("[1, 2]", "expected an object"),
])
def test_a_damaged_saved_failure_is_one_line(text, field, tmp_path, capsys):
    (tmp_path / "c.json").write_text(text)
    assert run("replay", "c.json") == 2
    one_line_error(capsys, "c.json:", field)


def test_a_saved_failure_that_is_not_utf8_names_the_line(tmp_path, capsys):
    (tmp_path / "c.json").write_bytes(b'{"implementation": "reference",\n "check": "\xff"}')
    assert run("replay", "c.json") == 2
    one_line_error(capsys, "c.json:2", "UTF-8")


# -- a damaged report ---------------------------------------------------------------------------------

DAMAGED_REPORTS = {
    "implementation a list": ([result(implementation=["reference"])], 2, "implementation"),
    "implementation an object": ([result(implementation={"a": 1})], 2, "implementation"),
    "check a number": ([result(check=7)], 2, "check"),
    "check null": ([result(check=None)], 2, "check"),
    "status unknown": ([result(status="green")], 2, "status"),
    "examples a string": ([result(examples="10")], 2, "examples"),
    "deep nesting": (['{"type": "result", "example": ' + DEEP + "}"], 2, "nested"),
    "a huge integer": (['{"type": "result", "examples": ' + HUGE + "}"], 2, "digits"),
    "not JSON": (['{"type": "result", "check": '], 2, "not JSON"),
    "a lone surrogate": ([result(check="\ud800")], 2, "check"),
    "a result given twice": ([result(), result("thread.no_crash"), result(status="fail")], 4,
                             "a second result for thread.reaches_root of reference (the first is on line 2)"),
}


@pytest.mark.parametrize("name", list(DAMAGED_REPORTS))
@pytest.mark.parametrize("command", ["summary", "diff-old", "diff-new"])
def test_a_damaged_report_is_one_line_naming_file_line_and_field(name, command, tmp_path, capsys):
    lines, number, field = DAMAGED_REPORTS[name]
    bad = report(tmp_path / "bad.jsonl", *lines)
    good = report(tmp_path / "good.jsonl")
    args = {"summary": ["summary", bad], "diff-old": ["diff", bad, good], "diff-new": ["diff", good, bad]}[command]
    assert run(*args) == 2
    one_line_error(capsys, f"bad.jsonl:{number}", field)


@pytest.mark.parametrize("footer_line, field", [
    ({"type": "footer", "counts": {"pass": "2"}}, "counts.pass"),
    ({"type": "footer", "counts": [2]}, "counts"),
    ({"type": "footer"}, "counts"),
    ({"type": "footer", "counts": {}, "interrupted": 2}, "interrupted"),
    ({"type": "footer", "counts": {}, "interrupted": "SIGINT", "searched": -1}, "searched"),
])
def test_a_damaged_footer_is_one_line(footer_line, field, tmp_path, capsys):
    (tmp_path / "r.jsonl").write_text(lines_text([HEADER, result(), footer_line]))
    assert run("summary", "r.jsonl") == 2
    one_line_error(capsys, "r.jsonl:3", field)


def test_a_damaged_shard_header_is_one_line(tmp_path, capsys):
    head = HEADER | {"shard": {"index": "1", "count": 2, "run": "x", "units": [], "planned": []}}
    (tmp_path / "r.jsonl").write_text(lines_text([head, result(), footer()]))
    assert run("summary", "r.jsonl") == 2
    one_line_error(capsys, "r.jsonl:1", "shard.index")


def test_bad_utf8_and_truncated_reports_are_one_line(tmp_path, capsys):
    text = report(tmp_path / "r.jsonl").read_text()
    (tmp_path / "bytes.jsonl").write_bytes(text.encode().replace(b"thread.no_crash", b"thread.\xff"))
    assert run("summary", "bytes.jsonl") == 2
    one_line_error(capsys, "bytes.jsonl:3", "UTF-8")
    (tmp_path / "cut.jsonl").write_text(text[: text.rindex('{"type": "footer"')])
    assert run("summary", "cut.jsonl") == 2
    one_line_error(capsys, "cut.jsonl:3", "truncated")
    (tmp_path / "mid.jsonl").write_text(text[: text.rindex('"counts"')])
    assert run("diff", "r.jsonl", "mid.jsonl") == 2
    one_line_error(capsys, "mid.jsonl:4", "not JSON")


# -- summary recounts, diff misses nothing --------------------------------------------------------------

def test_summary_recounts_a_forged_footer(tmp_path, capsys):
    (tmp_path / "r.jsonl").write_text(lines_text([HEADER, result(status="fail"), result("thread.no_crash"),
                                                  footer({"pass": 9})]))
    assert run("summary", "r.jsonl") == 0
    out = capsys.readouterr().out
    assert "1 pass, 1 fail" in out and "9 pass" not in out
    assert run("summary", "r.jsonl", "--format", "json") == 0
    assert json.loads(capsys.readouterr().out)["counts"] | {} == {
        "pass": 1, "fail": 1, "warn": 0, "not_evaluated": 0, "error": 0, "skip": 0, "xfail": 0}
    assert run("summary", "r.jsonl", "--format", "markdown") == 0
    out = capsys.readouterr().out
    assert "1 pass, 1 fail" in out and "9 pass" not in out


def test_diff_to_a_report_without_its_checks_is_a_regression(tmp_path, capsys):
    report(tmp_path / "old.jsonl")
    (tmp_path / "empty.jsonl").write_text(lines_text([HEADER, footer({})]))
    assert run("diff", "old.jsonl", "empty.jsonl") == 1
    out = capsys.readouterr().out
    assert out.count("disappeared") == 2 and "--allow-missing" in out
    assert run("diff", "old.jsonl", "empty.jsonl", "--allow-missing") == 0
    assert run("diff", "old.jsonl", "old.jsonl") == 0


# -- validate -------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, message", [
    ('{"model": "m", "messages": ' + DEEP + "}\n", "nested"),
    ('{"model": "m", "messages": [],\n "max_tokens": ' + HUGE + "}\n", "digits"),
])
def test_validate_on_absurd_json_is_one_line(text, message, tmp_path, capsys):
    (tmp_path / "body.json").write_text(text)
    assert run("validate", "body.json", "--provider", "openai-chat") == 2
    one_line_error(capsys, "body.json:", message)


@pytest.mark.parametrize("number, path, said", [
    ("NaN", "$.temperature", "NaN is not JSON"), ("Infinity", "$.temperature", "Infinity"),
    ("-Infinity", "$.temperature", "Infinity"), ("1e999999", "$.temperature", "past a double's range"),
])
def test_validate_calls_nan_and_infinity_the_schema_error_a_provider_answers(number, path, said, tmp_path, capsys):
    body = '{"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": ' + number + "}\n"
    (tmp_path / "body.json").write_text(body)
    assert run("validate", "body.json", "--provider", "openai-chat", "--format", "json") == 1
    problems = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    number_problems = [p for p in problems if p["rule"] == "json-number"]
    assert len(number_problems) == 1, problems
    assert number_problems[0]["path"] == path and number_problems[0]["severity"] == "error"
    assert said in number_problems[0]["message"] and "RFC 8259" in number_problems[0]["message"]
    assert "could not parse the JSON body" in number_problems[0]["message"]


def test_the_re_run_hint_names_the_impl_replay_will_not_load_by_itself():
    from chatconform.outputs.repro import replay_command

    assert replay_command("f.json", "reference") == "chatconform replay f.json"
    assert replay_command("f.json", "exec:prog --x") == "chatconform replay f.json --impl 'exec:prog --x'"


# -- files that are not regular files, or too large ----------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
#: Each command that reads a file named on its command line, with FILE where the file goes.
READERS = {
    "summary": ["summary", "FILE"],
    "diff": ["diff", "FILE", "FILE"],
    "replay": ["replay", "FILE", "--impl", "reference"],
    "validate": ["validate", "FILE", "--provider", "openai-chat"],
    "serve": ["serve", "--script", "FILE", "--port", "0"],
}


def _special(kind: str, folder: Path) -> Path:
    import os

    path = folder / "input.json"
    if kind == "fifo":
        os.mkfifo(path)  # no writer: an open without O_NONBLOCK would wait for ever
    else:
        path.symlink_to(os.devnull if kind == "null-device" else "/dev/zero")
    return path


@pytest.mark.parametrize("kind", ["zero-device", "fifo", "null-device"])
@pytest.mark.parametrize("command", list(READERS))
def test_a_device_or_fifo_named_as_input_is_refused_in_one_line(command, kind, tmp_path):
    """In a process of its own, with a memory cap and a timeout: reading /dev/zero until
    MemoryError, or waiting on the FIFO, would otherwise show as this test's failure."""
    import os
    import resource
    import subprocess
    import sys

    path = _special(kind, tmp_path)
    argv = [str(path) if arg == "FILE" else arg for arg in READERS[command]]

    def capped() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))

    done = subprocess.run([sys.executable, "-m", "chatconform", *argv], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, preexec_fn=capped, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(set(lines)) == 1, done.stderr  # diff names the one file twice: once for each side
    said = {"fifo": "is a FIFO", "zero-device": "is a device", "null-device": "is a device"}[kind]
    assert "input.json" in lines[0] and said in lines[0] and "not a regular file" in lines[0], lines[0]


def test_a_file_past_its_size_limit_names_the_limit_and_the_variable(tmp_path, monkeypatch):
    from chatconform.errors import ConfigError
    from chatconform.inputs import MAX_FILE_VARIABLE, read_input

    big = tmp_path / "r.jsonl"
    big.write_text("x" * 2000)
    with pytest.raises(ConfigError) as refused:
        read_input(big, "a chatconform report", limit=1000)
    message = str(refused.value)
    assert "\n" not in message and "1,000 bytes" in message and MAX_FILE_VARIABLE in message, message
    assert read_input(big, "a chatconform report", limit=2000) == "x" * 2000
    monkeypatch.setenv(MAX_FILE_VARIABLE, "0.001")  # raises a limit, never lowers it
    assert read_input(big, "a chatconform report") == "x" * 2000
    monkeypatch.setenv(MAX_FILE_VARIABLE, "lots")
    with pytest.raises(ConfigError, match=MAX_FILE_VARIABLE):
        read_input(big, "a chatconform report")


def test_validate_past_the_size_limit_is_one_line(tmp_path, capsys, monkeypatch):
    from chatconform import inputs

    monkeypatch.setitem(inputs.LIMITS_MIB, "request bodies", 0.0001)  # 104 bytes
    body = {"model": "m", "messages": [{"role": "user", "content": "x" * 200}]}
    (tmp_path / "body.json").write_text(json.dumps(body))
    assert run("validate", "body.json", "--provider", "openai-chat") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "body.json" in err and inputs.MAX_FILE_VARIABLE in err, err


def test_validate_of_stdin_past_the_size_limit_is_one_line(capsys, monkeypatch):
    """Standard input has the limit a file of bodies has: past it, one line naming it, exit 2."""
    import io
    import sys

    from chatconform import inputs

    monkeypatch.setitem(inputs.LIMITS_MIB, "request bodies", 0.0001)  # 104 bytes
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x"}]}) + "\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(body.encode() * 3)))
    assert run("validate", "-", "--provider", "openai-chat") == 2
    err = one_line_error(capsys, "<stdin>", inputs.MAX_FILE_VARIABLE, "104 bytes")
    assert "request bodies" in err
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(body.encode())))  # within it: read and judged
    assert run("validate", "-", "--provider", "openai-chat") == 0


def test_validate_of_an_endless_stdin_stops_at_the_limit(tmp_path):
    """``validate - < /dev/zero`` read zeros until MemoryError; now it stops at the limit. In
    a process of its own, with a memory cap and a timeout."""
    import os
    import resource
    import subprocess
    import sys

    def capped() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))

    with open("/dev/zero", "rb") as zeros:
        done = subprocess.run([sys.executable, "-m", "chatconform", "validate", "-", "--provider", "openai-chat"],
                              stdin=zeros, cwd=tmp_path, capture_output=True, text=True, timeout=120,
                              preexec_fn=capped, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "<stdin>" in lines[0] and "256.0 MiB" in lines[0], done.stderr
