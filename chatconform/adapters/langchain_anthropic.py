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
import json
from collections.abc import Sequence
from importlib.metadata import version
from typing import Any

from chatconform.errors import MissingDependency

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

from langchain_anthropic import ChatAnthropic  # noqa: E402
from pydantic_ai.messages import ModelMessage  # noqa: E402

from chatconform.adapters._langchain_chat import Sent, bound, history_messages, sent_body  # noqa: E402


def _stop_before_sending(request: Any) -> None:
    """The anthropic client's ``_prepare_request`` hook: called with the built request
    (``httpx`` request, body serialized) right before the client would send it."""
    raise Sent(request.content)


class LangChainAnthropicAdapter:
    """``to_payload`` for ``anthropic`` through ``ChatAnthropic``'s own invoke path (see the
    module docstring)."""

    name = "langchain-anthropic"
    providers = frozenset({"anthropic"})
    #: The model the body names, so model-dependent rules are judged for it.
    models = {"anthropic": MODEL}
    expected_failures: dict[str, str] = {}

    def __init__(self) -> None:
        self.version = version(DISTRIBUTION)
        self._model = ChatAnthropic(model=MODEL, api_key="dummy")
        # The SDK client ChatAnthropic builds (once, then cached); only its send is stopped.
        self._model._client._prepare_request = _stop_before_sending

    def to_payload(self, history: Sequence[ModelMessage], *, provider: str,
                   instructions: str | None = None) -> dict:
        if provider not in self.providers:
            raise ValueError(f"the langchain-anthropic adapter maps anthropic only, not {provider!r}")
        body = sent_body(bound(self._model, history), history_messages(history, instructions))
        return json.loads(body)
