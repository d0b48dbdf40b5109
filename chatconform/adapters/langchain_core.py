"""langchain-core's OpenAI message conversion as a ``to_payload`` implementation, for
``openai-chat``.

``to_payload(history, provider="openai-chat", instructions=...)`` converts the pydantic-ai
history to LangChain messages (:func:`to_langchain`), puts the run's ``instructions`` first as
a ``SystemMessage`` (where LangChain agents put their system prompt), and returns::

    {"messages": langchain_core.messages.convert_to_openai_messages(messages)}

``merge_message_runs`` is not applied: a LangChain app on OpenAI Chat Completions sends its
messages one for one (``ChatOpenAI`` converts each message on its own and merges nothing);
``merge_message_runs`` is an opt-in utility for models that require alternating roles.
What ``convert_to_openai_messages`` returns is the body, as it is: a block it passes
through, a flag it drops or an order it keeps is what the checks judge.

The converter, part by part, in the history's order (one LangChain message per part):

=================================  ==============================================================
``SystemPromptPart``               ``SystemMessage(content)``
``UserPromptPart``                 ``HumanMessage``: a string as it is; a list as content blocks,
                                   text as ``{"type": "text"}``, images as LangChain's image
                                   blocks (``source_type`` ``url`` or ``base64`` with its
                                   ``mime_type``), other files as ``file`` blocks
``CompactionPart`` (request)       ``HumanMessage(content)``: a stored summary, in the user's voice
``RetryFeedbackPart``              ``HumanMessage``: its text (or pydantic-ai's rendering of a
                                   structured one)
``ToolReturnPart``                 ``ToolMessage(content, tool_call_id, name)``; content that is not
                                   a string as JSON (``ensure_ascii=False``, as LangGraph's
                                   ``ToolNode`` stores tool output); ``status="error"`` for a
                                   failed or retried result, else ``"success"``
``RetryPromptPart`` with a tool    ``ToolMessage(<pydantic-ai's retry text>, status="error")``
``RetryPromptPart`` without        ``HumanMessage(<pydantic-ai's retry text>)``
``ModelResponse``                  one ``AIMessage``: text as ``{"type": "text"}`` blocks (a single
                                   text as a plain string), thinking as ``{"type": "reasoning"}``
                                   blocks (OpenAI's with its ``id``, its ``encrypted_content`` in
                                   ``extras``, as ChatOpenAI returns them; Anthropic's as
                                   ChatAnthropic returns them: ``{"type": "thinking"}`` with its
                                   ``signature``, ``{"type": "redacted_thinking"}`` with its
                                   ``data``, the message stamped
                                   ``response_metadata={"model_provider": "anthropic"}``), in
                                   order; calls as
                                   ``tool_calls`` (arguments as a dict; arguments that are not a
                                   JSON object as ``invalid_tool_calls``)
=================================  ==============================================================

A response-side ``CompactionPart`` (a provider's own compaction blob) and other
provider-specific parts have no LangChain message and are left out. :func:`from_langchain`
converts back; the project's tests check that a round trip keeps every visible item, in
order.

``trim(history, max_messages=N)`` (the ``trim`` contract) converts the history the same
way, one LangChain message per part, and keeps what
``langchain_core.messages.trim_messages`` keeps with the settings its docs give for chat
history: ``strategy="last"``, ``token_counter=len`` (so ``max_tokens`` counts messages),
``max_tokens=N``, ``start_on="human"`` and ``include_system=True``. The kept LangChain
messages are mapped back to the parts they came from, and the parts regrouped into their
messages (a message kept whole is the input's own; one kept in part is a copy with those
parts), so what is judged is trim_messages' choice, not the converter's.
"""

from __future__ import annotations

import base64
import dataclasses
import importlib.util
import json
from collections.abc import Sequence
from importlib.metadata import version
from typing import TYPE_CHECKING, Any, Literal

from chatconform.adapters import Library
from chatconform.errors import MissingDependency
from chatconform.history import ERROR_OUTCOMES
from chatconform.lazy import pai

if TYPE_CHECKING:
    from langchain_core.messages import AIMessage, BaseMessage

__all__ = ["DISTRIBUTION", "EXTRA", "LangChainCoreAdapter", "from_langchain", "to_langchain"]

#: The extra that installs langchain-core.
EXTRA = "langchain"
#: The distribution whose version the adapter reports.
DISTRIBUTION = "langchain-core"

if importlib.util.find_spec("langchain_core") is None:
    raise MissingDependency(f"the langchain-core adapter needs langchain-core: pip install 'chatconform[{EXTRA}]'")

