"""langchain-groq's ``ChatGroq`` as a ``to_payload`` implementation for ``groq``, run offline.

``to_payload(history, provider="groq", instructions=..., model=..., reasoning=...)`` returns
the Chat Completions body that::

    ChatGroq(model="openai/gpt-oss-120b", api_key="dummy").bind_tools(tools).invoke(messages)

puts on the wire, parsed back from its JSON. The model is the request's where it names one.
The reasoning setting is ChatGroq's ``reasoning_effort``: ``"medium"`` when on, ``"low"``
when off (gpt-oss reasons at every effort; low is the least it takes), none when not said.

- ``messages``: the history as a LangChain application holds it
  (:func:`chatconform.adapters.langchain_core.to_langchain`, one message per part, in
  order), the run's instructions first as a ``SystemMessage``;
- ``tools``: each tool the history calls, bound in the OpenAI function format with an open
  object schema; none bound when the history calls none.

The call runs ChatGroq's whole invoke path: langchain-core's message normalization,
ChatGroq's ``_create_message_dicts`` (``_convert_message_to_dict``: assistant content kept
to its text blocks), and the groq SDK's ``chat.completions.create``. The SDK client's
``_prepare_request`` hook (the groq SDK is generated as the openai one is) stops it after
the body is serialized and before anything is sent. Nothing is fixed up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chatconform.adapters import Library, missing_modules
from chatconform.errors import MissingDependency

if TYPE_CHECKING:
    from langchain_groq import ChatGroq

__all__ = ["DISTRIBUTION", "EXTRA", "MODEL", "LangChainGroqAdapter"]

#: The extra that installs langchain-groq (and the groq SDK with it).
EXTRA = "langchain-groq"
#: The distribution whose version the adapter reports.
DISTRIBUTION = "langchain-groq"
#: The model where the request names none.
MODEL = "openai/gpt-oss-120b"
#: ChatGroq's ``reasoning_effort`` for reasoning on and off.
EFFORT = {True: "medium", False: "low"}

if missing_modules(["langchain_groq", "groq"]):
    raise MissingDependency(f"the langchain-groq adapter needs langchain-groq: pip install 'chatconform[{EXTRA}]'")

from chatconform.adapters._langchain_chat import (  # noqa: E402
    ConfiguredChatModelAdapter,
    stop_at_chat_completions,
)

#: langchain-groq (and the groq SDK through it), imported when a chat model is built (by warm_up, or else a call).
_library = Library("langchain_groq", adapter="langchain-groq", extra=EXTRA)


#: The SDK client's hook that ends the call with the body it built.
_stop_before_sending = stop_at_chat_completions("ChatGroq")


class LangChainGroqAdapter(ConfiguredChatModelAdapter):
    """``to_payload`` for ``groq`` through ``ChatGroq``'s own request path and the groq SDK's
    serializer (see the module docstring)."""

    name = "langchain-groq"
    distribution = DISTRIBUTION
    providers = frozenset({"groq"})
    #: What ChatGroq gets wrong, each a rejection by Groq (docs/adapters.md has each minimal case).
    expected_failures = {
        "payload.provider_rules": (
            "messages are sent one for one, in order (_convert_message_to_dict): user text stored before the "
            "tool results of one request lands between the call and its results, and a call left without a "
            "result (a run cut while its tools ran, or a later round reusing an answered id) is sent unanswered "
            "(R1 'tool messages must answer the tool_calls of the assistant message right before them': "
            "https://github.com/langchain-ai/langchain/issues/25716 for the unanswered call)"),
        "payload.tool_pairing": "the R1 cases of payload.provider_rules",
    }

    def chat_model(self, model: str | None = None, reasoning: bool | None = None) -> ChatGroq:
        settings: dict[str, Any] = {} if reasoning is None else {"reasoning_effort": EFFORT[reasoning]}
        chat = _library.ChatGroq(model=model or MODEL, api_key="dummy", **settings)
        # The SDK client ChatGroq built (its completions resource holds it); only its send is stopped.
        chat.client._client._prepare_request = _stop_before_sending
        return chat
