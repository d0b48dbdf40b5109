"""One turn view over every dialect."""

from __future__ import annotations

import pytest

from chatconform.provider_schemas import Turn, turn_view


def test_openai_dialect():
    body = {
        "messages": [
            {"role": "developer", "content": "be brief"},
            {
                "role": "user",
                "content": [{"type": "text", "text": "Weather?"}, {"type": "image_url", "image_url": {"url": "u"}}],
            },
            {
                "role": "assistant",
                "content": "Let me check.",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}},
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "21C"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c2", "type": "custom", "custom": {"name": "grep", "input": "x"}}],
            },
            {"role": "tool", "tool_call_id": "c2", "name": "grep", "content": [{"type": "text", "text": "found"}]},
        ]
    }
    assert turn_view(body, "openai-chat") == [
        Turn("system", ("be brief",), (), (), "$.messages[0]"),
        Turn("user", ("Weather?",), (), (), "$.messages[1]", ("u",)),
        Turn("assistant", ("Let me check.",), (("c1", "get_weather"),), (), "$.messages[2]"),
        Turn("tool", ("21C",), (), (("c1", "get_weather"),), "$.messages[3]"),
        Turn("assistant", (), (("c2", "grep"),), (), "$.messages[4]"),
        Turn("tool", ("found",), (), (("c2", "grep"),), "$.messages[5]"),
    ]
    for provider in ("qwen-vllm", "glm", "mistral"):
        assert turn_view(body, provider) == turn_view(body, "openai-chat")


def test_anthropic_dialect():
    body = {
        "system": [{"type": "text", "text": "be brief"}, {"type": "text", "text": "be kind"}],
        "messages": [
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                    {"type": "text", "text": "Checking."},
                    {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {}},
                    {"type": "tool_use", "id": "t2", "name": "get_time", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "21C"}]},
                    {"type": "tool_result", "tool_use_id": "t2", "content": "noon"},
                ],
            },
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t3", "name": "get_weather", "input": {}}]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t3", "content": "22C"},
                    {"type": "text", "text": "And tomorrow?"},
                ],
            },
        ],
    }
    assert turn_view(body, "anthropic") == [
        Turn("system", ("be brief", "be kind"), (), (), "$.system"),
        Turn("user", ("Weather?",), (), (), "$.messages[0]"),
        Turn("assistant", ("Checking.",), (("t1", "get_weather"), ("t2", "get_time")), (), "$.messages[1]"),
        Turn("tool", ("21C", "noon"), (), (("t1", "get_weather"), ("t2", "get_time")), "$.messages[2]"),
        Turn("assistant", (), (("t3", "get_weather"),), (), "$.messages[3]"),
        Turn("user", ("22C", "And tomorrow?"), (), (("t3", "get_weather"),), "$.messages[4]"),
    ]
    assert turn_view({"system": "be brief", "messages": []}, "anthropic") == [
        Turn("system", ("be brief",), (), (), "$.system")
    ]


def test_gemini_dialect_camel_and_snake_case():
    body = {
        "systemInstruction": {"parts": [{"text": "be brief"}]},
        "contents": [
            {"role": "user", "parts": [{"text": "Weather?"}]},
            {
                "role": "model",
                "parts": [
                    {"text": "thinking...", "thought": True},
                    {"text": "Checking."},
                    {"functionCall": {"name": "get_weather", "args": {}, "id": "g1"}, "thoughtSignature": "c2ln"},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"function_response": {"name": "get_weather", "response": {"result": "21C", "n": 1}, "id": "g1"}},
                ],
            },
            {
                "parts": [
                    {"functionResponse": {"name": "get_weather", "response": {"output": ["a", {"b": "c"}]}}},
                    {"text": "thanks"},
                ],
            },
        ],
    }
    assert turn_view(body, "gemini") == [
        Turn("system", ("be brief",), (), (), "$.systemInstruction"),
        Turn("user", ("Weather?",), (), (), "$.contents[0]"),
        Turn("assistant", ("Checking.",), (("g1", "get_weather"),), (), "$.contents[1]"),
        Turn("tool", ("21C",), (), (("g1", "get_weather"),), "$.contents[2]"),
        Turn("user", ("a", "c", "thanks"), (), (("", "get_weather"),), "$.contents[3]"),
    ]
    snake = {"system_instruction": {"parts": [{"text": "be brief"}]}, "contents": []}
    assert turn_view(snake, "gemini") == [Turn("system", ("be brief",), (), (), "$.system_instruction")]


