"""What every dialect module shares: the neutral turns it renders, the turn view it reads a
body back into, and :class:`Dialect`, the one protocol each module implements.

A dialect is the shape of a request body and of its answer (OpenAI Chat Completions,
Anthropic Messages, ...), shared by every provider that speaks it; what one provider adds
(Mistral's short call ids, Qwen's escaped ``<tool_response>``) is a field of its profile,
which the dialect reads. The reference decides what is sent (order, pairing, merging, the
system slot: ``chatconform.reference.payload``); a dialect only writes it in its shape.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NamedTuple, Protocol

from chatconform.dialects.http import Answer, Context, Reply, RouteCall, Session
from chatconform.history import data_url_payload, inline_identity

if TYPE_CHECKING:
    from chatconform.providers.profile import Provider

__all__ = ["FILE_KINDS", "BodyTurn", "Call", "CallNames", "Dialect", "File", "FileKind", "Image", "Reasoning",
           "RenderHooks", "Result", "SentFile", "Text", "Turn", "dicts", "files", "inline_bytes", "is_error_text",
           "link", "list_of", "neutral_role", "reasoning_token", "result_text", "source_file", "str_of", "system_slot",
           "text_blocks"]

#: The kinds of file besides images: a PDF document, WAV or MP3 audio, MP4 video.
FileKind = Literal["document", "audio", "video"]

#: The files besides images the reference maps, by media type: kind and format name.
FILE_KINDS: dict[str, tuple[FileKind, str]] = {
    "application/pdf": ("document", "pdf"),
    "audio/wav": ("audio", "wav"), "audio/x-wav": ("audio", "wav"), "audio/wave": ("audio", "wav"),
    "audio/mpeg": ("audio", "mp3"), "audio/mp3": ("audio", "mp3"),
    "video/mp4": ("video", "mp4"),
}
_FORMATS = {media_type: fmt for media_type, (_, fmt) in FILE_KINDS.items()}


# -- the neutral turn list every dialect is rendered from ---------------------------------
# Items are tuples: the collector stops tracking a tuple of strings, so the items of a long
# history do not make it scan the heap again and again (a call on 10^5 messages holds
# some 10^5 of them until it returns).
class Text(NamedTuple):
    text: str
    #: The thought signature the provider put on this part (Gemini), sent back on it.
    signature: str | None = None


class Image(NamedTuple):
    media_type: str
    data: bytes | None = None
    url: str | None = None


class File(NamedTuple):
    """A file besides an image: a PDF document, WAV or MP3 audio, MP4 video."""

    kind: FileKind
    media_type: str
    data: bytes | None = None
    url: str | None = None

    @property
    def format(self) -> str:
        """The format name the dialects use (``pdf``, ``wav``, ``mp3``, ``mp4``)."""
        return _FORMATS[self.media_type]


class Call(NamedTuple):
    id: str
    name: str
    arguments: str  # the arguments as one JSON string, as the OpenAI-style dialects send them
    #: The thought signature the provider put on this call (Gemini), sent back on it.
    signature: str | None = None

    @property
    def args(self) -> dict:
        """The arguments as a fresh dict, for the dialects that send an object: parsed from
        :attr:`arguments` when rendered, so the OpenAI-style dialects never build one."""
        return json.loads(self.arguments)


class Reasoning(NamedTuple):
    """Reasoning the provider returned, sent back in its dialect's slot: an Anthropic
    ``thinking`` block (``redacted``: a ``redacted_thinking`` block whose data is
    ``signature``), a ``reasoning_content`` string, an OpenRouter ``reasoning_details``
    entry (``details``, sent unchanged), or one summary of an OpenAI ``reasoning`` item
    (``id``: the item's, ``signature``: its encrypted content)."""

    text: str
    signature: str | None = None
    redacted: bool = False
    details: Any = None
    id: str | None = None


class Result(NamedTuple):
    id: str
    name: str
    content: Any
    error: bool


class Turn(list):
    """One provider-neutral turn: role ``system``, ``user``, ``assistant`` or ``tool``; the
    turn is the list of its items (one object per turn, not two)."""

    __slots__ = ("role",)

    def __init__(self, role: str, items: Any = ()) -> None:
        super().__init__(items)
        self.role = role

    @property
    def items(self) -> list:
        return self


def result_text(content: Any) -> str:
    """A tool result's content as the text the text-only slots carry (JSON unless a string)."""
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def is_error_text(content: Any) -> bool:
    """A tool output that is a JSON object with an ``error`` member: how the OpenAI dialects,
    whose tool outputs have no error flag, mark a failed call."""
    if not isinstance(content, str) or not content.lstrip().startswith("{"):
        return False
    try:
        value = json.loads(content)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict) and "error" in value


