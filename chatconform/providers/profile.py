"""The provider profile: every fact chatconform needs about one provider, as typed fields.

A provider is a dialect (the shape of the request body and its answer: a module of
``chatconform.dialects``) plus that provider's own rules and quirks: Qwen on vLLM and GLM
speak the OpenAI Chat dialect with stricter rules, so they are providers of their own. The
reference mapper, the dialects, ``provider_schemas``, the checks, the fakes and the adapters
read these fields instead of comparing provider ids. ``docs/provider-rules.md``
lists every rule id cited here with its evidence.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from chatconform.dialects import get_dialect
from chatconform.dialects.base import FileKind
from chatconform.errors import LEVELS


@dataclass(frozen=True)
class CheckLevel:
    """How much one failure weighs on one provider, and on what evidence."""

    #: ``"error"`` (the provider rejects the body) or ``"warning"`` (it accepts it).
    level: str
    #: Why: what the provider does with such a body, in a few words.
    evidence: str
    #: The rule of docs/provider-rules.md behind a rejection, when there is one.
    rule: str | None = None

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"unknown level {self.level!r}; one of {', '.join(LEVELS)}")


#: The kinds of content a model may be unable to take, as :class:`ModelContent` names them.
ContentKind = Literal["image", "audio", "document", "video"]


@dataclass(frozen=True)
class ModelContent:
    """The content kinds one family of a provider's models takes, on what evidence: the dialect
    allows an image part, and ``gpt-3.5-turbo`` still answers it with an error."""

    #: For people: ``"gpt-3.5-turbo and gpt-4 (text only)"``.
    family: str
    #: A regular expression searched in the model id.
    models: str
    #: The kinds the family takes; a kind of :attr:`Provider.content_refusals` it does not take
    #: is an error, with the refusal's text.
    takes: frozenset[ContentKind]
    #: A public report of the refusal (or of the family taking the kind).
    evidence: str
    #: When the evidence was seen (``YYYY-MM``).
    date: str


#: How a provider's dialect carries reasoning back: Anthropic ``thinking`` blocks, Gemini
#: ``thoughtSignature`` on the part it came with, a ``reasoning_content`` string (DeepSeek,
#: Kimi), OpenRouter's ``reasoning_details`` list, the Responses API's ``reasoning`` items.
ReasoningSlot = Literal["thinking_blocks", "thought_signatures", "reasoning_content", "reasoning_details",
                        "reasoning_items"]


@dataclass(frozen=True)
class ReasoningFamily:
    """What one family of a provider's models does with reasoning sent back in its history."""

    #: For people: ``"deepseek-r1 (early 2025)"``.
    family: str
    #: A regular expression searched in the model id.
    models: str
    #: ``"required"``: reasoning the model returned must come back, unchanged, with reasoning on
    #: (on the turns ``turns`` names); ``"taken"``: it is sent back, and not required;
    #: ``"rejected"``: any reasoning field is answered with an error.
    replay: Literal["required", "taken", "rejected"]
    #: Where a required replay is checked: ``"tool_turns"``: every assistant turn holding tool
    #: calls; ``"last_tool_turn"``: the last assistant turn, when it holds tool calls (Anthropic).
    turns: Literal["tool_turns", "last_tool_turn"]
    #: The rule of docs/provider-rules.md that holds the provider's error text.
    rule: str
    #: A public report of the error (or of the documented requirement).
    evidence: str
    #: When the evidence was seen (``YYYY-MM``).
    date: str
    #: One model id of the family, which the payload contract's cases name.
    example: str = ""


