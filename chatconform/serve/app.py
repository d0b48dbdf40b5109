"""The ASGI app of ``chatconform serve``: the routes of every dialect, each request judged
with ``provider_schemas.validate`` (what ``chatconform validate`` runs), then answered as the
provider would: its own error status and body for a request it rejects, else the reply.

A request is judged as the API reads it: one that continues an answer of this server (the
Responses API's ``previous_response_id``: ``Dialect.session``) with that answer's items first,
and on what it carries back of the answers sent before in its conversation (a rules module's
``replayed``: Gemini's thought signatures, the Responses API's reasoning items, Anthropic's
thinking blocks, DeepSeek's and Kimi's ``reasoning_content``, OpenRouter's ``reasoning_details``).

Routes (POST), from the dialects (``Dialect.routes``): ``/v1/chat/completions`` (OpenAI Chat),
``/v1/responses`` (OpenAI Responses), ``/v1/messages`` (Anthropic Messages),
``/v1beta/models/<model>:generateContent`` and ``:streamGenerateContent`` (Gemini),
``/model/<modelId>/converse`` and ``/converse-stream`` (Bedrock Converse), each for the first
provider of its dialect in the table (openai-chat, openai-responses, anthropic, gemini,
bedrock-converse) and under ``/<provider>`` for every provider of it
(``/mistral/v1/chat/completions``); and a provider's own paths (``Provider.api_paths``: GLM's
``/glm/api/paas/v4/chat/completions``).

Every other request meets :meth:`_Judge.fallback`: a route a dialect's SDK calls besides the
chat (``Dialect.extra_routes``: the model list, token counts, embeddings) gets the dialect's
canned answer, recorded as not judged; any other is answered with the provider's 404, printed
and recorded, so a route the server lacks is never a silent miss.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route

from chatconform.dialects import Dialect, get_dialect
from chatconform.dialects.http import Answer, Context, Reply, RouteCall, Session, json_bytes
from chatconform.providers import PROVIDERS, Provider, get_provider
from chatconform.serve.conversations import Conversations, turn_keys
from chatconform.serve.log import ServeLog, Verdict
from chatconform.serve.replies import Replies
from chatconform.serve.stream import respond

if TYPE_CHECKING:
    from chatconform.provider_schemas import Problem, Turn

__all__ = ["build_app", "first_user_text", "home_provider", "text_key"]


def home_provider(profile: Provider) -> Provider:
    """The provider the dialect's routes answer for without a ``/<provider>`` prefix: the
    first in the table that speaks the dialect (openai-chat for OpenAI Chat)."""
    return home_provider_of(get_dialect(profile.dialect))


def first_user_text(turns: list[Turn]) -> str:
    """The text of a conversation's first user turn that has text ("" if none has)."""
    return next(("\n".join(turn.texts) for turn in turns if turn.role == "user" and turn.texts), "")


def text_key(first_user_text: str) -> str:
    """The name of a conversation that opens with this user text: a short digest of it (a
    second conversation that opens alike gets ``-2`` after it, and so on)."""
    return hashlib.sha256(first_user_text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


#: The most bytes of a request body for a provider that documents no cap (``Dialect.max_request_bytes``).
DEFAULT_MAX_BYTES = 32 * 2**20
#: The names the server is reached by: a Host header naming anything else is a page of another
#: site resolving its name to this machine (DNS rebinding), refused.
_LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]"})


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value (JSON has no NaN or Infinity)")


#: What a request body that is JSON but not an object is, in the words of the JSON spec.
_JSON_KINDS = {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number",
               type(None): "null"}


