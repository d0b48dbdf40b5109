"""Recorded HTTP traffic as test suites keep it, read back as the requests and answers it holds.

``validate`` reads what people already have: VCR.py cassettes (YAML, or VCR.py's JSON
serializer, plain or gzipped as ``.yaml.gz``; the ``interactions`` list, or the parallel
``requests`` and ``responses`` lists some serializers write), HAR files (``log.entries``) and
recorded interactions one per file or one per line (``{"request": ..., "response": ...}``).
A request body may be text, base64 (YAML ``!!binary``, a HAR ``encoding``), gzip-compressed,
or already parsed (``parsed_body``); the answer's status and text are kept beside it, so a
verdict can be held against what the provider did.

Every file is data from anywhere: read only when it is a regular file (a FIFO is never
opened for reading, so it cannot block), at most :data:`MAX_BYTES` (after decompression
too), YAML with the safe loader and no aliases (an alias bomb expands a small file into an
exponential walk). What cannot be read is one :class:`TrafficError` line.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

import yaml

from chatconform.errors import ConfigError
from chatconform.inputs import open_bounded

__all__ = ["MAX_BYTES", "NOT_JSON", "TRAFFIC_SUFFIXES", "Exchange", "TrafficError", "answer_message",
           "exchanges", "gunzip", "is_traffic", "is_yaml_name", "load_yaml", "read_bytes"]

#: The most bytes one file (or its decompressed text, or one line of JSON lines) may hold.
MAX_BYTES = 256 * 2**20
#: The file names a folder is searched for.
TRAFFIC_SUFFIXES = (".yaml", ".yml", ".yaml.gz", ".yml.gz", ".json", ".json.gz", ".jsonl", ".har")
#: How much of an answer's text is kept: enough for any error message, and for the calls of a
#: streamed answer a later request replays.
_ANSWER_CHARS = 2**20


class TrafficError(ConfigError):
    """A file that cannot be read as recorded traffic: the message is one line naming it."""


@dataclass(frozen=True)
class Exchange:
    """One recorded request and, when it was recorded, the provider's answer."""

    #: The interaction's place in its file (0-based).
    index: int
    method: str | None
    url: str | None
    #: The request body as JSON data, or :data:`NOT_JSON` when it is absent or not JSON.
    body: Any
    #: The recorded HTTP status, None when no answer was recorded.
    status: int | None = None
    #: The answer's text (decompressed, at most a MiB), None when unknown.
    answer: str | None = None
    #: The day it was recorded (``YYYY-MM-DD``, from the answer's ``Date`` header or the HAR
    #: entry's start), None when the recording does not say.
    date: str | None = None


class _NotJSON:
    """The body of a request that carries no JSON (a GET, a multipart upload)."""

    def __repr__(self) -> str:
        return "NOT_JSON"


NOT_JSON: Any = _NotJSON()


# --- reading files with bounds -----------------------------------------------------------


def read_bytes(path: str, limit: int = MAX_BYTES) -> bytes:
    """The bytes of the regular file ``path``, decompressed when it is gzip; a TrafficError
    for anything else (:func:`chatconform.inputs.open_bounded`: a FIFO is refused before a read)."""
    try:
        with open_bounded(path, "request bodies", limit) as stream:
            data = stream.read()
    except ConfigError as exc:
        raise TrafficError(str(exc)) from None
    except OSError as exc:
        raise TrafficError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if data[:2] == b"\x1f\x8b":
        inflated = gunzip(data, limit)
        if inflated is None:
            raise TrafficError(f"{path}: cannot read: not valid gzip, or more than {limit} bytes once decompressed")
        return inflated
    return data


def gunzip(data: bytes, limit: int = MAX_BYTES) -> bytes | None:
    """``data`` decompressed (gzip or zlib), or None when it is not, or holds more than ``limit``
    bytes once decompressed (a gzip bomb is stopped at the limit, never inflated whole)."""
    inflater = zlib.decompressobj(wbits=47)  # 32 + 15: gzip or zlib, told by the header
    try:
        out = inflater.decompress(data, limit + 1)
    except zlib.error:
        return None
    if len(out) > limit or inflater.unconsumed_tail:
        return None
    return out


