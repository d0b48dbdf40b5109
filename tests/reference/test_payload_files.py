"""Documents, audio and video in payload histories: each provider's part for each kind, the
histories that hold them, and the cases the reference declines (docs/contracts/payload.md,
"Files the provider cannot take")."""

from __future__ import annotations

import base64
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from pydantic_ai.messages import (
    AudioUrl,
    BinaryContent,
    DocumentUrl,
    ImageUrl,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolReturnPart,
    UploadedFile,
    UserPromptPart,
    VideoUrl,
)

from chatconform.contracts import get_contract
from chatconform.contracts.payload import PayloadCase
from chatconform.engine.drawn import DrawnCase
from chatconform.engine.evaluate import evaluate_case
from chatconform.errors import UnsendableContent
from chatconform.provider_schemas import validate
from chatconform.providers import PROVIDER_IDS, get_provider
from chatconform.reference import ReferenceImplementation
from chatconform.reference.payload import PayloadMapper, links_sent_as_text, to_payload
from chatconform.runner.discovery import load_object
from chatconform.strategies.histories import histories

TS = datetime(2026, 1, 1, tzinfo=UTC)
PDF = b"%PDF-1.4\n%%EOF\n"
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt "
B64_PDF = base64.b64encode(PDF).decode()


def prompt(*items) -> list:
    return [ModelRequest(parts=[UserPromptPart(["Read this (u1)", *items], timestamp=TS)])]


def _user_content(body: dict, provider: str) -> list:
    if provider == "gemini":
        return body["contents"][0]["parts"]
    return body["messages"][0]["content"]


def test_a_pdf_goes_in_each_providers_document_part():
    history = prompt(BinaryContent(data=PDF, media_type="application/pdf"))
    expected = {
        "openai-chat": {"type": "file", "file": {"filename": "document.pdf",
                                                 "file_data": f"data:application/pdf;base64,{B64_PDF}"}},
        "mistral": {"type": "document_url", "document_url": f"data:application/pdf;base64,{B64_PDF}"},
        "anthropic": {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                                      "data": B64_PDF}},
        "gemini": {"inlineData": {"mimeType": "application/pdf", "data": B64_PDF}},
        "bedrock-converse": {"document": {"format": "pdf", "name": "document-1", "source": {"bytes": B64_PDF}}},
    }
    for provider, part in expected.items():
        body = to_payload(history, provider=provider)
        assert _user_content(body, provider)[1] == part, provider
        assert validate(body, provider) == [], provider
    for provider in ("qwen-vllm", "glm"):  # no document input at all
        with pytest.raises(UnsendableContent, match=f"{provider} takes no document as bytes"):
            to_payload(history, provider=provider)


def test_audio_bytes_go_as_input_audio_to_openai_and_are_unsendable_to_anthropic():
    history = prompt(BinaryContent(data=WAV, media_type="audio/wav"))
    content = _user_content(to_payload(history, provider="openai-chat"), "openai-chat")
    assert content[1] == {"type": "input_audio",
                          "input_audio": {"data": base64.b64encode(WAV).decode(), "format": "wav"}}
    with pytest.raises(UnsendableContent, match="anthropic takes no audio as bytes"):
        to_payload(history, provider="anthropic")


@pytest.mark.parametrize(("media_type", "fmt"), [
    ("audio/wav", "wav"), ("audio/x-wav", "wav"), ("audio/wave", "wav"), ("audio/mpeg", "mp3"), ("audio/mp3", "mp3")])
def test_every_spelling_of_an_audio_type_is_audio_in_its_format(media_type, fmt):
    data = b"\x00\x01audio"
    history = prompt(BinaryContent(data=data, media_type=media_type))
    assert _user_content(to_payload(history, provider="openai-chat"), "openai-chat")[1] == {
        "type": "input_audio", "input_audio": {"data": base64.b64encode(data).decode(), "format": fmt}}
    with pytest.raises(UnsendableContent, match=f"anthropic takes no audio as bytes \\({media_type}"):
        to_payload(history, provider="anthropic")


def test_content_the_reference_does_not_map_is_named_in_the_error():
    # A file uploaded to one provider is a reference only that provider can read.
    uploaded = UploadedFile(file_id="file-abc", provider_name="openai", media_type="application/pdf")
    with pytest.raises(ValueError) as raised:
        to_payload(prompt(uploaded), provider="openai-chat")
    assert str(raised.value) == "the reference does not map user content of type UploadedFile"
    with pytest.raises(ValueError) as raised:
        to_payload(prompt(BinaryContent(data=b"PK", media_type="application/zip")), provider="openai-chat")
    assert str(raised.value) == "the reference does not map user content of type BinaryContent (application/zip)"


def test_unsendable_bytes_are_named_with_their_type_and_size():
    with pytest.raises(UnsendableContent) as raised:
        to_payload(prompt(BinaryContent(data=b"\x00\x01audio", media_type="audio/wav")), provider="anthropic")
    assert str(raised.value) == ("anthropic takes no audio as bytes (audio/wav, 7 bytes in a user prompt): it "
                                 "cannot be sent, and dropping it would lose it")


