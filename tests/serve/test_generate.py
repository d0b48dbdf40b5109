"""``chatconform serve --generate``: replies a model would give. Calls only to the declared
tools with arguments valid for each tool's schema, fresh ids (an id sent before only for a
provider whose models reuse ids, labelled), interruptions drawn as part of the conversation
(never two in a row), every draw replayed by its seed."""

from __future__ import annotations

import json

import jsonschema
import pytest

httpx = pytest.importorskip("httpx", reason="the serve tests post with httpx (a dependency of the SDK extras)")
pytest.importorskip("starlette", reason="chatconform serve needs the serve extra (starlette, uvicorn)")

from chatconform.cli import main  # noqa: E402
from chatconform.providers import get_provider  # noqa: E402
from chatconform.serve import start  # noqa: E402
from chatconform.serve.replies import Replies  # noqa: E402
from chatconform.strategies.replies import INTERRUPTIONS  # noqa: E402

pytestmark = pytest.mark.serve

FORECAST = {"type": "object", "additionalProperties": False, "required": ["city", "days"], "properties": {
    "city": {"type": "string", "minLength": 1},
    "days": {"type": "integer", "minimum": 1, "maximum": 7},
    "unit": {"enum": ["c", "f"]}}}
TOOLS = {"forecast": FORECAST, "now": {"type": "object", "properties": {}}}


def draws(seed: int, provider: str = "openai-chat", interruptions=INTERRUPTIONS, turns: int = 8):
    replies = Replies(generate=True, seed=seed, interruptions=tuple(interruptions))
    out = {}
    for conversation in ("a", "b", "c", "d"):
        for entry in range(1, turns + 1):
            reply = replies.next("", conversation, entry, TOOLS, get_provider(provider), (429, 503))
            replies.remember(conversation, [f"id-{conversation}-{entry}-{i}" for i in range(len(reply.tool_calls))])
            out[conversation, entry] = reply
    return out


def test_drawn_replies_are_a_models_and_replay_from_the_seed():
    first = draws(11)
    assert draws(11) == first and draws(12) != first
    validator = jsonschema.Draft202012Validator(FORECAST)
    calls = [call for reply in first.values() for call in reply.tool_calls]
    assert calls and {call.name for call in calls} == {"forecast", "now"}
    assert all(validator.is_valid(c.arguments) for c in calls if c.name == "forecast")
    assert all(c.arguments == {} for c in calls if c.name == "now")
    assert all(call.id is None for call in calls)  # fresh: made from the conversation, entry and index
    assert any(len(reply.tool_calls) > 1 for reply in first.values())  # parallel calls
    assert any(reply.thinking for reply in first.values()) and any(reply.text for reply in first.values())
    assert all(reply.note == "drawn" and reply.kind.endswith("(drawn)") for reply in first.values())


def test_interruptions_are_drawn_never_two_in_a_row_and_only_as_asked():
    seen = set()
    for seed in range(6):
        drawn = draws(seed)
        for (conversation, entry), reply in drawn.items():
            interrupted = reply.status is not None or reply.cut_stream_after is not None
            if interrupted and entry > 1:
                previous = drawn[conversation, entry - 1]
                assert previous.status is None and previous.cut_stream_after is None, (conversation, entry)
            if reply.status is not None:
                assert reply.status in (429, 503)
                seen.add("status")
            elif reply.cut_stream_after is not None:
                seen.add("cut" if reply.cut_stream_after else "drop")
            elif reply.delay:
                seen.add("slow")
    assert seen == set(INTERRUPTIONS)
    calm = [r for seed in range(6) for r in draws(seed, interruptions=("slow",)).values()]
    assert {(r.status, r.cut_stream_after) for r in calm} == {(None, None)} and any(r.delay for r in calm)


def test_an_earlier_id_is_reused_only_for_a_provider_whose_models_do_so_and_labelled():
    for seed in range(4):
        for reply in draws(seed).values():  # openai-chat: every id fresh
            assert all(call.id is None for call in reply.tool_calls)
    kimi = [reply for seed in range(4) for reply in draws(seed, "kimi").values()]
    reusing = [reply for reply in kimi if any(call.id for call in reply.tool_calls)]
    assert reusing, "no drawn reply reused an id for kimi"
    for reply in reusing:
        ids = [call.id for call in reply.tool_calls if call.id]
        assert len(ids) == len(set(ids)) and all(i.startswith("id-") for i in ids)
        assert reply.note == f"drawn; reused id {', '.join(ids)}: {get_provider('kimi').reuses_call_ids}"
    assert get_provider("kimi").reused_call_id.level == "warning"  # the reuse is never the app's error


def test_a_drawn_conversation_over_http_sends_valid_arguments_and_unique_ids():
    """Twelve turns of one conversation through the OpenAI route: each call's arguments valid
    for its tool, every id new, each reply's tool results sent back and judged clean."""
    endpoint = start(generate=True, seed=5, interruptions=())
    tools = [{"type": "function", "function": {"name": name, "parameters": schema}} for name, schema in TOOLS.items()]
    messages: list[dict] = [{"role": "user", "content": "Plan a trip (drawn over http)"}]
    ids: list[str] = []
    validator = jsonschema.Draft202012Validator(FORECAST)
    try:
        for _ in range(12):
            answer = httpx.post(endpoint.root + "/v1/chat/completions", timeout=10,
                                json={"model": "gpt-4o", "messages": messages, "tools": tools}).json()
            message = answer["choices"][0]["message"]
            messages.append({k: v for k, v in message.items() if v is not None})
            for call in message.get("tool_calls") or ():
                arguments = json.loads(call["function"]["arguments"])
                assert call["function"]["name"] in TOOLS
                assert call["function"]["name"] == "now" or validator.is_valid(arguments), arguments
                ids.append(call["id"])
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": "done"})
            if not message.get("tool_calls"):
                messages.append({"role": "user", "content": "And then?"})
    finally:
        endpoint.stop()
    assert len(ids) >= 6 and len(ids) == len(set(ids))
    assert [v.status for v in endpoint.verdicts] == [200] * 12
    assert not [p for v in endpoint.verdicts for p in v.problems]
    assert all(v.answered.endswith("(drawn)") for v in endpoint.verdicts)


def test_the_command_checks_its_interruptions(capsys):
    assert main(["serve", "--generate", "--interruptions", "status,boom", "--port", "0"]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: --interruptions: 'boom' is no interruption; the kinds are status, cut, drop, slow (or none)")
