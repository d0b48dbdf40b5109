"""What a dialect answers over HTTP, as plain data: the reply to send (:class:`Reply`, in no
dialect), the request it answers (:class:`Context`), what a route asks for
(:class:`RouteCall`) and the answer itself (:class:`Answer`: a JSON body or a stream of
chunks). ``chatconform serve`` makes responses of these; nothing here imports a web framework.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chatconform.providers.profile import Provider

__all__ = ["DEFAULT_TEXT", "EMBEDDING_SIZE", "SERVED_MODEL", "Answer", "Context", "Refusal", "Reply", "RouteCall",
           "Session", "ToolCall", "call_id", "completion_tokens", "embedding", "embedding_base64", "json_answer",
           "json_bytes", "sse_answer", "sse_event", "stream_answer", "tokens"]

#: The default answer: short, so an application's assertions on it are easy to write.
DEFAULT_TEXT = "OK"


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict
    #: The id to send; None: one made from the conversation and turn (the same on a rerun).
    id: str | None = None


@dataclass(frozen=True)
class Reply:
    """One answer, in no dialect: each dialect module renders it in its own shape."""

    text: str | None = DEFAULT_TEXT
    thinking: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    #: An error answer instead (``{"status": 500}``), with the provider's error body shape.
    status: int | None = None
    message: str | None = None
    #: Seconds to wait before answering.
    delay: float = 0.0
    #: Close the connection after this many chunks of a stream (or part of a plain body),
    #: without the final chunk.
    cut_stream_after: int | None = None
    #: What the report adds to :attr:`kind` about where the reply came from (``drawn``, a reused id).
    note: str = ""

    @property
    def kind(self) -> str:
        """What the report says was answered."""
        if self.status is not None:
            kind = f"status {self.status}"
        else:
            parts = [name for name, present in (("thinking", self.thinking), ("text", self.text is not None),
                                                ("tool_calls", self.tool_calls)) if present]
            kind = "+".join(parts) or "empty"
            kind += f", cut after {self.cut_stream_after}" if self.cut_stream_after is not None else ""
        kind += f", after {self.delay:g} s" if self.delay else ""
        return kind + (f" ({self.note})" if self.note else "")


@dataclass(frozen=True)
class Context:
    """The request a reply answers, as the dialect modules need it."""

    profile: Provider
    model: str
    conversation: str
    turn: int
    stream: bool
    #: A rough count of the request's tokens (its JSON's length / 4), for the usage fields.
    prompt_tokens: int = 1
    #: OpenAI's ``stream_options.include_usage``: a last chunk with the usage.
    include_usage: bool = False
    #: A stream as server-sent events; False: one JSON array of its chunks (Gemini without ``alt=sse``).
    sse: bool = True
    #: The request body as sent, for what a dialect answers from it (the Responses API's
    #: ``include``, ``store`` and ``previous_response_id``).
    request: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RouteCall:
    """What a request's path says: the model it names, whether it asks for a stream (None:
    the body's ``"stream": true`` says), and how a stream is sent."""

    model: str | None = None
    stream: bool | None = None
    sse: bool = True
    #: False: a call the SDK makes besides the chat (Gemini's ``:countTokens``), answered by
    #: :meth:`~chatconform.dialects.base.Dialect.canned` and not judged.
    judged: bool = True


@dataclass(frozen=True)
class Answer:
    """An HTTP answer: a JSON body (``chunks`` None), or a body streamed chunk by chunk."""

    body: Any = None
    chunks: tuple[bytes, ...] | None = None
    status: int = 200
    media_type: str = "application/json"
    headers: Mapping[str, str] = field(default_factory=dict)
    #: Drop the connection after this many chunks of a stream (never its last), or halfway
    #: through a plain body (0: before any of it): a scripted cut.
    cut_after: int | None = None


@dataclass(frozen=True)
class Refusal:
    """A request the API refuses for what it carries back of an earlier answer (a rule of
    the provider's rules module, with the provider's text), found by a :class:`Session`."""

    rule: str
    path: str
    message: str