def reasoning_token(value: Any) -> str:
    """One piece of reasoning as :attr:`BodyTurn.reasoning` holds it: compact sorted JSON,
    so the same bytes read the same whatever the key order."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def neutral_role(turn: Turn, provider: str) -> str:
    """``user`` or ``assistant``, for the dialects whose messages have only those two roles."""
    if turn.role == "system":
        raise ValueError(f"{provider} has no system role inside messages")
    return "assistant" if turn.role == "assistant" else "user"


class RenderHooks(Protocol):
    """The steps of the mapper a dialect calls while rendering, so a fake that changes one
    (``chatconform.fakes.payload``) changes it in every dialect."""

    def inline_data(self, data: bytes | None) -> str:
        """A file's bytes as the base64 text the body carries."""
        ...

    def file_part(self, item: File, profile: Provider) -> str | None:
        """The part that carries a file in the provider's body; None: its URL goes as text."""
        ...


# -- the turn view: a body read back --------------------------------------------------------


@dataclass(frozen=True)
class BodyTurn:
    """One turn of a request body as a dialect reads it back (``provider_schemas.turn_view``)."""

    role: str  # "system" | "user" | "assistant" | "tool"
    texts: tuple[str, ...]  # text items in order (string content counts as one item)
    tool_calls: tuple[tuple[str, str], ...]  # (id, tool name) of calls made in this turn
    tool_results: tuple[tuple[str, str], ...]  # (id, tool name or "") answered in this turn
    path: str  # e.g. "$.messages[2]", "$.system", "$.systemInstruction"
    #: Files in order: each its URL (or file id, storage location), or, for bytes sent inline,
    #: the standard base64 of the bytes the body's text decodes to (``history.inline_identity``:
    #: one spelling for the same bytes, whatever the alphabet or padding; text that is no
    #: base64 kept as it is).
    media: tuple[str, ...] = ()
    #: Positions in ``tool_results`` of the results marked as errors, in the dialect's way:
    #: Anthropic ``is_error``, Bedrock ``status: "error"``, an ``{"error": ...}`` content
    #: (the OpenAI-style tool message as JSON text, the Gemini ``response``).
    error_results: tuple[int, ...] = ()
    #: Positions in ``media`` of the files sent inline, as bytes (the others are links).
    inline: tuple[int, ...] = ()
    #: The reasoning the turn sends back, each piece as compact JSON with sorted keys in
    #: body order: an Anthropic thinking block, ``{"reasoning_content": ...}``,
    #: ``{"reasoning_details": ...}``, or ``{"thoughtSignature": ..., "on": <part kind>}``.
    reasoning: tuple[str, ...] = ()
    #: Every reasoning block comes before the turn's other blocks (Anthropic's rule).
    reasoning_leads: bool = True


# The readers are forgiving: they read what they can and skip what they cannot (the schema
# reports malformed bodies, not this). These helpers take any JSON value.


def list_of(value: Any) -> list:
    return value if isinstance(value, list) else []


def dicts(value: Any) -> Iterator[dict]:
    return (item for item in list_of(value) if isinstance(item, dict))


def str_of(value: Any) -> str:
    return value if isinstance(value, str) else ""


def text_blocks(value: Any, *, typed: bool) -> list[str]:
    """Strings of a content value: a string, or text blocks (``{"type":"text"}`` when typed)."""
    if isinstance(value, str):
        return [value]
    return [
        block["text"]
        for block in dicts(value)
        if isinstance(block.get("text"), str) and (not typed or block.get("type") == "text")
    ]


