"""Cross-check the mistral verdicts against Mistral's own validator (mistral-common, V11, serving).

Our matrix is the hosted API's, which still rejects tool -> user; mistral-common accepts it since
2026-04, so conversations with that step are left out of the comparison (and checked apart).
"""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

# mistral-common is in the dev extra: a missing validator is a broken setup, not a skip.
from mistral_common.exceptions import MistralCommonException
from mistral_common.protocol.instruct.messages import AssistantMessage, SystemMessage, ToolMessage, UserMessage
from mistral_common.protocol.instruct.tool_calls import FunctionCall, ToolCall
from mistral_common.protocol.instruct.validator import MistralRequestValidatorV11, ValidationMode

from chatconform.provider_schemas import validate

IDS = ["abcDEF123", "xyz987QRS", "A1b2C3d4E"]

system = st.just({"role": "system", "content": "be brief"})
user = st.just({"role": "user", "content": "hi"})
tool = st.sampled_from(IDS).map(lambda i: {"role": "tool", "tool_call_id": i, "content": "21C"})
assistant = st.builds(
    lambda ids, prefix: {"role": "assistant", "content": None if ids else "ok"}
    | ({"tool_calls": [{"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids]}
       if ids else {})
    | ({"prefix": True} if prefix else {}),
    st.lists(st.sampled_from(IDS), max_size=2),
    st.sampled_from([False, False, False, True]),  # prefix, now and then
)
conversations = st.builds(
    lambda first, rest: [first, *rest],
    st.one_of(system, user),
    st.lists(st.one_of(system, user, assistant, tool), max_size=7),
)


def _library_messages(messages):
    out = []
    for m in messages:
        if m["role"] == "system":
            out.append(SystemMessage(content=m["content"]))
        elif m["role"] == "user":
            out.append(UserMessage(content=m["content"]))
        elif m["role"] == "tool":
            out.append(ToolMessage(content=m["content"], tool_call_id=m["tool_call_id"]))
        else:
            calls = [ToolCall(id=c["id"], function=FunctionCall(name="f", arguments="{}"))
                     for c in m.get("tool_calls", [])]
            out.append(AssistantMessage(content=m.get("content"), tool_calls=calls or None,
                                        prefix=m.get("prefix", False)))
    return out


def _library_accepts(messages) -> bool:
    try:
        MistralRequestValidatorV11(mode=ValidationMode.serving).validate_messages(_library_messages(messages))
    except MistralCommonException:
        return False
    return True


def _tool_then_user(messages) -> bool:
    return any(a["role"] == "tool" and b["role"] == "user" for a, b in itertools.pairwise(messages))


@settings(max_examples=300, suppress_health_check=list(HealthCheck))
@given(conversations)
def test_same_verdict_as_mistral_common(messages):
    assume(not _tool_then_user(messages))
    errors = [p for p in validate(messages, "mistral") if p.severity == "error"]
    assert (not errors) == _library_accepts(messages), errors


def test_tool_then_user_is_the_one_known_difference():
    messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "tool_calls": [{"id": IDS[0], "type": "function", "function": {"name": "f", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": IDS[0], "content": "21C"},
        {"role": "user", "content": "and?"},
    ]
    assert _library_accepts(messages)
    assert [p.rule for p in validate(messages, "mistral")] == ["M1"]
