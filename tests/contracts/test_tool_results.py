"""A tool result's content, judged where it belongs: an answer holding another call's result
fails ``tool_pairing``; one that lacks its own content fails ``nothing_lost``; one that holds
it in another notation (a tool's dict sent as ``str(output)``, unprintables escaped) passes
both."""

import pytest

from chatconform import check_case
from chatconform.reference.payload import to_payload

CALL = {"part_kind": "tool-call", "tool_name": "search", "args": "{}", "tool_call_id": "call_2"}
RESULT = {"part_kind": "tool-return", "tool_name": "search", "tool_call_id": "call_2",
          "content": {"result": "ok \u2615 caf\u00e9 \U0001f469\u200d\U0001f4bb (r3)", "count": 0}}
CASE = {"history": [
    {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "Find it (u1)"}]},
    {"kind": "response", "parts": [CALL]},
    {"kind": "request", "parts": [RESULT]},
]}


class ToolContent:
    """The reference's body with each tool message's content rewritten by ``rewrite``."""

    version = "1"

    def __init__(self, name, rewrite):
        self.name, self.rewrite = name, rewrite

    def to_payload(self, history, *, provider, instructions=None):
        body = to_payload(history, provider=provider, instructions=instructions)
        for message in body["messages"]:
            if message.get("role") == "tool":
                message["content"] = self.rewrite(message["content"])
        return body


AS_PYTHON_STR = ToolContent("as-str", lambda _: str(RESULT["content"]))
BLANKED = ToolContent("blanked", lambda _: "(no output)")


@pytest.mark.parametrize("check", ["payload.tool_pairing", "payload.nothing_lost"])
def test_a_result_in_python_notation_is_its_own_and_not_lost(check):
    assert "\\u200d" in str(RESULT["content"])  # what str() of the dict sends
    check_case(AS_PYTHON_STR, check, CASE, variant="openai-chat", in_process=True)


def test_a_result_without_its_content_is_a_loss_not_a_pairing_fault():
    check_case(BLANKED, "payload.tool_pairing", CASE, variant="openai-chat", in_process=True)
    with pytest.raises(AssertionError, match="lacks its result's content"):
        check_case(BLANKED, "payload.nothing_lost", CASE, variant="openai-chat", in_process=True)


def test_an_answer_holding_another_rounds_result_is_a_pairing_fault():
    first = {**RESULT, "content": "sunny (r3)"}
    second = {**RESULT, "content": "rainy (r5)"}
    case = {"history": [
        {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "Weather? (u1)"}]},
        {"kind": "response", "parts": [CALL]},
        {"kind": "request", "parts": [first]},
        {"kind": "response", "parts": [CALL]},
        {"kind": "request", "parts": [second]},
    ]}
    with pytest.raises(AssertionError, match="holds another call's result"):
        check_case("chatconform.fakes.payload:ResultsByIdDict", "payload.tool_pairing", case,
                   variant="openai-chat", in_process=True)
