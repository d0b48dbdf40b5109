"""The event-stream encoder read back by botocore's own decoder, which checks both CRCs: the
messages ConverseStream answers with parse whole, one at a time or split anywhere, and a
flipped byte is caught."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("botocore", reason="the decoder to read back with is botocore's (the pydantic-ai extra)")

from botocore.eventstream import ChecksumMismatch, EventStreamBuffer

from chatconform.dialects.eventstream import event, message


def decoded(data: bytes, step: int | None = None) -> list:
    buffer = EventStreamBuffer()
    found = []
    for at in range(0, len(data), step or len(data)):
        buffer.add_data(data[at:at + (step or len(data))])
        found += list(buffer)
    return found


def test_events_read_back_with_their_headers_and_payload():
    start = event("messageStart", {"role": "assistant"})
    data = start + event("contentBlockDelta", {"delta": {"text": "Grüße, 東京"}, "contentBlockIndex": 0})
    for step in (None, 1, 7):
        first, second = decoded(data, step)
        assert first.headers == {":event-type": "messageStart", ":content-type": "application/json",
                                 ":message-type": "event"}
        assert json.loads(first.payload) == {"role": "assistant"}
        assert json.loads(second.payload)["delta"]["text"] == "Grüße, 東京"
        assert (first.prelude.total_length, second.prelude.total_length) == (len(start), len(data) - len(start))


def test_an_empty_message_is_sixteen_bytes():
    data = message({}, b"")
    assert len(data) == 16
    [read] = decoded(data)
    assert read.headers == {} and read.payload == b""


@pytest.mark.parametrize("where", [2, 9, 20, -2])  # the prelude, its CRC, the headers, the message CRC
def test_a_flipped_byte_fails_a_checksum(where):
    data = bytearray(event("messageStop", {"stopReason": "end_turn"}))
    data[where] ^= 0x01
    with pytest.raises(ChecksumMismatch):
        decoded(bytes(data))
