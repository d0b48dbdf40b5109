"""langchain-deepseek's ``ChatDeepSeek`` as a ``to_payload`` implementation for ``deepseek``,
run offline.

``to_payload(history, provider="deepseek", instructions=..., model=..., reasoning=...)``
returns the Chat Completions body that::

    ChatDeepSeek(model="deepseek-reasoner", api_key="dummy").bind_tools(tools).invoke(messages)

puts on the wire, parsed back from its JSON. The model is the request's where it names
one; else the one LangChain's DeepSeek page configures for the setting: ``deepseek-reasoner``
with reasoning on, ``deepseek-chat`` otherwise. A named model with the setting said gets
DeepSeek's ``thinking`` parameter (``{"type": "enabled"}`` or ``"disabled"``, in
``extra_body``, as DeepSeek's thinking-mode guide passes it through the OpenAI SDK).

- ``messages``: the history as a LangChain application holds it
  (:func:`chatconform.adapters.langchain_core.to_langchain`, one message per part, in
  order), the run's instructions first as a ``SystemMessage``;
- ``tools``: each tool the history calls, bound in the OpenAI function format with an open
  object schema; none bound when the history calls none.

The call runs ChatDeepSeek's whole invoke path: langchain-core's message normalization,
``ChatDeepSeek._get_request_payload`` (ChatOpenAI's message conversion, then DeepSeek's:
assistant content joined into one string of its text blocks), and the openai SDK's
``chat.completions.create``. The SDK client's ``_prepare_request`` hook stops it after the
body is serialized and before anything is sent, as for ChatOpenAI
(:mod:`chatconform.adapters.langchain_openai`). Nothing is fixed up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chatconform.adapters import Library, missing_modules
from chatconform.errors import MissingDependency

if TYPE_CHECKING:
    from langchain_deepseek import ChatDeepSeek

__all__ = ["DISTRIBUTION", "EXTRA", "MODEL", "REASONING_MODEL", "LangChainDeepSeekAdapter"]

#: The extra that installs langchain-deepseek (and langchain-openai, the openai SDK with it).
EXTRA = "langchain-deepseek"
#: The distribution whose version the adapter reports.
DISTRIBUTION = "langchain-deepseek"
#: The model where the request names none and reasoning is not on.
MODEL = "deepseek-chat"
#: The model where the request names none and reasoning is on.
REASONING_MODEL = "deepseek-reasoner"

if missing_modules(["langchain_deepseek"]):
    raise MissingDependency(f"the langchain-deepseek adapter needs langchain-deepseek: "
                            f"pip install 'chatconform[{EXTRA}]'")

from chatconform.adapters._langchain_chat import (  # noqa: E402
    ConfiguredChatModelAdapter,
    stop_at_chat_completions,
)

#: langchain-deepseek, imported when a chat model is built (by warm_up, or else the first call).
_library = Library("langchain_deepseek", adapter="langchain-deepseek", extra=EXTRA)


#: The SDK client's hook that ends the call with the body it built.
_stop_before_sending = stop_at_chat_completions("ChatDeepSeek")


class LangChainDeepSeekAdapter(ConfiguredChatModelAdapter):
    """``to_payload`` for ``deepseek`` through ``ChatDeepSeek``'s own request path and the
    openai SDK's serializer (see the module docstring)."""

    name = "langchain-deepseek"
    distribution = DISTRIBUTION
    providers = frozenset({"deepseek"})
    #: What ChatDeepSeek gets wrong, each a rejection by DeepSeek (docs/adapters.md has each minimal case).
    expected_failures = {
        "payload.reasoning_kept": (
            "ChatDeepSeek never sends reasoning_content back: _get_request_payload keeps only the text blocks of "
            "an assistant message, and reads neither additional_kwargs['reasoning_content'] (where ChatDeepSeek "
            "stores it) nor a reasoning block, so a tool-call turn with thinking on (deepseek-reasoner, "
            "deepseek-v4) goes without it (D3 'Missing `reasoning_content` field in the assistant message at "
            "message index {i}': https://github.com/langchain-ai/langchain/issues/34166, "
            "https://github.com/langchain-ai/langchain/issues/40219)"),
        "payload.provider_rules": (
            "the missing reasoning_content of payload.reasoning_kept (D3); and messages are sent one for one, in "
            "order (ChatOpenAI's conversion): user text stored before the tool results of one request lands "
            "between the call and its results, and a call left without a result (a run cut while its tools ran, "
            "or a later round reusing an answered id) is sent unanswered (D1 'An assistant message with "
            "'tool_calls' must be followed by tool messages responding to each 'tool_call_id'.': "
            "https://github.com/langchain-ai/langchain/issues/25716)"),
        "payload.tool_pairing": "the D1 cases of payload.provider_rules",
        "payload.text_boundaries": (
            "_get_request_payload joins an assistant message's text blocks with '' (DeepSeek takes a string), so "
            "two texts of one answer run together: 'Done. (a2)' + 'Done. (a3)' is sent as 'Done. (a2)Done. (a3)'; "
            "no upstream issue found"),
    }

    def chat_model(self, model: str | None = None, reasoning: bool | None = None) -> ChatDeepSeek:
        settings: dict[str, Any] = {}
        if model is not None and reasoning is not None:
            settings["extra_body"] = {"thinking": {"type": "enabled" if reasoning else "disabled"}}
        name = model or (REASONING_MODEL if reasoning else MODEL)
        chat = _library.ChatDeepSeek(model=name, api_key="dummy", **settings)
        # The SDK client ChatDeepSeek built; only its send is stopped.
        chat.root_client._prepare_request = _stop_before_sending
        return chat