from pydantic_core import to_jsonable_python  # noqa: E402

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse

#: langchain-core's messages, imported by warm_up or else on first use (listing the adapter imports none of it).
_lc = Library("langchain_core.messages", adapter="langchain-core", extra=EXTRA)

#: Tool outcomes sent as an error (``ToolMessage.status="error"``).


# -- pydantic-ai -> LangChain ----------------------------------------------------------------------

def _file_block(item: Any) -> dict | None:
    kind = "image" if isinstance(item, pai.ImageUrl) or (
        isinstance(item, pai.BinaryContent) and item.media_type.startswith("image/")) else "file"
    if isinstance(item, pai.FileUrl):
        block = {"type": kind, "source_type": "url", "url": item.url}
        if kind == "file":
            try:
                block["mime_type"] = item.media_type
            except ValueError:  # pydantic-ai cannot tell it from the URL
                pass
        return block
    if isinstance(item, pai.BinaryContent):
        return {"type": kind, "source_type": "base64", "data": base64.b64encode(item.data).decode("ascii"),
                "mime_type": item.media_type}
    return None


def _human_content(content: Any) -> str | list:
    if isinstance(content, str):
        return content
    blocks: list = []
    for item in content:
        if isinstance(item, str):
            blocks.append({"type": "text", "text": item})
        elif isinstance(item, pai.TextContent):
            blocks.append({"type": "text", "text": item.content})
        elif (block := _file_block(item)) is not None:
            blocks.append(block)
    return blocks


def _tool_content(content: Any) -> str:
    if isinstance(content, str):
        return content
    return json.dumps(to_jsonable_python(content), ensure_ascii=False)


def _request_messages(message: ModelRequest) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for part in message.parts:
        if isinstance(part, pai.SystemPromptPart):
            out.append(_lc.SystemMessage(content=part.content))
        elif isinstance(part, pai.UserPromptPart):
            out.append(_lc.HumanMessage(content=_human_content(part.content)))
        elif isinstance(part, pai.CompactionPart):
            if part.content is not None:
                out.append(_lc.HumanMessage(content=part.content))
        elif isinstance(part, pai.RetryFeedbackPart):
            text = part.content if isinstance(part.content, str) else part.model_response()
            out.append(_lc.HumanMessage(content=text))
        elif isinstance(part, pai.ToolReturnPart):
            out.append(_lc.ToolMessage(content=_tool_content(part.content), tool_call_id=part.tool_call_id,
                                       name=part.tool_name,
                                       status="error" if part.outcome in ERROR_OUTCOMES else "success"))
        elif isinstance(part, pai.RetryPromptPart):
            if part.tool_name is not None:
                out.append(_lc.ToolMessage(content=part.model_response(), tool_call_id=part.tool_call_id,
                                           name=part.tool_name, status="error"))
            else:
                out.append(_lc.HumanMessage(content=part.model_response()))
    return out


def _response_message(message: ModelResponse) -> AIMessage:
    blocks: list[dict] = []
    tool_calls: list[dict] = []
    invalid: list[dict] = []
    for part in message.parts:
        if isinstance(part, pai.TextPart):
            blocks.append({"type": "text", "text": part.content})
        elif isinstance(part, pai.ThinkingPart):
            if part.provider_name == "anthropic":
                blocks.append(_anthropic_thinking(part))
                continue
            block: dict = {"type": "reasoning", "reasoning": part.content}
            if part.provider_name == "openai" and part.id:
                # As ChatOpenAI returns a Responses API reasoning item in a standard block: its
                # id, and its encrypted content among the extras.
                block["id"] = part.id
                if part.signature:
                    block["extras"] = {"encrypted_content": part.signature}
            blocks.append(block)
        elif isinstance(part, pai.ToolCallPart):
            try:
                args = part.args_as_dict()
            except ValueError:
                args = None
            if isinstance(args, dict):
                tool_calls.append({"name": part.tool_name, "args": args, "id": part.tool_call_id,
                                   "type": "tool_call"})
            else:
                invalid.append({"name": part.tool_name, "args": part.args_as_json_str(), "id": part.tool_call_id,
                                "error": None, "type": "invalid_tool_call"})
    content: str | list = blocks[0]["text"] if [b["type"] for b in blocks] == ["text"] else blocks
    # ChatAnthropic stamps its answers, and the other chat models read the stamp to tell its
    # blocks for another provider's (langchain-aws and langchain-google-genai convert them).
    metadata = {"model_provider": "anthropic"} if _anthropic_answer(message) else {}
    return _lc.AIMessage(content=content, tool_calls=tool_calls, invalid_tool_calls=invalid,
                         response_metadata=metadata)


