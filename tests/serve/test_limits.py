"""The limits a real provider has: a body over its size cap answered as the provider answers
it, a page in a browser (Origin) or another site's name (Host) refused unless allowed, NaN
and Infinity rejected as the JSON they are not, and a report that cannot be written failing
the command. Each is a console line and a report line."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

httpx = pytest.importorskip("httpx", reason="the serve tests post with httpx (a dependency of the SDK extras)")
pytest.importorskip("starlette", reason="chatconform serve needs the serve extra (starlette, uvicorn)")

from chatconform.serve import start  # noqa: E402

pytestmark = pytest.mark.serve

BODY = {"model": "claude-sonnet-4-5", "max_tokens": 16, "messages": [{"role": "user", "content": "Hi (limits)"}]}


@pytest.fixture
def reported(tmp_path):
    path = tmp_path / "serve.jsonl"
    endpoint = start(report=path, version="test", allow_origins=["http://localhost:3000"])
    yield endpoint, path
    endpoint.stop()


def _lines(endpoint, path) -> list[dict]:
    endpoint.stop()
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_body_over_the_providers_cap_gets_its_answer(reported, capfd):
    endpoint, path = reported
    filler = "x" * (32 * 2**20)  # Anthropic's documented cap is 32 MB
    big = {**BODY, "messages": [{"role": "user", "content": filler}]}
    response = httpx.post(endpoint.root + "/v1/messages", json=big, timeout=60)
    assert response.status_code == 413
    assert response.json() == {"type": "error", "error": {"type": "request_too_large",
                                                          "message": "Request exceeds the maximum allowed number "
                                                                     "of bytes."}}
    gemini = httpx.post(endpoint.root + "/v1beta/models/gemini-2.5-flash:generateContent", timeout=60,
                        json={"contents": [{"role": "user", "parts": [{"text": filler[:21 * 2**20]}]}]})
    assert gemini.status_code == 400
    assert gemini.json()["error"]["message"] == "Request payload size exceeds the limit: 20971520 bytes."
    assert "over anthropic's cap of 33554432: answered 413" in capfd.readouterr().err
    lines = _lines(endpoint, path)
    requests = [r for r in lines if r["type"] == "request"]
    assert [(r["served"], r["status"], r["body"]) for r in requests] == [("too large", 413, None),
                                                                         ("too large", 400, None)]
    size = next(r for r in lines if r.get("check") == "serve.size" and r["implementation"] == "anthropic")
    assert size["status"] == "fail" and "POST /v1/messages (1)" in size["message"]


def test_a_page_in_a_browser_is_refused_unless_allowed(reported, capfd):
    endpoint, path = reported
    foreign = httpx.post(endpoint.root + "/v1/messages", json=BODY, headers={"origin": "https://example.com"},
                         timeout=10)
    assert foreign.status_code == 403
    assert "--allow-origin https://example.com" in foreign.json()["error"]["message"]
    rebound = httpx.post(endpoint.root + "/v1/chat/completions", json={"messages": []},
                         headers={"host": "attacker.example:8400"}, timeout=10)
    assert rebound.status_code == 403 and "not this machine" in rebound.json()["error"]["message"]
    allowed = httpx.post(endpoint.root + "/v1/messages", json=BODY, headers={"origin": "http://localhost:3000"},
                         timeout=10)
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "http://localhost:3000"
    err = capfd.readouterr().err
    assert "POST /v1/messages refused (403): it comes from a page of 'https://example.com'" in err
    lines = _lines(endpoint, path)
    assert [(r["served"], r["status"]) for r in lines if r["type"] == "request"] == [
        ("refused", 403), ("refused", 403), ("judged", 200)]
    origin = next(r for r in lines if r.get("check") == "serve.origin" and r["implementation"] == "anthropic")
    assert origin["status"] == "warn" and "POST /v1/messages (1)" in origin["message"]


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_json(reported, constant):
    endpoint, _ = reported
    raw = '{"model": "m", "temperature": ' + constant + ', "messages": [{"role": "user", "content": "Hi"}]}'
    response = httpx.post(endpoint.root + "/v1/chat/completions", content=raw, timeout=10)
    assert response.status_code == 400
    assert f"{constant.lstrip('-')} is not a JSON value" in response.json()["error"]["message"]
    assert [p.rule for p in endpoint.verdicts[-1].problems] == ["O0"]


def test_a_report_that_cannot_be_written_fails_the_command(tmp_path):
    folder = tmp_path / "reports"
    folder.mkdir()
    process = subprocess.Popen([sys.executable, "-m", "chatconform", "serve", "--port", "0", "--report",
                                str(folder / "serve.jsonl")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env={**os.environ, "COLUMNS": "400"})
    try:
        root = process.stdout.readline().split("listening on ")[1].split()[0]
        body = {"model": "m", "messages": [{"role": "user", "content": "Hi (unwritten)"}]}
        assert httpx.post(root + "/v1/chat/completions", json=body, timeout=10).status_code == 200
        for _ in range(100):  # the writer's rewrite after the request, done before the folder goes
            if (folder / "serve.jsonl").exists():
                break
            time.sleep(0.05)
        time.sleep(0.3)
        shutil.rmtree(folder)  # the report's folder is gone: the last write fails
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=20)
    assert process.returncode == 2, (out, err)
    assert "stopped by the server: 1 requests judged" in out and "report:" not in out
    assert err.strip().splitlines()[-1].startswith(f"error: cannot write the report {folder / 'serve.jsonl'}")
