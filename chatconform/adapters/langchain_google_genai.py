"""langchain-google-genai's ``ChatGoogleGenerativeAI`` as a ``to_payload`` implementation, for
``gemini``, run offline.

``to_payload(history, provider="gemini", instructions=...)`` builds the generateContent request
that ``ChatGoogleGenerativeAI(model="gemini-2.5-flash", google_api_key=<dummy>)`` would send for
the history, the way a LangChain application calls the model:

1. the pydantic-ai history becomes LangChain messages through
   :func:`chatconform.adapters.langchain_core.to_langchain` (one message per part, the table in
   that module's docstring), with the run's ``instructions`` first as a ``SystemMessage``;
2. each tool the history calls is bound with ``bind_tools`` as an OpenAI-style function whose
   parameters are an object schema open to any arguments, since the agent that made those
   calls had those tools;
3. the chat model's own ``_prepare_request(messages, stop=None, tools=<bound>,
   cached_content=...)`` builds ``{"model", "contents", "config"}``, exactly as its
   ``_generate`` does before calling ``client.models.generate_content``;
4. google-genai's own request converter for the Gemini API
   (``_GenerateContentParameters_to_mldev``, then ``convert_to_dict`` and
   ``encode_unserializable_types``, bytes as base64) turns that into the JSON body, and the
   keys the client moves into the URL (``_url``, ``_query``) are left out, as its
   ``_build_request`` leaves them out.

The body is everything the request carries (``contents``, ``systemInstruction``, ``tools``,
``safetySettings``, ``generationConfig``), uncorrected: what the library does with the
history is what the checks judge. In particular ``_parse_chat_history`` (0.x to 4.x):

- takes every ``ToolMessage`` out of the sequence and sends, right after each ``AIMessage``
  with tool calls, the results whose ``tool_call_id`` it called (the first such result for
  each id), wherever they were stored; a result no call of an ``AIMessage`` asks for is not
  sent;
- sends a ``ToolMessage`` as ``functionResponse.response = {"output": <content>}`` (its
  content parsed as JSON where it is JSON); ``ToolMessage.status`` is not read, so a failed
  result goes out as a plain output, without Gemini's ``error`` key;
- puts the first ``SystemMessage`` in ``systemInstruction`` and appends later ones to it,
  but drops a later one when the first message was not a ``SystemMessage``;
- sends an ``AIMessage`` that converts to no part as one empty text part (gemini-2.0 and older
  rejected it, G12; gemini-2.5 and 3 were recorded taking it).

A file given by URL is downloaded by the library (``ImageBytesLoader._bytes_from_url``, a
``requests.get``) and sent inline. The adapter downloads nothing: while it builds a body,
that loader answers with stand-in bytes naming the URL (the MIME type then comes from the
URL, as the library guesses it when the block has none), so the body has the real shape with
other bytes. Outside the adapter's calls the loader is the library's own, untouched. No
request is ever sent: the client gets a dummy key and is never called.
"""

from __future__ import annotations

import contextvars
from collections.abc import Sequence
from importlib.metadata import version
from typing import TYPE_CHECKING, Any

from chatconform.adapters import LazyModel, Library, called_tools, missing_modules, open_parameters
from chatconform.errors import MissingDependency

if TYPE_CHECKING:
    from langchain_google_genai import ChatGoogleGenerativeAI

__all__ = ["DISTRIBUTION", "EXTRA", "MODEL", "LangChainGoogleGenAIAdapter"]

#: The extra that installs langchain-google-genai (and langchain-core).
EXTRA = "langchain-google-genai"
#: The distribution whose version the adapter reports.
DISTRIBUTION = "langchain-google-genai"
#: The Gemini model the chat model is built for.
MODEL = "gemini-2.5-flash"


#: What the adapter imports.
_MODULES = ("langchain_core", "langchain_google_genai", "google.genai")

if missing_modules(_MODULES):
    raise MissingDependency(f"the langchain-google-genai adapter needs {', '.join(missing_modules(_MODULES))}: "
                            f"pip install 'chatconform[{EXTRA}]'")


from chatconform.adapters._langchain_chat import history_messages  # noqa: E402

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

#: The libraries, imported when the chat model is built (by warm_up, or else the first call; google-genai's request
#: converter is langchain-google-genai's own dependency).
_library = Library("langchain_google_genai", adapter="langchain-google-genai", extra=EXTRA)
_image_utils = Library("langchain_google_genai._image_utils", adapter="langchain-google-genai", extra=EXTRA)
_genai_common = Library("google.genai._common", adapter="langchain-google-genai", extra=EXTRA)
_genai_types = Library("google.genai.types", adapter="langchain-google-genai", extra=EXTRA)
_genai_models = Library("google.genai.models", adapter="langchain-google-genai", extra=EXTRA)

# -- no downloads ------------------------------------------------------------------------------

