"""A serve finding says what to do: its rule's rationale, the body saved beside the report, the
``validate`` command that reproduces the verdict on it, and a regression test that, pasted into
a fresh test file, fails on that body with the provider's error and passes on a corrected one;
the summaries count requests and conversations."""

from __future__ import annotations

import html
import json
import re
import shlex
import subprocess
import sys

import pytest

httpx = pytest.importorskip("httpx", reason="the serve tests post with httpx (a dependency of the SDK extras)")
pytest.importorskip("starlette", reason="chatconform serve needs the serve extra (starlette, uvicorn)")
pytest.importorskip("jinja2", reason="the HTML summary needs Jinja2")

from chatconform.cli import main  # noqa: E402
from chatconform.serve import start  # noqa: E402

pytestmark = pytest.mark.serve

BROKEN = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi (findings)"},
          {"role": "system", "content": "A summary."}]
Q3_TEXT = "System message must be at the beginning."


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    path = tmp_path_factory.mktemp("serve") / "serve.jsonl"
    endpoint = start(report=path, version="test")
    try:
        qwen = endpoint.base_url("qwen-vllm") + "/chat/completions"
        for _ in range(2):  # the same body twice: two requests, one conversation
            assert httpx.post(qwen, json={"model": "qwen", "messages": BROKEN}, timeout=10).status_code == 400
        fine = {"model": "qwen", "messages": [{"role": "user", "content": "Hello (findings)"}]}
        assert httpx.post(qwen, json=fine, timeout=10).status_code == 200
    finally:
        endpoint.stop()
    return path


def test_the_body_is_saved_with_the_command_that_reproduces_the_verdict(report, capsys):
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    q3 = next(r for r in lines if r.get("check") == "serve.Q3")
    assert q3["status"] == "fail" and q3["why"].startswith("Q3, a system message only at index 0: qwen-vllm "
                                                           f'rejects the request with "{Q3_TEXT}"')
    saved = report.parent / "serve.bodies" / "request-1.json"
    assert saved.is_file() and q3["command"].endswith(f"--provider qwen-vllm {shlex.quote(q3['saved'])}")
    capsys.readouterr()
    assert main(["validate", "--provider", "qwen-vllm", str(saved)]) == 1
    assert Q3_TEXT in capsys.readouterr().out


def test_the_summaries_count_requests_and_conversations(report, capsys):
    counted = "3 requests judged in 2 conversations: 2 rejected (in 1 conversations), 0 with warnings (in 0)"
    for form in (["--format", "markdown"], []):
        capsys.readouterr()
        assert main(["summary", str(report), *form]) == 0
        assert counted in capsys.readouterr().out


def test_the_html_finding_has_the_rationale_and_a_regression_test_that_fails_then_passes(report, tmp_path,
                                                                                          capsys):
    capsys.readouterr()
    assert main(["summary", str(report), "--format", "html"]) == 0
    page = capsys.readouterr().out
    assert "does not know" not in page
    assert f'qwen-vllm rejects the request with "{Q3_TEXT}"' in html.unescape(page)
    assert "3 requests judged in 2 conversations" in page
    tests = [html.unescape(t) for t in re.findall(r'<pre class="test"[^>]*>(.*?)</pre>', page, re.S)]
    [test] = [t for t in tests if "def test_qwen_vllm_Q3_regression" in t]
    pasted = tmp_path / "test_pasted.py"
    pasted.write_text(test)
    failed = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                             str(pasted)], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert failed.returncode == 1 and Q3_TEXT in failed.stdout, failed.stdout + failed.stderr
    corrected = test.replace('{"role": "system", "content": "A summary."}', '{"role": "user", "content": "A summary."}')
    assert corrected != test  # the body corrected by hand: the summary said by the user
    pasted.write_text(corrected)
    passed = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                             str(pasted)], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "chatconform validate --provider qwen-vllm" in page
