"""Request bodies real code produced (pydantic-ai 2.62's own provider mappers, run offline)
read through the schemas as expected."""

from __future__ import annotations

from chatconform.provider_schemas import turn_view, validate

CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}

# OpenAIChatModel('gpt-4o'): system prompts and a mid-conversation system prompt kept in place.
OPENAI_GPT4O = [
    {"role": "system", "content": "You are a weather bot."},
    {"role": "system", "content": "Be concise."},
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": "Let me check.", "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call_1", "content": '{"temp_c":21}'},
    {"role": "system", "content": "Mid-conversation note: answer in French from now on."},
    {"role": "assistant", "content": "Il fait 21 degres a Paris."},
    {"role": "user", "content": "And tomorrow?"},
]

# AnthropicModel('claude-sonnet-4-5').batch_encode(...).body (system text shortened).
ANTHROPIC_BODY = {
    "max_tokens": 1024,
    "model": "claude-sonnet-4-5",
    "system": [{"type": "text", "text": "You are a weather bot."}, {"type": "text", "text": "Be concise."}],
    "messages": [
        {"role": "user", "content": [{"text": "Weather in Paris?", "type": "text"}]},
        {
            "role": "assistant",
            "content": [
                {"text": "Let me check.", "type": "text"},
                {"id": "call_1", "type": "tool_use", "name": "get_weather", "input": {"city": "Paris"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "tool_use_id": "call_1",
                    "type": "tool_result",
                    "content": [{"text": '{"temp_c":21}', "type": "text"}],
                    "is_error": False,
                },
                {"text": "<system>Mid-conversation note: answer in French from now on.</system>", "type": "text"},
            ],
        },
        {"role": "assistant", "content": [{"text": "Il fait 21 degres a Paris.", "type": "text"}]},
        {"role": "user", "content": [{"text": "And tomorrow?", "type": "text"}]},
    ],
}

# GoogleModel('gemini-2.5-flash')._map_messages: the python-genai objects, in snake_case.
GEMINI_BODY = {
    "system_instruction": {"role": "user", "parts": [{"text": "You are a weather bot."}, {"text": "Be concise."}]},
    "contents": [
        {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
        {
            "role": "model",
            "parts": [
                {"text": "Let me check."},
                {
                    "function_call": {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1"},
                    "thought_signature": "c2ln",
                },
            ],
        },
        {
            "role": "user",
            "parts": [{"function_response": {"name": "get_weather", "response": {"temp_c": 21}, "id": "call_1"}}],
        },
        {"role": "user", "parts": [{"text": "<system>Mid-conversation note: answer in French from now on.</system>"}]},
        {"role": "model", "parts": [{"text": "Il fait 21 degres a Paris."}]},
        {"role": "user", "parts": [{"text": "And tomorrow?"}]},
    ],
}


def test_openai_body_is_fine_for_openai_and_glm_but_not_qwen():
    assert validate(OPENAI_GPT4O, "openai-chat") == []
    assert validate(OPENAI_GPT4O, "glm") == []
    # The dify PR #39136 bug: Qwen3.5+ templates reject every system message after index 0.
    problems = validate(OPENAI_GPT4O, "qwen-vllm")
    assert [(p.rule, p.path) for p in problems] == [("Q3", "$.messages[1].role"), ("Q3", "$.messages[5].role")]


def test_anthropic_body_is_clean():
    assert validate(ANTHROPIC_BODY, "anthropic") == []
    roles = [turn.role for turn in turn_view(ANTHROPIC_BODY, "anthropic")]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]


def test_gemini_sdk_body_is_clean():
    assert validate(GEMINI_BODY, "gemini") == []
    turns = turn_view(GEMINI_BODY, "gemini")
    assert [t.role for t in turns] == ["system", "user", "assistant", "tool", "user", "assistant", "user"]
    assert turns[2].tool_calls == (("call_1", "get_weather"),) and turns[3].tool_results == (("call_1", "get_weather"),)


def test_mistral_order_of_the_same_history():
    # pydantic-ai's Mistral mapper emits this order with Mistral-style ids ("RksXkbv4v").
    messages = [
        {**m, "tool_calls": [{**CALL, "id": "RksXkbv4v"}]} if "tool_calls" in m else
        ({**m, "tool_call_id": "RksXkbv4v"} if m["role"] == "tool" else m)
        for m in OPENAI_GPT4O
    ]
    # The mid-conversation system prompt right after a tool result breaks the role matrix.
    assert [(p.rule, p.path, p.message) for p in validate(messages, "mistral")] == [
        ("M1", "$.messages[5].role", "Unexpected role 'system' after role 'tool'")
    ]
    assert validate(messages[:5] + messages[6:], "mistral") == []
    # OpenAI-style ids are not Mistral ids.
    assert {p.rule for p in validate(OPENAI_GPT4O, "mistral")} == {"M1", "M6"}
