"""Running the endpoint: in the foreground (``chatconform serve``), or in a thread for a test
(:func:`start`, behind the ``chatconform_endpoint`` fixture). Binds 127.0.0.1 only: the
endpoint answers any request without a key, so it is never reachable from elsewhere.

The socket is bound before anything slow is imported, and the validator is imported in a
background thread while the server starts, so the port answers within a second or two.
"""

from __future__ import annotations

import logging
import signal
import socket
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chatconform.errors import ConfigError
from chatconform.serve.log import ServeLog, Verdict
from chatconform.serve.replies import Replies, parse_script

__all__ = ["HOST", "Endpoint", "base_url", "bind", "start"]

HOST = "127.0.0.1"


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (``port`` 0: a free one); a ConfigError if it is taken."""
    # IPPROTO_TCP named, so asyncio sets TCP_NODELAY on each connection (without it Nagle holds
    # every response about 40 ms for the delayed ACK of its headers)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc} (choose another --port)") from None
    sock.listen(128)
    sock.setblocking(False)
    return sock


def base_url(root: str, provider: str) -> str:
    """The base URL a provider's SDK takes to reach this server's route for ``provider``."""
    from chatconform.dialects import get_dialect
    from chatconform.providers import get_provider
    from chatconform.serve.app import home_provider

    profile = get_provider(provider)
    prefix = "" if home_provider(profile).id == profile.id else f"/{profile.id}"
    # OpenAI's SDK adds /chat/completions to a base URL ending in /v1; the Anthropic, Google
    # and AWS SDKs add /v1/messages, /v1beta/... and /model/... to theirs
    return f"{root}{prefix}{get_dialect(profile.dialect).base_path}"


def _warm() -> None:
    """Import the validator (and pydantic-ai, which its turn view reads) off the main path."""
    import chatconform.provider_schemas  # noqa: F401


def _quiet_cuts(record: logging.LogRecord) -> bool:
    """uvicorn logs a response left unfinished as an error; here it is a scripted cut."""
    return record.getMessage() != "ASGI callable returned without completing response."


def _server(sock: socket.socket, log: ServeLog, replies: Replies, log_level: str,
            allow_origins: tuple[str, ...] = ()):
    import uvicorn

    logging.getLogger("uvicorn.error").addFilter(_quiet_cuts)

    from chatconform.serve.app import build_app

    class Server(uvicorn.Server):
        """uvicorn's server, which stops on SIGINT or SIGTERM without raising the signal again
        once stopped: for ``serve`` a signal is the normal end, after which the report is written."""

        stopped_by: str | None = None

        def handle_exit(self, sig: int, frame: Any) -> None:
            self.force_exit = self.should_exit and sig == signal.SIGINT  # a second Ctrl-C: now
            self.should_exit, self.stopped_by = True, signal.Signals(sig).name

    config = uvicorn.Config(build_app(log, replies, allow_origins), log_level=log_level, lifespan="off",
                            access_log=False, timeout_graceful_shutdown=2)
    return Server(config)


def run(port: int, log: ServeLog, replies: Replies, announce: Callable[[str], None],
        allow_origins: tuple[str, ...] = ()) -> str | None:
    """Serve in the foreground until SIGINT or SIGTERM (the signal's name is returned); the
    report is written when it stops (a ConfigError if it cannot be)."""
    sock = bind(port)
    threading.Thread(target=_warm, name="chatconform-serve-warm", daemon=True).start()
    server = _server(sock, log, replies, "warning", allow_origins)
    announce(f"http://{HOST}:{sock.getsockname()[1]}")
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        log.close()
    return server.stopped_by


@dataclass
class Endpoint:
    """A server running in a thread, for a test: where each provider's route is, and what
    the requests so far were judged."""

    root: str
    log: ServeLog
    replies: Replies
    _server: Any = field(repr=False)
    _thread: threading.Thread = field(repr=False)

    def base_url(self, provider: str) -> str:
        return base_url(self.root, provider)

    @property
    def verdicts(self) -> list[Verdict]:
        return list(self.log.verdicts)

    def script(self, entries: Sequence[Any] | Mapping[str, Sequence[Any]]) -> None:
        """Answer the turns of each conversation from now on with these script entries (a
        list, or lists by the marker a conversation's first user text holds)."""
        self.replies.script = parse_script(dict(entries) if isinstance(entries, Mapping) else list(entries))

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self.log.close()


def start(*, script: Sequence[Any] | Mapping[str, Sequence[Any]] = (), generate: bool = False, seed: int = 0,
          report: str | Path | None = None, version: str = "", port: int = 0,
          allow_origins: Sequence[str] = ()) -> Endpoint:
    """Start a server in a daemon thread on a free port; returns once it accepts requests."""
    _warm()
    log = ServeLog(report, version=version, seed=seed, settings={"generate": generate})
    replies = Replies(parse_script(dict(script) if isinstance(script, Mapping) else list(script)),
                      generate=generate, seed=seed)
    sock = bind(port)
    server = _server(sock, log, replies, "error", tuple(allow_origins))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="chatconform-serve", daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("chatconform serve: the server thread stopped before it started")
        thread.join(timeout=0.01)
    return Endpoint(f"http://{HOST}:{sock.getsockname()[1]}", log, replies, server, thread)
