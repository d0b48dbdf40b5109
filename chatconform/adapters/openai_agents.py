"""The OpenAI Agents SDK's two OpenAI models as a ``to_payload`` implementation, run offline:
its Chat Completions model for ``openai-chat``, and its default, the Responses model
(``OpenAIResponsesModel('gpt-5')``), for ``openai-responses``.

On the Responses model the input items go to ``responses.create`` as they are (after the
SDK's own ``_remove_openai_responses_api_incompatible_fields``), with ``instructions``; the
items are those a run on that model stores: a reasoning item OpenAI returned keeps its id
and encrypted content, any other model's reasoning is stored with its ``provider_data``
(which the SDK then leaves out). The rest of this docstring is the Chat Completions path;
both share the converter and the kept request.

An Agents SDK application holds its conversation as Responses-style input items
(``result.to_input_list()``) and passes them, with the new turn, to the next run. On a
Chat Completions model (``OpenAIChatCompletionsModel``) every request converts them with
``agents.models.chatcmpl_converter.Converter.items_to_messages`` and puts the agent's
instructions first as a system message. ``to_payload(history, provider="openai-chat",
instructions=...)`` does exactly that:

1. the pydantic-ai history becomes input items through :func:`to_input_items` (the table
   below);
2. ``OpenAIChatCompletionsModel(model="gpt-4o", openai_client=<an AsyncOpenAI with a dummy
   key>).get_response(system_instructions=instructions, input=items, ...)`` runs as the
   Runner calls it: default ``ModelSettings``, tracing disabled, no output schema and no
   handoffs, and one ``FunctionTool`` per tool the history calls (parameters an object
   schema open to any arguments, ``strict_json_schema=False``), since the agent that made
   those calls had those tools;
3. the model builds its ``chat.completions.create`` call itself (messages, tools, and what
   it adds for the official endpoint, such as ``store``), and the openai SDK transforms and
   serializes it into the HTTP request as it always does; the client's last step, sending
   that request, is replaced by one that keeps its JSON body and stops. That body is the
   payload: ``{"model": ..., "messages": [...], "tools": [...], ...}``.

Nothing is corrected: what ``items_to_messages`` makes of the items is what the checks
judge. No socket is opened and no request leaves the process. The Runner's own input
preparation around the model call (its ``call_model_input_filter`` and the removal of
items repeated by id) is not applied: the payload is the model's conversion of the stored
history.

:func:`to_input_items`, part by part, in the history's order (``__fake_id__`` is the id
the SDK's Chat Completions model gives the items it returns):

=================================  ==============================================================
``SystemPromptPart``               ``{"role": "system", "content": <text>}``
``UserPromptPart``                 ``{"role": "user", "content": ...}``: a string as it is; a list
                                   as ``input_text`` parts, images as ``input_image`` (a URL, or a
                                   ``data:`` URL of the bytes; ``detail: "auto"``), audio bytes as
                                   ``input_audio``, other files as ``input_file`` (``file_data`` as
                                   a ``data:`` URL with a ``filename``; a URL as ``file_url``)
``CompactionPart`` (request)       ``{"role": "user", "content": <summary>}``: a stored summary, in
                                   the user's voice
``RetryFeedbackPart``              ``{"role": "user", "content": <its text>}`` (pydantic-ai's
                                   rendering of a structured one)
``ToolReturnPart``                 ``{"type": "function_call_output", "call_id", "output"}``, the
                                   output made by the SDK's own ``ItemHelpers.tool_call_output_item``
                                   from the stored content (a string as it is, other values as the
                                   SDK stringifies a tool's return value); a failed result is its
                                   stored text, as the SDK stores a tool error
``RetryPromptPart`` with a tool    a ``function_call_output`` with pydantic-ai's retry text
``RetryPromptPart`` without        ``{"role": "user", "content": <pydantic-ai's retry text>}``
``ModelResponse``                  its parts in order: a run of ``TextPart`` as one assistant
                                   ``message`` item (``status: "completed"``, one ``output_text``
                                   per part), a ``ThinkingPart`` as a ``reasoning`` item with its
                                   text as the summary, a ``ToolCallPart`` as a ``function_call``
                                   (``arguments`` as the JSON text)
=================================  ==============================================================

A response-side ``CompactionPart`` and other provider-specific parts have no input item
and are left out. :func:`from_input_items` converts back (request-side items grouped into
``ModelRequest``\\ s, response-side ones into ``ModelResponse``\\ s, a tool output named after
the call it answers); the project's tests check that a round trip keeps every visible
item, in order.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import json
from collections.abc import Sequence
from importlib.metadata import version
from typing import TYPE_CHECKING, Any

from chatconform.adapters import LazyModel, Library, Once, called_tools, missing_modules, open_parameters
from chatconform.errors import MissingDependency
from chatconform.lazy import pai

if TYPE_CHECKING:
    from agents import FunctionTool
    from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, RetryPromptPart, ToolReturnPart

__all__ = ["DISTRIBUTION", "EXTRA", "MODEL", "RESPONSES_MODEL", "OpenAIAgentsAdapter", "from_input_items",
           "to_input_items"]

#: The extra that installs the OpenAI Agents SDK.
EXTRA = "openai-agents"
#: The distribution whose version the adapter reports.
DISTRIBUTION = "openai-agents"
#: The model the Chat Completions model is built for.
MODEL = "gpt-4o"
#: The model the Responses model (the SDK's default path) is built for.
RESPONSES_MODEL = "gpt-5"

if missing_modules(("agents", "openai")):
    raise MissingDependency(f"the openai-agents adapter needs openai-agents: pip install 'chatconform[{EXTRA}]'")

#: The Agents SDK and the openai SDK, imported by warm_up or else on first use (listing the adapter imports neither).
_agents = Library("agents", adapter="openai-agents", extra=EXTRA)
_fake_id = Library("agents.models.fake_id", adapter="openai-agents", extra=EXTRA)
_interface = Library("agents.models.interface", adapter="openai-agents", extra=EXTRA)
_openai = Library("openai", adapter="openai-agents", extra=EXTRA)
_responses = Library("openai.types.responses", adapter="openai-agents", extra=EXTRA)

# -- pydantic-ai -> input items --------------------------------------------------------------------

#: Audio media types -> the ``input_audio`` format names.
_AUDIO_FORMATS = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}


def _content_part(item: Any) -> dict | None:
    if isinstance(item, str):
        return {"type": "input_text", "text": item}
    if isinstance(item, pai.TextContent):
        return {"type": "input_text", "text": item.content}
    if isinstance(item, pai.ImageUrl):
        return {"type": "input_image", "image_url": item.url, "detail": "auto"}
    if isinstance(item, (pai.DocumentUrl, pai.AudioUrl, pai.VideoUrl, pai.FileUrl)):
        return {"type": "input_file", "file_url": item.url}
    if isinstance(item, pai.BinaryContent):
        if item.is_image:
            return {"type": "input_image", "image_url": item.data_uri, "detail": "auto"}
        if item.media_type in _AUDIO_FORMATS:
            return {"type": "input_audio", "input_audio": {"data": base64.b64encode(item.data).decode("ascii"),
                                                           "format": _AUDIO_FORMATS[item.media_type]}}
        return {"type": "input_file", "file_data": item.data_uri, "filename": f"{item.identifier}.{item.format}"}
    return None


def _user(content: Any) -> dict:
    if isinstance(content, str):
        return {"role": "user", "content": content}
    return {"role": "user", "content": [p for p in map(_content_part, content) if p is not None]}


def _output(part: ToolReturnPart | RetryPromptPart) -> dict:
    content = part.content if isinstance(part, pai.ToolReturnPart) else part.model_response()
    call = _responses.ResponseFunctionToolCall(arguments="{}", call_id=part.tool_call_id, name=part.tool_name,
                                               type="function_call")
    return dict(_agents.ItemHelpers.tool_call_output_item(call, content))


def _request_items(message: ModelRequest) -> list[dict]:
    out: list[dict] = []
    for part in message.parts:
        if isinstance(part, pai.SystemPromptPart):
            out.append({"role": "system", "content": part.content})
        elif isinstance(part, pai.UserPromptPart):
            out.append(_user(part.content))
        elif isinstance(part, pai.CompactionPart):
            if part.content is not None:
                out.append(_user(part.content))
        elif isinstance(part, pai.RetryFeedbackPart):
            out.append(_user(part.content if isinstance(part.content, str) else part.model_response()))
        elif isinstance(part, pai.ToolReturnPart) or (
                isinstance(part, pai.RetryPromptPart) and part.tool_name is not None):
            out.append(_output(part))
        elif isinstance(part, pai.RetryPromptPart):
            out.append(_user(part.model_response()))
    return out


def _response_items(message: ModelResponse) -> list[dict]:
    fake_id = _fake_id.FAKE_RESPONSES_ID  # the id the SDK gives the items its Chat Completions model returns
    out: list[dict] = []
    for part in message.parts:
        if isinstance(part, pai.TextPart):
            text = {"type": "output_text", "text": part.content, "annotations": [], "logprobs": []}
            if out and out[-1]["type"] == "message":
                out[-1]["content"].append(text)
            else:
                out.append({"id": fake_id, "type": "message", "role": "assistant", "status": "completed",
                            "content": [text]})
        elif isinstance(part, pai.ThinkingPart):
            out.append({"id": fake_id, "type": "reasoning",
                        "summary": [{"type": "summary_text", "text": part.content}]})
        elif isinstance(part, pai.ToolCallPart):
            out.append({"id": fake_id, "type": "function_call", "call_id": part.tool_call_id,
                        "name": part.tool_name, "arguments": part.args_as_json_str()})
    return out


def _stored_from_responses(item: dict, part: Any) -> dict:
    """A response's item as a run on the Responses model stores it: a reasoning item OpenAI
    returned keeps its id and encrypted content (the SDK asks for it with store off); any
    other reasoning keeps its ``provider_data`` (the model that returned it), as the SDK's
    other models store theirs."""
    if item["type"] != "reasoning":
        return item
    if part.provider_name == "openai" and part.id:
        # A reasoning item returned without a summary is stored with none.
        item = {**item, "id": part.id, "summary": item["summary"] if part.content else []}
        if part.signature:
            item["encrypted_content"] = part.signature
        return item
    return {**item, "provider_data": {"model": part.provider_name or "unknown"}}


def to_input_items(history: Sequence[ModelMessage], *, responses: bool = False) -> list[dict]:
    """The history as the Agents SDK's input items (the table in the module docstring);
    ``responses``: as a run on the Responses model stored it (:func:`_stored_from_responses`)."""
    out: list[dict] = []
    for message in history:
        if isinstance(message, pai.ModelRequest):
            out.extend(_request_items(message))
            continue
        items = _response_items(message)
        if responses:
            thoughts = iter([p for p in message.parts if isinstance(p, pai.ThinkingPart)])
            items = [_stored_from_responses(item, next(thoughts)) if item["type"] == "reasoning" else item
                     for item in items]
        out.extend(items)
    return out


# -- input items -> pydantic-ai --------------------------------------------------------------------

def _user_item(part: dict) -> Any:
    kind = part["type"]
    if kind == "input_text":
        return part["text"]
    if kind == "input_image":
        url = part["image_url"]
        return pai.BinaryContent.from_data_uri(url) if url.startswith("data:") else pai.ImageUrl(url=url)
    if kind == "input_audio":
        audio = part["input_audio"]
        return pai.BinaryContent(data=base64.b64decode(audio["data"]), media_type=f"audio/{audio['format']}")
    if kind == "input_file":
        if "file_data" in part:
            return pai.BinaryContent.from_data_uri(part["file_data"])
        return pai.DocumentUrl(url=part["file_url"])
    raise ValueError(f"no pydantic-ai item for a {kind!r} content part")


def _request_part(item: dict, names: dict[str, str]) -> Any:
    if item.get("type") == "function_call_output":
        return pai.ToolReturnPart(names.get(item["call_id"], ""), item["output"], item["call_id"])
    content = item["content"]
    if item["role"] == "system":
        return pai.SystemPromptPart(content)
    if item["role"] == "user":
        return pai.UserPromptPart(content if isinstance(content, str) else [_user_item(p) for p in content])
    raise ValueError(f"no pydantic-ai part for a {item['role']!r} message")


def _response_parts(item: dict) -> list:
    kind = item["type"]
    if kind == "message":
        return [pai.TextPart(c["text"]) for c in item["content"] if c["type"] == "output_text"]
    if kind == "reasoning":
        return [pai.ThinkingPart("\n".join(s["text"] for s in item.get("summary", [])))]
    return [pai.ToolCallPart(item["name"], item["arguments"], item["call_id"])]


def from_input_items(items: Sequence[dict]) -> list[ModelMessage]:
    """Input items back as a pydantic-ai history: consecutive request-side items (messages of
    the user or the system, tool outputs) in one ``ModelRequest``, consecutive response-side
    items (assistant messages, reasoning, function calls) in one ``ModelResponse``. A tool
    output takes the name of the latest call with its ``call_id``; a summary or retry feedback
    sent as user text comes back as user text."""
    out: list[ModelMessage] = []
    names: dict[str, str] = {}
    for item in items:
        if item.get("type") in ("reasoning", "function_call") or item.get("role") == "assistant":
            parts = _response_parts(item)
            if item["type"] == "function_call":
                names[item["call_id"]] = item["name"]
            if out and isinstance(out[-1], pai.ModelResponse):
                out[-1].parts = [*out[-1].parts, *parts]
            else:
                out.append(pai.ModelResponse(parts=parts))
        else:
            part = _request_part(item, names)
            if out and isinstance(out[-1], pai.ModelRequest):
                out[-1].parts = [*out[-1].parts, part]
            else:
                out.append(pai.ModelRequest(parts=[part]))
    return out


# -- the request, kept where the client would send it -----------------------------------------

def _client_types() -> tuple[type[Any], type[Any]]:
    """The two classes made from the openai SDK's, on first use."""
    # Bases read from the SDK imported on first use: Any to mypy.
    error: Any = _openai.OpenAIError
    client: Any = _openai.AsyncOpenAI

    class _Built(error):
        """The request the client was about to send (an ``OpenAIError``, so the client lets it
        through unretried and unwrapped)."""

        def __init__(self, body: dict) -> None:
            super().__init__("request built, not sent")
            self.body = body

    class _KeepingClient(client):
        """An ``AsyncOpenAI`` whose last step, sending the built request, keeps its JSON body
        instead (copies made by ``with_options`` keep this too)."""

        async def _send_request(self, request: Any, **kwargs: Any) -> Any:
            raise _Built(json.loads(request.content))

    return _Built, _KeepingClient


