"""The responses every dialect sends: a JSON body, a stream (SSE, or any chunks), and either one
cut short.

A cut (``{"cut_stream_after": N}``) is real: the response sends N chunks, then the app returns
without the last one, and the server closes the connection mid-body. The client sees what a
dropped connection looks like (an incomplete chunked body), not a polite error.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

__all__ = ["json_response", "sse_event", "sse_response", "stream_response"]


def _dumps(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class _Cut(Response):
    """Sends the start and ``chunks``, never the end of the body: the server then drops the
    connection (uvicorn closes it when an app returns with its response unfinished).
    ``length``: the Content-Length to promise (None: a chunked body)."""

    def __init__(self, chunks: list[bytes], status_code: int, media_type: str,
                 headers: Mapping[str, str] | None = None, length: int | None = None) -> None:
        self.status_code, self.chunks, self.background = status_code, chunks, None
        fields = {"content-type": media_type, **(headers or {})}
        if length is not None:
            fields["content-length"] = str(length)
        self.raw_headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in fields.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        for chunk in self.chunks:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})


def json_response(data: Any, *, status: int = 200, headers: Mapping[str, str] | None = None,
                  cut_after: int | None = None) -> Response:
    """A JSON body; cut: the first half of it (nothing for ``cut_after=0``), then the drop."""
    body = _dumps(data)
    if cut_after is None:
        return Response(body, status_code=status, media_type="application/json", headers=headers)
    return _Cut([body[:len(body) // 2]] if cut_after else [], status, "application/json", headers, len(body))


def sse_event(data: Any, event: str | None = None) -> bytes:
    """One server-sent event (``data`` as JSON unless it is already a string)."""
    payload = data.encode("utf-8") if isinstance(data, str) else _dumps(data)
    return (f"event: {event}\n".encode() if event else b"") + b"data: " + payload + b"\n\n"


def sse_response(events: Iterable[bytes], *, cut_after: int | None = None) -> Response:
    """An SSE stream of ``events`` (made by :func:`sse_event`)."""
    return stream_response(events, "text/event-stream", headers={"cache-control": "no-cache"}, cut_after=cut_after)


def stream_response(chunks: Iterable[bytes], media_type: str, *, headers: Mapping[str, str] | None = None,
                    cut_after: int | None = None) -> Response:
    """A streamed body sent a chunk at a time; cut: the first ``cut_after`` chunks, never the
    last (a cut stream always lacks its end)."""
    sent = list(chunks)
    if cut_after is not None:
        return _Cut(sent[:min(cut_after, len(sent) - 1)], 200, media_type, headers)

    async def body():
        for chunk in sent:
            yield chunk

    return StreamingResponse(body(), media_type=media_type, headers=headers)
