"""The evidence corpus: what real providers did with real bodies, and validate held against it.

tests/data/evidence/ holds recorded interactions: bodies public test suites sent to the real
APIs (taken by tools/evidence.py, texts replaced by chatconform's own) and rejections quoted
in public reports, each with its source. validate must find no error in a body the provider
accepted and an error in every body it rejected for its messages or tools.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chatconform.provider_schemas.lint import judge_paths

CORPUS = Path(__file__).resolve().parents[1] / "data" / "evidence"
RECORDS = [(path.name, n, json.loads(line)) for path in sorted(CORPUS.glob("*.jsonl"))
           for n, line in enumerate(path.read_text("utf-8").splitlines())]
#: A text of a cassette body, as tools/evidence.py writes it: a placeholder (in a wrapper the
#: template checks for), or a blank or empty text kept as the fact it is.
PLACEHOLDER = re.compile(r"^\s*(<(tool_response|thinking)>)?(text \d+)?(</(tool_response|thinking)>)?\s*$")


@pytest.fixture(scope="module")
def judged():
    return list(judge_paths([str(CORPUS)]))


def test_every_record_says_where_its_fact_comes_from():
    assert len(RECORDS) > 200
    for name, n, record in RECORDS:
        source, where = record["source"], f"{name}:{n + 1}"
        assert record["fact"] and record["request"]["uri"].startswith("https://"), where
        if "report" in source:
            assert re.match(r"^https://github\.com/[^/]+/[^/]+/(issues|pull)/\d+$", source["report"]), where
        else:
            assert re.match(r"^[\w.-]+/[\w.-]+$", source["repo"]) and re.match(r"^[0-9a-f]{40}$", source["commit"])
            assert source["path"] and isinstance(source["interaction"], int), where
        held_out = json.dumps(source).lower()
        assert "pydantic-ai" not in held_out and "pydantic_ai" not in held_out, where


#: Keys whose strings are text (a message, a description) and keys holding a tool's data.
TEXT_KEYS = {"text", "thinking", "content", "description", "system"}
DATA_KEYS = {"arguments", "input", "args", "response", "output", "result"}


def _texts(value, key=None, data=False):
    """The strings of a body that are text: under a text key, or anywhere in a tool's data."""
    if key == "arguments" and isinstance(value, str):
        yield from _texts(json.loads(value), None, True)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _texts(v, k, data or k in DATA_KEYS)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item, key, data)
    elif isinstance(value, str) and (data or key in TEXT_KEYS) and not value.startswith(("data:", "https://")):
        yield value


def test_cassette_bodies_hold_no_text_of_the_projects_they_came_from():
    for name, n, record in RECORDS:
        if "repo" in record["source"]:
            for text in _texts(record["request"]["parsed_body"]):
                assert PLACEHOLDER.match(text), (name, n + 1, text[:60])


def test_no_error_on_a_body_the_provider_accepted(judged):
    accepted = [j for j in judged if j.status is not None and 200 <= j.status < 300]
    assert len(accepted) > 200
    wrong = [(j.file, j.index, [(p.rule, p.message) for p in j.problems if p.severity == "error"])
             for j in accepted if j.errors]
    assert wrong == []


def test_an_error_on_every_body_rejected_for_its_messages(judged):
    rejected = [j for j in judged if j.about_messages]
    assert len(rejected) >= 20
    missed = [(j.file, j.index, j.answer) for j in rejected if not j.errors]
    assert missed == []
    # Every provider of the corpus has a rejection in it.
    assert {j.provider for j in rejected} >= {"openai-chat", "anthropic", "gemini", "bedrock-converse", "mistral"}