def test_a_bedrock_document_beside_text_gets_no_added_text_block():
    body = to_payload(prompt(BinaryContent(data=PDF, media_type="application/pdf")), provider="bedrock-converse")
    assert body["messages"][0]["content"] == [
        {"text": "Read this (u1)"},
        {"document": {"format": "pdf", "name": "document-1", "source": {"bytes": B64_PDF}}}]


def test_video_bytes_go_to_bedrock_as_mp4():
    data = b"\x00\x01video"
    history = prompt(BinaryContent(data=data, media_type="video/mp4"))
    assert _user_content(to_payload(history, provider="bedrock-converse"), "bedrock-converse")[1] == {
        "video": {"format": "mp4", "source": {"bytes": base64.b64encode(data).decode()}}}


def test_links_sent_as_text_are_the_prompt_links_the_provider_cannot_take():
    image, pdf = "https://example.com/image/file-1.png", "https://example.com/document/file-1.pdf"
    audio = "https://example.com/audio/file-1.mp3"
    history = [
        ModelRequest(parts=[SystemPromptPart("Be brief (s1)", timestamp=TS), UserPromptPart("plain text (u1)")]),
        ModelResponse(parts=[TextPart("Send it (a2)")], timestamp=TS),
        ModelRequest(parts=[UserPromptPart(["Look (u3)", ImageUrl(url=image), DocumentUrl(url=pdf),
                                            AudioUrl(url=audio)], timestamp=TS)]),
        # A tool's result is not a prompt: a link in it is not the prompt's to send as text.
        ModelRequest(parts=[ToolReturnPart("look", [ImageUrl(url=image)], tool_call_id="c1", timestamp=TS)]),
    ]
    assert links_sent_as_text(history, "bedrock-converse") == [
        f"image by URL ({image})", f"document by URL ({pdf})", f"audio by URL ({audio})"]
    assert links_sent_as_text(history, "openai-chat") == [f"document by URL ({pdf})", f"audio by URL ({audio})"]
    assert links_sent_as_text(history, "gemini") == []
    # A link of a type the reference does not map is not one it sends as text.
    docx = prompt(DocumentUrl(url="https://example.com/document/file-1.docx"))
    assert links_sent_as_text(docx, "openai-chat") == []


def test_a_link_the_provider_cannot_take_goes_as_its_url_in_text():
    url = "https://example.com/video/file-1.mp4"
    history = prompt(VideoUrl(url=url))
    assert _user_content(to_payload(history, provider="qwen-vllm"), "qwen-vllm")[1] == {
        "type": "video_url", "video_url": {"url": url}}
    assert _user_content(to_payload(history, provider="openai-chat"), "openai-chat")[1] == {"type": "text", "text": url}
    assert _user_content(to_payload(history, provider="anthropic"), "anthropic")[1] == {"type": "text", "text": url}
    assert _user_content(to_payload(history, provider="gemini"), "gemini")[1] == {
        "fileData": {"mimeType": "video/mp4", "fileUri": url}}


def test_bedrock_names_each_document_and_gives_a_lone_document_a_text_block():
    pdf = BinaryContent(data=PDF, media_type="application/pdf")
    history = [ModelRequest(parts=[UserPromptPart([pdf, pdf], timestamp=TS)])]
    body = to_payload(history, provider="bedrock-converse")
    blocks = body["messages"][0]["content"]
    assert [b["document"]["name"] for b in blocks if "document" in b] == ["document-1", "document-2"]
    assert blocks[-1] == {"text": "(document-2)"}  # B7: a document needs a text block beside it
    assert validate(body, "bedrock-converse") == []


_KINDS = {"application": "document", "audio": "audio", "video": "video"}


def _unsendable(history, provider: str) -> bool:
    """Whether the history holds bytes of a kind other than images the provider takes none of."""
    profile = get_provider(provider)
    for message in history:
        for part in message.parts:
            if isinstance(part, UserPromptPart) and not isinstance(part.content, str):
                for item in part.content:
                    if (isinstance(item, BinaryContent) and not item.is_image
                            and _KINDS[item.media_type.split("/")[0]] not in profile.inline_files):
                        return True
    return False


@settings(max_examples=60)
@given(histories(file_kinds=True, max_bulk_turns=40))  # a bulk section repeats shapes the turns hold
def test_every_body_is_valid_or_the_history_is_declined_for_what_it_holds(history):
    for provider in PROVIDER_IDS:
        try:
            body = to_payload(history, provider=provider)
        except UnsendableContent:
            assert _unsendable(history, provider), provider
        else:
            assert not _unsendable(history, provider), provider
            assert [p for p in validate(body, provider) if p.level == "error"] == [], provider


def _files(history) -> set[tuple[str, str]]:
    found = set()
    for message in history:
        for part in message.parts:
            if isinstance(part, UserPromptPart) and not isinstance(part.content, str):
                for item in part.content:
                    if isinstance(item, (DocumentUrl, AudioUrl, VideoUrl)):
                        found.add((item.kind.split("-")[0], "url"))
                    elif isinstance(item, BinaryContent) and not item.is_image:
                        found.add((_KINDS[item.media_type.split("/")[0]], "bytes"))
    return found


