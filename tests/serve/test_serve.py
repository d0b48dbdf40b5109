"""``chatconform serve`` without an SDK: scripts and their one-line errors, drawn replies that a
seed replays, the report that summary and diff read, the pytest fixture, and the command."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

httpx = pytest.importorskip("httpx", reason="the serve tests post with httpx (a dependency of the SDK extras)")
pytest.importorskip("starlette", reason="chatconform serve needs the serve extra (starlette, uvicorn)")

from chatconform.cli import main  # noqa: E402
from chatconform.errors import ConfigError  # noqa: E402
from chatconform.serve import start  # noqa: E402
from chatconform.serve.replies import Replies, Reply, load_script, parse_entries  # noqa: E402

pytestmark = pytest.mark.serve


def chat(root: str, text: str, route: str = "/v1/chat/completions", **extra) -> httpx.Response:
    return httpx.post(root + route, json={"model": "m", "messages": [{"role": "user", "content": text}], **extra},
                      timeout=10)


# -- scripts ---------------------------------------------------------------------------------------

def test_a_script_entry_reads_as_a_reply():
    calls, plain, empty, cut = parse_entries([
        {"tool_calls": [{"name": "f", "arguments": {"a": 1}}, {"name": "f", "id": "call_1"}]},
        "plain text", {"text": ""}, {"cut_stream_after": 2, "delay": 0.5}])
    assert calls.text is None and [(c.name, c.arguments, c.id) for c in calls.tool_calls] == [
        ("f", {"a": 1}, None), ("f", {}, "call_1")]
    assert plain == Reply(text="plain text") and empty.text == ""
    assert cut.text == "OK" and cut.cut_stream_after == 2 and cut.delay == 0.5


@pytest.mark.parametrize(("entry", "error"), [
    ({"txt": "hi"}, "entry 2: unknown field 'txt'"),
    ({"tool_calls": [{"arguments": {}}]}, "entry 2: field tool_calls[0].name: expected the tool's name"),
    ({"tool_calls": [{"name": "f", "arguments": "[]"}]}, "entry 2: field tool_calls[0].arguments: expected an object"),
    ({"status": 200}, "entry 2: field status: expected an HTTP error status from 400 to 599"),
    ({"cut_stream_after": -1}, "entry 2: field cut_stream_after"),
    ({"delay": "soon"}, "entry 2: field delay"),
    (3, "entry 2: expected an object (or a string"),
])
def test_a_bad_entry_is_named(tmp_path, entry, error):
    path = tmp_path / "script.json"
    path.write_text(json.dumps([{"text": "fine"}, entry]))
    with pytest.raises(ConfigError, match=f"^{path}: ") as caught:
        load_script(path)
    assert error in str(caught.value)


def test_json_lines_scripts_name_the_line(tmp_path):
    path = tmp_path / "script.jsonl"
    path.write_text('{"text": "one"}\n\n{"text": 2}\n')
    with pytest.raises(ConfigError, match=rf"^{path}:3: entry 2: field text: expected a string$"):
        load_script(path)
    path.write_text('{"text": "one"}\n{"text": \n')
    with pytest.raises(ConfigError, match=rf"^{path}:2:\d+: not JSON"):
        load_script(path)
    path.write_text('{"text": "one"}\n{"text": "two"}\n')
    assert [r.text for r in load_script(path)[""]] == ["one", "two"]


def test_the_command_refuses_a_bad_script_in_one_line(tmp_path, capsys):
    path = tmp_path / "script.json"
    path.write_text('[{"tool_calls": {}}]')
    assert main(["serve", "--script", str(path), "--port", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {path}: entry 1: field tool_calls: expected a list of calls"]
    with pytest.raises(SystemExit) as stopped:
        main(["serve", "--port", "70000"])
    assert stopped.value.code == 2


# -- drawn replies -------------------------------------------------------------------------------

def test_drawn_replies_replay_from_the_seed():
    def draws(seed: int) -> list[Reply]:
        replies = Replies(generate=True, seed=seed)
        return [replies.next("", conversation, turn, ["get_weather", "search"])
                for conversation in ("a", "b") for turn in range(1, 6)]

    first = draws(7)
    assert draws(7) == first
    assert draws(8) != first
    assert any(r.tool_calls for r in first)
    assert {c.name for r in first for c in r.tool_calls} <= {"get_weather", "search"}


def test_the_script_comes_first_then_drawn_replies():
    replies = Replies(parse_entries(["scripted"]), generate=True, seed=1)
    assert replies.next("", "c", 1, []).text == "scripted"
    assert not replies.next("", "c", 2, []).tool_calls  # no tool declared: no call drawn


# -- the report ----------------------------------------------------------------------------------

def test_the_report_reads_in_summary_and_diff(tmp_path, capsys):
    clean, broken = tmp_path / "clean.jsonl", tmp_path / "broken.jsonl"
    for path, second_system in ((clean, False), (broken, True)):
        endpoint = start(report=path, version="test")
        try:
            messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
            if second_system:
                messages.append({"role": "system", "content": "A summary."})
            for _ in range(2):
                response = httpx.post(endpoint.base_url("qwen-vllm") + "/chat/completions",
                                      json={"model": "qwen", "messages": messages}, timeout=10)
            assert response.status_code == (400 if second_system else 200)
            assert chat(endpoint.root, "Hello").json()["choices"][0]["message"]["content"] == "OK"
        finally:
            endpoint.stop()
    lines = [json.loads(line) for line in broken.read_text().splitlines()]
    assert lines[0]["type"] == "header" and lines[-1]["type"] == "footer"
    requests = [line for line in lines if line["type"] == "request"]
    assert [(r["provider"], r["turn"], r["again"], r["status"]) for r in requests] == [
        ("qwen-vllm", 1, False, 400), ("qwen-vllm", 1, True, 400), ("openai-chat", 1, False, 200)]
    assert requests[0]["problems"][0]["rule"] == "Q3"
    results = {(r["implementation"], r["check"]): r for r in lines if r["type"] == "result"}
    assert results[("qwen-vllm", "serve.Q3")]["status"] == "fail"
    assert "System message must be at the beginning." in results[("qwen-vllm", "serve.Q3")]["message"]
    assert results[("qwen-vllm", "serve.schema")]["status"] == "pass"
    assert results[("openai-chat", "serve.O8")]["status"] == "pass"

    capsys.readouterr()
    assert main(["summary", str(broken), "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["matrix"]["qwen-vllm"]["serve.Q3"] == "fail"
    assert main(["summary", str(broken), "--format", "markdown"]) == 0
    assert "serve.Q3" in capsys.readouterr().out
    assert main(["diff", str(clean), str(broken)]) == 1
    assert "regressed   serve.Q3  qwen-vllm: pass -> fail" in capsys.readouterr().out


def test_a_rewrite_keeps_the_lines_made_before_and_adds_the_new_ones(tmp_path, monkeypatch):
    from chatconform.serve import log as serve_report

    monkeypatch.setattr(serve_report, "_CHUNK", 300)  # a chunk full after a line or two
    log = serve_report.ServeLog(tmp_path / "serve.jsonl", version="test")
    log._writer = object()  # no writer thread: each rewrite is this test's flush()

    def verdict(number: int) -> serve_report.Verdict:
        body = {"model": "m", "messages": [{"role": "user", "content": f"question {number} " + "é" * 50}]}
        return serve_report.Verdict(number, "openai-chat", "/v1/chat/completions", "m", False, "c", number, (),
                                    200, "text", body)

    seen = []
    for batch in ((1, 2), (3,), (), (4, 5, 6)):
        for number in batch:
            log.add(verdict(number))
        log.flush()
        lines = [json.loads(line) for line in log.path.read_text(encoding="utf-8").splitlines()]
        seen.append([line["number"] for line in lines if line["type"] == "request"])
        assert lines[-1] == {**lines[-1], "type": "footer", "requests": len(seen[-1])}
        assert [line["body"] for line in lines if line["type"] == "request"] == [
            verdict(n).body for n in seen[-1]]
    assert seen == [[1, 2], [1, 2, 3], [1, 2, 3], [1, 2, 3, 4, 5, 6]]
    assert len(log._chunks) > 1


def test_a_warning_is_recorded_and_the_request_answered():
    endpoint = start(version="test")
    try:
        body = {"model": "claude-sonnet-4-5", "max_tokens": 16, "messages": [
            {"role": "user", "content": "One (warned)"}, {"role": "user", "content": "Two"}]}
        response = httpx.post(endpoint.root + "/v1/messages", json=body, timeout=10)
        assert response.status_code == 200 and response.json()["content"] == [{"type": "text", "text": "OK"}]
        [verdict] = endpoint.verdicts
        assert [(p.rule, p.severity) for p in verdict.problems] == [("A4", "warning")] and not verdict.rejected
    finally:
        endpoint.stop()


def test_a_body_that_is_not_json_is_judged_and_rejected():
    endpoint = start(version="test")
    try:
        response = httpx.post(endpoint.root + "/v1/chat/completions", content=b"{nope", timeout=10)
        assert response.status_code == 400
        assert response.json()["error"]["message"].startswith("The request body is not JSON")
        assert [p.rule for p in endpoint.verdicts[0].problems] == ["O0"]
    finally:
        endpoint.stop()


#: Every route and the provider whose rules judge it.
ROUTES = [("/v1/chat/completions", "openai-chat"), ("/qwen-vllm/v1/chat/completions", "qwen-vllm"),
          ("/glm/v1/chat/completions", "glm"), ("/glm/api/paas/v4/chat/completions", "glm"),
          ("/mistral/v1/chat/completions", "mistral"), ("/v1/messages", "anthropic"),
          ("/v1beta/models/gemini-2.5-flash:generateContent", "gemini"),
          ("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", "gemini"),
          ("/model/amazon.nova-lite-v1:0/converse", "bedrock-converse"),
          ("/model/amazon.nova-lite-v1:0/converse-stream", "bedrock-converse")]


@pytest.fixture(scope="module")
def endpoint():
    endpoint = start(version="test")
    yield endpoint
    endpoint.stop()


@pytest.mark.parametrize(("route", "provider"), ROUTES)
@pytest.mark.parametrize(("body", "kind"), [(b"[1, 2]", "an array"), (b'"hello"', "a string"), (b"null", "null")])
def test_a_json_body_that_is_not_an_object_is_rejected(endpoint, route, provider, body, kind):
    from chatconform.providers import get_provider

    response = httpx.post(endpoint.root + route, content=body, timeout=10)
    assert response.status_code == 400
    answer = response.json()  # Bedrock's error is {"message"}, every other provider's {"error": {"message"}}
    message = answer["message"] if provider == "bedrock-converse" else answer["error"]["message"]
    assert message == f"The request body is not a JSON object: it is {kind}."
    verdict = endpoint.verdicts[-1]
    assert (verdict.provider, verdict.status, [p.rule for p in verdict.problems]) == (
        provider, 400, [get_provider(provider).generic_rule])


# -- the fixture and the command -----------------------------------------------------------------

def test_the_pytest_fixture(chatconform_endpoint):
    chatconform_endpoint.script([{"tool_calls": [{"name": "lookup", "arguments": {"q": "x"}}]}])
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]
    reply = chat(chatconform_endpoint.root, "Fixture", tools=tools).json()
    assert reply["choices"][0]["finish_reason"] == "tool_calls"
    assert chat(chatconform_endpoint.root, "Again", route="/glm/v1/chat/completions", tools=tools).status_code == 200
    assert [(v.provider, v.turn) for v in chatconform_endpoint.verdicts] == [("openai-chat", 1), ("glm", 1)]
    assert chatconform_endpoint.base_url("mistral") == chatconform_endpoint.root + "/mistral/v1"


def test_the_command_starts_quickly_and_stops_on_sigterm(tmp_path):
    report = tmp_path / "serve.jsonl"
    began = time.monotonic()
    process = subprocess.Popen([sys.executable, "-m", "chatconform", "serve", "--port", "0", "--report", str(report)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "COLUMNS": "400"})
    try:
        line = process.stdout.readline()
        listening = time.monotonic() - began
        assert "listening on http://127.0.0.1:" in line, line + process.stderr.read()
        root = line.split("listening on ")[1].split()[0]
        assert chat(root, "Hello (command)").status_code == 200
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=20)
    assert process.returncode == 0, err
    assert "stopped by SIGTERM: 1 requests judged, 0 rejected, 0 with warnings" in out
    types = [json.loads(x)["type"] for x in report.read_text().splitlines()]
    assert types[:2] == ["header", "request"] and types[-1] == "footer" and "result" in types
    assert listening < 4, f"serve took {listening:.1f} s to listen (the aim is under 2 on an idle machine)"


def test_a_body_with_a_lone_surrogate_is_judged_and_reported(tmp_path):
    path = tmp_path / "serve.jsonl"
    endpoint = start(report=path, version="test")
    try:
        body = '{"model": "m", "messages": [{"role": "user", "content": "half a pair \\ud800 (u1)"}]}'
        response = httpx.post(endpoint.root + "/v1/chat/completions", content=body,
                              headers={"content-type": "application/json"}, timeout=10)
        assert response.status_code == 200
    finally:
        endpoint.stop()
    lines = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    (request,) = [line for line in lines if line["type"] == "request"]
    assert request["body"]["messages"][0]["content"] == "half a pair \ud800 (u1)"
    assert lines[-1]["type"] == "footer"


def test_a_miss_and_a_canned_answer_are_report_lines(tmp_path, capsys):
    path = tmp_path / "serve.jsonl"
    endpoint = start(report=path, version="test")
    try:
        assert httpx.get(endpoint.root + "/v1/models", timeout=10).status_code == 200
        missed = httpx.post(endpoint.root + "/v1/audio/speech", json={}, timeout=10)
        assert missed.status_code == 404 and "does not serve POST /v1/audio/speech" in missed.json()["error"]["message"]
        assert chat(endpoint.root, "Hello (routes)").status_code == 200
    finally:
        endpoint.stop()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    served = [(r["method"], r["route"], r["served"]) for r in lines if r["type"] == "request"]
    assert served == [("GET", "/v1/models", "not judged"), ("POST", "/v1/audio/speech", "no route"),
                      ("POST", "/v1/chat/completions", "judged")]
    route = next(r for r in lines if r["type"] == "result" and r["check"] == "serve.route")
    assert route["status"] == "warn" and "POST /v1/audio/speech (1)" in route["message"]
    assert "1 requests judged; answered but not judged: GET /v1/models (1)" in route["message"]
    schema = next(r for r in lines if r["type"] == "result" and r["check"] == "serve.schema")
    assert schema["message"] == "held on 1 requests"  # the canned and missed requests are not judged
    capsys.readouterr()
    assert main(["summary", str(path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["matrix"]["openai-chat"]["serve.route"] == "warn"
