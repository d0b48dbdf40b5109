"""Payload fakes that break the guard checks: a mapper that raises, one that edits its input."""

from __future__ import annotations

from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.messages import CompactionPart, ModelRequest, SystemPromptPart

from chatconform.reference.payload import PayloadMapper


class RaisesOnCompactionPart(PayloadMapper):
    """dify-agent's mapper raises UnexpectedModelBehavior for parts it has no mapping
    for (CompactionPart among them), so a compacted history fails the whole run."""

    name = "fake-raises-on-compaction"
    version = "0"
    providers = frozenset({"openai-chat"})
    reproduces = ("dify-agent _map_messages_to_prompt_messages raises UnexpectedModelBehavior on "
                  "CompactionPart (langgenius/dify dify-agent/src/dify_agent/adapters/llm/model.py)")
    violates = ("payload.no_crash",)

    def part_role(self, part):
        if isinstance(part, CompactionPart):
            raise UnexpectedModelBehavior(f"Unsupported message part: {type(part).__name__}")
        return super().part_role(part)


class StripsSystemPromptsInPlace(PayloadMapper):
    """Hoists the system prompts, then deletes them from the caller's requests so they
    are "not stored twice": the history the caller persists has lost its system prompts."""

    name = "fake-strips-system-in-place"
    version = "0"
    providers = frozenset({"openai-chat"})
    reproduces = ("dify-agent replace_run_history strips run instructions with dataclasses.replace "
                  "to keep the source history intact; editing ModelRequest.parts in place corrupts it")
    violates = ("payload.input_untouched",)

    def to_payload(self, history, *, provider, instructions=None):
        body = super().to_payload(history, provider=provider, instructions=instructions)
        for message in history:
            if isinstance(message, ModelRequest):
                message.parts = [p for p in message.parts if not isinstance(p, SystemPromptPart)]
        return body
