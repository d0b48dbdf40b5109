"""A result line keeps each variant's failure where several failed (a payload check failing
for several providers): its message and minimal case, in the report and in every summary
made of it; a line of an older report, with the worst failure only, still reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatconform.engine import Failure, Verdict
from chatconform.errors import ConfigError
from chatconform.frame.status import Status
from chatconform.outputs import report
from chatconform.outputs.reporters.html import html
from chatconform.outputs.reporters.markdown import markdown

CASES = {provider: {"history": [{"kind": "request", "parts": [{"part_kind": "user-prompt",
                                                                 "content": f"case for {provider}"}]}]}
         for provider in ("anthropic", "openai-chat", "glm")}


def _verdict() -> Verdict:
    failures = [Failure("payload.tool_pairing", "A9: a tool_result without its tool_use", CASES["anthropic"],
                        variant="anthropic"),
                Failure("payload.tool_pairing", "O8: a tool message without its call", CASES["openai-chat"],
                        variant="openai-chat"),
                Failure("payload.tool_pairing", "vLLM validates no pairing", CASES["glm"], variant="glm",
                        level="warning")]
    return Verdict("lib", "lib:Lib", "payload", "payload.tool_pairing", Status.FAIL,
                   failures[0].message + " (for anthropic, openai-chat)", failures, examples=10, evaluated=10)


def _report(tmp_path: Path, *results: dict) -> report.Report:
    head = {"type": "header", "version": "0.1.0", "profile": "ci",
            "implementations": {"lib": {"version": "1", "spec": "lib:Lib", "contracts": ["payload"]}}}
    path = tmp_path / "report.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in [head, *results, {"type": "footer", "counts": {}}]))
    return report.read(path)


def test_a_line_keeps_each_variants_message_and_case(tmp_path):
    line = report.result_line(_verdict())
    assert line["variant"] == "anthropic" and line["example"] == CASES["anthropic"]  # the worst, as before
    assert [(f["variant"], f["level"], f["message"], f["example"]) for f in line["failures"]] == [
        ("anthropic", "error", "A9: a tool_result without its tool_use", CASES["anthropic"]),
        ("openai-chat", "error", "O8: a tool message without its call", CASES["openai-chat"]),
        ("glm", "warning", "vLLM validates no pairing", CASES["glm"])]
    read = _report(tmp_path, line).results[0]
    assert report.line_failures(read) == line["failures"]
    assert [report.failure_status(read, f) for f in line["failures"]] == [Status.FAIL, Status.FAIL, Status.WARN]


def test_a_line_of_one_failure_or_of_an_older_report_is_its_own_failure(tmp_path):
    verdict = _verdict()
    verdict.failures = verdict.failures[:1]
    line = report.result_line(verdict)
    assert "failures" not in line
    assert report.line_failures(line) == [{"variant": "anthropic", "level": "error", "message": verdict.message,
                                          "example": CASES["anthropic"]}]
    passed = {"type": "result", "implementation": "lib", "check": "payload.no_crash", "status": "pass",
              "message": None, "example": None}
    assert report.line_failures(passed) == []


def test_a_damaged_failures_field_is_one_line_naming_it(tmp_path):
    line = report.result_line(_verdict())
    line["failures"][1]["message"] = 7
    with pytest.raises(ConfigError, match=r"field failures\[1\]\.message: expected a string"):
        _report(tmp_path, line)


def test_markdown_html_and_json_summaries_show_each_providers_message_and_case(tmp_path):
    read = _report(tmp_path, report.result_line(_verdict()))
    text = markdown(read)
    for provider, status, message in (("anthropic", Status.FAIL, "A9: a tool_result"),
                                      ("openai-chat", Status.FAIL, "O8: a tool"),
                                      ("glm", Status.WARN, "vLLM validates")):
        assert f"| lib | `payload.tool_pairing` [{provider}] | {status.label} | {message}" in text
        assert f"lib · payload.tool_pairing [{provider}]: the case" in text
        assert f"case for {provider}" in text
    page = html(read)
    for provider in CASES:
        assert f'data-provider="{provider}"' in page and f"case for {provider}" in page
    assert page.count('class="finding ') == 3
    summary = report.summary_json(read)
    assert [f["variant"] for f in summary["failures"][0]["failures"]] == ["anthropic", "openai-chat", "glm"]
