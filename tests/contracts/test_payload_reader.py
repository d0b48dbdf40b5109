"""What a reader of the body sees: texts keep a boundary, inline bytes decode to the stored
bytes, equal items in two places are two items, and a link sent as the bytes downloaded
from it (or bytes as a link) is the same file. Each bug has a fake the suite catches."""

from __future__ import annotations

import base64
import itertools
import json

import pytest
from pydantic_ai.messages import (
    BinaryImage,
    DocumentUrl,
    ImageUrl,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    UserPromptPart,
)

from chatconform.contracts import get_contract
from chatconform.contracts.payload import PayloadCase
from chatconform.engine import evaluate_case
from chatconform.fakes import payload as fakes
from chatconform.history import INLINE, inline_identity, visible_items
from chatconform.provider_schemas import turn_view
from chatconform.reference.payload import to_payload
from chatconform.runner.discovery import wrap
from chatconform.strategies.histories import BASE64_LOOKING_BYTES

PROVIDERS = ("openai-chat", "anthropic", "gemini", "bedrock-converse")
PNG = b"\x89PNG\r\n\x1a\n"


def failures(impl, history, provider, instructions=None) -> dict[str, str]:
    evaluation = evaluate_case(wrap(impl), get_contract("payload"), PayloadCase(history, instructions), provider,
                               timeout=5)
    return {f.check: f.message for f in evaluation.failures if f.level == "error"}


class Edited:
    """The reference's body, then ``edit(body, provider)``."""

    name, version, providers = "edited", "0", frozenset(PROVIDERS)

    def __init__(self, edit):
        self.edit = edit

    def to_payload(self, history, *, provider, instructions=None):
        body = to_payload(history, provider=provider, instructions=instructions)
        self.edit(body, provider)
        return body


REFERENCE = Edited(lambda body, provider: None)


def prompt(*content):
    return ModelRequest([UserPromptPart(list(content))])


def answer(*texts):
    return ModelResponse([TextPart(text) for text in texts])


# -- texts keep a boundary ------------------------------------------------------------------------

TWO_ANSWERS = [prompt("Weather and build? (u1)"), answer("It is sunny.", "The build failed.")]


TWICE = [prompt("What is this? (u1)", BinaryImage(data=PNG, media_type="image/png")), answer("A logo. (a2)"),
         prompt("And this one? (u3)", BinaryImage(data=PNG, media_type="image/png"))]


@pytest.mark.parametrize("fake, history, check, says", [
    (fakes.GluesTexts, TWO_ANSWERS, "payload.text_boundaries", "'It is sunny.The build failed.'"),
    (fakes.SendsEqualImagesOnce, TWICE, "payload.nothing_lost", "is sent 1 time and the history holds it 2 times"),
], ids=["texts run together", "the same image twice"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_fake_fails_only_its_check_where_the_reference_passes(fake, history, check, says, provider):
    found = failures(fake, history, provider)
    assert set(found) == {check} and says in found[check], found
    assert failures(REFERENCE, history, provider) == {}


@pytest.mark.parametrize("texts", [("It is sunny. ", "The build failed."), ("It is sunny.", "\nThe build failed."),
                                   ("", "The build failed."), ("It is sunny.", "")])
def test_whitespace_of_the_texts_own_or_an_empty_text_is_no_junction(texts):
    history = [prompt("Weather and build? (u1)"), answer(*texts)]
    for provider in PROVIDERS:
        assert "payload.text_boundaries" not in failures(fakes.GluesTexts, history, provider), (provider, texts)


@pytest.mark.parametrize("blank", ["", " "])
def test_a_blank_text_between_two_texts_is_no_separator_when_dropped(blank):
    history = [prompt("Weather and build? (u1)"), answer("It is sunny.", blank, "The build failed.")]
    assert "payload.text_boundaries" in failures(fakes.GluesTexts, history, "anthropic")


def test_system_texts_and_instructions_keep_a_boundary():
    history = [ModelRequest([SystemPromptPart("Be kind."), SystemPromptPart("Be brief."), UserPromptPart("hi (u1)")])]

    def glue(body, provider):
        body["messages"][0]["content"] = body["messages"][0]["content"].replace("\n\n", "")

    found = failures(Edited(glue), history, "openai-chat", instructions="Cite sources.")
    assert set(found) == {"payload.text_boundaries"} and "'Be kind.Be brief.'" in found["payload.text_boundaries"]
    assert failures(REFERENCE, history, "openai-chat", instructions="Cite sources.") == {}


# -- inline bytes decode to the stored bytes ------------------------------------------------------

def test_inline_identity_is_the_decoded_bytes():
    png = base64.b64encode(PNG).decode()
    assert inline_identity(png) == inline_identity(png.rstrip("=")) == png
    assert inline_identity(base64.urlsafe_b64encode(b"\xfb\xff\xfe").decode()) == base64.b64encode(
        b"\xfb\xff\xfe").decode()
    assert inline_identity("RIFFWEBPVP8L") == "RIFFWEBPVP8L" != base64.b64encode(BASE64_LOOKING_BYTES).decode()
    assert inline_identity("not base64!") is None


def test_files_are_read_as_bytes_or_links():
    body = {"messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()}},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
        {"type": "file", "file": {"file_id": "file-abc"}}]}]}
    [turn] = turn_view(body, "openai-chat")
    assert turn.media == (base64.b64encode(PNG).decode(), "https://example.com/cat.png", "file-abc")
    assert turn.inline == (0,)
    # A data: URL in the history is its bytes, as the body's reader sees them.
    [item] = visible_items([prompt(ImageUrl(url="data:image/png;base64," + base64.b64encode(PNG).decode()))])
    assert (item.value, item.ref) == (base64.b64encode(PNG).decode(), INLINE)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_bytes_that_look_like_base64_must_still_be_encoded(provider):
    history = [prompt("What is in it? (u1)", BinaryImage(data=BASE64_LOOKING_BYTES, media_type="image/webp"))]
    body = fakes.TakesBase64LookingBytesAsEncoded().to_payload(history, provider=provider)
    assert "RIFFWEBPVP8L" in json.dumps(body)
    found = failures(fakes.TakesBase64LookingBytesAsEncoded, history, provider)
    assert set(found) == {"payload.nothing_lost"}, found
    assert "decode to other bytes" in found["payload.nothing_lost"]
    png_only = [prompt("What is in it? (u1)", BinaryImage(data=PNG, media_type="image/png"))]
    assert failures(fakes.TakesBase64LookingBytesAsEncoded, png_only, provider) == {}
    assert failures(REFERENCE, history, provider) == {}


