"""What the adapters of LangChain's provider packages share: the history as a LangChain
application holds it, the tools that application binds, and one call of the chat model's
own ``invoke`` stopped where its SDK would send the request.

- **Messages.** :func:`chatconform.adapters.langchain_core.to_langchain` (one LangChain
  message per part, in order), the run's instructions first as a ``SystemMessage``.
- **Tools.** Each tool the history calls is bound with ``bind_tools`` in the OpenAI
  function format every LangChain chat model takes, its parameters an object schema open
  to any arguments, and no description: the agent that made the calls had these tools,
  and the history holds no schema for them.
- **The call.** ``model.bind_tools(tools).invoke(messages)``: langchain-core's own path
  (``_normalize_messages``, the cache check, ``_generate``), then the provider package's
  request building, then its SDK's. The adapter stops it inside the SDK, after the request
  is serialized and before anything is sent, by raising :class:`Sent` with the body; the
  invoke path never reaches a socket. LangSmith tracing is off for the call, so a tracing
  setting in the environment cannot post a run either.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from importlib.metadata import version
from typing import TYPE_CHECKING, Any

from chatconform.adapters import LazyModel, Library, called_tools, open_parameters
from chatconform.adapters.langchain_core import EXTRA, to_langchain

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

__all__ = ["ChatModelAdapter", "ConfiguredChatModelAdapter", "Sent", "bound", "history_messages", "sent_body",
           "stop_at_chat_completions"]

#: langchain-core's messages and LangSmith, read on first use (each provider package imports both already).
_messages = Library("langchain_core.messages", adapter="langchain-core", extra=EXTRA)
_langsmith = Library("langsmith", adapter="langchain-core", extra=EXTRA)


class Sent(Exception):
    """Raised by the SDK hook with the serialized body, so the call ends before sending."""

    def __init__(self, body: bytes | str) -> None:
        super().__init__("request built; not sent")
        self.body = body


def history_messages(history: Sequence[ModelMessage], instructions: str | None) -> list[BaseMessage]:
    """The history as LangChain messages, the instructions first as a ``SystemMessage``."""
    messages = to_langchain(history)
    if instructions:
        messages.insert(0, _messages.SystemMessage(content=instructions))
    return messages


def _called_tools(history: Sequence[ModelMessage]) -> list[dict]:
    return [{"type": "function", "function": {"name": name, "parameters": open_parameters()}}
            for name in called_tools(history)]


def bound(model: Any, history: Sequence[ModelMessage]) -> Any:
    """``model`` with the history's tools bound, or ``model`` itself when it calls none."""
    tools = _called_tools(history)
    return model.bind_tools(tools) if tools else model


def stop_at_chat_completions(model_class: str) -> Callable[[Any], None]:
    """An OpenAI-style SDK client's ``_prepare_request`` hook (the openai and groq SDKs are
    generated alike): called with the built request, body serialized, right before the client
    would send it, it raises :class:`Sent` with the body; a request to another route is the
    chat model's own doing, said as such."""

    def stop(request: Any) -> None:
        if not request.url.path.endswith("/chat/completions"):
            raise RuntimeError(f"{model_class} built a request to {request.url}, not to Chat Completions")
        raise Sent(request.content)

    return stop


def sent_body(runnable: Any, messages: list[BaseMessage]) -> bytes | str:
    """The request body ``runnable.invoke(messages)`` serializes, as the SDK would send it;
    the SDK hook must raise :class:`Sent`. Any other exception is the library's own."""
    try:
        with _langsmith.tracing_context(enabled=False):
            runnable.invoke(messages)
    except Sent as sent:
        return sent.body
    raise RuntimeError("the chat model returned without building a request")


class ChatModelAdapter(LazyModel):
    """``to_payload`` for one provider through a LangChain chat model's ``invoke``: a subclass
    names its distribution and builds the model with its SDK's send stopped
    (:meth:`chat_model`, whose hook raises :class:`Sent`), by ``warm_up`` or else on the
    first call."""

    #: Judged method by method; chatconform.adapters.application composes them into one lifecycle.
    lifecycle = False

    name: str
    providers: frozenset[str]
    #: The distribution whose version the adapter reports.
    distribution: str

    def __init__(self) -> None:
        super().__init__()
        self.version = version(self.distribution)

    def build(self) -> Any:
        return self.chat_model()

    def chat_model(self) -> Any:
        raise NotImplementedError

    def to_payload(self, history: Sequence[ModelMessage], *, provider: str,
                   instructions: str | None = None) -> dict:
        return self.body(self.model, history, provider, instructions)

    def body(self, model: Any, history: Sequence[ModelMessage], provider: str, instructions: str | None) -> dict:
        """The body ``model`` sends for ``history`` (``provider`` checked to be the adapter's)."""
        if provider not in self.providers:
            raise ValueError(f"the {self.name} adapter maps {', '.join(sorted(self.providers))} only, "
                             f"not {provider!r}")
        return json.loads(sent_body(bound(model, history), history_messages(history, instructions)))


class ConfiguredChatModelAdapter(ChatModelAdapter):
    """A :class:`ChatModelAdapter` whose chat model is configured as the request says: its
    model and its reasoning setting, as an application sets them on the chat model it
    builds. One chat model per setting, built on first use (the default one by ``warm_up``)."""

    def __init__(self) -> None:
        super().__init__()
        self._configured: dict[tuple[str | None, bool | None], Any] = {}
        self._lock = threading.Lock()

    def chat_model(self, model: str | None = None, reasoning: bool | None = None) -> Any:
        raise NotImplementedError

    def configured(self, model: str | None, reasoning: bool | None) -> Any:
        """The chat model for ``model`` and ``reasoning`` (the default one where neither is said)."""
        if model is None and reasoning is None:
            return self.model
        with self._lock:
            if (model, reasoning) not in self._configured:
                self._configured[model, reasoning] = self.chat_model(model, reasoning)
            return self._configured[model, reasoning]

    def to_payload(self, history: Sequence[ModelMessage], *, provider: str, instructions: str | None = None,
                   model: str | None = None, reasoning: bool | None = None) -> dict:
        return self.body(self.configured(model, reasoning), history, provider, instructions)
