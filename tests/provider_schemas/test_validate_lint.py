"""`chatconform validate` front end: exit codes, formats, JSON lines, stdin."""

from __future__ import annotations

import io
import itertools
import json

import pytest

from chatconform.provider_schemas import PROVIDER_IDS
from chatconform.provider_schemas.lint import read_bodies, run_validate

LATE_SYSTEM = '[{"role":"user","content":"hi"},{"role":"system","content":"late"}]'
CLEAN = '{"messages": [{"role": "user", "content": "hi"}]}'


def run(paths, provider, fmt="pretty", stdin=None):
    out, err = io.StringIO(), io.StringIO()
    code = run_validate(paths, provider, fmt, out, err, stdin=stdin)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def write(tmp_path):
    def write(name, text, encoding="utf-8"):
        path = tmp_path / name
        path.write_bytes(text.encode(encoding) if isinstance(text, str) else text)
        return str(path)

    return write


def test_late_system_on_qwen_exits_1(write):
    path = write("late.json", LATE_SYSTEM)
    code, out, err = run([path], "qwen-vllm")
    assert code == 1 and err == ""
    reading, first, summary = out.splitlines()
    assert reading == f"{path}: a JSON array of messages, read as one body's messages"
    assert first == f"{path}:1 Q3 $.messages[1].role  System message must be at the beginning."
    assert summary == "1 error, 0 warnings in 1 body from 1 file (qwen-vllm)"


def test_system_only_on_glm_exits_1_naming_z1(write):
    path = write("system-only.json", '{\n  "messages": [\n    {"role": "system", "content": "be brief"}\n  ]\n}\n')
    code, out, _ = run([path], "glm")
    assert code == 1
    assert (f"{path} Z1 $.messages  The messages parameter is illegal. Please check the documentation."
            in out.splitlines())


def test_clean_and_warning_only_bodies_exit_0(write):
    code, out, err = run([write("clean.json", CLEAN)], "openai-chat")
    assert (code, out, err) == (0, "0 errors, 0 warnings in 1 body from 1 file (openai-chat)\n", "")
    ends_on_model = '{"contents": [{"parts": [{"text": "hi"}]}, {"role": "model", "parts": [{"text": "yo"}]}]}'
    code, out, _ = run([write("g.json", ends_on_model)], "gemini")
    assert code == 0 and "G10 $.contents[1]  (warning) Please ensure" in out and "0 errors, 1 warning" in out


def test_truncated_file_exits_2_with_line_and_column(write):
    path = write("bad.json", '{\n  "messages": [\n    {"role": "user" "content": "hi"}\n  ]\n}\n')
    code, out, err = run([path], "openai-chat")
    assert code == 2
    assert err == f"{path}:3:21: Expecting ',' delimiter\n"
    assert "could not be read or parsed" in out
    cut = write("cut.json", '{\n  "messages": [\n    {"role": "user", "content": "hi"}')
    code, _, err = run([cut], "openai-chat")
    assert code == 2 and err.startswith(f"{cut}:3:")


def test_unknown_provider_exits_2_listing_the_ids(write):
    code, out, err = run([write("x.json", CLEAN)], "openai")
    assert code == 2 and out == ""
    assert "unknown provider 'openai'" in err
    assert all(provider in err for provider in PROVIDER_IDS)


def test_unknown_format_and_missing_file_exit_2(write, tmp_path):
    assert run([write("x.json", CLEAN)], "glm", fmt="xml")[0] == 2
    code, _, err = run([str(tmp_path / "missing.json")], "glm")
    assert code == 2 and "missing.json: no such file" in err
    code, out, err = run([str(tmp_path)], "glm")  # a folder: its files are read, x.json among them
    assert code == 0 and "in 1 body from 1 file (glm)" in out
    code, _, err = run([write("latin1.json", '{"messages": [{"role": "user", "content": "caf\xe9"}]}', "latin-1")],
                       "glm")
    assert code == 2 and "not UTF-8" in err
    code, _, err = run([write("empty.json", "\n\n")], "glm")
    assert code == 2 and "no JSON body" in err


def test_json_lines_bad_line_in_the_middle(write):
    lines = [CLEAN, LATE_SYSTEM, '{"messages": [{"role": "user",', "", '[{"role": "system", "content": "s"}]']
    path = write("log.jsonl", "\n".join(lines) + "\n")
    code, out, err = run([path], "qwen-vllm")
    assert code == 2
    assert err == f"{path}:3:31: Expecting property name enclosed in double quotes\n"
    reported = [line for line in out.splitlines() if "read as one body's messages" not in line]
    assert reported[0] == f"{path}:2 Q3 $.messages[1].role  System message must be at the beginning."
    assert reported[1] == f"{path}:5 Q2 $.messages  No user query found in messages."
    assert reported[2].startswith("2 errors, 0 warnings in 3 bodies from 1 file; 1 file could not be read or parsed")


def test_json_format_records(write):
    path = write("log.jsonl", CLEAN + "\n" + LATE_SYSTEM + "\n")
    code, out, _ = run([path], "qwen-vllm", fmt="json")
    assert code == 1
    (record,) = [json.loads(line) for line in out.splitlines()]
    assert record == {
        "file": path,
        "line": 2,
        "body": 1,
        "rule": "Q3",
        "path": "$.messages[1].role",
        "message": "System message must be at the beginning.",
        "severity": "error",
        "provider": "qwen-vllm",
        "source": "schema",
    }
    single = write("single.json", json.dumps(json.loads(LATE_SYSTEM), indent=2))
    (record,) = [json.loads(line) for line in run([single], "qwen-vllm", fmt="json")[1].splitlines()]
    assert record["line"] is None and record["body"] == 0


def test_stdin_dash(write):
    code, out, _ = run(["-"], "qwen-vllm", stdin=io.StringIO(LATE_SYSTEM + "\n"))
    assert code == 1 and out.startswith("<stdin>: a JSON array of messages, read as one body's messages\n"
                                        "<stdin>:1 Q3 $.messages[1].role  System message must be at the beginning.")
    code, out, _ = run(["-", write("ok.json", CLEAN)], "openai-chat", stdin=io.StringIO(CLEAN))
    assert code == 0 and "in 2 bodies from 2 files" in out


def test_not_a_body_is_one_problem(write):
    code, out, _ = run([write("n.jsonl", '42\n"text"\nnull\n')], "anthropic")
    assert code == 1
    assert [line.split()[1] for line in out.splitlines()[:3]] == ["A0", "A0", "A0"]


def test_json_lines_are_streamed():
    consumed = itertools.count()

    def lines():
        for _ in range(10**9):  # far more than memory could hold at once
            next(consumed)
            yield CLEAN + "\n"

    bodies = read_bodies(lines())
    assert [next(bodies).index for _ in range(3)] == [0, 1, 2]
    assert next(consumed) <= 4
