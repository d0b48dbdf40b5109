"""The reference ``sanitize``: what a server keeps of a history a client sent it.

A chat UI that holds the conversation in the browser posts it back with each message, so
``message_history`` is client input. What a client must not be able to do through it,
and what the reference does about each (the rules of pydantic-ai's
``sanitize_messages`` with its default settings, https://github.com/pydantic/pydantic-ai/pull/6169):

- Speak in the system voice. ``SystemPromptPart``, ``InstructionDeltaPart`` and
  ``InstructionBaselinePart`` are dropped and ``ModelRequest.instructions`` is reset to
  None; ``'no_output'`` retry feedback, the one cause rendered as system text, becomes
  the fenced user text other retry feedback is sent as (the text
  ``RetryFeedbackPart.model_response()`` gives a ``'model_retry'``).
- Make the model provider fetch what the server can reach. A file URL whose scheme is
  not ``http`` or ``https`` (compared without case, after the spaces, tabs, newlines
  and C0 control characters URL parsers ignore) is dropped, a URL with no scheme
  included; ``force_download`` is reset to False on the URLs kept (``True`` makes the
  server download the file, ``'allow-local'`` lifts its private-address block,
  https://github.com/pydantic/pydantic-ai/issues/5535); every ``UploadedFile`` is
  dropped (it names an object in the server's provider storage). This holds in user
  prompts, in tool results (nested lists and dicts walked) and in native tool results.
  A URL that is not well formed is judged by its scheme alone, so it cannot make the
  sanitizer raise.
- Pass as the application. ``TextContent.metadata`` in user prompts is reset to None, the
  reserved ``__pydantic_ai__`` key is removed from message metadata (the dict becomes
  None when nothing else is left), a response's ``workspace_ref`` is reset, and the
  standing-prompt stamp is removed from a ``CompactionPart``'s ``provider_details``.
- Have a tool run. ``ToolCallPart`` is removed from every response after the last request
  (native calls, which the provider runs, stay), through all trailing responses, not
  only the last: a promptless run executes the calls of the last response, and a run
  merges adjacent responses that carry no model name. This runs after empty messages are
  dropped, so a trailing request that sanitized to nothing does not hide the tail
  (https://github.com/pydantic/pydantic-ai/pull/6407).

A request or response left with no parts is dropped. Everything else is kept as it was,
in order: message fields, part fields, an empty user prompt, a dangling call in the
middle of the history (``repair`` closes those), legacy ``RetryPromptPart``s.

One pass over the history and its parts, so the time is linear in its size, and the
result sanitized again is unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING, Any

from chatconform.lazy import pai

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage, UserPromptPart

CONTRACT_METHODS = ("sanitize",)

#: The URL schemes a client may send.
ALLOWED_SCHEMES = frozenset({"http", "https"})
#: The metadata key pydantic-ai reserves for its own state.
RESERVED_METADATA_KEY = "__pydantic_ai__"


@cache
def system_voice_parts() -> tuple[type, ...]:
    """The part classes that speak in the system voice (read on first use, as reading them
    imports pydantic-ai: :mod:`chatconform.lazy`)."""
    return pai.SystemPromptPart, pai.InstructionDeltaPart, pai.InstructionBaselinePart

#: What URL parsers drop from both ends (C0 controls and space, WHATWG URL standard) and
#: from anywhere inside (tab, newline, carriage return).
_EDGES = "".join(chr(c) for c in range(0x21))
_INSIDE = str.maketrans("", "", "\t\n\r")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")


def url_scheme(url: str) -> str:
    """The scheme a URL parser reads in ``url``, lower-cased; ``""`` when it has none."""
    match = _SCHEME.match(url.strip(_EDGES).translate(_INSIDE))
    return match.group(1).lower() if match else ""


def is_no_output_feedback(part: Any) -> bool:
    return isinstance(part, pai.RetryFeedbackPart) and part.retry.cause == "no_output"


DROP = object()


class Sanitizer:
    """The rules, one method each (a fake changes one by overriding it)."""

    def allowed_url(self, url: str) -> bool:
        return url_scheme(url) in ALLOWED_SCHEMES

    # -- files --------------------------------------------------------------------------
    def file(self, item: Any) -> Any:
        """A file reference as kept (``DROP`` when it goes), or ``item`` itself when it is none."""
        if isinstance(item, pai.FileUrl):
            if not self.allowed_url(item.url):
                return DROP
            return item if item.force_download is False else replace(item, force_download=False)
        if isinstance(item, pai.UploadedFile):
            return DROP
        return item

    def content(self, value: Any) -> Any:
        """Tool-result content with its file references sanitized, lists and dicts walked;
        ``value`` itself when nothing in it changes."""
        if isinstance(value, Mapping):
            out = {}
            for key, item in value.items():
                kept = self.content(item)
                if kept is not DROP:
                    out[key] = kept
            return value if _same(list(out.values()), list(value.values())) else out
        if isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray)):
            items = [kept for kept in map(self.content, value) if kept is not DROP]
            return value if _same(items, value) else items
        return self.file(value)

    def result(self, part: Any) -> Any:
        content = self.content(part.content)
        if content is part.content:
            return part
        return replace(part, content=None if content is DROP else content)

    def user_prompt(self, part: UserPromptPart) -> UserPromptPart:
        if isinstance(part.content, str):
            return part
        items = []
        for item in part.content:
            kept = self.file(item)
            if kept is DROP:
                continue
            if isinstance(kept, pai.TextContent) and kept.metadata is not None:
                kept = replace(kept, metadata=None)
            items.append(kept)
        return part if _same(items, part.content) else replace(part, content=items)

    # -- parts and messages -------------------------------------------------------------
    def request_part(self, part: Any) -> Any:
        """The part as kept, or None when it goes."""
        if isinstance(part, system_voice_parts()):
            return None
        if is_no_output_feedback(part):
            as_user = replace(part, retry=replace(part.retry, cause="model_retry"))
            return pai.UserPromptPart(as_user.model_response(), timestamp=part.timestamp)
        if isinstance(part, pai.UserPromptPart):
            return self.user_prompt(part)
        if isinstance(part, pai.ToolReturnPart):
            return self.result(part)
        return part

    def response_part(self, part: Any) -> Any:
        if isinstance(part, pai.NativeToolReturnPart):
            return self.result(part)
        if (isinstance(part, pai.CompactionPart) and part.provider_details is not None
                and pai.STANDING_PROMPT_PLANTED_KEY in part.provider_details):
            details = {k: v for k, v in part.provider_details.items() if k != pai.STANDING_PROMPT_PLANTED_KEY}
            return replace(part, provider_details=details)
        return part

    @staticmethod
    def metadata(metadata: dict[str, Any] | None) -> dict[str, Any] | None:
        if metadata is None or RESERVED_METADATA_KEY not in metadata:
            return metadata
        return {k: v for k, v in metadata.items() if k != RESERVED_METADATA_KEY} or None

    def strip_trailing_calls(self, history: list[ModelMessage]) -> None:
        """Remove the tool calls of every response after the last request, in place; a
        response left empty goes."""
        index = len(history) - 1
        while index >= 0 and isinstance(history[index], pai.ModelResponse):
            message = history[index]
            parts = [p for p in message.parts if not isinstance(p, pai.ToolCallPart)]
            if not parts:
                del history[index]
            elif len(parts) != len(message.parts):
                history[index] = replace(message, parts=parts)  # type: ignore[arg-type]  # a response's own parts
            index -= 1

    def messages(self, history: Sequence[ModelMessage]) -> list[ModelMessage]:
        """Every message with its parts sanitized; the ones left empty dropped. A message
        with nothing to change is kept as it is (the same object)."""
        out: list[ModelMessage] = []
        for message in history:
            metadata = self.metadata(message.metadata)
            if isinstance(message, pai.ModelRequest):
                parts = [kept for kept in map(self.request_part, message.parts) if kept is not None]
                if not parts:
                    continue
                if _same(parts, message.parts) and message.instructions is None and metadata is message.metadata:
                    out.append(message)
                else:
                    out.append(replace(message, parts=parts, instructions=None, metadata=metadata))
            else:
                parts = [self.response_part(part) for part in message.parts]
                if not parts:
                    continue
                if _same(parts, message.parts) and message.workspace_ref is None and metadata is message.metadata:
                    out.append(message)
                else:
                    out.append(replace(message, parts=parts, workspace_ref=None, metadata=metadata))
        return out

    def sanitize(self, history: Sequence[ModelMessage]) -> list[ModelMessage]:
        out = self.messages(history)
        self.strip_trailing_calls(out)
        return out


def _same(parts: list, original: Sequence) -> bool:
    return len(parts) == len(original) and all(a is b for a, b in zip(parts, original, strict=False))


_RULES = Sanitizer()


def sanitize(history: Sequence[ModelMessage]) -> list[ModelMessage]:
    """The history with what a client must not control taken out (see the module docstring)."""
    return _RULES.sanitize(history)