def _anthropic_answer(message: ModelResponse) -> bool:
    """An answer ChatAnthropic returned: Anthropic's, and holding no other provider's thinking."""
    thinkers = {part.provider_name for part in message.parts if isinstance(part, pai.ThinkingPart)} - {None}
    return thinkers == {"anthropic"} or (message.provider_name == "anthropic" and not thinkers)


def _anthropic_thinking(part: Any) -> dict:
    """An Anthropic ``ThinkingPart`` as ChatAnthropic returns the block: ``redacted_thinking``
    with its data, else ``thinking`` with its signature (none where the stream was cut before
    the signature came, as ChatAnthropic's streamed chunks leave it)."""
    if part.id == "redacted_thinking" and part.signature:
        return {"type": "redacted_thinking", "data": part.signature}
    block = {"type": "thinking", "thinking": part.content}
    if part.signature:
        block["signature"] = part.signature
    return block


def to_langchain(history: Sequence[ModelMessage]) -> list[BaseMessage]:
    """The history as LangChain messages (the table in the module docstring)."""
    out: list[BaseMessage] = []
    for message in history:
        if isinstance(message, pai.ModelRequest):
            out.extend(_request_messages(message))
        else:
            out.append(_response_message(message))
    return out


# -- LangChain -> pydantic-ai ----------------------------------------------------------------------

def _user_item(block: Any) -> Any:
    if isinstance(block, str):
        return block
    kind = block.get("type")
    if kind == "text":
        return block["text"]
    if kind in ("image", "file"):
        if block.get("source_type") == "url":
            return pai.ImageUrl(url=block["url"]) if kind == "image" else pai.DocumentUrl(url=block["url"])
        return pai.BinaryContent(data=base64.b64decode(block["data"]), media_type=block["mime_type"])
    raise ValueError(f"no pydantic-ai item for a {kind!r} block")


def from_langchain(messages: Sequence[BaseMessage]) -> list[ModelMessage]:
    """LangChain messages back as a pydantic-ai history, one message per LangChain message.

    A ``HumanMessage`` comes back as a ``UserPromptPart`` (a summary or retry feedback sent
    as user text is user text to LangChain), a ``ToolMessage`` as a ``ToolReturnPart`` whose
    outcome is ``failed`` when its status is ``error``.
    """
    out: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, _lc.SystemMessage):
            out.append(pai.ModelRequest([pai.SystemPromptPart(message.content)]))
        elif isinstance(message, _lc.HumanMessage):
            content = message.content
            out.append(pai.ModelRequest([pai.UserPromptPart(content if isinstance(content, str)
                                                            else [_user_item(b) for b in content])]))
        elif isinstance(message, _lc.ToolMessage):
            outcome: Literal["failed", "success"] = "failed" if message.status == "error" else "success"
            out.append(pai.ModelRequest([pai.ToolReturnPart(message.name or "", message.content, message.tool_call_id,
                                                            outcome=outcome)]))
        elif isinstance(message, _lc.AIMessage):
            parts: list = []
            blocks = [message.content] if isinstance(message.content, str) else message.content
            for block in blocks:
                if isinstance(block, str):
                    parts.append(pai.TextPart(block))
                elif block.get("type") == "text":
                    parts.append(pai.TextPart(block["text"]))
                elif block.get("type") == "reasoning":
                    parts.append(pai.ThinkingPart(block["reasoning"]))
                elif block.get("type") == "thinking":
                    parts.append(pai.ThinkingPart(block["thinking"], signature=block.get("signature"),
                                                  provider_name="anthropic"))
                elif block.get("type") == "redacted_thinking":
                    parts.append(pai.ThinkingPart("", id="redacted_thinking", signature=block["data"],
                                                  provider_name="anthropic"))
            parts += [pai.ToolCallPart(c["name"], c["args"], c["id"]) for c in message.tool_calls]
            parts += [pai.ToolCallPart(c["name"], c["args"], c["id"]) for c in message.invalid_tool_calls]
            out.append(pai.ModelResponse(parts))
        else:
            raise ValueError(f"no pydantic-ai message for a {type(message).__name__}")
    return out


# -- trim: trim_messages, mapped back to the parts it kept -------------------------------------------

