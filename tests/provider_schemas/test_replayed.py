"""The rules that judge a request against the answers sent before it in its conversation
(``replayed``): Anthropic's thinking blocks (A22, A23), DeepSeek's and Kimi's reasoning_content
(D3, K2), OpenRouter's reasoning_details (P3, P4); each on a plain answer and on its stream; and
any value in any place of a body or an answer, read without a crash."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from chatconform.provider_schemas import PROVIDER_IDS, replay_problems, validate

THINKING = {"type": "thinking", "thinking": "Call the tool.", "signature": "c2ln"}
CALL = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
ANTHROPIC_ANSWER = json.dumps({"type": "message", "role": "assistant", "content": [THINKING, CALL]})


def _sse(*events: dict) -> str:
    return "".join(f"event: {e.get('type', '')}\ndata: {json.dumps(e)}\n\n" for e in events)


ANTHROPIC_STREAM = _sse(
    {"type": "message_start", "message": {"type": "message", "content": []}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Call the "}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "tool."}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "c2ln"}},
    {"type": "content_block_start", "index": 1, "content_block": {**CALL, "input": {}}},
    {"type": "message_stop"})


def _anthropic(assistant: list, *, thinking: bool = True, after: bool = True) -> dict:
    messages = [{"role": "user", "content": "Weather?"}, {"role": "assistant", "content": assistant}]
    if after:
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                                      "content": "sunny"}]})
    body: dict = {"model": "claude-sonnet-4-5", "max_tokens": 64, "messages": messages}
    return body | ({"thinking": {"type": "enabled", "budget_tokens": 1024}} if thinking else {})


def _rules(body: dict, provider: str, earlier: list[str], model: str | None = None) -> list[tuple]:
    return [(p.rule, p.path, p.severity) for p in replay_problems(body, provider, model, earlier)]


def test_anthropic_thinking_sent_back_as_returned_is_clean():
    for answer in (ANTHROPIC_ANSWER, ANTHROPIC_STREAM):
        assert _rules(_anthropic([THINKING, CALL]), "anthropic", [answer]) == []


def test_anthropic_latest_message_with_its_thinking_changed_is_a23():
    changed = {**THINKING, "thinking": "Call the tool, quickly."}
    for answer in (ANTHROPIC_ANSWER, ANTHROPIC_STREAM):
        assert _rules(_anthropic([changed, CALL]), "anthropic", [answer]) == [
            ("A23", "$.messages[1].content[0]", "error")]
    [problem] = replay_problems(_anthropic([changed, CALL]), "anthropic", None, [ANTHROPIC_ANSWER])
    assert problem.message == ("messages.1.content.0: `thinking` or `redacted_thinking` blocks in the latest "
                               "assistant message cannot be modified. These blocks must remain as they were in the "
                               "original response.")


def test_anthropic_an_earlier_message_with_its_signature_changed_is_a22():
    body = _anthropic([{**THINKING, "signature": "b3RoZXI="}, CALL])
    body["messages"] += [{"role": "assistant", "content": "Sunny."}, {"role": "user", "content": "Thanks."}]
    [problem] = replay_problems(body, "anthropic", None, [ANTHROPIC_ANSWER])
    assert (problem.rule, problem.path) == ("A22", "$.messages[1].content[0]")
    assert problem.message == "messages.1.content.0: Invalid `signature` in `thinking` block"


def test_anthropic_what_other_rules_judge_or_nothing_certain_is_left_alone():
    # dropped from the latest message: A20, body-local; thinking off: not judged
    assert _rules(_anthropic([CALL]), "anthropic", [ANTHROPIC_ANSWER]) == []
    assert [p.rule for p in validate(_anthropic([CALL]), "anthropic")] == ["A20"]
    assert _rules(_anthropic([{**THINKING, "thinking": "x"}, CALL], thinking=False), "anthropic",
                  [ANTHROPIC_ANSWER]) == []
    # another turn (no tool_use id in common): not this answer
    other = {**CALL, "id": "toolu_2"}
    assert _rules(_anthropic([{**THINKING, "thinking": "x"}, other]), "anthropic", [ANTHROPIC_ANSWER]) == []


TOOL_CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
CHAT_ANSWER = json.dumps({"choices": [{"index": 0, "message": {
    "role": "assistant", "content": None, "reasoning_content": "Call the tool.", "tool_calls": [TOOL_CALL]}}]})
CHAT_STREAM = "".join(f"data: {json.dumps({'choices': [{'index': 0, 'delta': d}]})}\n\n" for d in (
    {"role": "assistant", "content": ""}, {"reasoning_content": "Call the tool."},
    {"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "get_weather"}}]},
    {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]})) + "data: [DONE]\n\n"


def _chat(model: str, assistant: dict, **extra) -> dict:
    return {"model": model, **extra, "messages": [
        {"role": "user", "content": "Weather?"}, {"role": "assistant", **assistant},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}]}


def test_deepseek_and_kimi_a_returned_reasoning_content_dropped_is_d3_k2():
    dropped = {"content": None, "tool_calls": [TOOL_CALL]}
    for answer in (CHAT_ANSWER, CHAT_STREAM):
        assert _rules(_chat("deepseek-chat", dropped), "deepseek", [answer]) == [("D3", "$.messages[1]", "error")]
        assert _rules(_chat("kimi-k2.5", dropped), "kimi", [answer]) == [("K2", "$.messages[1]", "error")]
    kept = {**dropped, "reasoning_content": "Call the tool."}
    assert _rules(_chat("deepseek-chat", kept), "deepseek", [CHAT_ANSWER]) == []


def test_deepseek_reasoning_dropped_where_the_model_or_the_body_decides_otherwise():
    dropped = {"content": None, "tool_calls": [TOOL_CALL]}
    assert _rules(_chat("deepseek-r1", dropped), "deepseek", [CHAT_ANSWER]) == []  # R1 takes it without
    off = _chat("deepseek-chat", dropped, thinking={"type": "disabled"})
    assert _rules(off, "deepseek", [CHAT_ANSWER]) == []
    # thinking on in the body: D3 is check's, reported once
    on = _chat("deepseek-reasoner", dropped)
    assert _rules(on, "deepseek", [CHAT_ANSWER]) == [] and [p.rule for p in validate(on, "deepseek")] == ["D3"]


DETAIL = {"type": "reasoning.text", "text": "Call the tool.", "signature": "c2ln", "format": "google-gemini-v1",
          "index": 0}
ROUTER_ANSWER = json.dumps({"choices": [{"index": 0, "message": {
    "role": "assistant", "content": None, "reasoning": "Call the tool.", "reasoning_details": [DETAIL],
    "tool_calls": [TOOL_CALL]}}]})
ROUTER_STREAM = "".join(f"data: {json.dumps({'choices': [{'index': 0, 'delta': d}]})}\n\n" for d in (
    {"role": "assistant", "content": ""},
    {"reasoning_details": [{**DETAIL, "text": "Call the ", "signature": None}]},
    {"reasoning_details": [{"type": "reasoning.text", "text": "tool.", "signature": "c2ln", "index": 0}]},
    {"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "get_weather"}}]}))


def test_openrouter_details_changed_are_p3_for_gemini_and_p4_for_others():
    changed = {"content": None, "tool_calls": [TOOL_CALL], "reasoning_details": [{**DETAIL, "text": "other"}]}
    for answer in (ROUTER_ANSWER, ROUTER_STREAM):
        assert _rules(_chat("google/gemini-3-pro-preview", changed), "openrouter", [answer]) == [
            ("P3", "$.messages[1]", "error")]
        assert _rules(_chat("anthropic/claude-sonnet-4.5", changed), "openrouter", [answer]) == [
            ("P4", "$.messages[1]", "warning")]
        kept = {**changed, "reasoning_details": [DETAIL]}
        assert _rules(_chat("google/gemini-3-pro-preview", kept), "openrouter", [answer]) == []
    # dropped while the body asks for reasoning: P2's, judged by check
    dropped = _chat("google/gemini-3-pro-preview", {"content": None, "tool_calls": [TOOL_CALL]},
                    reasoning={"enabled": True})
    assert _rules(dropped, "openrouter", [ROUTER_ANSWER]) == []
    assert [p.rule for p in validate(dropped, "openrouter")] == ["P2"]


# What a client sends and what the server recorded are data the rules read, never trusted: any
# JSON value in any place of a body, and any text as an earlier answer, is judged or passed over.
_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                 max_size=3), max_leaves=8)
_BODIES = {"anthropic": _anthropic([THINKING, CALL]),
           "deepseek": _chat("deepseek-chat", {"tool_calls": [TOOL_CALL]}),
           "kimi": _chat("kimi-k2.5", {"tool_calls": [TOOL_CALL]}),
           "openrouter": _chat("google/gemini-3-pro-preview",
                               {"tool_calls": [TOOL_CALL], "reasoning_details": [DETAIL]})}
_SIGNED_CALL = {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": "c2ln"}
_BODIES["gemini"] = {"contents": [
    {"role": "user", "parts": [{"text": "Weather?"}]}, {"role": "model", "parts": [_SIGNED_CALL]},
    {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"r": "sunny"}}}]}]}
_ITEMS = [{"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "ZW5j"},
          {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather", "arguments": "{}"}]
_BODIES["openai-responses"] = {"model": "gpt-5", "store": False, "input": [
    {"role": "user", "content": "Weather?"}, *_ITEMS, {"type": "function_call_output", "call_id": "call_1",
                                                       "output": "sunny"}]}
_ANSWERS = [ANTHROPIC_ANSWER, ANTHROPIC_STREAM, CHAT_ANSWER, CHAT_STREAM, ROUTER_ANSWER, ROUTER_STREAM,
            json.dumps({"candidates": [{"content": {"role": "model", "parts": [_SIGNED_CALL]}}]}),
            json.dumps({"object": "response", "id": "resp_1", "output": _ITEMS})]


def _places(value: Any, path: tuple = ()) -> list[tuple]:
    """Every path into ``value`` (keys and indexes), the root's included."""
    inner = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    return [path, *(p for key, child in inner for p in _places(child, (*path, key)))]


def _replaced(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _replaced(value[path[0]], path[1:], new)
    return copy


@settings(max_examples=150, deadline=None)
@given(provider=st.sampled_from(sorted(PROVIDER_IDS)), base=st.sampled_from(sorted(_BODIES)), data=st.data(),
       new=_JSON, answer=st.sampled_from(_ANSWERS) | st.text(max_size=40), cut=st.integers(0, 400))
def test_any_value_anywhere_in_a_body_or_an_answer_is_judged_never_a_crash(provider, base, data, new, answer, cut):
    body = _BODIES[base]
    path = data.draw(st.sampled_from(_places(body)), label="path")
    mutated = _replaced(body, path, new)
    earlier = [answer, answer[:cut]]  # an answer recorded whole and one cut off mid-stream
    if isinstance(mutated, dict):
        assert all(p.severity in ("error", "warning") for p in replay_problems(mutated, provider, None, earlier))
