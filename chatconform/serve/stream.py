"""A dialect's :class:`~chatconform.dialects.http.Answer` as a Starlette response: a JSON body,
a stream (SSE, or any chunks), and either one cut short.

A cut (``{"cut_stream_after": N}``) is real: the response sends N chunks, then the app returns
without the last one, and the server closes the connection mid-body. The client sees what a
dropped connection looks like (an incomplete chunked body), not a polite error.
"""

from __future__ import annotations

from collections.abc import Mapping

from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from chatconform.dialects.http import Answer, json_bytes

__all__ = ["respond"]


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


def respond(answer: Answer) -> Response:
    """The response that sends ``answer``. A JSON body cut: the first half of it (nothing for
    ``cut_after=0``), then the drop; a stream cut: its first ``cut_after`` chunks, never the
    last (a cut stream always lacks its end)."""
    if answer.chunks is None:
        data = json_bytes(answer.body)
        if answer.cut_after is None:
            return Response(data, status_code=answer.status, media_type=answer.media_type, headers=answer.headers)
        return _Cut([data[:len(data) // 2]] if answer.cut_after else [], answer.status, answer.media_type,
                    answer.headers, len(data))
    sent = list(answer.chunks)
    if answer.cut_after is not None:
        return _Cut(sent[:min(answer.cut_after, len(sent) - 1)], answer.status, answer.media_type, answer.headers)

    async def body():
        for chunk in sent:
            yield chunk

    return StreamingResponse(body(), status_code=answer.status, media_type=answer.media_type, headers=answer.headers)
