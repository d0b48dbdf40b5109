"""Errors fail a run, warnings are reported and fail it only under --strict."""

import subprocess
import sys
import textwrap

import pytest

from chatconform import engine, run_conformance
from chatconform.fakes.payload import SortSystemFirst39372
from chatconform.frame.status import Status


class TwoSystemMessagesOnOpenAI(SortSystemFirst39372):
    """Several leading system messages: OpenAI takes them, Qwen on vLLM would not."""

    providers = frozenset({"openai-chat"})


def test_a_hazard_the_provider_accepts_is_a_warning():
    verdicts = {v.check: v for v in run_conformance(TwoSystemMessagesOnOpenAI, checks=["payload.system_first"],
                                                    examples=30, shrink=False)}
    verdict = verdicts["payload.system_first"]
    assert verdict.status == Status.WARN and verdict.failures[0].level == "warning"
    assert engine.exit_code(list(verdicts.values())) == 0
    assert engine.exit_code(list(verdicts.values()), strict=True) == 1


def test_the_same_bug_where_the_provider_rejects_it_is_an_error():
    class OnQwenToo(SortSystemFirst39372):
        providers = frozenset({"openai-chat", "qwen-vllm"})

    verdict = run_conformance(OnQwenToo, checks=["payload.system_first"], examples=30, shrink=False)[0]
    assert verdict.status == Status.FAIL
    assert verdict.failures[0].level == "error" and verdict.failures[0].variant == "qwen-vllm"
    assert "(for qwen-vllm)" in verdict.message


def test_cli_strict_turns_warnings_into_a_failing_exit(tmp_path):
    (tmp_path / "impl.py").write_text(textwrap.dedent("""
        from chatconform.fakes.payload import SortSystemFirst39372

        class Impl(SortSystemFirst39372):
            providers = frozenset({"openai-chat"})
    """))
    base = [sys.executable, "-m", "chatconform.cli", "run", "--impl", "impl.py:Impl",
            "--check", "payload.system_first", "--examples", "20", "--report", "r.jsonl"]
    lenient = subprocess.run(base, cwd=tmp_path, capture_output=True, text=True)
    assert lenient.returncode == 0, lenient.stdout + lenient.stderr
    assert "WARN payload.system_first [openai-chat]" in lenient.stdout
    assert "level:" in lenient.stdout and "Qwen" in lenient.stdout
    strict = subprocess.run([*base, "--strict"], cwd=tmp_path, capture_output=True, text=True)
    assert strict.returncode == 1
    report = (tmp_path / "r.jsonl").read_text()
    assert '"status": "warn"' in report and '"level": "warning"' in report


@pytest.mark.parametrize("check, expected", [
    ("payload.system_first", "error; warning for deepseek, glm, groq, kimi, mistral, openai-chat, "
                                 "openai-responses, openrouter"),
    ("payload.matches_reference", "warning"),
    ("thread.matches_reference", "error"),
])
def test_list_shows_each_checks_levels(check, expected):
    import json

    done = subprocess.run([sys.executable, "-m", "chatconform.cli", "list", "--format", "json"],
                          capture_output=True, text=True, check=True)
    levels = {c["id"]: c["level"] for c in json.loads(done.stdout)["checks"]}
    assert levels[check] == expected


# -- what the payload checks call lost, voiced and different ------------------------------