#: A file as the body sends it: its identity, and whether it travels as bytes (inline).
SentFile = tuple[str, bool]


def inline_bytes(data: Any) -> SentFile | None:
    """Inline bytes given as base64 text (Gemini's JSON takes either alphabet, google-genai
    sends the URL-safe one): the identity of the bytes it decodes to."""
    if not isinstance(data, str) or not data:
        return None
    return inline_identity(data) or data, True


def link(url: Any) -> SentFile | None:
    """A URL: a ``data:`` URL is its bytes, any other URL (or id) is a link."""
    if not isinstance(url, str) or not url:
        return None
    inline = data_url_payload(url)
    return inline_bytes(inline) if inline is not None else (url, False)


def source_file(source: Any) -> SentFile | None:
    """Anthropic and Bedrock file sources: inline bytes, a URL or a storage location."""
    if not isinstance(source, dict):
        return None
    for key in ("data", "bytes"):
        if isinstance(source.get(key), str):
            return inline_bytes(source[key])
    location = source.get("s3Location")
    return link(source.get("url") or source.get("file_id") or
                (location.get("uri") if isinstance(location, dict) else None))


_NO_FILES: dict[str, Any] = {}


def files(found: list[SentFile]) -> dict[str, Any]:
    """A turn's ``media`` and ``inline`` fields from its files in order."""
    if not found:  # most turns: the fields' defaults
        return _NO_FILES
    return {"media": tuple(identity for identity, _ in found),
            "inline": tuple(i for i, (_, inline) in enumerate(found) if inline)}


class CallNames:
    """Tool name by call id, so a result that does not repeat the name still gets it: the
    name of the latest call with that id (an id may be reused in a later round)."""

    def __init__(self) -> None:
        self.by_id: dict[str, str] = {}

    def call(self, call_id: str, name: str) -> tuple[str, str]:
        if call_id and name:
            self.by_id[call_id] = name
        return call_id, name

    def result(self, call_id: str, name: str = "") -> tuple[str, str]:
        return call_id, name or self.by_id.get(call_id, "")


def system_slot(texts: tuple[str, ...], path: str) -> Iterator[BodyTurn]:
    """The provider's system slot as a turn; an empty slot (``""``, ``[]``, no parts) sends
    no system text, so it is no turn at all."""
    if any(texts):
        yield BodyTurn("system", texts, (), (), path)


# -- the protocol ------------------------------------------------------------------------------


