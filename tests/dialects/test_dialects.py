"""Every dialect is whole: registered under its module's name, spoken by a provider, tested in
its own module, and each of its parts (rendering, reading back, answering) works the same way
for all of them; a provider naming a dialect no module speaks fails at its import."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from chatconform.dialects import DIALECTS, Dialect, get_dialect
from chatconform.dialects.base import Call, Image, Result, Text, Turn
from chatconform.dialects.http import Answer, Context, Reply, RouteCall, ToolCall
from chatconform.dialects.openai_chat import mistral_tool_call_id
from chatconform.errors import UnknownDialect
from chatconform.providers import PROVIDER_IDS, PROVIDERS, get_provider
from chatconform.reference.payload import PayloadMapper

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "chatconform" / "dialects"


def test_every_dialect_module_is_registered_under_its_name():
    shared = {"__init__", "base", "http", "eventstream"}
    modules = {path.stem for path in PACKAGE.glob("*.py")} - shared
    assert set(DIALECTS) == modules
    for name, dialect in DIALECTS.items():
        assert isinstance(dialect, Dialect) and dialect.name == name
        assert get_dialect(name) is dialect


@pytest.mark.parametrize("name", sorted(DIALECTS))
def test_every_dialect_is_spoken_by_a_provider_and_has_its_tests(name):
    assert any(p.dialect == name for p in PROVIDERS.values()), (
        f"no provider speaks the {name} dialect: add its profile (chatconform/providers/<id>.py, dialect={name!r})")
    tests = ROOT / "tests" / "dialects" / f"test_{name}.py"
    assert tests.is_file(), f"the {name} dialect has no tests: add tests/dialects/test_{name}.py"


def test_an_unknown_dialect_is_refused_by_name():
    with pytest.raises(UnknownDialect, match=r"unknown dialect 'openai'; known dialects: .*openai_chat"):
        get_dialect("openai")


def test_a_profile_naming_an_unknown_dialect_fails_its_import(tmp_path):
    """Never a silent default: the module that declares such a provider cannot be imported."""
    module = tmp_path / "acme_chat.py"
    module.write_text(textwrap.dedent('''
        from chatconform.providers.openai_chat import PROFILE
        import dataclasses

        PROFILE = dataclasses.replace(PROFILE, id="acme-chat", dialect="acme")
    '''))
    spec = importlib.util.spec_from_file_location("acme_chat_profile", module)
    assert spec is not None and spec.loader is not None
    with pytest.raises(UnknownDialect, match="unknown dialect 'acme'"):
        spec.loader.exec_module(importlib.util.module_from_spec(spec))


@pytest.mark.parametrize(("source", "error", "message"), [
    ("class Half(Dialect):\n    name, routes = 'half_talk', ('/half',)\n", TypeError, "abstract"),
    ("class Half(OpenAIChat):\n    name, routes = 'half_talk', ()\n", ImportError, "lists no routes"),
    ("class Half(OpenAIChat):\n    name = 'other'\n", ImportError, "must be a Dialect named 'half_talk'"),
], ids=["a method left out", "no routes", "misnamed"])
def test_a_dialect_module_that_leaves_a_part_out_fails_the_import(tmp_path, monkeypatch, source, error, message):
    import chatconform.dialects as package

    (tmp_path / "half_talk.py").write_text("from chatconform.dialects.base import Dialect\n"
                                           "from chatconform.dialects.openai_chat import OpenAIChat\n"
                                           f"{source}DIALECT = Half()\n")
    monkeypatch.setattr(package, "__path__", [*package.__path__, str(tmp_path)])
    try:
        with pytest.raises(error, match=message):
            package._dialects()
    finally:
        sys.modules.pop("chatconform.dialects.half_talk", None)


# -- rendering and reading back: the same turns ------------------------------------------------

#: One turn of each kind, with a file, a call and a failed result: what every dialect renders.
TURNS = [
    ("user", [Text("Weather? (u1)"), Image("image/png", data=b"\x89PNG-bytes")]),
    ("assistant", [Text("Checking (a2)"), Call("call_3", "get_weather", '{"city":"Paris"}')]),
    ("tool", [Result("call_3", "get_weather", "no network (r4)", error=True)]),
    ("assistant", [Text("Sorry (a5)")]),
    ("user", [Text("Thanks (u6)")]),
]


def _turns() -> list[Turn]:
    return [Turn(role, items) for role, items in TURNS]


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_a_rendered_body_reads_back_as_its_turns(provider):
    profile = get_provider(provider)
    dialect = get_dialect(profile.dialect)
    body = dialect.render(PayloadMapper(), profile, "Be brief (s0)", _turns())
    read = list(dialect.read(json.loads(json.dumps(body))))

    assert read[0].role == "system" and read[0].texts == ("Be brief (s0)",)
    seen = [turn for turn in read[1:] if turn.texts or turn.tool_calls or turn.tool_results]
    assert [t.role for t in seen] == ["user", "assistant", "tool", "assistant", "user"]
    assert [t for turn in seen for t in turn.texts if "(r4)" not in t] == [
        "Weather? (u1)", "Checking (a2)", "Sorry (a5)", "Thanks (u6)"]
    call_id = mistral_tool_call_id("call_3") if profile.short_tool_call_ids else "call_3"
    assert seen[1].tool_calls == ((call_id, "get_weather"),)
    assert seen[2].tool_results == ((call_id, "get_weather"),) and seen[2].error_results == (0,)
    assert len(seen[0].media) == 1 and seen[0].inline == (0,)


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_rendering_goes_through_the_mappers_hooks(provider):
    """A fake that changes how bytes are written changes them in every dialect."""

    class Marked(PayloadMapper):
        def inline_data(self, data):
            return "TUFSS0VE"  # "MARKED"

    profile = get_provider(provider)
    body = get_dialect(profile.dialect).render(Marked(), profile, None, _turns())
    assert "TUFSS0VE" in json.dumps(body) and "iVBORy1ieXRlcw" not in json.dumps(body)


# -- answering over HTTP -----------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(DIALECTS))
def test_every_route_is_a_path_without_a_provider_parameter(name):
    dialect = DIALECTS[name]
    assert dialect.routes and all(path.startswith("/") and "{provider}" not in path for path in dialect.routes)


def _context(provider: str, *, stream: bool) -> Context:
    return Context(get_provider(provider), "m", "c0ffee", 1, stream)


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_an_answer_holds_the_reply_plain_and_streamed(provider):
    dialect = get_dialect(get_provider(provider).dialect)
    reply = Reply(text="Hello there (x)", tool_calls=(ToolCall("lookup", {"q": "y"}, id="call_9"),))
    plain = dialect.answer(reply, _context(provider, stream=False))
    assert plain.chunks is None and plain.status == 200
    assert "Hello there (x)" in json.dumps(plain.body) and "call_9" in json.dumps(plain.body)
    streamed = dialect.answer(reply, _context(provider, stream=True))
    assert streamed.chunks and streamed.status == 200
    assert b"lookup" in b"".join(streamed.chunks)
    assert dialect.call_ids(reply, _context(provider, stream=False)) == ["call_9"]


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_an_error_answer_carries_the_status_and_the_message(provider):
    profile = get_provider(provider)
    answer = get_dialect(profile.dialect).error(400, "bad turn (e1)", profile)
    assert isinstance(answer, Answer) and answer.status == 400 and answer.chunks is None
    assert "bad turn (e1)" in json.dumps(answer.body)


@pytest.mark.parametrize("name", sorted(DIALECTS))
def test_a_route_says_what_the_request_asks_for(name):
    dialect = DIALECTS[name]
    params = {"model": "gm", "method": "streamGenerateContent", "model_id": "bm"}
    for path in dialect.routes:
        assert isinstance(dialect.route(path, params, {"alt": "sse"}), RouteCall)


def test_the_dialects_and_the_command_import_no_web_framework():
    """``chatconform list`` and ``--help`` load the providers, and so the dialects: starlette is
    imported by ``serve`` alone."""
    code = ("import contextlib, io, sys\nfrom chatconform.cli import main\nimport chatconform.reference.payload\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    main(['list'])\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('starlette', 'uvicorn')))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