def _judged(raw: bytes, provider: str, model: str | None) -> tuple[Any, list[Problem]]:
    """The body as JSON (its text if it is not JSON) and its problems. ``validate`` takes a bare
    list as the message array (a recorded history may be one), but a provider endpoint takes
    only an object: anything else is the generic shape rule broken, with its own message."""
    from chatconform.provider_schemas import Problem, validate

    generic = get_provider(provider).generic_rule
    try:
        body: Any = json.loads(raw, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        text = raw.decode("utf-8", "replace")
        return text, [Problem(generic, "$", f"The request body is not JSON: {exc}", provider, source="schema")]
    if not isinstance(body, dict):
        kind = _JSON_KINDS.get(type(body), type(body).__name__)
        return body, [Problem(generic, "$", f"The request body is not a JSON object: it is {kind}.", provider,
                              source="schema")]
    return body, validate(body, provider, model=model)


def _marked(dialect: Dialect, request: Request) -> bool:
    return any(name in request.headers for name in dialect.markers)


def _turns(body: Any, provider: str) -> list[Turn]:
    from chatconform.provider_schemas import turn_view

    return turn_view(body, provider) if isinstance(body, dict) else []


class _Judge:
    """Judges and answers the requests of every route."""

    def __init__(self, log: ServeLog, replies: Replies, allow_origins: tuple[str, ...] = ()) -> None:
        self.log, self.replies, self.allow_origins = log, replies, allow_origins
        self.conversations = Conversations()
        #: Each dialect's memory of its answers (``Dialect.session``), made on its first request.
        self.sessions: dict[str, Session | None] = {}
        #: The answers sent in each (provider, conversation), as sent, for the rules that judge
        #: what a later request carries back of them.
        self.answers: dict[tuple[str, str], list[str]] = {}
        self.lock = threading.Lock()
        self.dialects = [get_dialect(name) for name in dict.fromkeys(p.dialect for p in PROVIDERS.values())]
        #: Each dialect's extra routes, as routes that match a path (their endpoint is never called).
        self.extras = [(dialect, path, Route(path, _never, methods=[method]))
                       for dialect in self.dialects for method, path in dialect.extra_routes]

    def _refusal(self, request: Request) -> str | None:
        """Why a request is refused before it is read: a Host that is not this machine's name,
        or an Origin (a page in a browser) that ``--allow-origin`` does not name."""
        host = request.headers.get("host", "")
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        if host and name.lower() not in _LOCAL_HOSTS:
            return f"the Host header names {host!r}, not this machine (127.0.0.1 or localhost)"
        origin = request.headers.get("origin")
        if origin is not None and origin not in self.allow_origins and "*" not in self.allow_origins:
            return (f"it comes from a page of {origin!r} in a browser (Origin); chatconform serve --allow-origin "
                    f"{origin} lets that page post")
        return None

    async def _read(self, request: Request, dialect: Dialect) -> bytes | int:
        """The body, or its size when it is over the provider's cap (then read to its end and
        dropped, so the client gets the answer rather than a reset while it is still sending)."""
        limit = dialect.max_request_bytes or DEFAULT_MAX_BYTES
        declared = request.headers.get("content-length", "")
        over = declared.isdigit() and int(declared) > limit
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            over = over or size > limit
            if not over:
                chunks.append(chunk)
        return size if over else b"".join(chunks)

    def _turned_away(self, request: Request, profile: Provider, answer: Answer, served: str, line: str) -> Response:
        """A request answered before it is judged (refused, or too large): a console line and a
        request line, without its body."""
        self.log.add(Verdict(self.log.next_number(), profile.id, request.url.path, "", False, "", 0, (),
                             answer.status, served, None, method=request.method, served=served))
        self.log.notice(f"chatconform serve: {request.method} {request.url.path} {line}")
        return respond(answer)

    def _refused(self, request: Request, profile: Provider, dialect: Dialect, reason: str) -> Response:
        answer = dialect.error(403, f"chatconform serve refused this request: {reason}.", profile)
        return self._turned_away(request, profile, answer, "refused", f"refused (403): {reason}")

    def _too_large(self, request: Request, profile: Provider, dialect: Dialect, size: int) -> Response:
        limit = dialect.max_request_bytes or DEFAULT_MAX_BYTES
        answer = dialect.too_large(size, limit, profile)
        return self._turned_away(request, profile, answer, "too large",
                                 f"is {size} bytes, over {profile.id}'s cap of {limit}: answered {answer.status}")

    async def handle(self, request: Request, profile: Provider, dialect: Dialect, call: RouteCall,
                     path: str) -> Response:
        provider = profile.id
        raw = await self._read(request, dialect)
        if isinstance(raw, int):
            return self._too_large(request, profile, dialect, raw)
        if not call.judged:
            return self._canned(request, profile, dialect, path, raw, call.model)
        body, problems = _judged(raw, provider, call.model)
        named = body.get("model") if isinstance(body, dict) else None
        model = call.model or (named if isinstance(named, str) and named else "chatconform-serve")
        wants = call.stream if call.stream is not None else isinstance(body, dict) and body.get("stream") is True
        read, problems = self._continued(dialect, body, problems, provider, call.model)
        turns = _turns(read, provider)
        opening = first_user_text(turns)
        place = self.conversations.place(turn_keys(turns), text_key(opening))
        problems = [*problems, *self._replayed(read, provider, call.model, place.conversation)]
        number = self.log.next_number()
        errors = [p for p in problems if p.severity == "error"]
        if errors:  # a rejected request uses no script entry
            answer, status, answered = dialect.error(400, errors[0].message, profile), 400, "rejected"
            self.conversations.rejected(place)
        else:
            tools = dialect.tool_schemas(read)
            reply = self.replies.next(opening, place.conversation, place.entry, tools, profile, dialect.busy_statuses)
            self.conversations.answered(place, reply.status is not None or reply.cut_stream_after is not None)
            if reply.delay:
                await asyncio.sleep(reply.delay)
            undeclared = sorted({c.name for c in reply.tool_calls} - set(tools))
            if undeclared:  # a model calls only the tools a request declares: the script is wrong
                message = (f"chatconform serve: script entry {place.entry} calls {', '.join(undeclared)}, which this "
                           f"request does not declare (it declares: {', '.join(tools) or 'no tool'}); the error is "
                           "the script's, not the application's")
                answer, status, answered = dialect.error(500, message, profile), 500, "script error"
                self.log.notice(message)
            else:
                ctx = Context(profile, model, place.conversation, place.entry, bool(wants), max(1, len(raw) // 4),
                              dialect.include_usage(read), call.sse, body)
                answer, status, answered = self._answer(dialect, reply, ctx)
                if status == 200:
                    self._remember(dialect, read, reply, ctx, answer)
        self.log.add(Verdict(number, provider, request.url.path, model, bool(wants), place.conversation, place.turn,
                             tuple(problems), status, answered, body, entry=place.entry, again=place.again))
        return respond(answer)

    def _continued(self, dialect: Dialect, body: Any, problems: list[Problem], provider: str,
                   model: str | None) -> tuple[Any, list[Problem]]:
        """The body as the API reads it (what it continues of this server's own answers, put
        before its items: its conversation is then known by content as any other's) and its
        problems judged as read."""
        from chatconform.provider_schemas import Problem, validate

        if not isinstance(body, dict):
            return body, problems
        with self.lock:
            session = self.sessions.setdefault(dialect.name, dialect.session())
        if session is None:
            return body, problems
        read, refusals = session.resolve(body)
        if read is not body:
            problems = validate(read, provider, model=model)
        return read, [*problems, *(Problem(r.rule, r.path, r.message, provider, source="sequence")
                                              for r in refusals)]

    def _replayed(self, body: Any, provider: str, model: str | None, conversation: str) -> list[Problem]:
        """What the request carries back of this server's earlier answers in the conversation,
        judged by the provider's rules (``replayed``: reasoning an answer returned, sent back)."""
        from chatconform.provider_schemas import replay_problems

        with self.lock:
            earlier = list(self.answers.get((provider, conversation), ()))
        return replay_problems(body, provider, model, earlier) if isinstance(body, dict) else []

    def _canned(self, request: Request, profile: Provider, dialect: Dialect, path: str, raw: bytes,
                model: str | None, params: dict[str, Any] | None = None) -> Response:
        """A canned answer to a route the SDK calls besides the chat, recorded as not judged."""
        try:
            body: Any = json.loads(raw) if raw else None
        except (ValueError, RecursionError):
            body = raw.decode("utf-8", "replace")
        named = body.get("model") if isinstance(body, dict) else None
        model = model or (named if isinstance(named, str) and named else "chatconform-serve")
        stream = isinstance(body, dict) and body.get("stream") is True
        number = self.log.next_number()
        ctx = Context(profile, model, "", 0, stream, max(1, len(raw) // 4))
        answer = dialect.canned(request.method, path, params if params is not None else request.path_params,
                                body, ctx)
        self.log.add(Verdict(number, profile.id, request.url.path, model, stream, "", 0, (), answer.status,
                             "not judged", body, method=request.method, served="not judged"))
        return respond(answer)

    def _missed(self, request: Request, profile: Provider, dialect: Dialect, answer: Answer | None = None) -> Response:
        """A route the server does not serve: the provider's 404 (or ``answer``), a console line
        and a report line."""
        method, path = request.method, request.url.path
        if answer is None:
            answer = dialect.error(404, f"chatconform serve does not serve {method} {path} (the routes it "
                                        "serves: docs/serve.md#routes)", profile)
        number = self.log.next_number()
        self.log.add(Verdict(number, profile.id, path, "", False, "", 0, (), answer.status, "no route", None,
                             method=method, served="no route"))
        self.log.notice(f"chatconform serve: no route for {method} {path}: answered {answer.status} as "
                        f"{profile.id} answers an error, and recorded in the report")
        return respond(answer)

    def _dialect_of(self, request: Request, named: Provider | None) -> Dialect:
        """The dialect a request off the chat routes speaks: its path's provider's, else the one
        whose SDK header it carries, else OpenAI Chat's."""
        if named is not None:
            return get_dialect(named.dialect)
        return next((d for d in self.dialects if _marked(d, request)), self.dialects[0])

    async def fallback(self, request: Request) -> Response:
        """A request no chat route took: an extra route's canned answer, else a miss. A path
        under ``/<provider>`` is that provider's; a shared path (``GET /v1/models``) is the
        dialect's whose SDK header the request carries, else the first's."""
        first, _, rest = request.url.path.lstrip("/").partition("/")
        named = PROVIDERS.get(first)
        path = "/" + rest if named is not None else request.url.path
        refusal = self._refusal(request)
        if refusal is not None:
            dialect = self._dialect_of(request, named)
            return self._refused(request, named or home_provider_of(dialect), dialect, refusal)
        scope = {"type": "http", "path": path, "method": request.method, "root_path": ""}
        found: list[tuple[Dialect, str, dict[str, Any]]] = []
        for dialect, pattern, route in self.extras:
            if named is not None and dialect.name != named.dialect:
                continue
            match, child = route.matches(scope)
            if match == Match.FULL:
                found.append((dialect, pattern, child["path_params"]))
        marked = [f for f in found if _marked(f[0], request)]
        unmarked = [f for f in found if not f[0].markers]
        if not found:
            dialect = self._dialect_of(request, named)
            return self._missed(request, named or home_provider_of(dialect), dialect)
        dialect, pattern, params = (marked or unmarked or found)[0]
        profile = named or home_provider_of(dialect)
        raw = await self._read(request, dialect)
        if isinstance(raw, int):
            return self._too_large(request, profile, dialect, raw)
        return self._canned(request, profile, dialect, pattern, raw, params.get("model_id") or params.get("model"),
                            params)

    def _answer(self, dialect: Dialect, reply: Reply, ctx: Context) -> tuple[Answer, int, str]:
        if reply.status is not None:
            message = reply.message or f"chatconform serve: scripted error {reply.status}"
            return dialect.error(reply.status, message, ctx.profile), reply.status, reply.kind
        self.replies.remember(ctx.conversation, dialect.call_ids(reply, ctx))
        return dialect.answer(reply, ctx), 200, reply.kind

    def _remember(self, dialect: Dialect, body: dict[str, Any], reply: Reply, ctx: Context, answer: Answer) -> None:
        sent = b"".join(answer.chunks) if answer.chunks is not None else json_bytes(answer.body)
        with self.lock:
            self.answers.setdefault((ctx.profile.id, ctx.conversation), []).append(sent.decode("utf-8", "replace"))
            session = self.sessions.get(dialect.name)
        if session is not None:
            session.answered(body, reply, ctx)

    def endpoint(self, dialect: Dialect, path: str,
                 profile: Provider | None) -> Callable[[Request], Awaitable[Response]]:
        """The endpoint of ``path`` for ``profile``; None: for the provider the path's
        ``{provider}`` names, which must speak ``dialect`` (else 404)."""

        async def endpoint(request: Request) -> Response:
            chosen = profile
            if chosen is None:
                named = request.path_params["provider"]
                chosen = PROVIDERS.get(named)
                if chosen is None or chosen.dialect != dialect.name:
                    return await self.fallback(request)
            refusal = self._refusal(request)
            if refusal is not None:
                return self._refused(request, chosen, dialect, refusal)
            call = dialect.route(path, request.path_params, request.query_params)
            if isinstance(call, Answer):  # a method the API does not have
                return self._missed(request, chosen, dialect, call)
            return await self.handle(request, chosen, dialect, call, path)

        return endpoint


def build_app(log: ServeLog, replies: Replies, allow_origins: tuple[str, ...] = ()) -> Starlette:
    """The app: every route judged by one :class:`_Judge`, its verdicts in ``log``. The routes
    without a prefix come first, then the ``/<provider>`` ones. ``allow_origins``: the pages
    (``--allow-origin``) that may post from a browser, answered with CORS headers."""
    judge = _Judge(log, replies, allow_origins)
    own: list[Route] = []
    prefixed: list[Route] = []
    for name in dict.fromkeys(p.dialect for p in PROVIDERS.values()):  # in table order
        dialect = get_dialect(name)
        speakers = [p for p in PROVIDERS.values() if p.dialect == name]
        for path in dialect.routes:
            own.append(Route(path, judge.endpoint(dialect, path, speakers[0]), methods=["POST"]))
            prefixed.append(Route("/{provider}" + path, judge.endpoint(dialect, path, None), methods=["POST"]))
        own += [Route(f"/{profile.id}{path}", judge.endpoint(dialect, path, profile), methods=["POST"])
                for profile in speakers for path in profile.api_paths]
    fallback = Route("/{path:path}", judge.fallback,
                     methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
    middleware = []
    if allow_origins:
        from starlette.middleware import Middleware
        from starlette.middleware.cors import CORSMiddleware

        middleware.append(Middleware(CORSMiddleware, allow_origins=list(allow_origins), allow_methods=["*"],
                                     allow_headers=["*"]))
    return Starlette(routes=[*own, *prefixed, fallback], middleware=middleware)


def home_provider_of(dialect: Dialect) -> Provider:
    """The first provider in the table that speaks ``dialect``."""
    return next(p for p in PROVIDERS.values() if p.dialect == dialect.name)


async def _never(request: Request) -> Response:  # pragma: no cover - a route used only to match paths
    raise AssertionError("an extra route is matched, never called")
