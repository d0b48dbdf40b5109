"""A hostile implementation name (and the messages and stderr that carry it) renders in every
output format as text: valid JUnit XML, one markdown line per table row, a terminal output with
no control character, JSON and HTML that parse."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ROOT / "tests" / "frontends" / "hostile.py"
NAME = "evil\x1b]0;pwned\x07\x1b[2J|name`\nsecond line\x00\x0b\x9b"
#: Characters no output may hold raw (a newline is fine outside a table row).
CONTROLS = {chr(c) for c in [*range(0x00, 0x09), *range(0x0b, 0x20), *range(0x7f, 0xa0)]}


def _chatconform(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "chatconform", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "300"})


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> dict[str, str]:
    tmp_path = tmp_path_factory.mktemp("hostile-name")
    run = _chatconform(tmp_path, "run", "--impl", f"{HOSTILE}:HostileName", "--contract", "thread",
                       "--examples", "3", "--jobs", "1", "--report", "r.jsonl", "--junit-xml", "r.xml")
    assert run.returncode == 1, run.stdout + run.stderr
    outputs = {"terminal": run.stdout + run.stderr, "junit": (tmp_path / "r.xml").read_text("utf-8"),
               "jsonl": (tmp_path / "r.jsonl").read_text("utf-8")}
    for fmt in ("pretty", "markdown", "html"):
        summary = _chatconform(tmp_path, "summary", "r.jsonl", "--format", fmt)
        assert summary.returncode == 0, summary.stderr
        outputs[fmt] = summary.stdout + summary.stderr
    return outputs


def test_the_report_keeps_the_name_as_it_is(rendered):
    header = json.loads(rendered["jsonl"].splitlines()[0])
    assert NAME in header["implementations"]


@pytest.mark.parametrize("fmt", ["terminal", "pretty"])
def test_the_terminal_shows_every_control_character_as_an_escape(rendered, fmt):
    text = rendered[fmt]
    assert not CONTROLS & set(text), sorted(CONTROLS & set(text))
    assert "evil\\x1b]0;pwned\\x07\\x1b[2J|name`\\nsecond line\\x00\\x0b\\x9b" in text, text[-3000:]


def test_junit_xml_parses_with_the_forbidden_characters_replaced(rendered):
    root = ET.fromstring(rendered["junit"].encode("utf-8"))
    suites = root.findall("testsuite")
    # XML 1.0 holds a newline and C1 characters; ESC, NUL and VT come out as escapes.
    assert len(suites) == 1 and "evil\\x1b]0;pwned\\x07\\x1b[2J|name`" in suites[0].get("name"), suites[0].attrib
    classnames = {case.get("classname") for case in root.iter("testcase")}
    assert classnames == {suites[0].get("name")}


def test_markdown_keeps_each_table_row_on_one_line(rendered):
    lines = rendered["markdown"].splitlines()
    assert not CONTROLS & set(rendered["markdown"])
    header = next(line for line in lines if line.startswith("| check |"))
    assert header.count("|") == 3 and "pwned" in header, header  # check, one implementation
    rows = [line for line in lines if line.startswith("| `thread.")]
    assert rows and all(row.count("|") == 3 for row in rows), rows
    findings = [line for line in lines if "pwned" in line and line.startswith("| ") and line is not header]
    assert findings and all(row.count("|") == 5 for row in findings), findings
    assert "second line" not in [line.strip() for line in lines]


def test_html_parses_and_shows_the_name_as_text(rendered):
    class Collect(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.text: list[str] = []

        def handle_data(self, data: str) -> None:
            self.text.append(data)

    parser = Collect()
    parser.feed(rendered["html"])
    parser.close()
    assert any("pwned" in chunk for chunk in parser.text)
    assert "<script>alert" not in rendered["html"]
