"""`chatconform validate` on recorded traffic: VCR cassettes (YAML, gzipped, JSON), HAR files and
recorded interactions; the provider read off each URL; the recorded status beside each verdict."""

from __future__ import annotations

import base64
import gzip
import io
import json
import os

import pytest
import yaml

from chatconform.provider_schemas import lint, traffic
from chatconform.provider_schemas.endpoints import Endpoint, endpoint
from chatconform.provider_schemas.lint import judge_paths, run_validate

OPENAI = "https://api.openai.com/v1/chat/completions"
ANTHROPIC = "https://api.anthropic.com/v1/messages"
GOOD = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
ORPHAN = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"},
                                               {"role": "tool", "tool_call_id": "c1", "content": "21C"}]}
ORPHAN_TEXT = ("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with "
               "'tool_calls'.")


def interaction(url, body, status=200, answer="{}", *, body_as="string"):
    raw = json.dumps(body)
    stored = {"string": raw, "binary": raw.encode(), "parsed": None}[body_as]
    request = {"method": "POST", "uri": url, "headers": {"content-type": ["application/json"]}}
    if body_as == "parsed":
        request["parsed_body"] = body
    else:
        request["body"] = stored
    return {"request": request, "response": {"status": {"code": status, "message": "x"}, "headers": {},
                                             "body": {"string": answer}}}


def error_answer(message):
    return json.dumps({"error": {"message": message, "type": "invalid_request_error"}})


def run(paths, provider=None, fmt="pretty"):
    out, err = io.StringIO(), io.StringIO()
    code = run_validate([str(p) for p in paths], provider, fmt, out, err)
    return code, out.getvalue(), err.getvalue()


def cassette(tmp_path, name, interactions, *, compress=False):
    text = yaml.safe_dump({"interactions": interactions, "version": 1})
    path = tmp_path / name
    path.write_bytes(gzip.compress(text.encode()) if compress else text.encode())
    return path


def test_a_vcr_cassette_is_judged_request_by_request_beside_its_status(tmp_path):
    path = cassette(tmp_path, "chat.yaml", [
        interaction(OPENAI, GOOD),
        interaction("https://api.openai.com/v1/embeddings", {"input": "x", "model": "e"}),
        interaction(OPENAI, ORPHAN, 400, error_answer(ORPHAN_TEXT)),
    ])
    code, out, err = run([path])
    assert code == 0 and err == ""  # the only error is on a request the provider rejected
    lines = out.splitlines()
    assert lines[0].startswith(f"{path} #2 O7 $.messages[1].role  Messages with role 'tool'")
    assert lines[1] == (f"{path} #2 (openai-chat, gpt-4o-mini): recorded 400 \"{ORPHAN_TEXT}\"; validate: 1 error: "
                        "agrees")
    assert lines[2] == ("1 error, 0 warnings in 2 bodies from 1 file; 1 other request skipped (embeddings 1) "
                        "(openai-chat 2)")
    assert lines[3] == ("recorded: 1 accepted, 1 rejected (1 about the messages), 0 other; disagreements: 0 errors "
                        "on accepted requests, 0 rejected with no error found")


def test_disagreements_are_said_both_ways(tmp_path):
    accepted_orphan = interaction(OPENAI, ORPHAN)
    missed = interaction(OPENAI, GOOD, 400, error_answer("messages[0]: something only the provider knows"))
    path = cassette(tmp_path, "c.yaml", [accepted_orphan, missed])
    code, out, _ = run([path])
    assert code == 1  # an error on a request the provider accepted counts
    assert "#0 (openai-chat, gpt-4o-mini): recorded 200; validate: 1 error: DISAGREES: an error on a request" in out
    assert "#1 (openai-chat, gpt-4o-mini): recorded 400 \"messages[0]: something only the provider knows\"; " \
           "validate: no error: DISAGREES: the provider rejected the messages and no error was found" in out
    assert "disagreements: 1 error on accepted requests, 1 rejected with no error found" in out
    records = [json.loads(line) for line in run([path], fmt="json")[1].splitlines()]
    verdicts = [r["verdict"] for r in records if "verdict" in r]
    assert verdicts == ["error on accepted", "missed rejection"]
    assert {r["interaction"] for r in records if "rule" in r} == {0}


@pytest.mark.parametrize("body_as", ["string", "binary", "parsed"])
def test_body_forms_and_gzip(tmp_path, body_as):
    plain = cassette(tmp_path, "a.yaml", [interaction(OPENAI, ORPHAN, body_as=body_as)])
    zipped = cassette(tmp_path, "b.yaml.gz", [interaction(OPENAI, ORPHAN, body_as=body_as)], compress=True)
    for path in (plain, zipped):
        (judged,) = judge_paths([str(path)])
        assert [p.rule for p in judged.problems] == ["O7"] and judged.status == 200