class Session(ABC):
    """What ``serve`` keeps of its own answers in one dialect, so a later request is read as
    the API reads it: a request that continues a stored answer (the Responses API's
    ``previous_response_id``) is that answer's conversation with the request's items after it."""

    @abstractmethod
    def resolve(self, body: dict) -> tuple[dict, list[Refusal]]:
        """The body as the API reads it (what it continues put before its own items) and the
        refusals of what it continues."""

    @abstractmethod
    def answered(self, body: dict, reply: Reply, ctx: Context) -> None:
        """``reply`` was sent for ``body`` (as :meth:`resolve` read it)."""


def json_answer(data: Any, *, status: int = 200, headers: Mapping[str, str] | None = None,
                cut_after: int | None = None) -> Answer:
    return Answer(data, status=status, headers=dict(headers or {}), cut_after=cut_after)


def sse_event(data: Any, event: str | None = None) -> bytes:
    """One server-sent event (``data`` as JSON unless it is already a string)."""
    payload = data.encode("utf-8") if isinstance(data, str) else json_bytes(data)
    return (f"event: {event}\n".encode() if event else b"") + b"data: " + payload + b"\n\n"


def sse_answer(events: Iterable[bytes], *, cut_after: int | None = None) -> Answer:
    """An SSE stream of ``events`` (made by :func:`sse_event`)."""
    return stream_answer(events, "text/event-stream", headers={"cache-control": "no-cache"}, cut_after=cut_after)


def stream_answer(chunks: Iterable[bytes], media_type: str, *, headers: Mapping[str, str] | None = None,
                  cut_after: int | None = None) -> Answer:
    return Answer(chunks=tuple(chunks), media_type=media_type, headers=dict(headers or {}), cut_after=cut_after)


def json_bytes(data: Any) -> bytes:
    """JSON as every answer sends it: compact, UTF-8, non-ASCII kept."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def call_id(prefix: str, conversation: str, turn: int, index: int, call: ToolCall) -> str:
    """The id of a call: the script's, else one made from where it is (stable across reruns)."""
    if call.id is not None:
        return call.id
    digest = hashlib.sha256(f"{conversation}/{turn}/{index}".encode()).hexdigest()
    return f"{prefix}{digest[:24]}"


#: The model a canned model list names when the request names none.
SERVED_MODEL = "chatconform-serve"
#: The length of a canned embedding when the request asks for none.
EMBEDDING_SIZE = 64


def embedding(text: str, size: Any = EMBEDDING_SIZE) -> list[float]:
    """A made-up embedding of ``text``: the same text, the same unit vector (so an application
    that compares embeddings sees equal texts as equal), ``size`` floats from its digest
    (the size a request asks for, if it is a whole number from 1 to 4096)."""
    if not (isinstance(size, int) and not isinstance(size, bool) and 0 < size <= 4096):
        size = EMBEDDING_SIZE
    values: list[float] = []
    counter = 0
    while len(values) < size:
        digest = hashlib.sha256(f"{counter}/{text}".encode("utf-8", "surrogatepass")).digest()
        values += [byte / 127.5 - 1 for byte in digest]
        counter += 1
    norm = sum(v * v for v in values[:size]) ** 0.5 or 1.0
    return [round(v / norm, 6) for v in values[:size]]


def embedding_base64(values: list[float]) -> str:
    """An embedding as OpenAI's ``encoding_format: "base64"`` sends it: little-endian float32s."""
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode("ascii")


def tokens(text: str | None) -> int:
    """A rough token count (4 characters a token), never 0 for text that is there."""
    return max(1, len(text) // 4) if text else 0


def completion_tokens(reply: Reply) -> int:
    return max(1, tokens(reply.text) + tokens(reply.thinking)
               + sum(tokens(json.dumps(c.arguments)) + 1 for c in reply.tool_calls))
