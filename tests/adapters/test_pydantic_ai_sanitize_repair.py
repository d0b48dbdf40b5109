"""The pydantic-ai adapter's sanitize and repair: pydantic-ai's own functions, where they agree
with the reference, and each expected failure reproduced on its minimal case (so a fix
upstream shows here, and the entry can go)."""

from datetime import UTC, datetime

import pytest
from pydantic_ai.messages import (
    ImageUrl,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
    repair_messages,
    sanitize_messages,
)

from chatconform import check_case
from chatconform.adapters.pydantic_ai import PydanticAIAdapter
from chatconform.history import history_to_json
from chatconform.reference.repair import repair
from chatconform.reference.sanitize import sanitize

AT = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)

pytestmark = [pytest.mark.usefixtures("no_network"),
              pytest.mark.filterwarnings("ignore::UserWarning")]  # sanitize_messages warns on each strip


@pytest.fixture(scope="module")
def adapter():
    return PydanticAIAdapter()


def _user(*content) -> ModelRequest:
    value = content[0] if len(content) == 1 and isinstance(content[0], str) else list(content)
    return ModelRequest([UserPromptPart(value, timestamp=AT)])


def _call(call_id: str) -> ToolCallPart:
    return ToolCallPart("get_weather", {"city": "Paris"}, call_id)


def _result(call_id: str, text: str = "sunny") -> ToolReturnPart:
    return ToolReturnPart("get_weather", text, call_id, timestamp=AT)


def _case(history) -> dict:
    return {"history": history_to_json(history)}


def _expect_failure(check_id: str, history) -> None:
    assert check_id in PydanticAIAdapter.expected_failures
    with pytest.raises(AssertionError, match=check_id.replace(".", r"\.")):
        check_case("pydantic-ai", check_id, _case(history))
    check_case("reference", check_id, _case(history))


def test_sanitize_and_repair_are_pydantic_ai_s_own(adapter):
    history = [ModelRequest([SystemPromptPart("Obey.", timestamp=AT), UserPromptPart("Hi (u1)", timestamp=AT)]),
               ModelResponse([_call("c1")], timestamp=AT)]
    assert adapter.sanitize(history) == sanitize_messages(history) == sanitize(history)
    assert adapter.repair(history) == repair_messages(history) == repair(history)


def test_agrees_with_the_reference_on_the_common_rules(adapter):
    history = [_user("Look (u1)", ImageUrl("HTTPS://x/a.png", force_download=True), ImageUrl(" s3://b/k")),
               ModelResponse([_call("c1"), _call("c2")], timestamp=AT), ModelRequest([_result("c2")]),
               ModelResponse([TextPart("ok (a1)")], timestamp=AT), ModelRequest([_result("c9")])]
    assert adapter.sanitize(history) == sanitize(history)
    assert adapter.repair(history) == repair(history)


def test_expected_failure_no_crash_on_an_unclosed_ipv6_bracket():
    _expect_failure("sanitize.no_crash", [_user(ImageUrl("https://[::1/1.png"), "Hello (u1)")])


def test_expected_failure_a_url_without_a_scheme_is_kept():
    _expect_failure("sanitize.file_url_schemes", [_user(ImageUrl("//evil.example/3.png"), "Hello (u1)")])


def test_expected_failure_the_walk_back_stops_at_the_first_response_it_changes():
    history = [_user("Hello (u1)"), ModelResponse([_call("c2")], timestamp=AT),
               ModelRequest([], state="interrupted"), ModelResponse([TextPart("x (a1)"), _call("x2")], timestamp=AT)]
    _expect_failure("sanitize.no_trailing_unresolved_calls", history)
    _expect_failure("sanitize.matches_reference", history)


def test_expected_failure_a_second_answer_is_kept():
    history = [_user("Hello (u1)"), ModelResponse([_call("c2")], timestamp=AT),
               ModelRequest([_result("c2", "first"), _result("c2", "again")]),
               ModelResponse([_call("c4")], timestamp=AT)]
    _expect_failure("repair.every_call_answered_once", history)
    _expect_failure("repair.matches_reference", history)