def _utf8(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TrafficError(f"{path}: cannot read: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


class _SafeNoAliases(yaml.SafeLoader):
    """The safe loader (no tags that build objects), refusing aliases: cassettes use none,
    and an alias bomb turns a small file into an exponential walk."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(None, None, "aliases are not allowed in recorded traffic",
                                              event.start_mark)
        return super().compose_node(parent, index)

    def construct_plain(self, node: Any) -> Any:
        """A node of a tag the safe loader does not know (aiohttp cassettes write header names as
        ``!!python/object/apply:multidict._multidict.istr``), built as the plain data it holds:
        nothing named by a tag is ever imported or called."""
        if isinstance(node, yaml.ScalarNode):
            return self.construct_scalar(node)
        if isinstance(node, yaml.SequenceNode):
            return tuple(self.construct_sequence(node, deep=True))  # hashable: it may be a key
        return self.construct_mapping(node, deep=True)


_SafeNoAliases.add_constructor(None, _SafeNoAliases.construct_plain)


def load_yaml(text: str, path: str) -> Any:
    """One YAML document, read as data; a TrafficError naming the file and line."""
    try:
        return yaml.load(text, Loader=_SafeNoAliases)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}" if mark is not None else path
        raise TrafficError(f"{where}: not YAML ({exc.problem or exc.context})") from None
    except (yaml.YAMLError, RecursionError) as exc:
        raise TrafficError(f"{path}: not YAML ({type(exc).__name__})") from None


def is_yaml_name(path: str) -> bool:
    return path.lower().removesuffix(".gz").endswith((".yaml", ".yml"))


# --- what a recorded document holds ------------------------------------------------------


def is_traffic(value: Any) -> bool:
    """Whether a parsed document (or one JSON line) is recorded traffic, not a request body."""
    if not isinstance(value, dict):
        return False
    if isinstance(value.get("interactions"), list) or isinstance(value.get("requests"), list):
        return True
    if isinstance(value.get("log"), dict) and isinstance(value["log"].get("entries"), list):
        return True
    return isinstance(value.get("request"), dict) and ("response" in value or "uri" in value["request"]
                                                       or "url" in value["request"])


def exchanges(value: Any, start: int = 0) -> Iterator[Exchange]:
    """The exchanges of a traffic document (:func:`is_traffic`), numbered from ``start``."""
    if isinstance(value.get("interactions"), list):
        records = [(_dict(i).get("request"), _dict(i).get("response")) for i in value["interactions"]]
    elif isinstance(value.get("requests"), list):
        answers = value.get("responses") if isinstance(value.get("responses"), list) else []
        records = [(request, answers[n] if n < len(answers) else None) for n, request in enumerate(value["requests"])]
    elif isinstance(value.get("log"), dict):
        yield from (_har_entry(entry, start + n) for n, entry in enumerate(value["log"]["entries"]))
        return
    else:
        records = [(value.get("request"), value.get("response"))]
    for n, (request, answer) in enumerate(records):
        yield _vcr_exchange(_dict(request), answer, start + n)


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return value if isinstance(value, str) else None


def _headers(raw: Any) -> dict[str, str]:
    """Lower-case header names to their first value, from VCR's ``{name: [values]}`` or HAR's
    ``[{name, value}]``."""
    out: dict[str, str] = {}
    if isinstance(raw, dict):
        for name, values in raw.items():
            if isinstance(name, tuple) and len(name) == 1:  # an aiohttp header name, built plain
                name = name[0]
            value = values[0] if isinstance(values, list) and values else values
            if isinstance(name, str) and (text := _text(value)) is not None:
                out.setdefault(name.lower(), text)
    elif isinstance(raw, list):
        for item in raw:
            name, text = _dict(item).get("name"), _text(_dict(item).get("value"))
            if isinstance(name, str) and text is not None:
                out.setdefault(name.lower(), text)
    return out


def _raw_bytes(raw: Any) -> bytes | None:
    """A stored body as bytes: ``!!binary`` bytes, text, or VCR's ``{string: ...}``."""
    if isinstance(raw, dict) and "string" in raw:
        raw = raw["string"]
    if isinstance(raw, bytes):
        return raw
    if isinstance(raw, str):
        return raw.encode("utf-8", "surrogatepass")
    return None


def _decoded(data: bytes, headers: dict[str, str]) -> bytes | None:
    """``data`` decompressed when it is gzip (said by its header or its magic bytes); None
    for another encoding chatconform does not read (brotli, zstd)."""
    encoding = headers.get("content-encoding", "").lower()
    if data[:2] == b"\x1f\x8b" or encoding in ("gzip", "deflate"):
        return gunzip(data)
    if encoding and encoding != "identity":
        return None
    return data


def _as_json(data: bytes | None) -> Any:
    """The JSON value of a body's bytes, trying base64 when the bytes are not JSON themselves."""
    if not data:
        return NOT_JSON
    for candidate in (data, _base64(data)):
        if candidate is None:
            continue
        try:
            return json.loads(candidate)
        except (ValueError, RecursionError):
            continue
    return NOT_JSON


def _base64(data: bytes) -> bytes | None:
    try:
        decoded = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    return gunzip(decoded) if decoded[:2] == b"\x1f\x8b" else decoded


def _status(raw: Any) -> int | None:
    if isinstance(raw, dict):
        raw = raw.get("code")
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str) and raw[:3].isdigit():
        return int(raw[:3])
    return None


def _answer_text(data: bytes | None) -> str | None:
    if data is None:
        return None
    return data[: _ANSWER_CHARS * 4].decode("utf-8", "replace")[:_ANSWER_CHARS]


def _vcr_exchange(request: dict, answer: Any, index: int) -> Exchange:
    headers = _headers(request.get("headers"))
    if "parsed_body" in request:
        body = request["parsed_body"]
    else:
        raw = _raw_bytes(request.get("body"))
        body = _as_json(_decoded(raw, headers) if raw else None)
    url = _text(request.get("uri")) or _text(request.get("url"))
    status: int | None = None
    text: str | None = None
    day: str | None = None
    if isinstance(answer, dict):
        status = _status(answer.get("status", answer.get("status_code")))
        answer_headers = _headers(answer.get("headers"))
        day = _day(answer_headers.get("date"))
        if "parsed_body" in answer:
            text = _answer_text(json.dumps(answer["parsed_body"], default=str).encode())
        else:
            raw = _raw_bytes(answer.get("body", answer.get("content")))
            text = _answer_text(_decoded(raw, answer_headers) if raw else None)
    return Exchange(index, _text(request.get("method")), url, body, status, text, day)


def _day(header: str | None) -> str | None:
    """``YYYY-MM-DD`` of an HTTP ``Date`` header, None when there is none to read."""
    try:
        return parsedate_to_datetime(header).date().isoformat() if header else None
    except (TypeError, ValueError, IndexError):
        return None


def _har_content(content: dict) -> bytes | None:
    text = content.get("text")
    if not isinstance(text, str):
        return None
    if content.get("encoding") == "base64":
        return _base64(text.encode("ascii", "replace"))
    return text.encode("utf-8", "surrogatepass")


def _har_entry(entry: Any, index: int) -> Exchange:
    request, answer = _dict(_dict(entry).get("request")), _dict(_dict(entry).get("response"))
    post = _dict(request.get("postData"))
    body = _as_json(_har_content(post))
    status = _status(answer.get("status"))
    text = _answer_text(_har_content(_dict(answer.get("content"))))
    started = _text(_dict(entry).get("startedDateTime"))
    day = started[:10] if started and re.match(r"^\d{4}-\d{2}-\d{2}", started) else None
    return Exchange(index, _text(request.get("method")), _text(request.get("url")), body,
                    status if status else None, text, day)


def answer_message(text: str | None) -> str | None:
    """The error message of a recorded error answer (OpenAI, Anthropic and Gemini
    ``error.message``, Bedrock ``message``, Mistral ``message`` or ``detail``), else its text."""
    if not text:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return " ".join(text.split())[:300]
    if isinstance(value, list) and value:  # Gemini streams answer a list
        value = value[0]
    for found in (_dict(_dict(value).get("error")).get("message"), _dict(value).get("message"),
                  _dict(value).get("Message"), _dict(value).get("detail"), _dict(value).get("error")):
        if isinstance(found, str) and found:
            return " ".join(found.split())[:300]
        if isinstance(found, list) and found:  # a list of validation errors
            return " ".join(json.dumps(found, default=str).split())[:300]
    return " ".join(text.split())[:300]