def test_bedrock_dialect():
    body = {
        "system": [{"text": "be brief"}, {"cachePoint": {"type": "default"}}],
        "messages": [
            {"role": "user", "content": [{"text": "Weather?"}]},
            {
                "role": "assistant",
                "content": [
                    {"text": "Checking."},
                    {"toolUse": {"toolUseId": "b1", "name": "get_weather", "input": {}}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"toolResult": {"toolUseId": "b1", "content": [{"text": "21C"}, {"json": {"c": 21}}]}},
                    {"cachePoint": {"type": "default"}},
                ],
            },
            {"role": "assistant", "content": [{"text": "21C."}]},
        ],
    }
    assert turn_view(body, "bedrock-converse") == [
        Turn("system", ("be brief",), (), (), "$.system"),
        Turn("user", ("Weather?",), (), (), "$.messages[0]"),
        Turn("assistant", ("Checking.",), (("b1", "get_weather"),), (), "$.messages[1]"),
        Turn("tool", ("21C",), (), (("b1", "get_weather"),), "$.messages[2]"),
        Turn("assistant", ("21C.",), (), (), "$.messages[3]"),
    ]


def test_bare_list_is_the_message_array():
    assert turn_view([{"role": "user", "content": "hi"}], "openai-chat") == [
        Turn("user", ("hi",), (), (), "$.messages[0]")
    ]
    assert turn_view([{"role": "model", "parts": [{"text": "x"}]}], "gemini") == [
        Turn("assistant", ("x",), (), (), "$.contents[0]")
    ]


def test_malformed_parts_are_skipped_not_raised():
    body = {
        "system": {"not": "a list"},
        "messages": [
            None,
            {"role": ["user"], "content": "x"},
            {"role": "user", "content": [None, 3, {"type": "text", "text": 5}, {"type": "text", "text": "kept"}]},
            {"role": "assistant", "content": {"type": "text"}},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": None, "content": {"x": 1}}]},
        ],
    }
    assert [t.role for t in turn_view(body, "anthropic")] == ["user", "assistant", "tool"]
    assert turn_view(body, "anthropic")[0].texts == ("kept",)
    assert turn_view(body, "bedrock-converse") == [
        Turn("user", ("kept",), (), (), "$.messages[2]"),
        Turn("assistant", (), (), (), "$.messages[3]"),
        Turn("user", (), (), (), "$.messages[4]"),
    ]
    assert turn_view("nonsense", "gemini") == []  # type: ignore[arg-type]


def test_media_of_every_dialect_by_url_or_base64():
    png = "iVBORw0KGgo="
    openai = [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}},
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
        {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERi0="}},
    ]}]
    assert turn_view(openai, "openai-chat")[0].media == (png, "UklGRg==", "JVBERi0=")
    mistral = [{"role": "user", "content": [{"type": "image_url", "image_url": "https://x/cat.png"}]}]
    assert turn_view(mistral, "mistral")[0].media == ("https://x/cat.png",)
    anthropic = [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}},
        {"type": "document", "source": {"type": "url", "url": "https://x/a.pdf"}},
    ]}]
    assert turn_view(anthropic, "anthropic")[0].media == (png, "https://x/a.pdf")
    gemini = [{"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": png}},
                                         {"file_data": {"file_uri": "gs://b/a.pdf"}}]}]
    assert turn_view(gemini, "gemini")[0].media == (png, "gs://b/a.pdf")
    bedrock = [{"role": "user", "content": [
        {"image": {"format": "png", "source": {"bytes": png}}},
        {"document": {"format": "pdf", "name": "a", "source": {"s3Location": {"uri": "s3://b/a.pdf"}}}},
    ]}]
    assert turn_view(bedrock, "bedrock-converse")[0].media == (png, "s3://b/a.pdf")


@pytest.mark.parametrize("provider, body", [
    ("anthropic", {"system": "", "messages": [{"role": "user", "content": "hi"}]}),
    ("anthropic", {"system": [], "messages": [{"role": "user", "content": "hi"}]}),
    ("bedrock-converse", {"system": [], "messages": [{"role": "user", "content": [{"text": "hi"}]}]}),
    ("gemini", {"systemInstruction": {"parts": []}, "contents": [{"role": "user", "parts": [{"text": "hi"}]}]}),
    ("gemini", {"system_instruction": {"parts": [{"text": ""}]},
                "contents": [{"role": "user", "parts": [{"text": "hi"}]}]}),
])
def test_an_empty_system_slot_is_no_system_turn(provider, body):
    assert [t.role for t in turn_view(body, provider)] == ["user"]


def test_a_blank_but_present_system_text_is_still_a_turn():
    body = {"system": [{"text": "  "}], "messages": [{"role": "user", "content": [{"text": "hi"}]}]}
    assert [t.role for t in turn_view(body, "bedrock-converse")] == ["system", "user"]
