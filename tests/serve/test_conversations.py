"""Conversations known by their content: a history that extends one seen before continues it,
any other starts a new one from the script's first entry; a request asked again gets the same
reply (past an interruption, the next); a marker in the first user text picks a script."""

from __future__ import annotations

import pytest

httpx = pytest.importorskip("httpx", reason="the serve tests post with httpx (a dependency of the SDK extras)")
pytest.importorskip("starlette", reason="chatconform serve needs the serve extra (starlette, uvicorn)")

from chatconform.serve.conversations import Conversations  # noqa: E402

pytestmark = pytest.mark.serve

TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]
SCRIPT = [{"tool_calls": [{"name": "lookup", "arguments": {"q": "a"}}]}, {"text": "Found a."}, {"text": "Bye."}]


def post(server, messages: list) -> dict:
    response = httpx.post(server.root + "/v1/chat/completions", timeout=10,
                          json={"model": "gpt-4o", "messages": messages, "tools": TOOLS})
    assert response.status_code == 200, response.text
    return response.json()["choices"][0]["message"]


def run_app(server, opening: str) -> list[str]:
    """A three-request tool conversation as an application plays it: what each reply was."""
    messages: list = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": opening}]
    first = post(server, messages)
    [call] = first["tool_calls"]
    messages += [{"role": "assistant", "content": None, "tool_calls": [call]},
                 {"role": "tool", "tool_call_id": call["id"], "content": "a is 1"}]
    second = post(server, messages)
    messages += [{"role": "assistant", "content": second["content"]}, {"role": "user", "content": "Thanks."}]
    third = post(server, messages)
    return [call["function"]["name"], second["content"], third["content"]]


def test_the_same_application_twice_plays_the_script_twice(server):
    server.script(SCRIPT)
    before = len(server.verdicts)
    assert run_app(server, "Look up a (twice)") == ["lookup", "Found a.", "Bye."]
    assert run_app(server, "Look up a (twice)") == ["lookup", "Found a.", "Bye."]
    judged = server.verdicts[before:]
    assert [(v.turn, v.entry, v.again) for v in judged] == [
        (1, 1, False), (2, 2, False), (3, 3, False), (1, 1, True), (2, 2, True), (3, 3, True)]
    assert len({v.conversation for v in judged}) == 1


def test_a_history_that_extends_none_is_a_new_conversation_from_the_first_entry(server):
    server.script(SCRIPT)
    before = len(server.verdicts)
    assert run_app(server, "Look up a (one)")[1] == "Found a."
    # the same opening text, but a history that extends no request seen: a new conversation
    other = post(server, [{"role": "assistant", "content": "Hello."}, {"role": "user", "content": "Look up a (one)"}])
    assert other["tool_calls"][0]["function"]["name"] == "lookup"  # entry 1 again
    first, *_, last = server.verdicts[before:]
    assert (last.turn, last.entry) == (1, 1) and last.conversation == first.conversation + "-2"


def test_a_retry_uses_no_turn_and_an_interruption_moves_the_script_on(server):
    server.script([{"text": "One."}, {"status": 529, "message": "Overloaded"}, {"text": "Two."}])
    messages = [{"role": "user", "content": "Retry (conversations)"}]
    assert post(server, messages)["content"] == "One."
    assert post(server, messages)["content"] == "One."  # asked again: the same reply, no turn used
    messages += [{"role": "assistant", "content": "One."}, {"role": "user", "content": "More?"}]
    body = {"model": "gpt-4o", "messages": messages}
    assert httpx.post(server.root + "/v1/chat/completions", json=body, timeout=10).status_code == 529
    assert post(server, messages)["content"] == "Two."  # the retry after the 529 gets the next entry
    judged = server.verdicts[-4:]
    assert [(v.turn, v.entry, v.again, v.status) for v in judged] == [
        (1, 1, False, 200), (1, 1, True, 200), (2, 2, False, 529), (2, 3, True, 200)]


def test_a_script_names_a_conversation_by_a_marker_in_its_first_user_text(server):
    server.script({"[weather]": [{"text": "Sunny."}], "[news]": [{"text": "Nothing new."}], "": ["Plain."]})
    assert post(server, [{"role": "user", "content": "[news] What happened? (marker)"}])["content"] == "Nothing new."
    assert post(server, [{"role": "user", "content": "Rain? [weather] (marker)"}])["content"] == "Sunny."
    assert post(server, [{"role": "user", "content": "Anything (marker)"}])["content"] == "Plain."


def test_a_bad_entry_of_a_marked_script_is_named(tmp_path):
    from chatconform.errors import ConfigError
    from chatconform.serve.replies import load_script

    path = tmp_path / "script.json"
    path.write_text('{"[weather]": [{"text": 1}]}')
    with pytest.raises(ConfigError, match=r"script.json: conversation '\[weather\]': entry 1: field text"):
        load_script(path)


def test_the_longest_known_prefix_is_the_parent():
    conversations = Conversations()
    root = conversations.place([b"a"], "c")
    conversations.answered(root, interrupted=False)
    child = conversations.place([b"a", b"b", b"c"], "other")
    assert (child.conversation, child.turn, child.entry, child.again) == ("c", 2, 2, False)
    conversations.answered(child, interrupted=False)
    assert conversations.place([b"a", b"b", b"c", b"d", b"e"], "x").turn == 3
    assert conversations.place([b"z"], "c").conversation == "c-2"
    assert conversations.place([], "c").conversation == "c-3"  # no turn at all: nothing to extend


def test_a_rejected_request_uses_no_entry():
    conversations = Conversations()
    rejected = conversations.place([b"a"], "c")
    conversations.rejected(rejected)
    again = conversations.place([b"a"], "c")
    assert (again.conversation, again.entry, again.again) == ("c", 1, True)
    conversations.answered(again, interrupted=False)
    assert conversations.place([b"a", b"b"], "c").entry == 2


def test_a_scripted_call_to_a_tool_the_request_does_not_declare_is_the_scripts_error(server, capfd):
    server.script([{"tool_calls": [{"name": "search", "arguments": {}}]}])
    response = httpx.post(server.root + "/v1/chat/completions", timeout=10, json={
        "model": "gpt-4o", "messages": [{"role": "user", "content": "Undeclared (script)"}], "tools": TOOLS})
    assert response.status_code == 500
    message = response.json()["error"]["message"]
    assert "script entry 1 calls search, which this request does not declare (it declares: lookup)" in message
    assert "the error is the script's" in capfd.readouterr().err
    assert (server.verdicts[-1].answered, server.verdicts[-1].problems) == ("script error", ())


def test_drawn_calls_get_fresh_ids():
    from chatconform.serve.replies import Replies

    replies = Replies(generate=True, seed=3)
    for turn in range(1, 30):
        reply = replies.next("", "c", turn, ["lookup", "search"])
        assert all(call.id is None for call in reply.tool_calls)  # made from the conversation, entry, index
        replies.remember("c", [f"id{turn}-{i}" for i in range(len(reply.tool_calls))])
