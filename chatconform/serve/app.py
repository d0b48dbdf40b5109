"""The ASGI app of ``chatconform serve``: a route per provider endpoint, each request judged
with ``provider_schemas.validate`` (what ``chatconform validate`` runs), then answered as the
provider would: its own error status and body for a request it rejects, else the reply.

Routes (POST): ``/v1/chat/completions`` (openai-chat) and ``/<provider>/v1/chat/completions``
for every OpenAI-style provider (also GLM's own ``/glm/api/paas/v4/chat/completions``);
``/v1/messages`` (anthropic); ``/v1beta/models/<model>:generateContent`` and
``:streamGenerateContent`` (gemini); ``/model/<modelId>/converse`` and ``/converse-stream``
(bedrock-converse).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from chatconform.providers import PROVIDERS, get_provider
from chatconform.serve import anthropic_messages, bedrock_converse, gemini_generate, openai_chat
from chatconform.serve.log import ServeLog, Verdict
from chatconform.serve.replies import Context, Replies, Reply

if TYPE_CHECKING:
    from chatconform.provider_schemas import Problem

__all__ = ["DIALECTS", "build_app", "conversation_key", "text_key"]

#: The module that speaks each dialect.
DIALECTS: dict[str, ModuleType] = {"openai": openai_chat, "anthropic": anthropic_messages,
                                   "gemini": gemini_generate, "bedrock": bedrock_converse}


def conversation_key(body: Any, provider: str) -> str:
    """A conversation is known by its first user text (:func:`text_key`). The turn view reads
    only the messages up to the first user one: a long conversation costs no more."""
    from chatconform.provider_schemas import turn_view

    key = get_provider(provider).messages_key
    messages = body if isinstance(body, list) else body.get(key) if isinstance(body, dict) else None
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

    async def handle(self, request: Request, provider: str, *, model: str | None = None,
                     stream: bool | None = None, sse: bool = True) -> Response:
        dialect = DIALECTS[get_provider(provider).dialect]
        raw = await request.body()
        body, problems = _judged(raw, provider, model)
        named = body.get("model") if isinstance(body, dict) else None
        model = model or (named if isinstance(named, str) and named else "chatconform-serve")
        wants = stream if stream is not None else isinstance(body, dict) and body.get("stream") is True
        conversation = conversation_key(body, provider)
        number, turn = self.log.next_turn(conversation)
        errors = [p for p in problems if p.severity == "error"]
        if errors:
            response, status, answered = dialect.error(400, errors[0].message, provider), 400, "rejected"
        else:
            tools = dialect.tool_names(body)
            reply = self.replies.next(conversation, turn, tools)
            if reply.delay:
                await asyncio.sleep(reply.delay)
            response, status, answered = self._answer(dialect, reply, Context(
                provider, model, conversation, turn, bool(wants), max(1, len(raw) // 4),
                openai_chat.include_usage(body)), sse)
        self.log.add(Verdict(number, provider, request.url.path, model, bool(wants), conversation, turn,
                             tuple(problems), status, answered, body))
        return response

    def _answer(self, dialect: ModuleType, reply: Reply, ctx: Context, sse: bool) -> tuple[Response, int, str]:
        if reply.status is not None:
            message = reply.message or f"chatconform serve: scripted error {reply.status}"
            return dialect.error(reply.status, message, ctx.provider), reply.status, reply.kind
        self.replies.remember(ctx.conversation, dialect.call_ids(reply, ctx))
        response = (gemini_generate.answer(reply, ctx, sse=sse) if dialect is gemini_generate
                    else dialect.answer(reply, ctx))
        return response, 200, reply.kind


def _openai_routes(judge: _Judge) -> list[Route]:
    def for_provider(provider: str) -> Callable:
        async def endpoint(request: Request) -> Response:
            return await judge.handle(request, provider)
        return endpoint

    async def prefixed(request: Request) -> Response:
        provider = request.path_params["provider"]
        if provider not in PROVIDERS or PROVIDERS[provider].dialect != "openai":
            return Response(f"no route for {request.url.path}", status_code=404)
        return await judge.handle(request, provider)

    return [Route("/v1/chat/completions", for_provider("openai-chat"), methods=["POST"]),
            Route("/glm/api/paas/v4/chat/completions", for_provider("glm"), methods=["POST"]),
            Route("/{provider}/v1/chat/completions", prefixed, methods=["POST"])]


def build_app(log: ServeLog, replies: Replies) -> Starlette:
    """The app: every route judged by one :class:`_Judge`, its verdicts in ``log``."""
    judge = _Judge(log, replies)

    async def messages(request: Request) -> Response:
        return await judge.handle(request, "anthropic")

    async def gemini(request: Request) -> Response:
        model, method = request.path_params["model"], request.path_params["method"]
        if method not in gemini_generate.METHODS:
            return gemini_generate.error(404, f"Method {method} is not found for models/{model}.", "gemini")
        return await judge.handle(request, "gemini", model=model, stream=method == "streamGenerateContent",
                                  sse=request.query_params.get("alt") == "sse")

    async def converse(request: Request) -> Response:
        return await judge.handle(request, "bedrock-converse", model=request.path_params["model_id"], stream=False)

    async def converse_stream(request: Request) -> Response:
        return await judge.handle(request, "bedrock-converse", model=request.path_params["model_id"], stream=True)

    routes = [*_openai_routes(judge),
              Route("/v1/messages", messages, methods=["POST"]),
              Route("/{version}/models/{model}:{method}", gemini, methods=["POST"]),
              Route("/model/{model_id:path}/converse", converse, methods=["POST"]),
              Route("/model/{model_id:path}/converse-stream", converse_stream, methods=["POST"])]
    return Starlette(routes=routes)