class Dialect(ABC):
    """One request dialect, all of it: rendering the reference's turns into a body, reading a
    body back into turns, and answering over HTTP as the provider does (``chatconform
    serve``). Each module of ``chatconform.dialects`` but the shared ones holds one instance,
    ``DIALECT``, named as its module; a provider names it as its ``dialect``.

    An abstract base class rather than a structural protocol: a module that leaves a part
    out fails when it is imported, naming the part, not when a request first needs it.
    The HTTP side takes and returns plain data (:mod:`chatconform.dialects.http`); ``serve``
    turns it into responses, so no web framework is imported here.
    """

    #: The dialect's name, which a provider's profile gives as its ``dialect``: the module's name.
    name: ClassVar[str]
    #: The paths it answers at, in Starlette's pattern syntax (``/v1/messages``,
    #: ``/model/{model_id:path}/converse``). ``serve`` answers each for the first provider of
    #: the dialect in the table, and under ``/<provider id>`` for every provider of it.
    routes: ClassVar[tuple[str, ...]]
    #: What a client's base URL adds before the paths of :attr:`routes` (``/v1`` for OpenAI's
    #: SDK, whose base URL ends in ``/v1``); empty where the SDK adds the whole path.
    base_path: ClassVar[str] = ""
    #: An image can be sent by URL (Bedrock Converse takes none: its URL goes as text).
    takes_image_links: ClassVar[bool] = True
    #: The routes its SDKs call besides the chat (the model list, token counts, embeddings),
    #: as ``(method, path)``: ``serve`` answers each with :meth:`canned` and records it as not
    #: judged, so an application that lists models or counts tokens runs on.
    extra_routes: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: The most bytes a request body may hold, as the provider documents it; None: no cap is
    #: documented, and ``serve`` applies its own (``DEFAULT_MAX_BYTES``), answered by :meth:`too_large`.
    max_request_bytes: ClassVar[int | None] = None
    #: Request headers only this dialect's SDKs send (``anthropic-version``): they say whose
    #: route a shared path is (``GET /v1/models``) and in whose format a missing route is answered.
    markers: ClassVar[tuple[str, ...]] = ()
    #: The error statuses the provider answers when it is busy (a client retries them): what a
    #: drawn interruption of ``serve --generate`` answers.
    busy_statuses: ClassVar[tuple[int, ...]] = (429, 500, 503)

    # -- a body from the reference's turns
    @abstractmethod
    def render(self, hooks: RenderHooks, profile: Provider, system: str | None, turns: list[Turn]) -> dict:
        """The request body of ``turns`` for ``profile``, with ``system`` (all system text, or
        None) in the dialect's system slot. Bytes and files go through ``hooks``."""

    # -- the turns of a body
    @abstractmethod
    def read(self, body: dict) -> Iterator[BodyTurn]:
        """The body's turns in order, the system slot first; what cannot be read is skipped."""

    # -- answering over HTTP
    def route(self, path: str, params: Mapping[str, str], query: Mapping[str, str]) -> RouteCall | Answer:
        """What a request to ``path`` (one of :attr:`routes`, or a provider's own path) with
        these path and query parameters asks for; an :class:`~chatconform.dialects.http.Answer`
        to answer at once instead (a method the API does not have)."""
        return RouteCall()

    def canned(self, method: str, path: str, params: Mapping[str, str], body: Any, ctx: Context) -> Answer:
        """A valid answer to ``method path``, one of :attr:`extra_routes` (or a route call that
        is not judged): the shape the SDK parses, with made-up content (``body``: the request's
        JSON, None for a GET). A dialect with no extra routes answers the provider's 404."""
        return self.error(404, f"chatconform serve answers no {method} {path}", ctx.profile)

    def too_large(self, size: int, limit: int, profile: Provider) -> Answer:
        """The answer to a body of ``size`` bytes over the cap of ``limit``: the provider's own
        where it is documented, else a 413 in its error format that says whose cap it is."""
        return self.error(413, f"The request body is {size} bytes, over the {limit} bytes chatconform serve takes "
                               "(this provider documents no size cap of its own).", profile)

    @abstractmethod
    def tool_names(self, body: dict) -> list[str]:
        """The names of the tools a request declares (a drawn reply calls only those)."""

    def tool_schemas(self, body: dict) -> dict[str, dict]:
        """The JSON schema of the arguments of each tool a request declares, by name: a drawn
        call's arguments are drawn from it. This default knows the names alone (any object)."""
        return {name: {"type": "object"} for name in self.tool_names(body)}

    @staticmethod
    def parameters(schema: Any) -> dict:
        """A tool's declared parameters schema as a dict; none declared: a tool of no arguments."""
        return schema if isinstance(schema, dict) else {"type": "object", "properties": {}}

    @abstractmethod
    def call_ids(self, reply: Reply, ctx: Context) -> list[str]:
        """The id of each tool call of ``reply``, as the provider makes them (none: Gemini)."""

    @abstractmethod
    def answer(self, reply: Reply, ctx: Context) -> Answer:
        """``reply`` as the provider sends it: one body, or the stream ``ctx`` asks for."""

    @abstractmethod
    def error(self, status: int, message: str, profile: Provider) -> Answer:
        """The provider's error body for ``status`` with ``message``."""

    def include_usage(self, body: dict) -> bool:
        """Whether a stream ends with the usage (OpenAI's ``stream_options.include_usage``)."""
        return False

    # -- what a dialect keeps of its own answers
    def session(self) -> Session | None:
        """What ``serve`` keeps between the requests it answers in this dialect (None: each
        request stands alone), made once per server."""
        return None
