"""langchain-anthropic's ``ChatAnthropic`` as a ``to_payload`` implementation for ``anthropic``,
run offline.

``to_payload(history, provider="anthropic", instructions=...)`` returns the Messages API
body that::

    ChatAnthropic(model="claude-sonnet-4-5", api_key="dummy").bind_tools(tools).invoke(messages)

puts on the wire, parsed back from its JSON:

- ``messages``: the history as a LangChain application holds it
  (:func:`chatconform.adapters.langchain_core.to_langchain`, one message per part, in
  order), the run's instructions first as a ``SystemMessage``;
- ``tools``: each tool the history calls, bound as an application binds a tool whose schema
  it does not constrain (the OpenAI function format, an open object schema); none bound
  when the history calls none.

The call runs ChatAnthropic's whole invoke path: langchain-core's message normalization,
``ChatAnthropic._get_request_payload`` (``_format_messages`` turns the messages into
Anthropic blocks, merges consecutive same-role messages and lifts the system message
into ``system``), ``client.messages.create(**payload)`` of the anthropic SDK, and the SDK's
request building (``prepare_request_data``, then its JSON encoder). The request is stopped
in the SDK client's ``_prepare_request`` hook, after it is built and before it is sent, so
no socket is opened; the hook's exception carries the body out. The body is therefore
the SDK's serialization, keys the SDK leaves out included (``max_tokens``, ``model``,
``system``, ``tools``, ...). Nothing is fixed up: a block langchain-anthropic drops or
an order it keeps is what the checks judge.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any

from chatconform.adapters import Library
from chatconform.errors import MissingDependency

if TYPE_CHECKING:
    from langchain_anthropic import ChatAnthropic

__all__ = ["DISTRIBUTION", "EXTRA", "MODEL", "LangChainAnthropicAdapter"]

#: The extra that installs langchain-anthropic (and langchain-core with it).
EXTRA = "langchain-anthropic"
#: The distribution whose version the adapter reports.
DISTRIBUTION = "langchain-anthropic"
#: The model the body names.
MODEL = "claude-sonnet-4-5"

if importlib.util.find_spec("langchain_anthropic") is None:
    raise MissingDependency(f"the langchain-anthropic adapter needs langchain-anthropic: "
                            f"pip install 'chatconform[{EXTRA}]'")

from chatconform.adapters._langchain_chat import ChatModelAdapter, Sent  # noqa: E402

#: langchain-anthropic, imported when the chat model is built (by warm_up, or else the first call).
_library = Library("langchain_anthropic", adapter="langchain-anthropic", extra=EXTRA)


def _stop_before_sending(request: Any) -> None:
    """The anthropic client's ``_prepare_request`` hook: called with the built request
    (``httpx`` request, body serialized) right before the client would send it."""
    raise Sent(request.content)


class LangChainAnthropicAdapter(ChatModelAdapter):
    """``to_payload`` for ``anthropic`` through ``ChatAnthropic``'s own invoke path (see the
    module docstring)."""

    name = "langchain-anthropic"
    distribution = DISTRIBUTION
    providers = frozenset({"anthropic"})
    #: The model the body names, so model-dependent rules are judged for it.
    models = {"anthropic": MODEL}
    #: What ChatAnthropic gets wrong, each a rejection by the API or by langchain-anthropic
    #: itself (docs/adapters.md has each minimal case).
    expected_failures = {
        "payload.no_crash": (
            "a system prompt after the conversation began, with one before it ([system s1, user u2, system s3], "
            "or instructions and any later system prompt), raises ValueError('Received multiple "
            "non-consecutive system messages.') in _format_messages: claude-sonnet-4-5's profile does not "
            "take mid-conversation system messages, and only a first non-leading one is hoisted "
            "(https://github.com/langchain-ai/langchain/issues/38651, "
            "https://github.com/langchain-ai/langchain/issues/20835)"),
        "payload.schema_valid": (
            "blank text is sent as it is: a whitespace-only user prompt ([user '  \\n']) as message content, a "
            "blank assistant text beside a tool call as a text block, and whitespace-only instructions or "
            "system prompts as a system text block (Anthropic A7 'text "
            "content blocks must contain non-whitespace text'); a user prompt of blank text blocks only "
            "([user ['\\n\\n']]) loses them and goes as an empty content list (A6 'all messages must have "
            "non-empty content except for the optional final assistant message'); no upstream issue found"),
        "payload.provider_rules": (
            "user text stored before the tool results of one request (a message typed while the tools ran) "
            "is merged ahead of the tool_result blocks, which must come first (A9 '`tool_use` ids were found "
            "without `tool_result` blocks immediately after'); a tool-call id an OpenAI-compatible server "
            "reused in a later round is sent twice (A15 '`tool_use` ids must be unique', the API's answer to an "
            "id reused across rounds: https://github.com/NVIDIA-NeMo/Switchyard/issues/502); no langchain issue "
            "found"),
        "payload.tool_pairing": "the two cases of payload.provider_rules: A9 and A15",
    }

    def chat_model(self) -> ChatAnthropic:
        model = _library.ChatAnthropic(model=MODEL, api_key="dummy")
        # The SDK client ChatAnthropic builds (once, then cached); only its send is stopped.
        model._client._prepare_request = _stop_before_sending
        return model
