"""``chatconform serve``: a local provider endpoint that judges every request an application sends.

Point an application's base URL at it and run the application: each request is judged by
the rules ``chatconform validate`` applies (docs/provider-rules.md), rejected with the
provider's own status and error body when the provider would reject it, and answered
otherwise (a short text, a script's reply for the turn, or a drawn one). The verdicts go to
a JSON-lines report that ``chatconform summary`` and ``diff`` read. docs/serve.md has more.

Modules: ``app`` (the routes and the judging; each dialect's routes, replies and error bodies
are its module's in ``chatconform.dialects``), ``replies`` (scripts and drawn replies),
``stream`` (a dialect's answer as a response: bodies, streams, cut connections), ``log``
(verdicts and the report), ``server`` (the foreground server and the test thread).
"""

from __future__ import annotations

from chatconform.serve.server import Endpoint, base_url, start

__all__ = ["Endpoint", "base_url", "start"]