_CLIENT_TYPES = Once(_client_types)


async def _never_invoked(context: Any, arguments: str) -> str:
    raise RuntimeError("the adapter builds requests; it never runs a tool")


def _tools(history: Sequence[ModelMessage]) -> list[FunctionTool]:
    return [_agents.FunctionTool(name=name, description="", params_json_schema=open_parameters(),
                                 on_invoke_tool=_never_invoked, strict_json_schema=False)
            for name in called_tools(history)]


def _run(coro_fn: Any) -> Any:
    """Run a coroutine on an event loop of its own (on a helper thread if this one already
    runs a loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro_fn())
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(coro_fn())).result()


# -- the adapter -----------------------------------------------------------------------------------

class OpenAIAgentsAdapter(LazyModel):
    """``to_payload`` for ``openai-chat`` through the Agents SDK's ``OpenAIChatCompletionsModel``
    and for ``openai-responses`` through its ``OpenAIResponsesModel`` (see the module docstring)."""

    #: Judged method by method; chatconform.adapters.application composes them into one lifecycle.
    lifecycle = False

    name = "openai-agents"
    providers = frozenset({"openai-chat", "openai-responses"})
    #: The model behind each provider id, so model-dependent rules are judged for it.
    models = {"openai-chat": MODEL, "openai-responses": RESPONSES_MODEL}
    #: Check id -> why the Agents SDK fails it, each with its minimal case in docs/adapters.md.
    #: No upstream issue was found for these.
    expected_failures = {
        "payload.provider_rules": (
            "OpenAI O8/O7, an assistant message with tool_calls not followed by its tool messages: items are "
            "converted in order, so user text stored before the tool results of one request ([call c1] "
            "[user 'Also Berlin', result c1]) is sent between the call and its result; and items_to_messages "
            "closes the assistant message when a message item follows tool calls and the pending content is a "
            "string, so a response [text, call c2, text, call c3] becomes two assistant messages, the first "
            "one's calls followed by the second; on the Responses model, the calls of a response cut off while "
            "their tools ran are sent without a function_call_output: 'No tool output found for function call "
            "call_...' (X3)"),
        "payload.tool_pairing": "the same two cases as payload.provider_rules (OpenAI O8)",
    }

    #: What the calls read besides the model's own modules.
    libraries = (_fake_id, _interface, _responses)

    def __init__(self) -> None:
        super().__init__()
        self.version = version(DISTRIBUTION)

    def build(self) -> dict[str, Any]:
        """The Chat Completions and the Responses model, by provider id (a dummy key; nothing
        is ever sent)."""
        keeping_client = _CLIENT_TYPES.get()[1](api_key="sk-dummy", max_retries=0)
        return {"openai-chat": _agents.OpenAIChatCompletionsModel(model=MODEL, openai_client=keeping_client),
                "openai-responses": _agents.OpenAIResponsesModel(model=RESPONSES_MODEL, openai_client=keeping_client)}

    def to_payload(self, history: Sequence[ModelMessage], *, provider: str,
                   instructions: str | None = None) -> dict:
        if provider not in self.providers:
            raise ValueError(f"the openai-agents adapter maps {' and '.join(sorted(self.providers))} only, "
                             f"not {provider!r}")
        model = self.model[provider]
        items, tools = to_input_items(history, responses=provider == "openai-responses"), _tools(history)
        built_type = _CLIENT_TYPES.get()[0]

        async def build() -> dict:
            try:
                await model.get_response(system_instructions=instructions, input=items,
                                         model_settings=_agents.ModelSettings(), tools=tools, output_schema=None,
                                         handoffs=[], tracing=_interface.ModelTracing.DISABLED)
            except built_type as built:
                return built.body
            raise RuntimeError("the model returned without building a request")

        return _run(build)