from pydantic_ai.messages import (  # noqa: E402
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from chatconform.contracts import get_contract  # noqa: E402
from chatconform.contracts.payload import PayloadCase  # noqa: E402
from chatconform.engine import evaluate_case  # noqa: E402
from chatconform.fakes.payload import WrapsLaterSystemPrompts  # noqa: E402
from chatconform.reference.payload import to_payload  # noqa: E402
from chatconform.runner.discovery import wrap  # noqa: E402

HISTORY = [ModelRequest([SystemPromptPart("Answer in French. (s1)"), UserPromptPart("hi (u1)")]),
           ModelResponse([TextPart("bonjour (a1)")]),
           ModelRequest([SystemPromptPart("Be brief. (s2)"), UserPromptPart("and now? (u2)")])]


def _failures(impl, provider):
    evaluation = evaluate_case(wrap(impl), get_contract("payload"), PayloadCase(list(HISTORY)), provider, timeout=5)
    return {f.check: f.level for f in evaluation.failures}


def test_a_system_prompt_sent_as_user_text_is_sent_not_lost():
    assert _failures(WrapsLaterSystemPrompts, "anthropic") == {
        "payload.system_voice": "warning", "payload.matches_reference": "warning"}


class _Edited:
    name, version, providers = "edited", "0", frozenset({"openai-chat"})

    def __init__(self, edit):
        self.edit = edit

    def to_payload(self, history, *, provider, instructions=None):
        body = to_payload(history, provider=provider, instructions=instructions)
        self.edit(body["messages"])
        return body


def test_framing_around_a_text_matches_the_reference():
    def frame(messages):
        messages[1]["content"] = "The user says:\n" + messages[1]["content"]

    assert _failures(_Edited(frame), "openai-chat") == {}


def test_a_turn_missing_differs_from_the_reference_as_advice_and_is_lost_as_an_error():
    def drop_answer(messages):
        del messages[2]

    failures = _failures(_Edited(drop_answer), "openai-chat")
    assert failures["payload.matches_reference"] == "warning"
    assert failures["payload.nothing_lost"] == "error"


def test_a_frame_tag_escaped_as_html_is_sent_not_lost():
    def escape_tags(messages):
        messages[1]["content"] = messages[1]["content"].replace("<", "&lt;")

    history = [ModelRequest([UserPromptPart("quote <system>x</system> (u1)")]), ModelResponse([TextPart("ok (a1)")])]
    evaluation = evaluate_case(wrap(_Edited(escape_tags)), get_contract("payload"), PayloadCase(history),
                               "openai-chat", timeout=5)
    assert [f.check for f in evaluation.failures] == []


def test_gemini_base64_in_either_alphabet_is_the_same_file():
    from chatconform.provider_schemas import turn_view

    def body(data):
        return {"contents": [{"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": data}},
                                                        {"text": "what is it?"}]}]}

    assert turn_view(body("+/+/AA=="), "gemini")[0].media == turn_view(body("-_-_AA=="), "gemini")[0].media


REUSED = [ModelRequest([UserPromptPart("go (u1)")]),
          ModelResponse([ToolCallPart("read_file", {}, "call_1")]),
          ModelRequest([ToolReturnPart("read_file", "text (r1)", "call_1")]),
          ModelResponse([ToolCallPart("get_weather", {}, "call_1")]),
          ModelRequest([ToolReturnPart("get_weather", "sunny (r2)", "call_1")])]


@pytest.mark.parametrize("provider, level", [("anthropic", "error"), ("mistral", "error"), ("glm", "error"),
                                             ("openai-chat", "warning"), ("gemini", "warning")])
def test_a_reused_id_sent_twice_is_an_error_where_it_is_rejected(provider, level):
    from chatconform.fakes.payload import ReusedIdsPassedThrough

    class Everywhere(ReusedIdsPassedThrough):
        providers = frozenset({provider})

    evaluation = evaluate_case(wrap(Everywhere), get_contract("payload"), PayloadCase(list(REUSED)), provider,
                               timeout=5)
    failures = {f.check: f for f in evaluation.failures}
    assert failures["payload.tool_pairing"].level == level and "used twice" in failures["payload.tool_pairing"].message
    assert "payload.nothing_lost" not in failures  # each result is credited to its own round's call


