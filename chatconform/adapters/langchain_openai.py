"""langchain-openai's ``ChatOpenAI`` as a ``to_payload`` implementation, run offline.

``to_payload(history, provider=..., instructions=...)`` returns the Chat Completions body
``ChatOpenAI`` puts on the wire, byte for byte as JSON. The history is held as a LangChain
application holds it: converted to LangChain messages by
:func:`chatconform.adapters.langchain_core.to_langchain` (one message per part, in order),
the run's ``instructions`` first as a ``SystemMessage`` (where a LangChain agent puts its
system prompt; none when empty). The model is the one the provider's documentation
configures, its tools bound as an application binds them, and invoked::

    model = ChatOpenAI(model=..., api_key="dummy", base_url=...)
    model.bind_tools(tools).invoke(messages)

``invoke`` runs ChatOpenAI's whole request path: its message conversion
(``_get_request_payload``), then the openai SDK's ``chat.completions.create``, which
transforms the parameters and serializes the JSON body. The SDK client's
``_prepare_request`` hook, called with the built request right before it is sent, stops
the call there, and the adapter returns the request's JSON (the whole body: ``model``,
``stream``, ``messages`` and ``tools`` when there are any). Nothing is fixed up: a block
ChatOpenAI passes through, a flag it drops or an order it keeps is what the checks judge.
No socket is opened, and LangSmith tracing is off for the call whatever the environment
says.

Provider id -> the model (and whose documentation configures it that way):

============================  =====================================================================
``openai-chat``               ``ChatOpenAI(model="gpt-4o", api_key="dummy")``: OpenAI's own API
``qwen-vllm``                 ``ChatOpenAI(model="Qwen/Qwen3.5-35B-A3B",
                              base_url="http://localhost:8000/v1")``: a vLLM server's OpenAI
                              Chat Completions API, as LangChain's vLLM page
                              (https://docs.langchain.com/oss/python/integrations/chat/vllm) and
                              vLLM's own (https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html)
                              configure it
``glm``                       ``ChatOpenAI(model="glm-4.7", base_url="https://api.z.ai/api/paas/v4/")``:
                              Z.ai's OpenAI-compatible API, as Z.ai's LangChain guide
                              (https://docs.z.ai/guides/develop/langchain/introduction) configures it
``openai-responses``          ``ChatOpenAI(model="gpt-5", use_responses_api=True)``: OpenAI's
                              Responses API, the body ``ChatOpenAI`` sends to ``/v1/responses``
============================  =====================================================================

Tools: each tool the history calls is bound once, in order of first call, with an object
schema open to any arguments, since the application that made those calls had those tools;
a history that calls none binds none (:mod:`chatconform.adapters._langchain_chat`, shared
with the other LangChain provider adapters).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import version
from typing import TYPE_CHECKING, Any

from chatconform.adapters import Library, missing_modules
from chatconform.errors import MissingDependency
from chatconform.providers import get_provider

if TYPE_CHECKING:
    from langchain_openai import ChatOpenAI

__all__ = ["DISTRIBUTION", "EXTRA", "MODELS", "LangChainOpenAIAdapter"]

#: The extra that installs langchain-openai (and through it the openai SDK).
EXTRA = "langchain-openai"
#: The distribution whose version the adapter reports.
DISTRIBUTION = "langchain-openai"

if missing_modules(["langchain_openai"]):
    raise MissingDependency(f"the langchain-openai adapter needs langchain-openai: pip install 'chatconform[{EXTRA}]'")

import json  # noqa: E402

from chatconform.adapters._langchain_chat import Sent, bound, history_messages, sent_body  # noqa: E402

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

#: langchain-openai (and the openai SDK through it), imported when a chat model is built (by warm_up, or else a call).
_library = Library("langchain_openai", adapter="langchain-openai", extra=EXTRA)


@dataclass(frozen=True)
class ChatOpenAIChoice:
    """How ChatOpenAI is configured for a provider id."""

    model: str
    base_url: str | None = None
    #: ChatOpenAI's ``use_responses_api``: the request goes to ``/responses``.
    responses: bool = False


#: Provider id -> the ChatOpenAI configuration (see the module docstring).
MODELS: dict[str, ChatOpenAIChoice] = {
    "openai-chat": ChatOpenAIChoice("gpt-4o"),
    "qwen-vllm": ChatOpenAIChoice("Qwen/Qwen3.5-35B-A3B", "http://localhost:8000/v1"),
    "glm": ChatOpenAIChoice("glm-4.7", "https://api.z.ai/api/paas/v4/"),
    "openai-responses": ChatOpenAIChoice("gpt-5", responses=True),
}


def _stop_before_sending(request: Any) -> None:
    """The openai client's ``_prepare_request`` hook: called with the built request (body
    serialized) right before the client would send it."""
    if not request.url.path.endswith(("/chat/completions", "/responses")):
        raise RuntimeError(f"ChatOpenAI built a request to {request.url}, not to Chat Completions or Responses")
    raise Sent(request.content)


def chat_model(provider: str) -> ChatOpenAI:
    """ChatOpenAI as configured for ``provider`` (a dummy key), its client's send stopped."""
    choice = MODELS[provider]
    model = _library.ChatOpenAI(model=choice.model, api_key="dummy", base_url=choice.base_url,
                                use_responses_api=choice.responses)
    # The SDK client ChatOpenAI built; only its send is stopped.
    model.root_client._prepare_request = _stop_before_sending
    return model


