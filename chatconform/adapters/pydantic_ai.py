"""pydantic-ai's own provider mappers as a ``to_payload`` implementation, run offline.

Each call maps the history the way an agent run does right before its request
(``pydantic_ai._agent_graph``, ``ModelRequestNode``)::

    settings, params = model.prepare_request(None, params)
    messages = _clean_message_history(history, repair_last_response=True)
    messages = _clean_message_history(model.prepare_messages(messages, params), repair_last_response=True)
    body = <the model's own message mapper>(messages, params, ...)

then turns the SDK objects into the JSON the real request carries. Nothing is fixed up:
what pydantic-ai's mapper returns is the body, bugs included (a user text stored before
the tool results of the same request is sent before them; Mistral keeps a system prompt
from mid-conversation in place). No request is ever sent: the models get dummy keys, the
mappers never touch their clients, and ``pydantic_ai.models.ALLOW_MODEL_REQUESTS`` is off
for the duration of each call.

Provider id → pydantic-ai model (model name), and whose API serves it:

============================  =====================================================================
``openai-chat``               ``OpenAIChatModel('gpt-4o')`` with ``OpenAIProvider``
``qwen-vllm``                 ``OpenAIChatModel('Qwen/Qwen3.5-35B-A3B')`` with ``VLLMProvider``:
                              served through the OpenAI Chat Completions API of a vLLM server
``glm``                       ``ZaiModel('glm-4.7')`` with ``ZaiProvider``: an ``OpenAIChatModel``
                              subclass, served through Z.ai's OpenAI-compatible API
``mistral``                   ``MistralModel('mistral-large-latest')`` with ``MistralProvider``
``anthropic``                 ``AnthropicModel('claude-sonnet-4-5')`` with ``AnthropicProvider``
``gemini``                    ``GoogleModel('gemini-2.5-flash')`` with ``GoogleProvider`` (Gemini API)
``bedrock-converse``          ``BedrockConverseModel('us.anthropic.claude-sonnet-4-5-20250929-v1:0')``
                              with ``BedrockProvider``: Claude on Bedrock's Converse API
``openai-responses``          ``OpenAIResponsesModel('gpt-5')`` with ``OpenAIProvider``
``deepseek``                  ``OpenAIChatModel('deepseek-v4-pro')`` with ``DeepSeekProvider``
``kimi``                      ``OpenAIChatModel('kimi-k2-thinking')`` with ``MoonshotAIProvider``
``groq``                      ``GroqModel('openai/gpt-oss-120b')`` with ``GroqProvider``
``openrouter``                ``OpenRouterModel('anthropic/claude-sonnet-4.5')`` with ``OpenRouterProvider``
============================  =====================================================================

Each provider is mapped, and judged, as the model of this table (``models``); a case that
says the request's reasoning setting (``reasoning=``) is mapped with pydantic-ai's unified
``thinking`` setting, as an agent with ``model_settings={"thinking": ...}`` maps it.

The model picks the pydantic-ai profile, and the profile changes the body: with a Qwen
name, ``VLLMProvider`` merges leading system messages into one
(https://github.com/pydantic/pydantic-ai/issues/5812); ``claude-sonnet-4-5`` does not take
system prompts mid-conversation, so ``prepare_messages`` wraps them in ``<system>`` user
text; Claude on Bedrock may put text beside a ``toolResult``.

The run context a real agent has is supplied as an agent supplies it: the ``instructions``
as one ``InstructionPart`` (none when empty, as an agent drops empty instructions), and
one tool definition (an object schema open to any arguments) for each tool the history
calls, since the agent that made those calls had those tools. Bedrock's ``toolConfig``
comes from pydantic-ai's own ``_map_tool_config``.

The bodies, per dialect (the same keys as the reference ``to_payload``):

- OpenAI style (``openai-chat``, ``qwen-vllm``, ``glm``, ``mistral``): ``{"messages": [...]}``;
  Mistral's SDK messages dumped as its client serializes them (by alias, no nulls).
- ``anthropic``: ``{"system": ..., "messages": [...]}``, ``system`` left out when empty, as
  pydantic-ai leaves it out.
- ``gemini``: ``{"systemInstruction": ..., "contents": [...]}`` in the Gemini API's JSON
  (camelCase, bytes as base64), built by google-genai's own request converter.
- ``openai-responses``: the keys of the body pydantic-ai's ``_prepare_responses_create``
  builds that carry the history (``instructions``, ``input``, ``store``, ``include``,
  ``previous_response_id``), each where pydantic-ai sets it.
- ``groq``: ``{"messages": [...]}`` from ``GroqModel``'s own mapper.
- ``bedrock-converse``: ``{"system": [...], "messages": [...], "toolConfig": ...}``;
  ``system`` always present (pydantic-ai sends ``[]`` when there is none), bytes as base64
  as botocore sends them.

A file given by URL that a mapper downloads to send inline (Gemini for URLs outside
Google's storage, Bedrock for every URL, OpenAI for some media) is not downloaded: while
the adapter maps, pydantic-ai's downloader answers with stand-in bytes naming the URL, so
the body has the real shape with other bytes. Outside the adapter's calls the downloader
is pydantic-ai's own, untouched.

The mappers are coroutines; each call runs them on an event loop of its own, so the
adapter can be called from any thread, including one that already runs a loop.

Storage (the ``serde`` contract): ``dump`` and ``load`` are pydantic-ai's own
``ModelMessagesTypeAdapter.dump_json`` and ``validate_json``, the way pydantic-ai's
message-history docs store a history, so the suite judges the stored JSON of the
installed release.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import contextvars
import importlib
import threading
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from typing import TYPE_CHECKING, Any

from chatconform.adapters import Library, called_tools, missing_modules, open_parameters
from chatconform.errors import MissingDependency
from chatconform.providers import PROVIDER_IDS, get_provider

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage
    from pydantic_ai.tools import ToolDefinition

__all__ = ["DISTRIBUTION", "EXTRA", "MODELS", "PydanticAIAdapter"]

#: The extra that installs what the provider models import.
EXTRA = "pydantic-ai"
#: The distribution whose version the adapter reports.
DISTRIBUTION = "pydantic-ai-slim"
#: The SDKs pydantic-ai's provider models import (Bedrock's is boto3).
_SDKS = ("openai", "anthropic", "google.genai", "mistralai", "boto3", "groq")


if missing_modules(_SDKS):
    raise MissingDependency(f"the pydantic-ai adapter needs {', '.join(missing_modules(_SDKS))}: "
                            f"pip install 'chatconform[{EXTRA}]'")

#: pydantic-ai's modules, imported by warm_up or else on first use (listing the adapter imports none).
_models = Library("pydantic_ai.models", adapter="pydantic-ai", extra=EXTRA)
_messages = Library("pydantic_ai.messages", adapter="pydantic-ai", extra=EXTRA)
_tools = Library("pydantic_ai.tools", adapter="pydantic-ai", extra=EXTRA)
_settings = Library("pydantic_ai.settings", adapter="pydantic-ai", extra=EXTRA)


@dataclass(frozen=True)
class ModelChoice:
    """Which pydantic-ai model serves a provider id."""

    model: str  # "module:Class" under pydantic_ai.models
    provider: str  # "module:Class" under pydantic_ai.providers
    model_name: str
    provider_kwargs: tuple[tuple[str, str], ...]


#: Provider id -> the pydantic-ai model that maps its bodies (see the module docstring).
MODELS: dict[str, ModelChoice] = {
    "openai-chat": ModelChoice("openai:OpenAIChatModel", "openai:OpenAIProvider", "gpt-4o",
                               (("api_key", "sk-dummy"),)),
    "qwen-vllm": ModelChoice("openai:OpenAIChatModel", "vllm:VLLMProvider", "Qwen/Qwen3.5-35B-A3B",
                             (("api_key", "dummy"), ("base_url", "http://vllm.invalid/v1"))),
    "glm": ModelChoice("zai:ZaiModel", "zai:ZaiProvider", "glm-4.7", (("api_key", "dummy"),)),
    "mistral": ModelChoice("mistral:MistralModel", "mistral:MistralProvider", "mistral-large-latest",
                           (("api_key", "dummy"),)),
    "anthropic": ModelChoice("anthropic:AnthropicModel", "anthropic:AnthropicProvider", "claude-sonnet-4-5",
                             (("api_key", "dummy"),)),
    "gemini": ModelChoice("google:GoogleModel", "google:GoogleProvider", "gemini-2.5-flash",
                          (("api_key", "dummy"),)),
    "bedrock-converse": ModelChoice(
        "bedrock:BedrockConverseModel", "bedrock:BedrockProvider",
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        (("aws_access_key_id", "dummy"), ("aws_secret_access_key", "dummy"), ("region_name", "us-east-1"))),
    "openai-responses": ModelChoice("openai:OpenAIResponsesModel", "openai:OpenAIProvider", "gpt-5",
                                    (("api_key", "sk-dummy"),)),
    "deepseek": ModelChoice("openai:OpenAIChatModel", "deepseek:DeepSeekProvider", "deepseek-v4-pro",
                            (("api_key", "dummy"),)),
    "kimi": ModelChoice("openai:OpenAIChatModel", "moonshotai:MoonshotAIProvider", "kimi-k2-thinking",
                        (("api_key", "dummy"),)),
    "groq": ModelChoice("groq:GroqModel", "groq:GroqProvider", "openai/gpt-oss-120b", (("api_key", "dummy"),)),
    "openrouter": ModelChoice("openrouter:OpenRouterModel", "openrouter:OpenRouterProvider",
                              "anthropic/claude-sonnet-4.5", (("api_key", "dummy"),)),
}


def _class(package: str, spec: str) -> Any:
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(f"{package}.{module}"), name)


# -- JSON as the SDKs send it --------------------------------------------------------------------

def _jsonable(value: Any) -> Any:
    """Plain JSON values; bytes as base64 (how every one of these APIs carries them in JSON).

    SDK "not given" sentinels (``Omit``, ``NotGiven``, Mistral's ``UNSET``) are left out, as
    the clients leave them out of the request.
    """
    if hasattr(value, "model_dump"):
        return _jsonable(value.model_dump(mode="json", by_alias=True, exclude_none=True))
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items() if not _sentinel(v)}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value if not _sentinel(v)]
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    return value


def _sentinel(value: Any) -> bool:
    return type(value).__name__ in ("Omit", "NotGiven", "Unset")


# -- no downloads ------------------------------------------------------------------------------

#: Set while the adapter maps: pydantic-ai's downloader then returns stand-in bytes.
_OFFLINE: contextvars.ContextVar[bool] = contextvars.ContextVar("chatconform_pai_offline", default=False)


@dataclass(frozen=True)
class _StandInResponse:
    """What ``download_item`` reads of a response: no content type (the URL's or the
    item's own media type is used), and bytes naming the URL."""

    content: bytes
    headers: dict[str, str]


def _offline_downloads() -> None:
    """Wrap ``pydantic_ai._ssrf.safe_download`` (the one function every downloader calls)
    once: inside the adapter's calls it answers with stand-in bytes, elsewhere it is the
    original function."""
    from pydantic_ai import _ssrf

    original = _ssrf.safe_download
    if getattr(original, "_chatconform_wrapped", False):
        return

    async def safe_download(url: str, *args: Any, **kwargs: Any) -> Any:
        if _OFFLINE.get():
            return _StandInResponse(f"offline stand-in for {url}".encode(), {})
        return await original(url, *args, **kwargs)

    safe_download._chatconform_wrapped = True  # type: ignore[attr-defined]
    _ssrf.safe_download = safe_download


# -- the adapter -------------------------------------------------------------------------------

def run_offline(coro_fn: Callable[[], Any]) -> Any:
    """Run a coroutine offline on an event loop of its own (on a helper thread if this one
    already runs a loop)."""
    def offline() -> Any:
        token = _OFFLINE.set(True)
        try:
            with _models.override_allow_model_requests(False):
                return asyncio.run(coro_fn())
        finally:
            _OFFLINE.reset(token)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return offline()
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(offline).result()


def _tool_definitions(history: Sequence[ModelMessage]) -> list[ToolDefinition]:
    return [_tools.ToolDefinition(name=name, parameters_json_schema=open_parameters())
            for name in called_tools(history)]


# -- serde: storing a history as pydantic-ai does ---------------------------------------------

class _StoredThroughTypeAdapter:
    """``dump``/``load`` through ``ModelMessagesTypeAdapter``, nothing added."""

    def dump(self, history: Sequence[ModelMessage]) -> bytes:
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        return ModelMessagesTypeAdapter.dump_json(list(history))

    def load(self, data: bytes | str) -> list[ModelMessage]:
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        return ModelMessagesTypeAdapter.validate_json(data)


# -- sanitize and repair: pydantic-ai's own functions ------------------------------------------
#
# ``sanitize`` is ``pydantic_ai.messages.sanitize_messages`` with its defaults (what the UI
# adapters apply to client-submitted history), ``repair`` is ``repair_messages`` with its
# default ``repair_last_response=True``. Their warnings (one per kind of thing stripped) are
# silenced here: they are attributed to this module, and the checks judge the result.

warnings.filterwarnings("ignore", category=UserWarning, module=r"chatconform\.adapters\.pydantic_ai$")

#: Where pydantic-ai's functions differ from the reference, each with its minimal case
#: (tests/adapters/test_pydantic_ai_sanitize_repair.py reproduces each). No upstream issue was found
#: for these.
_HISTORY_EXPECTED_FAILURES = {
    "sanitize.no_crash": (
        "a client file URL with an unclosed IPv6 bracket ([user: ImageUrl('https://[::1/1.png'), 'Hello']) "
        "makes sanitize_messages raise ValueError('Invalid IPv6 URL') from urllib.parse.urlparse"),
    "sanitize.file_url_schemes": (
        "a file URL without a scheme is kept ([user: ImageUrl('//evil.example/3.png')]): the allow-list "
        "is applied only when urlparse finds a scheme"),
    "sanitize.no_trailing_unresolved_calls": (
        "the walk back over trailing responses stops at the first one it changes, so [user] [call c2] "
        "[empty interrupted request] [text, call x2] keeps c2 in what is then a trailing response"),
    "sanitize.matches_reference": "follows from the three above",
    "repair.every_call_answered_once": (
        "a second result for an answered call is kept ([user] [call c2] [result c2, result c2] [call c4]): "
        "only results whose id was never called are dropped"),
    "repair.matches_reference": (
        "follows from the above; also, the results synthesized for one response come grouped by call id, "
        "not in the order of the calls"),
}


# -- the adapter -----------------------------------------------------------------------------

class PydanticAIAdapter(_StoredThroughTypeAdapter):
    """``to_payload`` through pydantic-ai's own provider models, and ``dump``/``load``
    through its ``ModelMessagesTypeAdapter`` (see the module docstring)."""

    #: Judged method by method; chatconform.adapters.application composes them into one lifecycle.
    lifecycle = False

    name = "pydantic-ai"
    #: The providers pydantic-ai has a model for (every provider of the table today).
    providers = frozenset(p for p in PROVIDER_IDS if p in MODELS)
    #: The model behind each provider id, so model-dependent rules are judged for it.
    models = {provider: choice.model_name for provider, choice in MODELS.items()}
    #: What pydantic-ai's own mappers get wrong, each a rejection by the provider named
    #: (docs/compliance.md has each minimal case). No upstream issue was found for these.
    expected_failures = {
        "payload.provider_rules": (
            "user text stored before the tool results of the same request (a message typed while tools "
            "ran) is sent between the calls and their results: OpenAI O8, GLM 1214, Anthropic A9, and on "
            "Gemini one content mixing text and functionResponse (G11, "
            "https://github.com/pydantic/pydantic-ai/issues/4210); Mistral keeps a system prompt after a "
            "tool result in place ('Unexpected role system after role tool', M1) and sends a final "
            "assistant message without prefix: true (M2)"),
        "payload.tool_pairing": (
            "the same user-before-results order leaves calls unanswered where the user text sits (OpenAI, "
            "GLM, Qwen, Mistral, Anthropic, Bedrock); a tool-call id an OpenAI-compatible server reused "
            "in a later round is sent twice, which Anthropic, Bedrock (Claude), GLM and Mistral reject"),
        "payload.schema_valid": (
            "whitespace-only instructions are sent as a system text block (Anthropic A7 'text content "
            "blocks must contain non-whitespace text'), and an empty TextPart as a blank Bedrock text "
            "block (B7 'The text field in the ContentBlock object ... is blank')"),
        "payload.no_crash": (
            "a video, by URL or as MP4 bytes, for qwen-vllm (vLLM takes a video_url part: "
            "https://docs.vllm.ai/en/latest/features/multimodal_inputs.html) makes OpenAIChatModel raise "
            "NotImplementedError('VideoUrl is not supported in OpenAI Chat Completions user prompts'), so no "
            "request is built (https://github.com/pydantic/pydantic-ai/issues/3306)"),
        "payload.reasoning_kept": (
            "Kimi with thinking on (kimi-k2-thinking): a tool-call turn whose response holds no thinking (a step "
            "served without thinking, another provider's reply) is sent without reasoning_content, which Kimi "
            "rejects ('thinking is enabled but reasoning_content is missing in assistant tool call message', K2, "
            "https://github.com/bytedance/deer-flow/issues/3043): pydantic-ai's MoonshotAIProvider leaves "
            "openai_chat_thinking_requires_field_on_tool_calls off, which its DeepSeekProvider sets"),
        # persist_run stores the capture as pydantic-ai leaves it (docs/compliance.md has the cases).
        "persist.no_instructions": (
            "every request the run sent keeps ModelRequest.instructions, so the run's system prompt is "
            "stored with the conversation (dify-agent strips it: https://github.com/langgenius/dify/pull/40972)"),
        "persist.interrupted_marker": (
            "a run cancelled, timed out or failed after a response with tool calls and before any tool "
            "ran leaves that response complete; nothing marks it interrupted "
            "(https://github.com/langgenius/dify/issues/41616)"),
        "persist.continuable": (
            "so the next run with a prompt raises 'Cannot provide a new user prompt when the message "
            "history contains unprocessed tool calls' (https://github.com/langgenius/dify/issues/41616)"),
        "persist.matches_reference": "follows from the three above",
        **_HISTORY_EXPECTED_FAILURES,
    }

    def persist_run(self, previous: Sequence[ModelMessage], captured: Sequence[ModelMessage],
                    outcome: str) -> list[ModelMessage]:
        """What pydantic-ai's documentation leads an application to store after a run: the
        run's messages as pydantic-ai leaves them (``result.all_messages()``, which is the
        ``capture_run_messages()`` list, or that list for a run that raised), and the
        stored history unchanged when nothing was captured. pydantic-ai has no function of
        its own for this step; the deviations are in ``expected_failures``."""
        return list(captured) if captured else list(previous)

    def sanitize(self, history: Sequence[ModelMessage]) -> list[ModelMessage]:
        return _messages.sanitize_messages(history)

    def repair(self, history: Sequence[ModelMessage]) -> list[ModelMessage]:
        return _messages.repair_messages(history)

    def __init__(self) -> None:
        self.version = version(DISTRIBUTION)
        self._models: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        """Import pydantic-ai and its mappers' modules, and keep its downloader offline, before
        a run's first call."""
        _offline_downloads()
        for library in (_models, _messages, _tools, _settings):
            library.module()

    def model(self, provider: str, model_name: str | None = None) -> Any:
        """The pydantic-ai model for ``provider`` (its table's model, or ``model_name``),
        built once (offline: a dummy key)."""
        get_provider(provider)
        choice = MODELS[provider]
        name = model_name or choice.model_name
        with self._lock:
            if (provider, name) not in self._models:
                _offline_downloads()  # warm_up's, for a caller that did not call it
                model_cls = _class("pydantic_ai.models", choice.model)
                provider_cls = _class("pydantic_ai.providers", choice.provider)
                self._models[provider, name] = model_cls(name, provider=provider_cls(**dict(choice.provider_kwargs)))
            return self._models[provider, name]

    def to_payload(self, history: Sequence[ModelMessage], *, provider: str, instructions: str | None = None,
                   reasoning: bool | None = None) -> dict:
        mapper = self.model(provider)
        params = _models.ModelRequestParameters(
            function_tools=_tool_definitions(history),
            instruction_parts=[_messages.InstructionPart(instructions)] if instructions else [],
        )
        # An agent's ``model_settings={"thinking": ...}``, where the case says the setting.
        said = _settings.ModelSettings(thinking=reasoning) if reasoning is not None else None
        settings, params = mapper.prepare_request(said, params)
        clean = _messages._clean_message_history  # private: the agent's own history normalizer
        messages = clean(list(history), repair_last_response=True)
        prepared = mapper.prepare_messages(messages, params)
        if prepared is not messages:
            messages = clean(prepared, repair_last_response=True)
        render = _RENDER[provider]
        return run_offline(lambda: render(mapper, messages, params, settings))


async def _openai_chat(model: Any, messages: list, params: Any, settings: Any) -> dict:
    return {"messages": _jsonable(await model._map_messages(messages, params, model_settings=settings))}


async def _mistral(model: Any, messages: list, params: Any, settings: Any) -> dict:
    return {"messages": _jsonable(await model._map_messages(messages, params))}


async def _anthropic(model: Any, messages: list, params: Any, settings: Any) -> dict:
    system, mapped = await model._map_message(messages, params, settings or {})
    body: dict = {"system": _jsonable(system)} if system else {}
    body["messages"] = _jsonable(mapped)
    return body


async def _gemini(model: Any, messages: list, params: Any, settings: Any) -> dict:
    from google.genai import _common, types
    from google.genai.models import _GenerateContentParameters_to_mldev

    system_instruction, contents = await model._map_messages(messages, params)
    parameters = types._GenerateContentParameters(
        model=model.model_name, contents=contents,
        config=types.GenerateContentConfig(system_instruction=system_instruction))
    request = _GenerateContentParameters_to_mldev(model.client._api_client, parameters, None, parameters)
    request = _common.encode_unserializable_types(_common.convert_to_dict(request))
    body: dict = {}
    if "systemInstruction" in request:
        body["systemInstruction"] = _jsonable(request["systemInstruction"])
    body["contents"] = _jsonable(request.get("contents", []))
    return body


async def _groq(model: Any, messages: list, params: Any, settings: Any) -> dict:
    return {"messages": _jsonable(await model._map_messages(messages, params))}


#: The keys of a Responses API body that carry the history.
_RESPONSES_KEYS = ("instructions", "input", "store", "include", "previous_response_id")


async def _openai_responses(model: Any, messages: list, params: Any, settings: Any) -> dict:
    create, _ = await model._prepare_responses_create(messages, settings or {}, params)
    return {key: _jsonable(create[key]) for key in _RESPONSES_KEYS
            if key in create and not _sentinel(create[key]) and create[key] is not None}


async def _bedrock(model: Any, messages: list, params: Any, settings: Any) -> dict:
    settings = settings or {}
    system, mapped = await model._map_messages(messages, params, settings)
    body: dict = {"system": _jsonable(system), "messages": _jsonable(mapped)}
    tool_config = model._map_tool_config(params, settings, mapped)
    if tool_config:
        body["toolConfig"] = _jsonable(tool_config)
    return body


#: Provider id -> the coroutine that maps with that provider's model and builds the body.
_RENDER = {"openai-chat": _openai_chat, "qwen-vllm": _openai_chat, "glm": _openai_chat, "mistral": _mistral,
           "anthropic": _anthropic, "gemini": _gemini, "bedrock-converse": _bedrock,
           "openai-responses": _openai_responses, "deepseek": _openai_chat, "kimi": _openai_chat,
           "groq": _groq, "openrouter": _openai_chat}