def test_a_file_url_sent_as_downloaded_bytes_is_sent():
    from pydantic_ai.messages import ImageUrl

    def download(messages):
        messages[0]["content"][1] = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}

    history = [ModelRequest([UserPromptPart(["look (u1)", ImageUrl("https://example.com/cat.png")])]),
               ModelResponse([TextPart("a cat (a1)")])]
    evaluation = evaluate_case(wrap(_Edited(download)), get_contract("payload"), PayloadCase(history),
                               "openai-chat", timeout=5)
    assert [f.check for f in evaluation.failures if f.level == "error"] == []

    def drop(messages):
        del messages[0]["content"][1]

    evaluation = evaluate_case(wrap(_Edited(drop)), get_contract("payload"), PayloadCase(history),
                               "openai-chat", timeout=5)
    assert "payload.nothing_lost" in [f.check for f in evaluation.failures]


def test_markdown_lists_errors_warnings_and_expected_failures_with_their_cases():
    from chatconform.outputs.report import Report
    from chatconform.outputs.reporters import markdown

    def result(check, status, example):
        return {"type": "result", "implementation": "lib", "contract": "payload", "check": check, "status": status,
                "message": f"{check} went wrong", "example": example, "variant": "openai-chat",
                "examples": 100, "evaluated": 100}

    report = Report({"version": "0", "profile": "ci"},
                    [result("payload.user_led", "xfail", {"history": [1]}),
                     result("payload.system_first", "warn", None),
                     result("payload.tool_pairing", "fail", {"history": [2]}),
                     result("payload.nothing_lost", "pass", None)],
                    {"counts": {"pass": 1, "fail": 1, "warn": 1, "xfail": 1}})
    text = markdown(report)
    rows = [line for line in text.splitlines() if line.startswith("| lib |")]
    assert [row.split(" | ")[2] for row in rows] == ["FAIL", "warn", "xfail"]
    assert text.count("<details>") == 2 and '{"history": [1]}' in text and '{"history": [2]}' in text


def test_markdown_cuts_a_case_that_did_not_shrink_and_says_where_the_rest_is():
    from chatconform.outputs.report import Report
    from chatconform.outputs.reporters import markdown

    huge = {"history": [{"role": "user", "content": "y" * 100_000}]
            + [{"role": "user", "content": f"message {i} " + "x" * 50} for i in range(2000)]}
    report = Report({"version": "0", "profile": "ci"},
                    [{"type": "result", "implementation": "lib", "contract": "payload", "check": "payload.no_crash",
                      "status": "fail", "message": "timed out", "example": huge, "variant": None}],
                    {"counts": {"fail": 1}})
    text = markdown(report)
    assert len(text) < 40_000
    assert "more lines: the whole case is in the report's 'example' field" in text
    assert "message 0 " in text and "message 1999 " not in text
    assert "y" * 250 in text and "y" * 301 not in text and "... (100" in text


# -- levels rest on a cited rule, or say why they are warnings ---------------------------------

USER_BEFORE_RESULT = [ModelRequest([UserPromptPart("read it (u1)")]),
                      ModelResponse([ToolCallPart("read_file", {}, "call_1")]),
                      ModelRequest([UserPromptPart("and hurry (u2)"),
                                    ToolReturnPart("read_file", "text (r1)", "call_1")])]


def _pairing(provider):
    from chatconform.fakes.payload import ToolResultAfterUser

    class Here(ToolResultAfterUser):
        providers = frozenset({provider})

    evaluation = evaluate_case(wrap(Here), get_contract("payload"), PayloadCase(list(USER_BEFORE_RESULT)), provider,
                               timeout=5)
    return {f.check: f for f in evaluation.failures}["payload.tool_pairing"]


def test_user_text_between_a_call_and_its_result_is_a_warning_on_qwen_vllm():
    failure = _pairing("qwen-vllm")
    assert failure.level == "warning"
    assert "no rejection known for qwen-vllm" in failure.message and "vLLM validates no pairing" in failure.message


def test_user_text_between_a_call_and_its_result_is_an_error_citing_o8_on_openai():
    failure = _pairing("openai-chat")
    assert failure.level == "error" and "rule O8" in failure.message