@dataclass(frozen=True, kw_only=True)
class Provider:
    """What chatconform needs to know about one provider's request body."""

    #: The provider id users pass (``--provider``, ``to_payload(provider=...)``).
    id: str
    #: Where the provider comes in the table, so reports list providers in one fixed order.
    order: int
    #: What the id stands for, for people.
    title: str
    #: Where the provider documents its request body.
    docs: str
    #: Letter of its rule ids (``Q3``); ``<prefix>0`` is its generic request-shape rule.
    rule_prefix: str
    #: The shape of the request body and of its answer, shared by every provider that speaks
    #: it: the name of its module in ``chatconform.dialects`` (``openai_chat``).
    dialect: str
    #: The body key holding the conversation (a bare JSON array is read as its value).
    messages_key: str
    #: Where system text goes: None for a ``system`` message inside the messages, else
    #: the top-level key of the provider's system slot.
    system_slot: str | None
    #: Consecutive same-role turns are merged (required by strict alternation, or harmless
    #: because the provider combines them anyway).
    merges_turns: bool = False
    #: Two user (or two assistant) turns in a row are rejected, not combined (Bedrock B3).
    requires_alternation: bool = False
    #: A turn holding tool results is never merged with a turn holding other content: the
    #: provider reads such a mixed turn otherwise (Gemini G11).
    keeps_results_apart: bool = False
    #: Tool results followed directly by user text need an assistant turn between them:
    #: the provider rejects ``tool -> user`` and has no other faithful encoding.
    bridges_tool_to_user: bool = False
    #: Tool-call ids must be exactly 9 ``[a-zA-Z0-9]`` characters (Mistral M6).
    short_tool_call_ids: bool = False
    #: A tool message names the tool it answers (``name`` beside ``tool_call_id``).
    names_tool_results: bool = False
    #: A final assistant message is marked ``prefix: true`` to be taken as a prefill (Mistral M2).
    marks_prefill: bool = False
    #: An ``image_url`` part holds the URL string itself, not ``{"url": ...}``.
    image_url_as_string: bool = False
    #: The files besides images the provider takes as bytes, by kind, each with the part (or
    #: block) of the body that carries them (OpenAI ``file``, Anthropic ``document``). A kind not
    #: listed cannot be sent as bytes in any form: the reference declines a history holding one
    #: (``UnsendableContent``) rather than drop it. Every provider takes images.
    inline_files: Mapping[FileKind, str] = field(default_factory=dict)
    #: The files besides images the provider takes by URL, by kind, each with its part; a URL
    #: of a kind not listed is sent as text, as Bedrock is sent an image's URL.
    linked_files: Mapping[FileKind, str] = field(default_factory=dict)
    #: User text that is only a ``<tool_response>`` wrapper is escaped: the provider's chat
    #: template would read it as a tool result (Qwen Q2).
    escapes_tool_response_text: bool = False
    #: The one error text the provider answers every invalid body with (GLM's 1214), used
    #: for problems no rule of its own describes; None: the package's own wording.
    blanket_error: str | None = None
    #: The level of each payload check whose level depends on the provider, by check id
    #: (``payload.system_first``), with the evidence for it.
    check_levels: Mapping[str, CheckLevel]
    #: The level of a tool-call id sent twice, each time answered in its own round.
    reused_call_id: CheckLevel
    #: Why the provider's own models send a call id again in a later round (the evidence), so
    #: ``serve --generate`` draws such reuses for it, labelled; None: its ids are always fresh.
    reuses_call_ids: str | None = None
    #: How the dialect marks a failed tool result (Anthropic ``is_error``); None where it has no
    #: such flag (OpenAI-style tool messages): there the failure text the history stores is the mark.
    error_flag: str | None = None
    #: The ``code`` the provider puts beside the message of a body it rejects (Z.ai: ``1214``
    #: on every invalid ``messages``), which ``chatconform serve`` answers with; None: no code.
    error_code: str | None = None
    #: Paths of the provider's own API besides its dialect's, as its SDK builds them from the
    #: base URL it documents (GLM's ``/api/paas/v4/chat/completions``): ``chatconform serve``
    #: answers them under ``/<id>`` too.
    api_paths: tuple[str, ...] = ()
    #: Which content kinds each family of the provider's models takes, first match wins; a model
    #: in no family is not judged. Checked when the body (or the run) names its model.
    model_content: tuple[ModelContent, ...] = ()
    #: The provider's own refusal of a content kind a model does not take, by kind (only kinds
    #: with a recorded refusal are judged).
    content_refusals: Mapping[ContentKind, str] = field(default_factory=dict)
    #: The rule id of docs/provider-rules.md that reports such a refusal.
    content_rule: str | None = None
    #: Where the dialect carries reasoning back (None: no slot; a ``ThinkingPart`` is not sent).
    reasoning_slot: ReasoningSlot | None = None
    #: The field of an answer's message in which the provider returns its model's reasoning
    #: (Chat Completions hosts: ``reasoning_content``, Groq's ``reasoning``), so ``chatconform
    #: serve`` answers as it does; None: its answers carry no reasoning text (OpenAI's Chat
    #: Completions), or the dialect has its own place for it.
    answer_reasoning: str | None = None
    #: The ``provider_name`` values (pydantic-ai's) of the parts whose reasoning and signatures
    #: this provider made: only those are sent back as its own (a signature of another provider
    #: is rejected as invalid).
    reasoning_signers: frozenset[str] = frozenset()
    #: What each family of models does with reasoning in the history, first match wins; a model
    #: not named, or in no family, is judged as the last (the newest).
    reasoning_families: tuple[ReasoningFamily, ...] = ()

    def reasoning_family(self, model: str | None) -> ReasoningFamily | None:
        """The family ``model`` belongs to (the last one for a model not named or not known)."""
        if not self.reasoning_families:
            return None
        found = next((f for f in self.reasoning_families if model and re.search(f.models, model)), None)
        return found or self.reasoning_families[-1]

    def __post_init__(self) -> None:
        get_dialect(self.dialect)  # an unknown dialect fails here, when the profile's module loads

    @property
    def generic_rule(self) -> str:
        """The rule id of a shape error no more specific rule covers."""
        return f"{self.rule_prefix}0"

    @property
    def module_name(self) -> str:
        """The name of the provider's profile module and of its rules module."""
        return self.id.replace("-", "_")