def test_a_gzipped_request_body_and_the_parallel_lists_form(tmp_path):
    body = gzip.compress(json.dumps(ORPHAN).encode())
    document = {"requests": [{"method": "POST", "uri": OPENAI, "body": body,
                              "headers": {"Content-Encoding": ["gzip"]}}],
                "responses": [{"status": {"code": 200}, "body": {"string": "{}"}}]}
    path = tmp_path / "lists.yaml"
    path.write_text(yaml.safe_dump(document))
    (judged,) = judge_paths([str(path)])
    assert [p.rule for p in judged.problems] == ["O7"] and judged.status == 200


def test_a_har_file_with_base64_content(tmp_path):
    answer = base64.b64encode(error_answer(ORPHAN_TEXT).encode()).decode()
    entry = {"request": {"method": "POST", "url": OPENAI, "postData": {"mimeType": "application/json",
                                                                        "text": json.dumps(ORPHAN)}},
             "response": {"status": 400, "content": {"text": answer, "encoding": "base64"}}}
    path = tmp_path / "session.har"
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": [entry]}}))
    (judged,) = judge_paths([str(path)])
    assert judged.verdict == lint.AGREES and judged.answer == ORPHAN_TEXT


def test_json_lines_of_interactions_and_a_folder(tmp_path):
    folder = tmp_path / "cassettes"
    (folder / "deep").mkdir(parents=True)
    lines = [json.dumps(interaction(OPENAI, GOOD)), json.dumps(interaction(ANTHROPIC, {
        "model": "claude-sonnet-4-5", "max_tokens": 5, "messages": [{"role": "user", "content": ""}]}, 400,
        error_answer("messages.0: all messages must have non-empty content except for the optional final "
                     "assistant message")))]
    (folder / "deep" / "log.jsonl").write_text("\n".join(lines) + "\n")
    cassette(folder, "x.yaml", [interaction(OPENAI, GOOD)])
    (folder / "notes.txt").write_text("not read")
    judged = list(judge_paths([str(folder)]))
    assert [(j.file.rsplit(os.sep, 1)[1], j.index, j.provider) for j in judged] == [
        ("x.yaml", 0, "openai-chat"), ("log.jsonl", 0, "openai-chat"), ("log.jsonl", 1, "anthropic")]
    assert judged[2].verdict == lint.AGREES


def test_provider_and_model_from_the_url():
    gemini = endpoint("POST", "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:"
                              "streamGenerateContent?alt=sse", {"contents": []})
    assert (gemini.provider, gemini.model) == ("gemini", "gemini-2.5-flash")
    bedrock = endpoint("POST", "https://bedrock-runtime.us-east-1.amazonaws.com/model/"
                               "us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse", {"messages": []})
    assert (bedrock.provider, bedrock.model) == ("bedrock-converse", "us.anthropic.claude-sonnet-4-5-20250929-v1:0")
    invoke = endpoint("POST", "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-haiku/invoke",
                      {"anthropic_version": "bedrock-2023-05-31", "messages": []})
    assert invoke.provider == "anthropic"
    assert endpoint("POST", "https://api.mistral.ai/v1/chat/completions", {}).provider == "mistral"
    assert endpoint("POST", "https://open.bigmodel.cn/api/paas/v4/chat/completions", {}).provider == "glm"
    for url, provider in (("https://api.deepseek.com/chat/completions", "deepseek"),
                          ("https://api.moonshot.ai/v1/chat/completions", "kimi"),
                          ("https://api.moonshot.cn/v1/chat/completions", "kimi"),
                          ("https://api.groq.com/openai/v1/chat/completions", "groq"),
                          ("https://openrouter.ai/api/v1/chat/completions", "openrouter")):
        assert endpoint("POST", url, {"model": "m"}) == Endpoint(provider, "m", None, "openai_chat"), url
    other = endpoint("POST", "http://localhost:8000/v1/chat/completions", {"model": "qwen"})
    assert other.provider is None and other.dialect == "openai_chat" and "OpenAI-compatible" in (other.skipped or "")
    assert endpoint("GET", OPENAI, None).provider is None


def test_provider_judges_the_chat_requests_of_its_dialect(tmp_path):
    late_system = {"messages": [{"role": "user", "content": "hi"}, {"role": "system", "content": "late"}]}
    path = cassette(tmp_path, "vllm.yaml", [interaction("http://localhost:8000/v1/chat/completions", late_system),
                                            interaction(ANTHROPIC, {"messages": [{"role": "user", "content": "x"}]})])
    assert [j.provider for j in judge_paths([str(path)])] == ["anthropic"]  # the local server is skipped
    judged = list(judge_paths([str(path)], "qwen-vllm"))
    assert [(j.provider, [p.rule for p in j.problems]) for j in judged] == [("qwen-vllm", ["Q3"]), ("anthropic", [])]


