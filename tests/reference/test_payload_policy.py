"""The reference payload policy pinned by hand, one rule at a time, with exact bodies where
that is clearest: each test here fails for a plausible one-line bug in the reference."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from pydantic_ai.messages import (
    INTERRUPTED_TOOL_RETURN_CONTENT,
    BinaryContent,
    CachePoint,
    ImageUrl,
    ModelRequest,
    ModelResponse,
    ModelSettingsDeltaPart,
    RetryFeedbackPart,
    RetryInfo,
    SystemPromptPart,
    TextContent,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
    VideoUrl,
)

from chatconform.fakes.payload import DifyAgentPre39136, ReusedIdsPassedThrough, ToolResultAfterUser
from chatconform.provider_schemas import turn_view, validate
from chatconform.reference import ReferenceImplementation
from chatconform.reference.payload import (
    GEMINI_THOUGHT_SIGNATURE_PLACEHOLDER,
    NO_REPLY_TEXT,
    OPENAI_STYLE,
    PROVIDER_IDS,
    PayloadMapper,
    mistral_tool_call_id,
    to_payload,
)

TS = datetime(2026, 1, 5, tzinfo=UTC)


def req(*parts):
    return ModelRequest(parts=list(parts), timestamp=TS)


def resp(*parts):
    return ModelResponse(parts=list(parts), timestamp=TS, model_name="m")


def user(text):
    return UserPromptPart(text, timestamp=TS)


def call(call_id, name="get_weather"):
    return ToolCallPart(name, {"city": "Paris"}, call_id)


def result(call_id, content, outcome="success", name="get_weather"):
    retry = RetryInfo(cause="validation_error", attempt=1, max_retries=3) if outcome == "retried" else None
    return ToolReturnPart(name, content, call_id, timestamp=TS, outcome=outcome, retry=retry)


def errors(body, provider):
    return [(p.rule, p.path) for p in validate(body, provider) if p.severity == "error"]


# -- error flags of failed and retried results ---------------------------------------------------
def _outcome_history(outcome):
    return [req(user("go (u1)")), resp(call("call_2")), req(result("call_2", "boom (r3)", outcome))]


@pytest.mark.parametrize("outcome", ["failed", "retried"])
def test_error_flag_per_dialect(outcome):
    history = _outcome_history(outcome)
    assert to_payload(history, provider="anthropic")["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "call_2", "content": "boom (r3)", "is_error": True}]
    assert to_payload(history, provider="bedrock-converse")["messages"][2]["content"] == [
        {"toolResult": {"toolUseId": "call_2", "content": [{"text": "boom (r3)"}], "status": "error"}}]
    assert to_payload(history, provider="gemini")["contents"][2]["parts"] == [
        {"functionResponse": {"id": "call_2", "name": "get_weather", "response": {"error": "boom (r3)"}}}]
    for provider in ("openai-chat", "qwen-vllm", "glm"):
        assert to_payload(history, provider=provider)["messages"][2] == {
            "role": "tool", "tool_call_id": "call_2", "content": '{"error": "boom (r3)"}'}, provider
    assert to_payload(history, provider="mistral")["messages"][2] == {
        "role": "tool", "tool_call_id": mistral_tool_call_id("call_2"), "content": '{"error": "boom (r3)"}',
        "name": "get_weather"}


@pytest.mark.parametrize("outcome", ["success", "denied"])
def test_no_error_flag_otherwise(outcome):
    history = _outcome_history(outcome)
    assert to_payload(history, provider="anthropic")["messages"][2]["content"][0]["is_error"] is False
    assert "status" not in to_payload(history, provider="bedrock-converse")["messages"][2]["content"][0]["toolResult"]
    assert to_payload(history, provider="gemini")["contents"][2]["parts"][0]["functionResponse"]["response"] == {
        "output": "boom (r3)"}
    assert to_payload(history, provider="openai-chat")["messages"][2]["content"] == "boom (r3)"


# -- texts of one turn ---------------------------------------------------------------------------
def test_texts_of_one_turn_joined_with_a_blank_line():
    history = [req(user("a (u1)"), user("b (u2)")), resp(TextPart("c (a3)"), TextPart("d (a4)"))]
    assert to_payload(history, provider="openai-chat")["messages"] == [
        {"role": "user", "content": "a (u1)\n\nb (u2)"}, {"role": "assistant", "content": "c (a3)\n\nd (a4)"}]
    assert to_payload(history, provider="anthropic")["messages"][1]["content"] == [
        {"type": "text", "text": "c (a3)"}, {"type": "text", "text": "d (a4)"}]


# -- Gemini thought signatures ---------------------------------------------------------------------
def test_gemini_signature_on_the_first_call_of_each_model_content():
    history = [req(user("go (u1)")),
               resp(TextPart("checking (a2)"), call("call_3"), call("call_4"), call("call_5")),
               req(result("call_3", "x (r6)"), result("call_4", "y (r7)"), result("call_5", "z (r8)")),
               resp(call("call_9"), call("call_10")),
               req(result("call_9", "v (r11)"), result("call_10", "w (r12)"))]
    contents = to_payload(history, provider="gemini")["contents"]
    signed = [[("thoughtSignature" in part) for part in c["parts"] if "functionCall" in part]
              for c in contents if c["role"] == "model"]
    assert signed == [[True, False, False], [True, False]]
    assert contents[1]["parts"][1]["thoughtSignature"] == GEMINI_THOUGHT_SIGNATURE_PLACEHOLDER
    assert "thoughtSignature" not in contents[1]["parts"][0]  # text parts carry none


# -- Bedrock toolConfig ------------------------------------------------------------------------------
def test_bedrock_tool_config_only_with_tool_blocks():
    assert "toolConfig" not in to_payload([req(user("hi (u1)")), resp(TextPart("hello (a2)"))],
                                          provider="bedrock-converse")
    body = to_payload(_outcome_history("success"), provider="bedrock-converse")
    assert body["toolConfig"] == {"tools": [
        {"toolSpec": {"name": "get_weather", "inputSchema": {"json": {"type": "object"}}}}]}


# -- Mistral ids -----------------------------------------------------------------------------------
@pytest.mark.parametrize("kept", ["aB0000012", "D681PevKs", "123456789"])
def test_mistral_keeps_nine_alphanumerics(kept):
    assert mistral_tool_call_id(kept) == kept


@pytest.mark.parametrize("rewritten", ["aB00000123", "call000012", "call_12", "tool-use_1-x", "aB00000-1",
                                       "x" * 64, "aB000001", ""])
def test_mistral_rewrites_every_other_id(rewritten):
    new = mistral_tool_call_id(rewritten)
    assert new != rewritten and len(new) == 9 and new.isalnum() and new.isascii()
    assert mistral_tool_call_id(new) == new  # stable


def test_mistral_body_with_ten_alphanumeric_ids_is_valid():
    history = [req(user("go (u1)")), resp(call("call000012")), req(result("call000012", "ok (r2)"))]
    body = to_payload(history, provider="mistral")
    assert body["messages"][1]["tool_calls"][0]["id"] == body["messages"][2]["tool_call_id"] != "call000012"
    assert errors(body, "mistral") == []


# -- reused ids across rounds ----------------------------------------------------------------------
REUSED = [
    req(user("two cities (u1)")),
    resp(call("call_1"), call("call_2")),
    req(result("call_2", "Berlin 12 C (r3)"), result("call_1", "Paris 21 C (r4)")),
    resp(call("call_1")),  # the server restarted its count
    req(result("call_1", "Tokyo 30 C (r5)", outcome="failed")),
    resp(TextPart("done (a6)")),
    req(user("thanks (u7)")),
]


def test_reused_ids_keep_their_pairing_openai_exact():
    assert to_payload(REUSED, provider="openai-chat")["messages"] == [
        {"role": "user", "content": "two cities (u1)"},
        {"role": "assistant", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}},
            {"id": "call_2", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "Paris 21 C (r4)"},
        {"role": "tool", "tool_call_id": "call_2", "content": "Berlin 12 C (r3)"},
        {"role": "assistant", "tool_calls": [
            {"id": "call_1_2", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]},
        {"role": "tool", "tool_call_id": "call_1_2", "content": '{"error": "Tokyo 30 C (r5)"}'},
        {"role": "assistant", "content": "done (a6)"},
        {"role": "user", "content": "thanks (u7)"},
    ]


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_reused_ids_keep_their_pairing_for_every_provider(provider):
    body = to_payload(REUSED, provider=provider)
    view = turn_view(body, provider)
    assert errors(body, provider) == []
    calls = [i for t in view for i, _ in t.tool_calls]
    assert len(calls) == len(set(calls)) == 3  # unique on the wire
    answers = {call_id: text for t in view for (call_id, _), text in zip(t.tool_results, _per_result(t), strict=False)}
    assert [answers[i] for i in calls] == ["Paris 21 C (r4)", "Berlin 12 C (r3)", "Tokyo 30 C (r5)"]


def _per_result(turn):
    """The text of each result of a tool turn (one text per result in every dialect here)."""
    return [text.removeprefix('{"error": "').removesuffix('"}') for text in turn.texts]


def test_a_reused_id_gets_a_fresh_id_that_collides_with_none():
    history = [req(user("go (u1)")), resp(call("c")), req(result("c", "a (r2)")),
               resp(call("c_2")), req(result("c_2", "b (r3)")),
               resp(call("c")), req(result("c", "d (r4)"))]
    body = to_payload(history, provider="anthropic")
    assert [b["id"] for m in body["messages"] for b in m["content"] if b["type"] == "tool_use"] == ["c", "c_2", "c_3"]
    long_id = "t" * 64
    history = [req(user("go (u1)")), resp(call(long_id)), req(result(long_id, "a (r2)")),
               resp(call(long_id)), req(result(long_id, "b (r3)"))]
    body = to_payload(history, provider="bedrock-converse")
    ids = [b["toolUse"]["toolUseId"] for m in body["messages"] for b in m["content"] if "toolUse" in b]
    assert ids == [long_id, "t" * 62 + "_2"] and errors(body, "bedrock-converse") == []


# -- blank text and instructions are never sent ----------------------------------------------------
@pytest.mark.parametrize("blank", ["", " ", "  \n", "\t"])
def test_blank_instructions_are_not_a_system_message(blank):
    history = [req(user("hi (u1)"))]
    for provider in PROVIDER_IDS:
        assert to_payload(history, provider=provider, instructions=blank) == to_payload(history, provider=provider)
    assert to_payload(history, provider="openai-chat", instructions=blank) == {
        "messages": [{"role": "user", "content": "hi (u1)"}]}


def test_blank_user_and_assistant_text_is_not_sent():
    history = [req(UserPromptPart(["  \n", "hi (u1)", "\t"], timestamp=TS)),
               resp(TextPart(" "), TextPart("hello (a2)"), TextPart("\n\n"))]
    assert to_payload(history, provider="anthropic")["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi (u1)"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "hello (a2)"}]}]
    assert to_payload(history, provider="bedrock-converse")["messages"] == [
        {"role": "user", "content": [{"text": "hi (u1)"}]}, {"role": "assistant", "content": [{"text": "hello (a2)"}]}]
    assert to_payload(history, provider="openai-chat")["messages"] == [
        {"role": "user", "content": "hi (u1)"}, {"role": "assistant", "content": "hello (a2)"}]


def test_a_fresh_id_skips_an_id_a_later_call_of_the_history_uses():
    history = [req(user("go (u1)")), resp(call("c")), req(result("c", "a (r2)")),
               resp(call("c")), req(result("c", "b (r3)")),
               resp(call("c_2")), req(result("c_2", "d (r4)"))]
    body = to_payload(history, provider="anthropic")
    assert [b["id"] for m in body["messages"] for b in m["content"] if b["type"] == "tool_use"] == ["c", "c_3", "c_2"]


# -- the reference as an implementation, and its constants ---------------------------------------
def test_the_reference_implementation_maps_payloads_for_every_provider():
    assert ReferenceImplementation.to_payload is to_payload
    assert ReferenceImplementation.providers == frozenset(PROVIDER_IDS)


def test_the_documented_constants():
    assert GEMINI_THOUGHT_SIGNATURE_PLACEHOLDER == "skip_thought_signature_validator"  # Google's documented value
    assert NO_REPLY_TEXT == "(no reply)"
    history = [req(SystemPromptPart("Be brief. (s1)"), user("hi (u2)"))]
    leading_system = {p for p in PROVIDER_IDS
                      if to_payload(history, provider=p).get("messages", [{}])[0].get("role") == "system"}
    assert leading_system == OPENAI_STYLE


def test_mistral_ids_are_base62_digits_of_the_sha256():
    # A stored conversation replayed later must get the same ids: the mapping is fixed.
    assert mistral_tool_call_id("call_12") == "MeWf3H2Bw"
    assert mistral_tool_call_id("") == "5iXlhPEew"


# -- what is sent, and how, for each kind of content ------------------------------------------------
def test_structured_results_keep_their_characters():
    history = [req(user("go (u1)")), resp(call("call_2")), req(result("call_2", {"city": "Zürich", "sky": "☀"}))]
    assert to_payload(history, provider="openai-chat")["messages"][2]["content"] == '{"city": "Zürich", "sky": "☀"}'


def test_retry_feedback_is_user_text_and_structured_feedback_is_json():
    retry = RetryInfo(cause="validation_error", attempt=1, max_retries=3)
    details = [{"type": "missing", "loc": ["city"], "msg": "Field required", "input": {}}]
    history = [req(user("go (u1)")), resp(TextPart("no (a2)")),
               req(RetryFeedbackPart("Answer in JSON. (f3)", retry=retry, timestamp=TS)),
               resp(TextPart("{} (a4)")),
               req(RetryFeedbackPart(details, retry=retry, timestamp=TS))]
    messages = to_payload(history, provider="openai-chat")["messages"]
    assert messages[2] == {"role": "user", "content": "Answer in JSON. (f3)"}
    assert messages[4] == {"role": "user", "content":
                           '[{"type": "missing", "loc": ["city"], "msg": "Field required", "input": {}}]'}


def test_user_content_items():
    history = [req(UserPromptPart([TextContent("from a tool (u1)"), CachePoint(), "typed (u2)"], timestamp=TS))]
    assert to_payload(history, provider="openai-chat")["messages"] == [
        {"role": "user", "content": "from a tool (u1)\n\ntyped (u2)"}]


@pytest.mark.parametrize("item", [BinaryContent(b"plain", media_type="text/plain"), VideoUrl("https://example.com/a.webm")],
                         ids=["binary-text", "webm-url"])
def test_user_content_the_reference_cannot_map_is_refused_by_type(item):
    """A kind of file outside the profiles' (not PDF, WAV, MP3, MP4 or an image) is refused,
    naming its type and media type, never dropped."""
    history = [req(UserPromptPart(["look (u1)", item], timestamp=TS))]
    expected = f"the reference does not map user content of type {type(item).__name__} ({item.media_type})"
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
        to_payload(history, provider="openai-chat")


def test_request_parts_that_are_not_content_are_not_sent():
    history = [req(ModelSettingsDeltaPart(settings={"temperature": 0.2}), user("hi (u1)"))]
    assert to_payload(history, provider="openai-chat") == {"messages": [{"role": "user", "content": "hi (u1)"}]}


def test_a_final_anthropic_text_loses_only_its_trailing_whitespace():
    history = [req(user("hi (u1)")), resp(TextPart("  hello (a2) \n"))]
    assert to_payload(history, provider="anthropic")["messages"][-1] == {
        "role": "assistant", "content": [{"type": "text", "text": "  hello (a2)"}]}
    history = [req(user("hi (u1)  ")), resp(TextPart("first (a2) ")), req(user("and? (u3) "))]
    assert [b["text"] for m in to_payload(history, provider="anthropic")["messages"] for b in m["content"]] == [
        "hi (u1)  ", "first (a2) ", "and? (u3) "]
    history = [req(user("go (u1)")), resp(TextPart("checking (a2) "), call("call_3"))]
    assert to_payload(history, provider="anthropic")["messages"][1]["content"][0]["text"] == "checking (a2) "


def test_gemini_keeps_tool_results_and_user_text_in_separate_contents():
    history = [req(user("go (u1)")), resp(call("call_2")),
               req(result("call_2", "sunny (r3)"), user("and tomorrow? (u4)"))]
    contents = to_payload(history, provider="gemini")["contents"]
    assert [(c["role"], [next(iter(p)) for p in c["parts"]]) for c in contents] == [
        ("user", ["text"]), ("model", ["functionCall"]), ("user", ["functionResponse"]),
        ("user", ["text"])]


def test_bedrock_tool_config_lists_each_tool_once_in_first_use_order():
    history = [req(user("go (u1)")), resp(call("call_2", "get_time"), call("call_3")),
               req(result("call_2", "noon (r4)", name="get_time"), result("call_3", "sunny (r5)")),
               resp(call("call_6", "get_time"))]
    tools = to_payload(history, provider="bedrock-converse")["toolConfig"]["tools"]
    assert [t["toolSpec"]["name"] for t in tools] == ["get_time", "get_weather"]
    orphan_result = [req(user("go (u1)")), resp(TextPart("ok (a2)")), req(result("gone", "x (r3)"), user("hi (u4)"))]
    assert "toolConfig" not in to_payload(orphan_result, provider="bedrock-converse")


def test_bedrock_image_format_is_the_media_subtype():
    png = BinaryContent(b"\x89PNG", media_type="image/png")
    body = to_payload([req(UserPromptPart(["look (u1)", png], timestamp=TS))], provider="bedrock-converse")
    assert body["messages"][0]["content"][1] == {"image": {"format": "png", "source": {"bytes": "iVBORw=="}}}


# -- the switches the known-bug fakes turn -----------------------------------------------------------
def test_the_reused_ids_fake_sends_the_stored_ids():
    body = ReusedIdsPassedThrough().to_payload(REUSED, provider="openai-chat")
    assert [c["id"] for m in body["messages"] for c in m.get("tool_calls", [])] == ["call_1", "call_2", "call_1"]


def test_the_stored_order_fake_still_drops_orphans_and_closes_dangling_calls():
    history = [req(user("go (u1)"), result("gone", "orphan (r0)")), resp(call("call_2")), req(user("next (u3)"))]
    assert ToolResultAfterUser().to_payload(history, provider="openai-chat")["messages"][1:] == [
        {"role": "assistant", "tool_calls": [
            {"id": "call_2", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]},
        {"role": "tool", "tool_call_id": "call_2", "content": INTERRUPTED_TOOL_RETURN_CONTENT},
        {"role": "user", "content": "next (u3)"}]


def test_gemini_image_urls_are_file_data():
    image = ImageUrl("https://example.com/cat.png")
    body = to_payload([req(UserPromptPart(["look (u1)", image], timestamp=TS))], provider="gemini")
    assert body["contents"][0]["parts"][1] == {"fileData": {"mimeType": "image/png", "fileUri": "https://example.com/cat.png"}}


class SystemTurnsInPlace(PayloadMapper):
    """A mapper that leaves system turns where they are (as some of the known-bug fakes do)."""

    def system_slot(self, turns, instructions, provider):
        return None, turns


def test_system_turns_left_in_place_are_one_system_message_each_where_the_dialect_has_the_role():
    history = [req(user("hi (u1)")), resp(TextPart("hello (a2)")),
               req(SystemPromptPart("Be brief. (s3)"), SystemPromptPart("Be kind. (s4)"), user("ok (u5)"))]
    assert SystemTurnsInPlace().to_payload(history, provider="openai-chat")["messages"][2:] == [
        {"role": "system", "content": "Be brief. (s3)\n\nBe kind. (s4)"}, {"role": "user", "content": "ok (u5)"}]
    for provider in ("anthropic", "gemini", "bedrock-converse"):
        with pytest.raises(ValueError, match=f"^{provider} has no system role inside messages$"):
            SystemTurnsInPlace().to_payload(history, provider=provider)


def test_the_dify_fake_keeps_each_system_part_in_place():
    history = [req(user("hi (u1)")), resp(TextPart("hello (a2)")),
               req(SystemPromptPart("Be brief. (s3)"), user("ok (u4)"))]
    assert DifyAgentPre39136().to_payload(history, provider="openai-chat")["messages"][2] == {
        "role": "system", "content": "Be brief. (s3)"}


def test_only_the_last_block_of_a_final_anthropic_answer_is_trimmed():
    png = BinaryContent(b"\x89PNG", media_type="image/png")
    history = [req(UserPromptPart(["look (u1)", png], timestamp=TS)), resp(call("call_2")),
               req(result("call_2", "a cat (r3)")), resp(TextPart("It is (a4) "), TextPart("a cat. (a5) \n"))]
    assert to_payload(history, provider="anthropic")["messages"][-1]["content"] == [
        {"type": "text", "text": "It is (a4) "}, {"type": "text", "text": "a cat. (a5)"}]
    assert to_payload([], provider="anthropic") == {"messages": []}


def test_bedrock_declares_the_tool_of_each_call_and_each_result():
    history = [req(user("go (u1)")), resp(call("call_2", "get_time")), req(result("call_2", "noon (r3)", name="clock"))]
    tools = to_payload(history, provider="bedrock-converse")["toolConfig"]["tools"]
    assert [t["toolSpec"]["name"] for t in tools] == ["get_time", "clock"]


def test_mistral_final_assistant_is_a_prefix_and_only_the_last():
    """A history that ends in a response is a prefill: Mistral serving takes a final
    assistant message only with ``prefix: true`` (M2), and only on the last (M3)."""
    history = [ModelRequest([UserPromptPart("hi")]), ModelResponse([TextPart("Hello")]),
               ModelRequest([UserPromptPart("more")]), ModelResponse([TextPart("Sure,")])]
    messages = to_payload(history, provider="mistral")["messages"]
    assert [m.get("prefix") for m in messages] == [None, None, None, True]
    assert "prefix" not in to_payload(history[:3], provider="mistral")["messages"][1]
    assert all("prefix" not in m for m in to_payload(history, provider="openai-chat")["messages"])
    assert to_payload(history[1:2], provider="mistral")["messages"] == [{"role": "assistant", "content": "Hello"}]


def test_an_id_reused_in_many_rounds_gets_a_fresh_suffix_each_time():
    """llama.cpp sends one constant id: the 70th round still gets its own, unused id."""
    history: list = [ModelRequest([UserPromptPart("go")])]
    for n in range(70):
        history += [ModelResponse([ToolCallPart("t", {}, "call_1")]),
                    ModelRequest([ToolReturnPart("t", f"r{n}", "call_1")])]
    messages = to_payload(history, provider="openai-chat")["messages"]
    ids = [m["tool_calls"][0]["id"] for m in messages if m["role"] == "assistant"]
    assert ids[:3] == ["call_1", "call_1_2", "call_1_3"] and ids[-1] == "call_1_70"
    assert [m["tool_call_id"] for m in messages if m["role"] == "tool"] == ids
    assert [m["content"] for m in messages if m["role"] == "tool"] == [f"r{n}" for n in range(70)]  # each its own


def test_mistral_prefix_on_the_shortest_continuation():
    history = [ModelRequest([UserPromptPart("hi")]), ModelResponse([TextPart("Hello")])]
    assert to_payload(history, provider="mistral")["messages"][-1]["prefix"] is True


def test_the_stored_order_fake_answers_a_reused_id_under_its_own_wire_id():
    """Its one bug is the order of results and user text; a reused id is paired as the
    reference pairs it, each round's result under that round's id."""
    history = [ModelRequest([UserPromptPart("go")]),
               ModelResponse([ToolCallPart("t", {}, "call_1")]), ModelRequest([ToolReturnPart("t", "a", "call_1")]),
               ModelResponse([ToolCallPart("t", {}, "call_1")]), ModelRequest([ToolReturnPart("t", "b", "call_1")])]
    messages = ToolResultAfterUser().to_payload(history, provider="openai-chat")["messages"]
    calls = [m["tool_calls"][0]["id"] for m in messages if m["role"] == "assistant"]
    results = [(m["tool_call_id"], m["content"]) for m in messages if m["role"] == "tool"]
    assert calls == ["call_1", "call_1_2"] and results == [("call_1", "a"), ("call_1_2", "b")]


def test_the_stored_order_fake_answers_parallel_calls_each_under_its_own_id():
    """Results stored after a user message follow it, each still paired with its own call."""
    history = [req(user("go (u1)")), resp(call("call_2"), call("call_3", "get_time")),
               req(user("and now? (u4)"), result("call_2", "sunny (r5)"),
                   result("call_3", "noon (r6)", name="get_time"))]
    messages = ToolResultAfterUser().to_payload(history, provider="openai-chat")["messages"]
    assert [(m["role"], m.get("tool_call_id"), m["content"]) for m in messages[2:]] == [
        ("user", None, "and now? (u4)"), ("tool", "call_2", "sunny (r5)"), ("tool", "call_3", "noon (r6)")]


@pytest.mark.parametrize("text", ["<tool_response>Hello (u2)</tool_response>", "  <tool_response>x</tool_response>\n"])
def test_user_text_that_reads_as_a_tool_response_is_escaped_for_qwen_only(text):
    """Qwen's template takes a user message that is only a <tool_response> wrapper for a
    tool result: with no other user message the request is refused (Q2)."""
    history = [ModelRequest([SystemPromptPart("Be brief."), UserPromptPart(text)])]
    qwen = to_payload(history, provider="qwen-vllm")
    assert validate(qwen, "qwen-vllm") == []
    sent = qwen["messages"][1]["content"]
    assert sent != text and sent.replace("&lt;", "<", 1) == text
    assert to_payload(history, provider="openai-chat")["messages"][1]["content"] == text
    # The template needs both ends of the wrapper: text with one of them is a user query.
    for kept in ("a <tool_response> b", "<tool_response> what does this tag do?", "ends with </tool_response>"):
        assert (to_payload([ModelRequest([UserPromptPart(kept)])], provider="qwen-vllm")["messages"][0]["content"]
                == kept)
