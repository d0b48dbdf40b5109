"""Which provider a recorded request went to, read off its URL, and which model.

A cassette holds every request a test made: chat requests among embeddings, token counts,
uploads and the test's own telemetry. Only a chat request of a known dialect is judged; the
rest are counted and skipped. The dialect is told by the path it defines (``/chat/completions``,
``/v1/messages``, ``:generateContent``, ``/converse``); the provider by the host where one host
serves one provider's rules (OpenAI, Mistral, Z.ai, DeepSeek, Moonshot, Groq, OpenRouter), and
by the path for the other dialects;
the model by the body's ``model``, else the URL (Gemini and Bedrock put it in the path).

``/chat/completions`` of any other host (Together, a local vLLM) is an
OpenAI-compatible server whose rules are its own (extra parameters such as ``top_k`` that
OpenAI rejects): it is skipped unless ``--provider`` names the provider whose rules judge it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

__all__ = ["Endpoint", "endpoint"]


@dataclass(frozen=True)
class Endpoint:
    """What one recorded request is."""

    #: The provider id whose rules judge it; None for a request that is not a chat request.
    provider: str | None
    #: The model the request went to, when the body or the URL names it.
    model: str | None
    #: For a request that is not judged, a few words saying what it is (``"embeddings"``).
    skipped: str | None = None
    #: The request's dialect when it is a chat request (``Provider.dialect``), judged or not:
    #: ``--provider`` judges the chat requests of its dialect whatever their host.
    dialect: str | None = None


_GEMINI = re.compile(r"/models/(?P<model>[^/:]+):(?:stream)?[gG]enerate[cC]ontent$")
#: A local stand-in for a provider (``chatconform serve`` saves the bodies it judged at these).
_LOCAL = frozenset({"127.0.0.1", "localhost", "::1"})
_BEDROCK = re.compile(r"/model/(?P<model>[^/]+)/(?P<op>converse(?:-stream)?|invoke(?:-with-response-stream)?)$")
#: Hosts whose ``/chat/completions`` is judged by a provider's rules, by the provider id.
_HOSTS = (("api.openai.com", "openai-chat"), ("openai.azure.com", "openai-chat"),
          ("cognitiveservices.azure.com", "openai-chat"), ("api.mistral.ai", "mistral"), ("bigmodel.cn", "glm"),
          ("api.z.ai", "glm"), ("api.deepseek.com", "deepseek"), ("api.moonshot.ai", "kimi"),
          ("api.moonshot.cn", "kimi"), ("api.groq.com", "groq"), ("openrouter.ai", "openrouter"))


def _model(body: Any, url_model: str | None) -> str | None:
    named = body.get("model") if isinstance(body, dict) else None
    return named if isinstance(named, str) and named else url_model


def endpoint(method: str | None, url: str | None, body: Any) -> Endpoint:
    """The provider and model of one recorded request (``provider`` None: not judged)."""
    if not url:
        return Endpoint(None, None, "a request without a URL")
    parts = urlsplit(url)
    raw_path = parts.path.rstrip("/")  # a Bedrock model ARN holds an escaped "/"
    path = unquote(raw_path)
    host = (parts.hostname or "").lower()
    last = path.rsplit("/", 1)[-1] or host
    if (method or "POST").upper() != "POST":
        return Endpoint(None, None, f"{(method or '').upper()} requests")
    if path.endswith("/chat/completions"):
        provider = next((p for suffix, p in _HOSTS if host == suffix or host.endswith("." + suffix)), None)
        skipped = None if provider else f"OpenAI-compatible chat at {host or 'no host'}"
        return Endpoint(provider, _model(body, None), skipped, "openai_chat")
    if path.endswith("/v1/messages") or path == "/messages":
        return Endpoint("anthropic", _model(body, None), dialect="anthropic_messages")
    if found := _GEMINI.search(raw_path):
        return Endpoint("gemini", _model(body, unquote(found["model"])), dialect="gemini_generate")
    if (found := _BEDROCK.search(raw_path)) and ("bedrock" in host or host in _LOCAL):
        model = unquote(found["model"])
        if found["op"].startswith("converse"):
            return Endpoint("bedrock-converse", model, dialect="bedrock_converse")
        if isinstance(body, dict) and "anthropic_version" in body and "messages" in body:
            # Claude's own Messages body, through InvokeModel
            return Endpoint("anthropic", model, dialect="anthropic_messages")
        return Endpoint(None, model, f"{found['op']} ({model.split('.')[0]})")
    return Endpoint(None, None, last)
