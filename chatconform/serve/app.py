"""The ASGI app of ``chatconform serve``: the routes of every dialect, each request judged
with ``provider_schemas.validate`` (what ``chatconform validate`` runs), then answered as the
provider would: its own error status and body for a request it rejects, else the reply.

A request is judged as the API reads it: one that continues an answer of this server (the
Responses API's ``previous_response_id``: ``Dialect.session``) with that answer's items first,
and on what it carries back of the answers sent before in its conversation (a rules module's
``replayed``: Gemini's thought signatures, the Responses API's reasoning items).

Routes (POST), from the dialects (``Dialect.routes``): ``/v1/chat/completions`` (OpenAI Chat),
``/v1/responses`` (OpenAI Responses), ``/v1/messages`` (Anthropic Messages),
``/v1beta/models/<model>:generateContent`` and ``:streamGenerateContent`` (Gemini),
``/model/<modelId>/converse`` and ``/converse-stream`` (Bedrock Converse), each for the first
provider of its dialect in the table (openai-chat, openai-responses, anthropic, gemini,
bedrock-converse) and under ``/<provider>`` for every provider of it
(``/mistral/v1/chat/completions``); and a provider's own paths (``Provider.api_paths``: GLM's
``/glm/api/paas/v4/chat/completions``).
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
from starlette.routing import Route

from chatconform.dialects import Dialect, get_dialect
from chatconform.dialects.http import Answer, Context, Reply, RouteCall, Session, json_bytes
from chatconform.providers import PROVIDERS, Provider, get_provider
from chatconform.serve.log import ServeLog, Verdict
from chatconform.serve.replies import Replies
from chatconform.serve.stream import respond

if TYPE_CHECKING:
    from chatconform.provider_schemas import Problem

__all__ = ["build_app", "conversation_key", "home_provider", "text_key"]


def home_provider(profile: Provider) -> Provider:
    """The provider the dialect's routes answer for without a ``/<provider>`` prefix: the
    first in the table that speaks the dialect (openai-chat for OpenAI Chat)."""
    return next(p for p in PROVIDERS.values() if p.dialect == profile.dialect)


def conversation_key(body: Any, provider: str) -> str:
    """A conversation is known by its first user text (:func:`text_key`). The turn view reads
    only the messages up to the first user one: a long conversation costs no more."""
    from chatconform.provider_schemas import turn_view

    key = get_provider(provider).messages_key
    messages = body if isinstance(body, list) else body.get(key) if isinstance(body, dict) else None
    if isinstance(messages, str):  # the Responses API's `input` as one user text
        return text_key(messages)
    if not isinstance(messages, list):
        return text_key("")
    users = (i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "user")
    for index in users:
        turns = turn_view({key: messages[index:index + 1]}, provider)
        texts = [t for turn in turns if turn.role == "user" for t in turn.texts]
        if texts:
            return text_key("\n".join(texts))
    return text_key("")


def text_key(first_user_text: str) -> str:
    """The key of the conversation that opens with this user text: a short digest of it."""
    return hashlib.sha256(first_user_text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


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
        body: Any = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        text = raw.decode("utf-8", "replace")
        return text, [Problem(generic, "$", f"The request body is not JSON: {exc}", provider, source="schema")]
    if not isinstance(body, dict):
        kind = _JSON_KINDS.get(type(body), type(body).__name__)
        return body, [Problem(generic, "$", f"The request body is not a JSON object: it is {kind}.", provider,
                              source="schema")]
    return body, validate(body, provider, model=model)


class _Judge:
    """Judges and answers the requests of every route."""

    def __init__(self, log: ServeLog, replies: Replies) -> None:
        self.log, self.replies = log, replies
        #: Each dialect's memory of its answers (``Dialect.session``), made on its first request.
        self.sessions: dict[str, Session | None] = {}
        #: The answers sent in each (provider, conversation), as sent, for the rules that judge
        #: what a later request carries back of them.
        self.answers: dict[tuple[str, str], list[str]] = {}
        self.lock = threading.Lock()

    async def handle(self, request: Request, profile: Provider, dialect: Dialect, call: RouteCall) -> Response:
        provider = profile.id
        raw = await request.body()
        body, problems = _judged(raw, provider, call.model)
        named = body.get("model") if isinstance(body, dict) else None
        model = call.model or (named if isinstance(named, str) and named else "chatconform-serve")
        wants = call.stream if call.stream is not None else isinstance(body, dict) and body.get("stream") is True
        read, continued, problems = self._continued(dialect, body, problems, provider, call.model)
        conversation = continued or conversation_key(read, provider)
        problems = [*problems, *self._replayed(read, provider, call.model, conversation)]
        number, turn = self.log.next_turn(conversation)
        errors = [p for p in problems if p.severity == "error"]
        if errors:
            answer, status, answered = dialect.error(400, errors[0].message, profile), 400, "rejected"
        else:
            tools = dialect.tool_names(read)
            reply = self.replies.next(conversation, turn, tools)
            if reply.delay:
                await asyncio.sleep(reply.delay)
            ctx = Context(profile, model, conversation, turn, bool(wants), max(1, len(raw) // 4),
                          dialect.include_usage(read), call.sse, body)
            answer, status, answered = self._answer(dialect, reply, ctx)
            if status == 200:
                self._remember(dialect, read, reply, ctx, answer)
        self.log.add(Verdict(number, provider, request.url.path, model, bool(wants), conversation, turn,
                             tuple(problems), status, answered, body))
        return respond(answer)

    def _continued(self, dialect: Dialect, body: Any, problems: list[Problem], provider: str,
                   model: str | None) -> tuple[Any, str | None, list[Problem]]:
        """The body as the API reads it (what it continues of this server's own answers, put
        before its items), the conversation it continues, and its problems judged as read."""
        from chatconform.provider_schemas import Problem, validate

        if not isinstance(body, dict):
            return body, None, problems
        with self.lock:
            session = self.sessions.setdefault(dialect.name, dialect.session())
        if session is None:
            return body, None, problems
        read, refusals, continued = session.resolve(body)
        if read is not body:
            problems = validate(read, provider, model=model)
        return read, continued, [*problems, *(Problem(r.rule, r.path, r.message, provider, source="sequence")
                                              for r in refusals)]

    def _replayed(self, body: Any, provider: str, model: str | None, conversation: str) -> list[Problem]:
        """What the request carries back of this server's earlier answers in the conversation,
        judged by the provider's rules (``replayed``: an item returned after a reasoning item)."""
        from chatconform.provider_schemas.rules import replay_problems

        with self.lock:
            earlier = list(self.answers.get((provider, conversation), ()))
        return replay_problems(body, provider, model, earlier) if isinstance(body, dict) else []

    def _answer(self, dialect: Dialect, reply: Reply, ctx: Context) -> tuple[Answer, int, str]:
        if reply.status is not None:
            message = reply.message or f"chatconform serve: scripted error {reply.status}"
            return dialect.error(reply.status, message, ctx.profile), reply.status, reply.kind
        self.replies.remember(ctx.conversation, dialect.call_ids(reply, ctx))
        return dialect.answer(reply, ctx), 200, reply.kind

    def _remember(self, dialect: Dialect, body: dict, reply: Reply, ctx: Context, answer: Answer) -> None:
        sent = b"".join(answer.chunks) if answer.chunks is not None else json_bytes(answer.body)
        with self.lock:
            self.answers.setdefault((ctx.profile.id, ctx.conversation), []).append(sent.decode("utf-8", "replace"))
            session = self.sessions.get(dialect.name)
        if session is not None:
            session.answered(body, reply, ctx, ctx.conversation)

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
                    return Response(f"no route for {request.url.path}", status_code=404)
            call = dialect.route(path, request.path_params, request.query_params)
            if isinstance(call, Answer):
                return respond(call)
            return await self.handle(request, chosen, dialect, call)

        return endpoint


def build_app(log: ServeLog, replies: Replies) -> Starlette:
    """The app: every route judged by one :class:`_Judge`, its verdicts in ``log``. The routes
    without a prefix come first, then the ``/<provider>`` ones."""
    judge = _Judge(log, replies)
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
    return Starlette(routes=own + prefixed)