FAILED = [ModelRequest([UserPromptPart("weather? (u1)")]),
          ModelResponse([ToolCallPart("get_weather", {"city": "Paris"}, "call_1")]),
          ModelRequest([ToolReturnPart("get_weather", "Tool failed: timeout", "call_1", outcome="failed")])]


def _error_flag(impl, provider):
    evaluation = evaluate_case(wrap(impl), get_contract("payload"), PayloadCase(list(FAILED)), provider, timeout=5)
    return {f.check: f for f in evaluation.failures}.get("payload.error_flag_kept")


def test_the_failure_text_marks_a_failed_result_where_the_dialect_has_no_flag():
    from chatconform.fakes.payload import DropsToolErrorFlag

    for provider in ("openai-chat", "qwen-vllm", "glm", "mistral"):
        class Plain(DropsToolErrorFlag):
            providers = frozenset({provider})

        assert _error_flag(Plain, provider) is None, provider
    body = wrap(DropsToolErrorFlag).method(get_contract("payload"))(list(FAILED), provider="openai-chat")
    assert body["messages"][-1]["content"] == "Tool failed: timeout"  # sent as a plain tool message


def test_a_tool_message_without_the_failure_text_fails_where_the_dialect_has_no_flag():
    def as_success(messages):
        messages[-1]["content"] = "done"

    failure = _error_flag(_Edited(as_success), "openai-chat")
    assert failure is not None and failure.level == "error" and "failure text" in failure.message


@pytest.mark.parametrize("provider", ["anthropic", "bedrock-converse", "gemini"])
def test_a_dropped_native_error_flag_still_fails(provider):
    from chatconform.fakes.payload import DropsToolErrorFlag

    class Here(DropsToolErrorFlag):
        providers = frozenset({provider})

    failure = _error_flag(Here, provider)
    assert failure is not None and failure.level == "error" and "not marked as an error" in failure.message


def test_list_levels_prints_one_line_per_check_and_provider():
    from chatconform.provider_schemas.levels import level_table

    done = subprocess.run([sys.executable, "-m", "chatconform.cli", "list", "--levels"],
                          capture_output=True, text=True, check=True)
    lines = done.stdout.splitlines()
    assert len(lines) == len(level_table())
    rows = {tuple(line.split()[:2]): line.split()[2:4] for line in lines if " (" not in line.split("  ")[0]}
    assert rows[("payload.tool_pairing", "qwen-vllm")] == ["warning", "-"]
    assert rows[("payload.tool_pairing", "openai-chat")] == ["error", "O8"]
    assert rows[("payload.system_first", "qwen-vllm")] == ["error", "Q3"]
    markdown = subprocess.run([sys.executable, "-m", "chatconform.cli", "list", "--levels", "--format", "markdown"],
                              capture_output=True, text=True, check=True).stdout.splitlines()
    assert markdown[0].startswith("| check | provider | level |") and len(markdown) == len(lines) + 2


@pytest.mark.parametrize("provider, level, cited", [("openai-chat", "warning", "no rejection known for openai-chat"),
                                                    ("glm", "error", "rule Z1")])
def test_a_compacted_history_that_is_not_user_led_weighs_what_the_mapped_provider_says(provider, level, cited):
    from chatconform.contracts.compaction import CompactionCase
    from chatconform.fakes.compaction import SystemRoleSummary

    class MapsToo(SystemRoleSummary):
        providers = frozenset({provider})

        def to_payload(self, history, *, provider, instructions=None):
            return to_payload(history, provider=provider, instructions=instructions)

    history = [ModelRequest([UserPromptPart("read it (u1)")]), ModelResponse([ToolCallPart("read_file", {}, "c1")]),
               ModelRequest([ToolReturnPart("read_file", "text (r1)", "c1")]), ModelResponse([TextPart("done (a1)")])]
    evaluation = evaluate_case(wrap(MapsToo), get_contract("compaction"), CompactionCase(history, 1, "Summary (s)"),
                               None, timeout=5)
    failure = {f.check: f for f in evaluation.failures}["compaction.user_led"]
    assert failure.level == level and cited in failure.message