@pytest.mark.parametrize("name, text, says", [
    ("config.yaml", "name: x\nsteps: [1, 2]\n", "not recorded traffic: a YAML file without VCR `interactions`"),
    ("bad.yaml", "interactions: [\n", "not YAML"),
    ("bomb.yaml", "a: &a [1, 2]\nb: [*a, *a]\ninteractions: []\n", "aliases are not allowed"),
    ("fixture.json", '{"id": "msg_1", "type": "message"}', "not recorded traffic"),
    ("broken.yaml.gz", "not gzip at all", None),
])
def test_files_that_are_not_traffic_are_one_line_exit_2(tmp_path, name, text, says):
    path = tmp_path / name
    path.write_bytes(b"\x1f\x8b" + text.encode() if says is None else text.encode())
    code, _, err = run([path])
    assert code == 2 and err.count("\n") == 1 and err.startswith(str(path))
    assert (says or "not valid gzip") in err


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    code, _, err = run([fifo])
    assert code == 2 and err == f"{fifo} is a FIFO, not a regular file: cannot read it as request bodies\n"


def test_size_limits_hold_for_files_and_decompressed_text(tmp_path, monkeypatch):
    monkeypatch.setattr(traffic, "MAX_BYTES", 1000)
    big = cassette(tmp_path, "big.yaml", [interaction(OPENAI, GOOD) for _ in range(20)])
    with pytest.raises(traffic.TrafficError, match="more than the 1,000 bytes request bodies may hold"):
        traffic.read_bytes(str(big), traffic.MAX_BYTES)
    bomb = tmp_path / "bomb.yaml.gz"
    bomb.write_bytes(gzip.compress(b"a" * 100_000))
    with pytest.raises(traffic.TrafficError, match="once decompressed"):
        traffic.read_bytes(str(bomb), traffic.MAX_BYTES)


def test_tags_that_name_python_objects_are_read_as_plain_data(tmp_path):
    text = yaml.safe_dump({"interactions": [interaction(OPENAI, ORPHAN)]}).replace(
        "content-type:", "? !!python/object/apply:multidict._multidict.istr\n      - Content-Type\n      :", 1)
    path = tmp_path / "aiohttp.yaml"
    path.write_text(text)
    (judged,) = judge_paths([str(path)])
    assert [p.rule for p in judged.problems] == ["O7"]


def test_bare_bodies_still_need_a_provider(tmp_path):
    path = tmp_path / "bodies.jsonl"
    path.write_text(json.dumps(GOOD) + "\n")
    code, _, err = run([path])
    assert code == 2 and "no --provider to judge it as request bodies" in err
    assert run([path], "openai-chat")[0] == 0


def test_the_pytest_fixture_fails_a_test_on_a_request_the_provider_would_reject(tmp_path, chatconform_cassettes):
    folder = tmp_path / "cassettes"
    folder.mkdir()
    rejected = interaction(OPENAI, ORPHAN, 400, error_answer(ORPHAN_TEXT))
    cassette(folder, "ok.yaml", [interaction(OPENAI, GOOD), rejected])
    assert [j.verdict for j in chatconform_cassettes(folder)] == [None, lint.AGREES]
    cassette(folder, "bad.yaml.gz", [interaction(OPENAI, ORPHAN)], compress=True)
    with pytest.raises(pytest.fail.Exception, match=r"bad\.yaml\.gz #0 O7 \$\.messages\[1\]\.role"):
        chatconform_cassettes(folder)
    (folder / "notes.yaml").write_text("just: notes\n")
    with pytest.raises(pytest.fail.Exception, match="not recorded traffic"):
        chatconform_cassettes(folder / "notes.yaml")


def test_a_cassette_is_one_conversation_judged_in_order(tmp_path):
    """G9: gemini-3 wants a call of the current turn sent back with the thoughtSignature its
    answer gave it, which only the answer before the request can tell."""
    url = "https://generativelanguage.googleapis.com/v1beta/models/gemini-3-flash-preview:streamGenerateContent"
    ask = [{"role": "user", "parts": [{"text": "weather in Paris?"}]}]
    call = {"name": "get_weather", "args": {"city": "Paris"}}
    answer = "data: " + json.dumps({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": call, "thoughtSignature": "c2lnbmF0dXJl"}]}}]}) + "\n\n"
    result = {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"t": "21C"}}}]}
    unsigned = {"contents": [*ask, {"role": "model", "parts": [{"functionCall": call}]}, result]}
    signed = {"contents": [*ask, {"role": "model", "parts": [{"functionCall": call, "thoughtSignature": "c2ln"}]},
                           result]}
    path = cassette(tmp_path, "g.yaml", [interaction(url, {"contents": ask}, answer=answer),
                                         interaction(url, unsigned), interaction(url, signed)])
    first, dropped, kept = judge_paths([str(path)])
    assert first.problems == () and kept.problems == ()
    (problem,) = dropped.problems
    assert (problem.rule, problem.path) == ("G9", "$.contents[1].parts[0]")
    assert problem.message.startswith("Function call is missing a thought_signature in functionCall parts.")
    # Alone, without the answer before it, the same request is not judged by G9.
    alone = cassette(tmp_path, "alone.yaml", [interaction(url, unsigned)])
    assert [j.problems for j in judge_paths([str(alone)])] == [()]