@pytest.mark.slow
def test_ci_payload_histories_hold_every_kind_as_bytes_and_as_a_link(monkeypatch):
    from tests.ci_stream import ci_cases

    cases = ci_cases("payload", monkeypatch)
    found = [_files(case.history) for case in cases]
    every = {(kind, form) for kind in ("document", "audio", "video") for form in ("url", "bytes")}
    assert set().union(*found) == every, found
    assert sum(bool(f) for f in found) >= len(cases) // 5, found
    # Declined cases have fewer checks judged: few enough that most are judged everywhere.
    declined = sum(_unsendable(case.history, "anthropic") for case in cases)
    assert declined <= len(cases) // 5, declined


class _Refuses(PayloadMapper):
    """Raises on every file other than an image, as a mapper with no mapping for them might."""

    name = "refuses-files"
    version = "1"
    providers = frozenset({"anthropic"})

    def user_item(self, item):
        if isinstance(item, BinaryContent) and not item.is_image:
            raise ValueError(f"no mapping for {item.media_type}")
        return super().user_item(item)


class _RefusesLinks(PayloadMapper):
    """Raises on every link other than an image's (OpenAI Chat Completions does not support
    file URLs, as langchain-core says)."""

    name = "refuses-links"
    version = "1"
    providers = frozenset({"anthropic"})

    def user_item(self, item):
        if isinstance(item, (DocumentUrl, AudioUrl, VideoUrl)):
            raise ValueError("file URLs are not supported")
        return super().user_item(item)


class _Drops(PayloadMapper):
    """Leaves every file other than an image out of the body."""

    name = "drops-files"
    version = "1"
    providers = frozenset({"anthropic"})

    def user_item(self, item):
        if isinstance(item, BinaryContent) and not item.is_image:
            return None
        return super().user_item(item)


def _evaluate(impl, history):
    contract = get_contract("payload")
    return evaluate_case(load_object(impl(), in_process=True), contract, PayloadCase(history), "anthropic",
                         timeout=5)


def test_refusing_what_the_provider_cannot_take_is_not_a_crash():
    evaluation = _evaluate(_Refuses, prompt(BinaryContent(data=WAV, media_type="audio/wav")))
    assert evaluation.failures == []
    assert "payload.no_crash" in evaluation.evaluated
    assert "the reference declines it too: anthropic takes no audio as bytes" in \
        evaluation.passed_over["payload.nothing_lost"]


def test_a_declined_case_asks_the_reference_once_for_every_implementation(monkeypatch):
    """The bundled reference's own refusal is the reference's answer, kept with the drawn
    case: an implementation that raises on it after is told so without a second mapping."""
    contract = get_contract("payload")
    asked = []
    original = type(contract).reference
    monkeypatch.setattr(type(contract), "reference", lambda self, case, variant: asked.append(variant) or
                        original(self, case, variant))
    drawn = DrawnCase(PayloadCase(prompt(BinaryContent(data=WAV, media_type="audio/wav"))))
    for impl in (ReferenceImplementation, _Refuses):
        evaluation = evaluate_case(load_object(impl(), in_process=True), contract, drawn.case, "anthropic",
                                   timeout=5, drawn=drawn)
        assert evaluation.failures == []
        assert "the reference declines it too: anthropic takes no audio as bytes" in \
            evaluation.passed_over["payload.nothing_lost"]
    assert asked == []
    # Where nothing was kept, the reference is asked, once.
    _evaluate(_Refuses, drawn.case.history)
    assert asked == ["anthropic"]


def test_refusing_a_link_the_provider_cannot_take_is_not_a_crash():
    url = "https://example.com/audio/file-1.mp3"
    evaluation = _evaluate(_RefusesLinks, prompt(AudioUrl(url=url)))
    # A warning that says how to send it: the reference sends the URL as text.
    assert [(f.check, f.level) for f in evaluation.failures] == [("payload.no_crash", "warning")]
    assert "a refusal, not a crash: anthropic takes no audio by URL" in evaluation.failures[0].message
    assert "Fix: send the link as text" in evaluation.failures[0].message
    assert f"anthropic takes no audio by URL ({url})" in evaluation.passed_over["payload.nothing_lost"]
    # A link it can take (a PDF by URL) is no excuse.
    evaluation = _evaluate(_RefusesLinks, prompt(DocumentUrl(url="https://example.com/document/file-1.pdf")))
    assert [(f.check, f.level) for f in evaluation.failures] == [("payload.no_crash", "error")]


def test_refusing_what_the_provider_takes_is_a_crash():
    evaluation = _evaluate(_Refuses, prompt(BinaryContent(data=PDF, media_type="application/pdf")))
    assert [(f.check, f.level) for f in evaluation.failures] == [("payload.no_crash", "error")]


def test_a_body_that_drops_what_the_provider_cannot_take_loses_it():
    evaluation = _evaluate(_Drops, prompt(BinaryContent(data=WAV, media_type="audio/wav")))
    assert "payload.nothing_lost" in [f.check for f in evaluation.failures]
