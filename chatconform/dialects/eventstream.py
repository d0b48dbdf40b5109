"""AWS's binary event stream (``application/vnd.amazon.eventstream``), which Bedrock's
ConverseStream answers in, written here rather than taken from an AWS library so the serve
extra needs none.

A message is a prelude (its total length, its headers' length, both big-endian 32-bit, and
the CRC32 of those 8 bytes), the headers (each a 1-byte name length, the name, the value type
7 for a string, a 2-byte value length and the value), the payload, and the CRC32 of all that
came before it. An event's headers name it (``:event-type``), its payload's type
(``:content-type``) and say it is an event (``:message-type``).
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Mapping
from typing import Any

__all__ = ["event", "message"]

_STRING = 7  # the header value type of a UTF-8 string


def _header(name: str, value: str) -> bytes:
    key, text = name.encode("utf-8"), value.encode("utf-8")
    return struct.pack(">B", len(key)) + key + struct.pack(">BH", _STRING, len(text)) + text


def message(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One message of the stream: the prelude and its CRC, the headers, the payload, the CRC."""
    encoded = b"".join(_header(name, value) for name, value in headers.items())
    prelude = struct.pack(">II", 12 + len(encoded) + len(payload) + 4, len(encoded))
    body = prelude + struct.pack(">I", zlib.crc32(prelude)) + encoded + payload
    return body + struct.pack(">I", zlib.crc32(body))


def event(event_type: str, data: Any) -> bytes:
    """An event whose payload is ``data`` as JSON."""
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return message({":event-type": event_type, ":content-type": "application/json", ":message-type": "event"},
                   payload)
