"""A fifth dialect is its own files: added with a provider that speaks it to a copy of the
project, it is rendered by the reference, read back by the turn view, judged by ``chatconform
validate`` and answered by ``serve``, and passes the tests every dialect and provider pass,
with nothing else edited (docs/architecture.md, "Adding a dialect")."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

from tests.scratch import ROOT, copy_project, run_in

DIALECT_MODULE = '''
    """The toy talk dialect: ``{"system": ..., "lines": [{"who": "user" | "bot", "say": ...}]}``."""

    from chatconform.dialects.base import BodyTurn, Call, Dialect, File, Image, Result, Text, list_of, result_text
    from chatconform.dialects.http import call_id, json_answer, sse_answer, sse_event


    class ToyTalk(Dialect):
        name = "toy_talk"
        routes = ("/talk",)

        def render(self, hooks, profile, system, turns):
            lines = []
            for turn in turns:
                line = {"who": "bot" if turn.role == "assistant" else "user",
                        "say": "\\n\\n".join(i.text for i in turn if isinstance(i, Text))}
                calls = [{"id": i.id, "tool": i.name} for i in turn if isinstance(i, Call)]
                answers = [{"id": i.id, "tool": i.name, "text": result_text(i.content), "failed": i.error}
                           for i in turn if isinstance(i, Result)]
                files = [i.url or hooks.inline_data(i.data) for i in turn if isinstance(i, (Image, File))]
                for key, value in (("calls", calls), ("answers", answers), ("files", files)):
                    if value:
                        line[key] = value
                lines.append(line)
            return {"lines": lines} if system is None else {"system": system, "lines": lines}

        def read(self, body):
            if isinstance(body.get("system"), str) and body["system"]:
                yield BodyTurn("system", (body["system"],), (), (), "$.system")
            for i, line in enumerate(list_of(body.get("lines"))):
                if not isinstance(line, dict):
                    continue
                answers = list_of(line.get("answers"))
                role = ("assistant" if line.get("who") == "bot" else
                        "tool" if answers and not line.get("say") else "user")
                files = tuple(list_of(line.get("files")))
                yield BodyTurn(role, (line["say"],) if line.get("say") else (),
                               tuple((c["id"], c["tool"]) for c in list_of(line.get("calls"))),
                               tuple((a["id"], a["tool"]) for a in answers), f"$.lines[{i}]",
                               media=files, inline=tuple(i for i, f in enumerate(files) if "://" not in f),
                               error_results=tuple(n for n, a in enumerate(answers) if a.get("failed")))

        def tool_names(self, body):
            return [name for name in list_of(body.get("tools")) if isinstance(name, str)]

        def call_ids(self, reply, ctx):
            return [call_id("t_", ctx.conversation, ctx.turn, i, c) for i, c in enumerate(reply.tool_calls)]

        def answer(self, reply, ctx):
            calls = [{"id": i, "tool": c.name} for i, c in zip(self.call_ids(reply, ctx), reply.tool_calls)]
            said = {"who": "bot", "say": reply.text or "", **({"calls": calls} if calls else {})}
            if ctx.stream:
                return sse_answer([sse_event(said), sse_event("[END]")], cut_after=reply.cut_stream_after)
            return json_answer(said, cut_after=reply.cut_stream_after)

        def error(self, status, message, profile):
            return json_answer({"problem": message, "status": status}, status=status)


    DIALECT = ToyTalk()
'''

PROFILE_MODULE = '''
    """Toy: the toy talk dialect, served as a toy serves it."""

    from chatconform.errors import WARNING

    from .profile import CheckLevel, Provider

    PROFILE = Provider(
        id="toy",
        order=90,
        title="Toy talk",
        docs="https://example.com/toy-talk",
        rule_prefix="T",
        dialect="toy_talk",
        messages_key="lines",
        system_slot="system",
        check_levels={
            "payload.system_first": CheckLevel(WARNING, "a toy has one system slot"),
            "payload.user_led": CheckLevel(WARNING, "a toy answers anything"),
            "payload.tool_pairing": CheckLevel(WARNING, "a toy pairs nothing"),
        },
        reused_call_id=CheckLevel(WARNING, "a toy pairs nothing"),
        error_flag="failed",
    )
'''

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Toy talk request body",
    "x-rule": "T0",
    "x-error": "That is no toy talk.",
    "type": "object",
    "required": ["lines"],
    "properties": {"lines": {"type": "array", "minItems": 1, "items": {
        "type": "object", "required": ["who"], "properties": {"who": {"enum": ["user", "bot"]}}}}},
}

RULES_MODULE = '''
    """Toy talk: a talk opens with the user (T1)."""

    from .common import SCHEMA, SEQUENCE, Report, RuleInfo, as_list, rules


    def check(body: dict, report: Report) -> None:
        lines = as_list(body.get("lines"))
        if lines and isinstance(lines[0], dict) and lines[0].get("who") == "bot":
            report.error("T1", ["lines", 0, "who"], "A talk opens with the user.")


    CATALOG = rules(
        RuleInfo("T0", "the toy talk shape", SCHEMA, "That is no toy talk.", "https://example.com/toy-talk"),
        RuleInfo("T1", "the user speaks first", SEQUENCE, "A talk opens with the user.", "https://example.com/toy-talk"),
    )
    LEFT_OUT: dict[str, str] = {}
'''

#: The rule cases, added to the list of tests/provider_schemas/test_provider_rules.py.
RULE_CASES = '''    ("toy", "T0", {"lines": "hi"}, "That is no toy talk.", {"lines": [{"who": "user", "say": "hi"}]}),
    ("toy", "T1", {"lines": [{"who": "bot", "say": "hi"}]}, "A talk opens with the user.",
     {"lines": [{"who": "user", "say": "hi"}, {"who": "bot", "say": "hi"}]}),
'''

DIALECT_TESTS = '''
    from chatconform.provider_schemas import turn_view


    def test_a_failed_answer_reads_back_as_an_error():
        body = {"lines": [{"who": "user", "say": "go"}, {"who": "bot", "calls": [{"id": "c", "tool": "t"}]},
                          {"who": "user", "answers": [{"id": "c", "tool": "t", "text": "x", "failed": True}]}]}
        assert [(t.role, t.error_results) for t in turn_view(body, "toy")] == [
            ("user", ()), ("assistant", ()), ("tool", (0,))]
'''

#: Rendered, read, validated and served in the copy; prints one JSON object.
PROGRAM = '''
    import json, subprocess, sys
    from datetime import datetime, timezone

    from pydantic_ai.messages import (ModelRequest, ModelResponse, SystemPromptPart, TextPart, ToolCallPart,
                                      ToolReturnPart, UserPromptPart)
    from starlette.testclient import TestClient

    from chatconform.provider_schemas import turn_view
    from chatconform.reference.payload import to_payload
    from chatconform.serve.app import build_app
    from chatconform.serve.log import ServeLog
    from chatconform.serve.replies import Replies

    history = [ModelRequest(parts=[SystemPromptPart("Be brief"), UserPromptPart("Weather?")]),
               ModelResponse(parts=[TextPart("Checking."), ToolCallPart("get_weather", {"city": "Paris"}, "c1")]),
               ModelRequest(parts=[ToolReturnPart("get_weather", "sunny", "c1")]),
               ModelResponse(parts=[TextPart("Sunny.")])]
    body = to_payload(history, provider="toy")
    read = [[t.role, list(t.texts), [list(c) for c in t.tool_calls], [list(r) for r in t.tool_results]]
            for t in turn_view(body, "toy")]

    with open("good.json", "w") as f:
        json.dump(body, f)
    with open("bad.json", "w") as f:
        json.dump({"lines": [{"who": "bot", "say": "Hello?"}]}, f)
    cli = [sys.executable, "-m", "chatconform", "validate", "--provider", "toy"]
    good = subprocess.run([*cli, "good.json"], capture_output=True, text=True)
    bad = subprocess.run([*cli, "bad.json"], capture_output=True, text=True)

    log = ServeLog(None, version="test")
    client = TestClient(build_app(log, Replies()), base_url="http://127.0.0.1")  # serve answers its own host only
    answered = client.post("/talk", json={"lines": [{"who": "user", "say": "hi"}]})
    rejected = client.post("/toy/talk", json={"lines": [{"who": "bot", "say": "hi"}]})
    print(json.dumps({"body": body, "read": read, "good": [good.returncode, good.stdout + good.stderr],
                      "bad": [bad.returncode, bad.stdout + bad.stderr],
                      "answered": [answered.status_code, answered.json()],
                      "rejected": [rejected.status_code, rejected.json()],
                      "verdicts": [[v.provider, v.route, v.status] for v in log.verdicts]}))
'''


def _copy_with_toy(tmp: Path) -> None:
    copy_project(tmp, ("pyproject.toml", "tests/conftest.py", "tests/provider_schemas/__init__.py",
                       "tests/provider_schemas/test_provider_profiles.py", "tests/dialects/test_dialects.py"),
                 {"chatconform/dialects/toy_talk.py": DIALECT_MODULE,
                  "chatconform/providers/toy.py": PROFILE_MODULE,
                  "chatconform/provider_schemas/rules/toy.py": RULES_MODULE,
                  "chatconform/provider_schemas/schemas/toy.json": json.dumps(SCHEMA, indent=2),
                  "tests/dialects/test_toy_talk.py": DIALECT_TESTS})
    cases = (ROOT / "tests/provider_schemas/test_provider_rules.py").read_text("utf-8").splitlines(keepends=True)
    end = cases.index("]\n", next(i for i, line in enumerate(cases) if line.startswith("CASES = [")))
    (tmp / "tests/provider_schemas/test_provider_rules.py").write_text("".join([*cases[:end], RULE_CASES,
                                                                               *cases[end:]]), "utf-8")


def test_a_fifth_dialect_is_its_own_files(tmp_path):
    _copy_with_toy(tmp_path)
    done = run_in(tmp_path, sys.executable, "-c", textwrap.dedent(PROGRAM))
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])

    assert seen["body"] == {"system": "Be brief", "lines": [
        {"who": "user", "say": "Weather?"},
        {"who": "bot", "say": "Checking.", "calls": [{"id": "c1", "tool": "get_weather"}]},
        {"who": "user", "say": "", "answers": [{"id": "c1", "tool": "get_weather", "text": "sunny", "failed": False}]},
        {"who": "bot", "say": "Sunny."}]}
    assert seen["read"] == [["system", ["Be brief"], [], []], ["user", ["Weather?"], [], []],
                            ["assistant", ["Checking."], [["c1", "get_weather"]], []],
                            ["tool", [], [], [["c1", "get_weather"]]], ["assistant", ["Sunny."], [], []]]
    assert seen["good"][0] == 0, seen["good"][1]
    assert seen["bad"][0] == 1 and "T1" in seen["bad"][1] and "A talk opens with the user." in seen["bad"][1]
    assert seen["answered"] == [200, {"who": "bot", "say": "OK"}]
    assert seen["rejected"] == [400, {"problem": "A talk opens with the user.", "status": 400}]
    assert seen["verdicts"] == [["toy", "/talk", 200], ["toy", "/toy/talk", 400]]

    # The tests every dialect and every provider pass, run for the toy ones in the copy.
    tests = run_in(tmp_path, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                 "-k", "toy", "tests/dialects/test_dialects.py", "tests/dialects/test_toy_talk.py",
                 "tests/provider_schemas/test_provider_profiles.py", "tests/provider_schemas/test_provider_rules.py")
    assert tests.returncode == 0, tests.stdout[-3000:]
    assert " passed" in tests.stdout and "failed" not in tests.stdout