#: Set while the adapter builds a body: the library's URL loader then returns stand-in bytes.
_OFFLINE: contextvars.ContextVar[bool] = contextvars.ContextVar("chatconform_lcgg_offline", default=False)


def _offline_downloads() -> None:
    """Wrap ``ImageBytesLoader._bytes_from_url`` (where every URL block is fetched) once:
    inside the adapter's calls it answers with bytes naming the URL, elsewhere it is the
    original method."""
    loader = _image_utils.ImageBytesLoader
    original = loader._bytes_from_url
    if getattr(original, "_chatconform_wrapped", False):
        return

    def _bytes_from_url(self: Any, url: str) -> bytes:
        if _OFFLINE.get():
            return f"offline stand-in for {url}".encode()
        return original(self, url)

    _bytes_from_url._chatconform_wrapped = True  # type: ignore[attr-defined]
    loader._bytes_from_url = _bytes_from_url


# -- the request -------------------------------------------------------------------------------

def _tools(history: Sequence[ModelMessage]) -> list[dict]:
    """One OpenAI-style function per tool the history calls, parameters open to anything."""
    return [{"type": "function", "function": {"name": name, "description": "", "parameters": open_parameters()}}
            for name in called_tools(history)]


def request_body(model: Any, request: dict) -> dict:
    """The JSON body google-genai sends for ``_prepare_request``'s ``request``
    (``Models._generate_content`` on the Gemini API, up to the HTTP call)."""
    parameters = _genai_types._GenerateContentParameters(model=request["model"], contents=request["contents"],
                                                         config=request["config"])
    to_mldev = _genai_models._GenerateContentParameters_to_mldev
    converted = to_mldev(model.client._api_client, parameters, None, parameters)
    converted.pop("config", None)
    converted = _genai_common.encode_unserializable_types(_genai_common.convert_to_dict(converted))
    return {key: value for key, value in converted.items() if not key.startswith("_")}


# -- the adapter -------------------------------------------------------------------------------

class LangChainGoogleGenAIAdapter(LazyModel):
    """``to_payload`` for ``gemini`` through ``ChatGoogleGenerativeAI``'s own request building
    and google-genai's request converter (see the module docstring)."""

    #: Judged method by method; chatconform.adapters.application composes them into one lifecycle.
    lifecycle = False

    name = "langchain-google-genai"
    providers = frozenset({"gemini"})
    #: The model behind the provider id, so model-dependent rules are judged for it.
    models = {"gemini": MODEL}
    #: Check id -> why langchain-google-genai fails it, each with its minimal case in docs/adapters.md.
    #: No upstream issue was found for these.
    expected_failures = {
        "payload.provider_rules": (
            "a HumanMessage with empty content is removed ('HumanMessage with empty content was removed to "
            "prevent API error'), so a blank user prompt between two responses ([response text] [user ''] "
            "[response text, call]) leaves two model turns in a row, the second one's function call right "
            "after a model turn: Gemini G6 'Please ensure that function call turn comes immediately after a "
            "user turn or after a function response turn.'"),
        "payload.tool_pairing": (
            "_parse_chat_history answers each AIMessage's tool calls with the first ToolMessage of the whole "
            "history that has the call's id: where a server reused an id in a later round ([call c2] [result r3] "
            "[call c2] [result r5]) the second call is answered with r3 and r5 is never sent"),
        "payload.nothing_lost": (
            "the same reused-id case sends r3 twice and loses r5; and a SystemMessage after the first message is "
            "dropped when the first message is not a SystemMessage ([user 'Hello', system 'Be brief.'] with no "
            "instructions sends no systemInstruction)"),
        "payload.error_flag_kept": (
            "ToolMessage.status='error' is not read: a failed result goes out as functionResponse.response = "
            "{'output': <text>}, without Gemini's 'error' key ([call c1] [failed result 'timeout'])"),
    }

    #: google-genai's request converter.
    libraries = (_genai_common, _genai_types, _genai_models)

    def __init__(self) -> None:
        super().__init__()
        self.version = version(DISTRIBUTION)

    def build(self) -> ChatGoogleGenerativeAI:
        """The chat model (a dummy key; its client is never called), the library's downloads
        answered offline inside the adapter's calls."""
        _offline_downloads()
        return _library.ChatGoogleGenerativeAI(model=MODEL, google_api_key="dummy")

    def to_payload(self, history: Sequence[ModelMessage], *, provider: str,
                   instructions: str | None = None) -> dict:
        if provider not in self.providers:
            raise ValueError(f"the langchain-google-genai adapter maps gemini only, not {provider!r}")
        model = self.model
        messages = history_messages(history, instructions)
        tools = _tools(history)
        bound_kwargs = model.bind_tools(tools).kwargs if tools else {}
        token = _OFFLINE.set(True)
        try:
            request = model._prepare_request(messages, stop=None, cached_content=model.cached_content,
                                             **bound_kwargs)
        finally:
            _OFFLINE.reset(token)
        return request_body(model, request)
