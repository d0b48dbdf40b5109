"""One turn view over every dialect."""

from __future__ import annotations

import pytest

from chatconform.provider_schemas import Turn, turn_view


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