# -- equal items in two places are two items --------------------------------------------------------

def test_the_same_text_twice_is_sent_twice():
    history = [prompt("yes"), answer("Sure? (a1)"), prompt("yes")]

    def drop_last(body, provider):
        del body["messages"][-1]

    found = failures(Edited(drop_last), history, "openai-chat")
    assert "payload.nothing_lost" in found and "payload.order_preserved" not in found


# -- a link sent as the bytes downloaded from it is the same file ---------------------------------------

URL = "https://example.com/img/cat-1.png"
STAND_IN = base64.b64encode(b"offline stand-in").decode()


def _swap_files(swap):
    def edit(body, provider):
        for message in body["messages"]:
            for part in message["content"] if isinstance(message["content"], list) else []:
                if part.get("type") == "image_url":
                    part["image_url"]["url"] = swap(part["image_url"]["url"])
    return edit


def test_a_downloaded_link_is_the_same_file():
    history = [prompt("Look (u1)", ImageUrl(url=URL), BinaryImage(data=PNG, media_type="image/png"))]
    downloaded = _swap_files(lambda url: "data:image/png;base64," + STAND_IN if url == URL else url)
    assert failures(Edited(downloaded), history, "openai-chat") == {}
    uploaded = _swap_files(lambda url: "https://files.example.com/f1" if url.startswith("data:") else url)
    assert failures(Edited(uploaded), history, "openai-chat") == {}


def test_one_download_stands_for_one_link():
    history = [prompt("Look (u1)", ImageUrl(url=URL), ImageUrl(url=URL.replace("1", "2")))]

    def one_download(body, provider):
        content = body["messages"][0]["content"]
        content[1]["image_url"]["url"] = "data:image/png;base64," + STAND_IN
        del content[2]

    assert "payload.nothing_lost" in failures(Edited(one_download), history, "openai-chat")


def test_a_download_does_not_stand_for_bytes_sent_wrong():
    history = [prompt("Look (u1)", ImageUrl(url=URL), BinaryImage(data=BASE64_LOOKING_BYTES, media_type="image/webp"))]
    found = failures(fakes.TakesBase64LookingBytesAsEncoded, history, "openai-chat")
    assert set(found) == {"payload.nothing_lost"}, found