def _with_origins(history: Sequence[ModelMessage]) -> tuple[list[BaseMessage], list[tuple[int, int | None]]]:
    """:func:`to_langchain`'s messages, each with where it came from: (message index, part
    index), the part index None for a response (one AIMessage)."""
    out: list[BaseMessage] = []
    origins: list[tuple[int, int | None]] = []
    for index, message in enumerate(history):
        if isinstance(message, pai.ModelRequest):
            for part_index, part in enumerate(message.parts):
                converted = _request_messages(pai.ModelRequest([part]))
                out.extend(converted)
                origins.extend([(index, part_index)] * len(converted))
        else:
            out.append(_response_message(message))
            origins.append((index, None))
    return out, origins


def _regrouped(history: Sequence[ModelMessage], kept: list[tuple[int, int | None]]) -> list[ModelMessage]:
    """The messages of ``history`` holding the ``kept`` parts, in order: a message whose
    every part is kept is the input's own, one kept in part a copy with those parts."""
    out: list[ModelMessage] = []
    index = 0
    while index < len(kept):
        message_index = kept[index][0]
        end = index
        while end < len(kept) and kept[end][0] == message_index:
            end += 1
        message = history[message_index]
        parts = list(dict.fromkeys(part for _, part in kept[index:end] if part is not None))
        if isinstance(message, pai.ModelResponse) or len(parts) == len(message.parts):
            out.append(message)
        else:
            out.append(dataclasses.replace(message, parts=[message.parts[p] for p in parts]))
        index = end
    return out


# -- the adapter -----------------------------------------------------------------------------------

class LangChainCoreAdapter:
    """``to_payload`` for ``openai-chat`` through ``convert_to_openai_messages``, and ``trim``
    through ``trim_messages`` (see the module docstring)."""

    #: Judged method by method; chatconform.adapters.application composes them into one lifecycle.
    lifecycle = False

    name = "langchain-core"
    providers = frozenset({"openai-chat"})
    #: Check id -> why langchain-core fails it, each with its minimal case in docs/adapters.md.
    expected_failures = {
        "payload.schema_valid": (
            "convert_to_openai_messages passes an AIMessage's reasoning block through as assistant "
            "content, which Chat Completions rejects ('reasoning' is not one of 'text', 'refusal'); "
            "passing it through came in https://github.com/langchain-ai/langchain/pull/33050"),
        "payload.tool_pairing": (
            "messages are converted one for one, in order: user text stored before the tool results "
            "of one request is sent between the call and its results, and nothing in langchain-core "
            "moves the results up (merge_message_runs neither)"),
        "payload.provider_rules": (
            "the same order as payload.tool_pairing: OpenAI O8/O7, a tool_calls message not followed "
            "by its tool messages"),
        # trim, through trim_messages(strategy="last", token_counter=len, start_on="human",
        # include_system=True); each with its minimal case in docs/adapters.md.
        "trim.keeps_latest": (
            "include_system=True counts the system message against max_tokens and start_on='human' drops "
            "everything before the first human message of the window: [system, user] with max_messages=1 "
            "keeps the system message alone, and a window with no human message keeps nothing of the turn "
            "in progress; no upstream issue found"),
        "trim.user_led": (
            "the same: a window of N messages with no human message in it (an agent's tool rounds after "
            "the user's request) leaves no user turn, only the system message or nothing"),
        "trim.pairs_intact": (
            "start_on='human' starts at a human message even where tool results follow it: a message typed "
            "while tools ran, stored before their results, opens the window and the results lose their call "
            "(orphaned ToolMessages: https://github.com/langchain-ai/langchain/issues/33245)"),
        "trim.matches_reference": "the three deviations above",
    }

    def __init__(self) -> None:
        self.version = version(DISTRIBUTION)

    def warm_up(self) -> None:
        """Import langchain-core's messages before a run's first call."""
        _lc.module()

    def to_payload(self, history: Sequence[ModelMessage], *, provider: str,
                   instructions: str | None = None) -> dict:
        if provider not in self.providers:
            raise ValueError(f"the langchain-core adapter maps openai-chat only, not {provider!r}")
        messages = to_langchain(history)
        if instructions:
            messages.insert(0, _lc.SystemMessage(content=instructions))
        return {"messages": _lc.convert_to_openai_messages(messages)}

    def trim(self, history: Sequence[ModelMessage], *, max_messages: int) -> list[ModelMessage]:
        messages, origins = _with_origins(history)
        kept = _lc.trim_messages(messages, max_tokens=max_messages, token_counter=len, strategy="last",
                                 start_on="human", include_system=True)
        position = {id(message): i for i, message in enumerate(messages)}
        return _regrouped(history, [origins[position[id(message)]] for message in kept])