class LangChainOpenAIAdapter:
    """``to_payload`` for ``openai-chat``, ``qwen-vllm``, ``glm`` and ``openai-responses`` through ``ChatOpenAI``'s
    own request path and the openai SDK's serializer (see the module docstring)."""

    #: Judged method by method; chatconform.adapters.application composes them into one lifecycle.
    lifecycle = False

    name = "langchain-openai"
    providers = frozenset(MODELS)
    #: The model behind each provider id, so model-dependent rules are judged for it.
    models = {provider: choice.model for provider, choice in MODELS.items()}
    #: Check id -> why ChatOpenAI fails it, each a rejection by the provider named (the rule
    #: ids of docs/provider-rules.md); each minimal case is in docs/adapters.md. No upstream
    #: issue was found for these.
    expected_failures = {
        "payload.schema_valid": (
            "ChatOpenAI drops an AIMessage's reasoning blocks, so an answer that held only thinking "
            "([user] [thinking] [user]) is sent as assistant content [], which OpenAI rejects (O3, an "
            "empty content array); and the instructions' SystemMessage goes before the history's own "
            "system prompt ([system s1, user u2] with instructions), a second system message that Qwen "
            "on vLLM rejects (Q3 'System message must be at the beginning.'); on openai-responses a reasoning "
            "block with no id (thinking another model returned) is sent as a reasoning item without its id "
            "(X1 'Missing required parameter: input[1].id')"),
        "payload.system_first": (
            "the same two system messages ([system s1, user u2] with instructions): ChatOpenAI sends "
            "every SystemMessage where it stands and merges none; an error on qwen-vllm (Q3), a warning "
            "on openai-chat and glm"),
        "payload.tool_pairing": (
            "messages are sent one for one, in order: user text stored before the tool results of one "
            "request ([user] [call c2] [user u4, result c2]) lands between the call and its result "
            "(OpenAI O8, GLM Z2), and nothing in ChatOpenAI moves the results up; a tool-call id reused "
            "in a later round is sent twice as it is, which GLM rejects (Z2, 1214 on a duplicate id)"),
        "payload.provider_rules": (
            "the same user-text-before-results order as payload.tool_pairing: OpenAI O8 and O7, GLM Z2; on "
            "openai-responses a reply cut off after its reasoning ([user] [thinking, interrupted]) sends a "
            "reasoning item with nothing after it (X5 'was provided without its required following item')"),
        "payload.nothing_lost": (
            "openai-responses: a tool call whose id an earlier round used ([call c2] [result c2] [call c2'] "
            "[result c2'], ids a provider such as Kimi restarts each round) is left out, since "
            "_construct_responses_api_input skips every call whose call_id an earlier function_call item of the "
            "input has; its output is still sent"),
        "payload.order_preserved": "openai-responses: the same dropped call (payload.nothing_lost)",
        "payload.no_crash": (
            "a video by URL for qwen-vllm (vLLM takes a video_url part: "
            "https://docs.vllm.ai/en/latest/features/multimodal_inputs.html) makes langchain-core's "
            "convert_to_openai_data_block raise ValueError('OpenAI Chat Completions does not support file "
            "URLs.'), so no request is built; a video content block raises too "
            "(https://github.com/langchain-ai/langchain/issues/37770)"),
    }

    def __init__(self) -> None:
        self.version = version(DISTRIBUTION)
        self._models: dict[str, ChatOpenAI] = {}
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        """Build the chat model of every provider (importing langchain-openai) before a run's first call."""
        for provider in sorted(MODELS):
            self.model(provider)

    def model(self, provider: str) -> ChatOpenAI:
        """The chat model for ``provider``, built once: by :meth:`warm_up`, or else by the first
        call for it."""
        with self._lock:
            if provider not in self._models:
                self._models[provider] = chat_model(provider)
            return self._models[provider]

    def to_payload(self, history: Sequence[ModelMessage], *, provider: str,
                   instructions: str | None = None) -> dict:
        get_provider(provider)
        if provider not in MODELS:
            raise ValueError(f"the langchain-openai adapter maps {', '.join(sorted(MODELS))}, not {provider!r}")
        return json.loads(sent_body(bound(self.model(provider), history), history_messages(history, instructions)))