def test_a_gemini_download_in_either_alphabet_is_the_same_file():
    history = [prompt("Look (u1)", ImageUrl(url=URL), BinaryImage(data=b"\xfb\xff\xfe\xfb", media_type="image/png"))]

    def as_google_genai(body, provider):
        parts = body["contents"][0]["parts"]
        parts[1] = {"inlineData": {"mimeType": "image/png", "data": base64.urlsafe_b64encode(b"stand-in").decode()}}
        data = parts[2]["inlineData"]["data"]
        parts[2]["inlineData"]["data"] = base64.urlsafe_b64encode(base64.b64decode(data)).decode().rstrip("=")

    assert failures(Edited(as_google_genai), history, "gemini") == {}


# -- the ci stream reaches the shapes ----------------------------------------------------------------

def _joined_texts(history) -> int:
    """Responses holding two texts in a row whose junction has no whitespace."""
    found = 0
    for message in history:
        texts = [p.content for p in message.parts if isinstance(p, TextPart) and p.content.strip()]
        found += any(a[-1:].strip() and b[:1].strip() for a, b in itertools.pairwise(texts))
    return found


def _binaries(history) -> list[bytes]:
    return [item.data for message in history if isinstance(message, ModelRequest) for part in message.parts
            if isinstance(part, UserPromptPart) and not isinstance(part.content, str)
            for item in part.content if isinstance(item, BinaryImage)]


@pytest.mark.slow
def test_ci_payload_histories_hold_the_shapes_a_reader_trips_on(monkeypatch):
    from tests.ci_stream import ci_cases

    cases = [case.history for case in ci_cases("payload", monkeypatch)]
    looking = sum(BASE64_LOOKING_BYTES in _binaries(h) for h in cases)
    twice = sum(any(_binaries(h).count(data) > 1 for data in _binaries(h)) for h in cases)
    joined = sum(_joined_texts(h) > 0 for h in cases)
    assert looking >= 8 and twice >= 8 and joined >= 25, (looking, twice, joined)


# -- a download is matched by kind and place, through whatever downloader --------------------------

PDF_URL = "https://example.com/docs/report-3.pdf"


class DownloadsThroughItsOwnStub:
    """An implementation with a downloader of its own (a stub that answers ``fetched``): every
    link is sent as the bytes it fetched, as Bedrock mappers do."""

    name, version, providers = "own-downloader", "0", frozenset({"anthropic"})

    def __init__(self, fetched):
        self.fetched = fetched

    def to_payload(self, history, *, provider, instructions=None):
        body = to_payload(history, provider=provider, instructions=instructions)
        for message in body["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else []:
                source = block.get("source", {})
                if source.get("type") == "url":
                    data, media_type = self.fetched(source["url"])
                    block["source"] = {"type": "base64", "media_type": media_type,
                                       "data": base64.b64encode(data).decode()}
        return body


def _all_failures(impl, history, provider):
    evaluation = evaluate_case(wrap(impl), get_contract("payload"), PayloadCase(history), provider, timeout=5)
    return {f.check: (f.level, f.message) for f in evaluation.failures}


@pytest.mark.parametrize("fetched, verdict", [
    (lambda url: (b"%PDF-1.7 report", "application/pdf"), None),  # of its kind: the same file
    (lambda url: (b"stand-in for " + url.encode(), "application/pdf"), None),  # names its URL
    (lambda url: (b"\x00\x01 opaque", "application/pdf"), "warning"),  # of no kind it can tell
    (lambda url: (PNG + b"an image", "image/png"), "error"),  # another kind of file: not its download
])
def test_a_downloaded_link_is_matched_by_kind_and_place(fetched, verdict):
    history = [prompt("Read the report (u1)", DocumentUrl(url=PDF_URL)), ModelResponse([TextPart("done (a1)")])]
    found = _all_failures(DownloadsThroughItsOwnStub(fetched), history, "anthropic")
    assert found.get("payload.nothing_lost", (None,))[0] == verdict, found
    assert "payload.order_preserved" not in found
    if verdict == "warning":
        assert "cannot be matched to the URL" in found["payload.nothing_lost"][1]


def test_a_link_sent_as_text_is_found_before_any_download():
    """A link the body holds as text is that link; bytes beside it are not taken for it."""
    history = [prompt("Look (u1)", ImageUrl(url=URL))]

    def as_text_and_bytes(body, provider):
        content = body["messages"][0]["content"]
        content[1] = {"type": "text", "text": URL}
        inline = "data:image/png;base64," + base64.b64encode(PNG).decode()
        content.append({"type": "image_url", "image_url": {"url": inline}})

    assert failures(Edited(as_text_and_bytes), history, "openai-chat") == {}