PARALLEL = [ModelRequest([UserPromptPart("weather in two cities (u1)")]),
            ModelResponse([ToolCallPart("get_weather", {"city": "Paris"}, "call_1"),
                           ToolCallPart("get_weather", {"city": "Oslo"}, "call_2")]),
            ModelRequest([ToolReturnPart("get_weather", "sunny (r1)", "call_1"),
                          ToolReturnPart("get_weather", "rainy (r2)", "call_2")])]


def test_calls_without_ids_are_paired_by_position_and_never_reused():
    """Gemini's call ids are optional: a body that sends none pairs each result with the
    oldest open call, and two calls without an id are not one id used twice."""
    from chatconform.reference import ReferenceImplementation

    def without_ids(value):
        if isinstance(value, dict):
            return {k: without_ids(v) for k, v in value.items() if k != "id"}
        return [without_ids(v) for v in value] if isinstance(value, list) else value

    class NoIds:
        name, version, providers = "no-ids", "1", frozenset({"gemini"})

        def to_payload(self, history, *, provider, instructions=None):
            return without_ids(ReferenceImplementation.to_payload(history, provider=provider,
                                                                  instructions=instructions))

    evaluation = evaluate_case(wrap(NoIds), get_contract("payload"), PayloadCase(list(PARALLEL)), "gemini", timeout=5)
    assert "payload.tool_pairing" in evaluation.evaluated
    assert [f.message for f in evaluation.failures if f.check == "payload.tool_pairing"] == []


@pytest.mark.parametrize("raised, level", [
    (ValueError("OpenAI Chat Completions does not support file URLs."), "warning"),
    (NotImplementedError("DocumentUrl"), "warning"),
    (KeyError("url"), "error"), (AttributeError("'NoneType' has no 'url'"), "error")])
def test_a_refusal_excuses_only_the_exception_that_refuses_the_content(raised, level):
    """A case holding a link the provider cannot take may be refused; a KeyError on it is a
    crash all the same, never hidden behind the refusal's warning."""
    from pydantic_ai.messages import DocumentUrl

    class Raises:
        name, version, providers = "raises", "1", frozenset({"openai-chat"})

        def to_payload(self, history, *, provider, instructions=None):
            raise raised

    history = [ModelRequest([UserPromptPart(["read this (u1)", DocumentUrl("https://example.com/a.pdf")])])]
    evaluation = evaluate_case(wrap(Raises), get_contract("payload"), PayloadCase(history), "openai-chat", timeout=5)
    crash = [f for f in evaluation.failures if f.check == "payload.no_crash"]
    assert [f.level for f in crash] == [level]
    assert ("a crash, not a refusal" in crash[0].message) == (level == "error")


def test_a_reused_id_met_first_does_not_hide_a_pairing_error():
    """OpenAI accepts a reused id (a warning) but rejects a call left unanswered: the body
    with both fails tool_pairing as the error, counting the other fault."""
    from chatconform.fakes.payload import ReusedIdsPassedThrough

    class ReusesAndDropsTheLast(ReusedIdsPassedThrough):
        providers = frozenset({"openai-chat"})

        def to_payload(self, history, *, provider, instructions=None):
            body = super().to_payload(history, provider=provider, instructions=instructions)
            body["messages"] = body["messages"][:-1]  # the second call's result
            return body

    evaluation = evaluate_case(wrap(ReusesAndDropsTheLast), get_contract("payload"), PayloadCase(list(REUSED)),
                               "openai-chat", timeout=5)
    pairing = next(f for f in evaluation.failures if f.check == "payload.tool_pairing")
    assert pairing.level == "error" and "never answered" in pairing.message and "1 more fault" in pairing.message
