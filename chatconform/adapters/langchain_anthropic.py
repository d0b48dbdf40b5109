"""langchain-anthropic's ``ChatAnthropic`` as a ``to_payload`` implementation for ``anthropic``,
run offline.

``to_payload(history, provider="anthropic", instructions=..., model=..., reasoning=...)``
returns the Messages API body that::

    ChatAnthropic(model="claude-sonnet-4-5", api_key="dummy").bind_tools(tools).invoke(messages)

puts on the wire, parsed back from its JSON. The request's model, where it says one, is
the chat model's; its reasoning setting is ChatAnthropic's ``thinking``, as its docs set
extended thinking: ``{"type": "enabled", "budget_tokens": 1024}`` when on (below the
model's default ``max_tokens``, as the API requires), ``{"type": "disabled"}`` when off, and
no ``thinking`` when not said. The body:

- ``messages``: the history as a LangChain application holds it
  (:func:`chatconform.adapters.langchain_core.to_langchain`, one message per part, in
  order), the run's instructions first as a ``SystemMessage``;
- thinking the history holds as ChatAnthropic returned it (signed ``thinking`` blocks,
  ``redacted_thinking``, an unsigned block where the stream was cut; the answer stamped
  ``model_provider="anthropic"``), another provider's reasoning as a ``reasoning`` block;
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

__all__ = ["DISTRIBUTION", "EXTRA", "MODEL", "THINKING_ON", "LangChainAnthropicAdapter"]

#: The extra that installs langchain-anthropic (and langchain-core with it).
EXTRA = "langchain-anthropic"
#: The distribution whose version the adapter reports.
DISTRIBUTION = "langchain-anthropic"
#: The model the body names where the request says none.
MODEL = "claude-sonnet-4-5"
#: ChatAnthropic's ``thinking`` with reasoning on: extended thinking with the smallest budget
#: the API takes (it must stay below ``max_tokens``, 64000 for claude-sonnet-4-5).
THINKING_ON = {"type": "enabled", "budget_tokens": 1024}

if importlib.util.find_spec("langchain_anthropic") is None:
    raise MissingDependency(f"the langchain-anthropic adapter needs langchain-anthropic: "
                            f"pip install 'chatconform[{EXTRA}]'")

from chatconform.adapters._langchain_chat import ConfiguredChatModelAdapter, Sent  # noqa: E402

#: langchain-anthropic, imported when the chat model is built (by warm_up, or else the first call).
_library = Library("langchain_anthropic", adapter="langchain-anthropic", extra=EXTRA)


def _stop_before_sending(request: Any) -> None:
    """The anthropic client's ``_prepare_request`` hook: called with the built request
    (``httpx`` request, body serialized) right before the client would send it."""
    raise Sent(request.content)


class LangChainAnthropicAdapter(ConfiguredChatModelAdapter):
    """``to_payload`` for ``anthropic`` through ``ChatAnthropic``'s own invoke path (see the
    module docstring)."""

    name = "langchain-anthropic"
    distribution = DISTRIBUTION
    providers = frozenset({"anthropic"})
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
            "id reused across rounds: https://github.com/NVIDIA-NeMo/Switchyard/issues/502); with reasoning on, "
            "ChatAnthropic sends thinking enabled whatever the history holds, so a last tool-call turn with no "
            "Anthropic thinking (none, or another provider's reasoning, which _format_messages drops) starts with "
            "text or tool_use (A20 'Expected `thinking` or `redacted_thinking`, but found `tool_use`. When "
            "`thinking` is enabled, a final `assistant` message must start with a thinking block', whose advice is "
            "to disable thinking for such a request: https://github.com/BerriAI/litellm/issues/15601); no "
            "langchain issue found"),
        "payload.tool_pairing": "the two cases of payload.provider_rules: A9 and A15",
    }

    def chat_model(self, model: str | None = None, reasoning: bool | None = None) -> ChatAnthropic:
        settings: dict[str, Any] = {}
        if reasoning is not None:
            settings["thinking"] = THINKING_ON if reasoning else {"type": "disabled"}
        chat = _library.ChatAnthropic(model=model or MODEL, api_key="dummy", **settings)
        # The SDK client ChatAnthropic builds (once, then cached); only its send is stopped.
        chat._client._prepare_request = _stop_before_sending
        return chat
