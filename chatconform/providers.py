"""The provider table: every provider id chatconform knows, declared once.

The reference mapper, ``provider_schemas`` (schemas, sequence rules, the turn view) and the
contracts all read this table. Adding a provider is one entry here, its JSON Schema under
``provider_schemas/schemas/`` and its sequence rules in ``provider_schemas/rules.py``.

A provider is a dialect (the shape of the request body) plus that provider's own rules:
Qwen on vLLM and GLM speak the OpenAI dialect with stricter rules, so they are providers of
their own. ``docs/provider-rules.md`` lists every rule with its evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from chatconform.errors import UnknownProvider

Dialect = Literal["openai", "anthropic", "gemini", "bedrock"]


@dataclass(frozen=True)
class Provider:
    """What chatconform needs to know about one provider's request body."""

    id: str
    #: What the id stands for, for people.
    title: str
    #: Letter of its rule ids (``Q3``); ``<prefix>0`` is its generic request-shape rule.
    rule_prefix: str
    dialect: Dialect
    #: The body key holding the conversation (a bare JSON array is read as its value).
    messages_key: str
    #: Where system text goes: None for a ``system`` message inside the messages, else
    #: the top-level key of the provider's system slot.
    system_slot: str | None
    #: Consecutive same-role turns are merged (required by strict alternation, or harmless
    #: because the provider combines them anyway).
    merges_turns: bool
    #: Tool results followed directly by user text need an assistant turn between them:
    #: the provider rejects ``tool -> user`` and has no other faithful encoding.
    bridges_tool_to_user: bool
    #: Tool-call ids must be exactly 9 ``[a-zA-Z0-9]`` characters.
    short_tool_call_ids: bool
    #: Where the provider documents its request body.
    docs: str

    @property
    def generic_rule(self) -> str:
        return f"{self.rule_prefix}0"


_TABLE = (
    Provider("openai-chat", "OpenAI Chat Completions", "O", "openai", "messages", None, False, False, False,
             "https://platform.openai.com/docs/api-reference/chat/create"),
    Provider("qwen-vllm", "Qwen3.5+ chat template served by vLLM", "Q", "openai", "messages", None, False, False, False,
             "https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html"),
    Provider("glm", "Z.ai / Zhipu GLM chat completions", "Z", "openai", "messages", None, False, False, False,
             "https://docs.z.ai/api-reference/llm/chat-completion"),
    Provider("mistral", "Mistral chat completions", "M", "openai", "messages", None, False, True, True,
             "https://docs.mistral.ai/api/"),
    Provider("anthropic", "Anthropic Messages API", "A", "anthropic", "messages", "system", True, False, False,
             "https://platform.claude.com/docs/en/api/messages"),
    Provider("gemini", "Google Gemini generateContent", "G", "gemini", "contents", "systemInstruction", True, False, False,
             "https://ai.google.dev/api/generate-content"),
    Provider("bedrock-converse", "AWS Bedrock Converse", "B", "bedrock", "messages", "system", True, True, False,
             "https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html"),
)

#: Every provider by id, in the order reports list them.
PROVIDERS: dict[str, Provider] = {p.id: p for p in _TABLE}
PROVIDER_IDS: tuple[str, ...] = tuple(PROVIDERS)


def get_provider(provider_id: object) -> Provider:
    try:
        return PROVIDERS[provider_id]  # type: ignore[index]
    except (KeyError, TypeError):
        raise UnknownProvider(provider_id, PROVIDER_IDS) from None
