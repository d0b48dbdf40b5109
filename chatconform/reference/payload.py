"""The reference ``to_payload``: a pydantic-ai history as one provider's request body.

Policy (``docs/contracts/payload.md``, "The reference policy"), and why:

- **One system message.** Every ``SystemPromptPart`` of the history, in order, then the
  run's ``instructions``, joined with ``"\\n\\n"`` into one system message at index 0 (or
  the provider's system slot: Anthropic ``system``, Gemini ``systemInstruction``,
  Bedrock ``system``). Qwen3.5+ templates reject any system message not at index 0,
  including a second adjacent one (dify PR #39136; a sort-only fix still sends two).
- **Order kept.** Non-system content stays in history order. The one move: a tool
  call's results are placed in the turn right after the call, before any other content
  of that turn (OpenAI O7/O8, Anthropic A9, Gemini G7, Bedrock B4). A result whose call
  is nowhere in the history cannot be sent by any provider and is dropped, as
  pydantic-ai's own repair does.
- **Dangling calls closed.** A call with no result gets one with
  ``INTERRUPTED_TOOL_RETURN_CONTENT``, as pydantic-ai's repair writes it.
- **Results paired by id, in order; ids unique in the payload.** Some OpenAI-compatible
  servers reuse a call id in a later round (llama.cpp sends one constant id, Kimi
  restarts ``<name>:0`` every round), so results are paired to calls with a queue per
  id: each call takes the earliest stored result of its id not yet taken. A call whose
  id an earlier call already used is sent under a fresh id (``<id>_<n>``, at most 64
  characters, colliding with no id of the history), and so is its result: Anthropic
  rejects a request that repeats one (``tool_use ids must be unique``) and DeepSeek a
  repeated ``tool_call_id``, while no provider needs the stored id back.
- **Error results flagged.** A result with outcome ``failed`` or ``retried`` carries the
  dialect's error marker: Anthropic ``is_error: true``, Bedrock ``status: "error"``, the
  OpenAI-style dialects and Gemini a content of ``{"error": ...}``; a model that is not
  told a tool failed treats its error text as data.
- **User voice.** User prompts, a request-side ``CompactionPart`` (a compaction
  summary: sent as user text, never as system, so the payload stays user-led: GLM 1214)
  and ``RetryFeedbackPart`` feedback are user content, sent verbatim.
- **Reasoning, where the provider needs or takes it, and never where it is rejected**
  (``Provider.reasoning_slot``, ``reasoning_families``), with the request's reasoning on:
  Anthropic ``thinking`` and ``redacted_thinking`` blocks byte for byte, first in their
  turn, only those Anthropic signed (blocks "must come back complete and unmodified",
  A20; an unsigned block, from a stream cut before its signature, is rejected, A21);
  ``reasoning_content`` for DeepSeek and Kimi (their thinking modes reject a tool-call turn
  without it, D3 and K2: ``""`` where the turn had none), nothing for DeepSeek R1 and Groq
  (D2, R2); OpenRouter's ``reasoning_details`` unchanged (P2); OpenAI's ``reasoning`` items
  on the Responses API with their encrypted content, right before the item they produced
  (``chatconform.dialects.openai_responses`` says why). Gemini's ``thoughtSignature``
  goes back on the part it came with whatever the setting (G9). Reasoning another provider
  signed is never sent as signed: it is not sent. A turn of reasoning alone is not sent.
- **Not sent.** Other ``ThinkingPart``s (a replay without the provider's signature is
  rejected or ignored, and the providers without a slot have nowhere to put it), provider-
  native parts, and ``ModelRequest.instructions`` (a record of what a past run used; the
  caller passes the current ones). Blank (empty or whitespace-only) text items and
  instructions are skipped (Anthropic A7, Bedrock B7), and turns left empty are dropped
  rather than sent empty.
- **Texts of one turn.** Where a dialect takes one string per message (the OpenAI-style
  assistant and user content), the texts of a turn are joined with ``"\n\n"``, so two
  answers never run into one word; block dialects keep one block per text.
- **Merging.** Consecutive same-role turns are merged where the provider requires
  alternation (Bedrock B3) and where it is harmless (Anthropic combines them anyway,
  A4; Gemini), except that a Gemini content holding ``functionResponse`` parts is never
  merged with other parts (Gemini reads such mixed contents as model-authored,
  pydantic-ai #4210). The OpenAI-style providers take the turns as they are.
- **Tool results, then the user, with no reply between** (a run cancelled after its
  tools ran, a message typed while they ran). Hosted Mistral rejects ``tool -> user``
  (M1; mistral-common accepts it since #218, the hosted API was still seen rejecting it
  in 2026), and Bedrock rejects both a text block beside ``toolResult`` (B5, Claude
  included) and two user turns in a row (B3). Each valid alternative changes the
  conversation: folding the user's text into a tool result changes who said it, moving
  it reorders, dropping the round loses calls. So for those two providers, and only at
  such a boundary, the reference inserts one assistant turn reading
  :data:`NO_REPLY_TEXT`, which states what happened rather than inventing a reply
  (pydantic-ai inserts ``"OK"``, LiteLLM a dummy message). It is never last (M2), and
  every call before it is already answered, so Mistral's call/response count (M4) holds.
  It is the only invented reply (Bedrock's document names, below, are labels);
  :attr:`PayloadMapper.bridge_providers` turns it off.
- **Files of every kind.** An image goes as each dialect's image part. A PDF document,
  WAV or MP3 audio and MP4 video go in the part the provider's profile names for the kind
  (:attr:`~chatconform.providers.profile.Provider.inline_files` for bytes,
  ``linked_files`` for a URL): OpenAI ``file`` and ``input_audio``, vLLM ``video_url``,
  Mistral ``document_url``, Anthropic ``document``, Gemini ``inlineData``/``fileData``,
  Bedrock ``document``/``video``. A URL of a kind the provider cannot link is sent as the
  URL in text, as Bedrock gets an image's URL. Bytes of a kind the provider cannot take
  at all (audio for Anthropic) raise :class:`~chatconform.errors.UnsendableContent`:
  sending them is rejected, dropping them loses them, so the reference declines the
  history, and an implementation that raises there is not faulted for it.
- **Anthropic.** A final assistant text loses its trailing whitespace, which the API
  rejects there (A10); nothing else is trimmed.
- **Mistral.** Tool-call ids are rewritten to 9 ``[a-zA-Z0-9]`` characters by
  :func:`mistral_tool_call_id`, the same for a call and its result (M6). A history that
  ends in a response is a prefill, as on Anthropic: the final assistant message gets
  ``prefix: true``, the only way Mistral serving takes it (M2, and only there: M3).
- **Bedrock.** ``toolConfig`` is present when tool blocks are (B6), and only then: Converse
  rejects an empty ``tools`` list (it needs at least one tool). The history holds no
  tool schemas, so each tool seen gets a permissive object schema (the workaround of
  strands-agents and bedrock-access-gateway #239). An ``ImageUrl`` (Converse takes no
  URLs) is sent as its URL in a text block; downloading is not the reference's job. Each
  document gets a name unique in the body (``document-1``, ...), and a message holding a
  document but no text gets one text block naming it, as Converse requires (B7).
- **Gemini.** Function calls and responses carry their ids. The first ``functionCall``
  of each model content (and only that one: parallel calls after it carry none, as the
  model sends them) carries Google's documented placeholder thought signature, because
  Gemini 3 rejects replayed calls without one (G9), unless it has its own signature.

This module decides the turns; the provider's dialect (its module in ``chatconform.dialects``)
writes them in its shape, the per-dialect points above included. The output is a JSON-native
dict (bytes as base64), built in a fixed number of passes over the history (linear), and the
input is never mutated: nothing in the output aliases it (arguments and tool results are
copied).
"""

from __future__ import annotations

import base64
import json
from collections import deque
from collections.abc import Container, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chatconform.dialects import get_dialect
from chatconform.dialects.base import FILE_KINDS, Call, File, Image, Reasoning, Result, Text, Turn
from chatconform.dialects.gemini_generate import GEMINI_THOUGHT_SIGNATURE_PLACEHOLDER
from chatconform.dialects.openai_chat import DIALECT as OPENAI_CHAT
from chatconform.dialects.openai_chat import mistral_tool_call_id
from chatconform.errors import UnsendableContent
from chatconform.history import ERROR_OUTCOMES
from chatconform.lazy import pai
from chatconform.providers import PROVIDER_IDS, PROVIDERS, get_provider
from chatconform.providers.profile import Provider

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage, ToolCallPart, ToolReturnPart

__all__ = [
    "GEMINI_THOUGHT_SIGNATURE_PLACEHOLDER",
    "NO_REPLY_TEXT",
    "OPENAI_STYLE",
    "PROVIDER_IDS",
    "PayloadMapper",
    "links_sent_as_text",
    "mistral_tool_call_id",
    "to_payload",
]

#: Providers whose body is an OpenAI-style ``{"messages": [...]}`` with system/tool roles.
OPENAI_STYLE = frozenset(p.id for p in PROVIDERS.values() if p.dialect == OPENAI_CHAT.name)
#: What this module provides to the reference implementation: the method, and the
#: providers it maps to.
CONTRACT_METHODS = ("to_payload",)
IMPLEMENTATION_SETTINGS = {"providers": frozenset(PROVIDER_IDS)}

#: The one text the reference invents: the assistant turn that hosted Mistral (M1) and
#: Bedrock (B3 with B5) demand between tool results and a user turn, where the model never
#: replied (a cancelled run, a message typed while tools ran). It says just that.
NO_REPLY_TEXT = "(no reply)"


@dataclass(frozen=True)
class Sending:
    """What a request goes to: the provider, its model (None: not said) and whether reasoning
    is on (None: not said; reasoning is then sent only where it rides on another part)."""

    profile: Provider
    model: str | None = None
    reasoning: bool | None = None

    def replays(self) -> bool:
        """The request takes reasoning back: it is on, and the model does not reject it."""
        family = self.profile.reasoning_family(self.model)
        return bool(self.reasoning) and family is not None and family.replay != "rejected"

    def requires(self) -> bool:
        family = self.profile.reasoning_family(self.model)
        return self.replays() and family is not None and family.replay == "required"

    def own(self, part: Any, response: Any) -> bool:
        """The part was made by this provider (its name, else its response's)."""
        return (part.provider_name or response.provider_name) in self.profile.reasoning_signers


def openrouter_detail(part: Any) -> dict:
    """The ``reasoning_details`` entry a ``ThinkingPart`` was read from, as pydantic-ai reads
    one (``provider_details`` keeps its type, format and index)."""
    details = dict(part.provider_details or {})
    kind = details.get("type", "reasoning.text")
    entry = {key: value for key, value in details.items() if value is not None}
    if part.id is not None:
        entry["id"] = part.id
    if kind == "reasoning.encrypted":
        entry["data"] = part.signature or ""
    elif kind == "reasoning.summary":
        entry["summary"] = part.content
    else:
        entry["text"] = part.content
        if part.signature is not None:
            entry["signature"] = part.signature
    return entry


class _CallIds:
    """Every call id of a history, collected the first time one is looked up: only a
    reused id (whose fresh wire id must not be one of them) and the stored-order fake
    ever ask, so the common history never builds the set."""

    def __init__(self, history: Sequence[ModelMessage]) -> None:
        self.history = history
        self.ids: set[str] | None = None

    def __contains__(self, call_id: object) -> bool:
        if self.ids is None:
            self.ids = {part.tool_call_id for message in self.history if isinstance(message, pai.ModelResponse)
                        for part in message.parts if isinstance(part, pai.ToolCallPart)}
        return call_id in self.ids


def _json_copy(value: Any, what: str) -> Any:
    """A JSON-native deep copy (so the payload never aliases the history); a string is
    immutable and needs none."""
    if isinstance(value, str):
        return value
    try:
        return json.loads(json.dumps(value, ensure_ascii=False))
    except RecursionError:
        raise ValueError(f"{what} is nested too deeply to send") from None


def _arguments(part: ToolCallPart) -> str:
    """A call's arguments as compact JSON (pydantic-ai's own rendering). pydantic's
    serializer stops at 255 levels of nesting: such arguments get a clear ``ValueError``."""
    try:
        return part.args_as_json_str()
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"the arguments of tool call {part.tool_call_id!r} cannot be sent "
                         f"({type(exc).__name__}: {str(exc)[:200]})") from None


class PayloadMapper:
    """The reference mapper, one overridable method per step, so that each known-bug
    fake in :mod:`chatconform.fakes.payload` changes exactly one step."""

    #: Place each call's results right after it (False: where the history stored them).
    results_follow_calls = True
    #: Providers that get a :data:`NO_REPLY_TEXT` assistant turn between tool results and
    #: a user turn (an empty set: invent nothing, and send payloads those providers reject).
    bridge_providers: frozenset[str] = frozenset(p.id for p in PROVIDERS.values() if p.bridges_tool_to_user)

    # -- entry point -------------------------------------------------------------------
    def to_payload(self, history: Sequence[ModelMessage], *, provider: str,
                   instructions: str | None = None, model: str | None = None, reasoning: bool | None = None) -> dict:
        profile = get_provider(provider)  # an unknown id raises UnknownProvider (a ValueError)
        turns = self.turns(self.ordered(history), Sending(profile, model, reasoning))
        system, turns = self.system_slot(turns, instructions, provider)
        turns = [turn for turn in turns if any(not isinstance(item, Reasoning) for item in turn.items)]
        if provider in self.bridge_providers:
            turns = self.bridge(turns)
        if self.merges_turns(provider):
            turns = self.merge(turns, provider)
        return self.render(provider, system, turns)

    # -- step 1: history -> neutral turns -------------------------------------------------
    def ordered(self, history: Sequence[ModelMessage]) -> Sequence[ModelMessage]:
        """The messages in the order they are sent: history order."""
        return history

    def part_role(self, part: Any) -> str | None:
        """Which voice a request part speaks in (None: not sent as content)."""
        if isinstance(part, pai.SystemPromptPart):
            return "system"
        if isinstance(part, (pai.UserPromptPart, pai.CompactionPart, pai.RetryFeedbackPart)):
            return "user"
        return None

    def part_items(self, part: Any) -> list:
        if isinstance(part, pai.SystemPromptPart):
            return [Text(part.content)]
        if isinstance(part, pai.CompactionPart):
            return [Text(part.content)] if part.content else []
        if isinstance(part, pai.RetryFeedbackPart):
            content = part.content
            return [Text(content if isinstance(content, str) else json.dumps(content, default=str))]
        if isinstance(part, pai.UserPromptPart):
            if isinstance(part.content, str):
                return [Text(part.content)]
            return [mapped for item in part.content if (mapped := self.user_item(item)) is not None]
        raise TypeError(f"no items for {type(part).__name__}")

    def user_item(self, item: Any) -> Text | Image | File | None:
        if isinstance(item, pai.CachePoint):
            return None  # a caching hint, not content
        if isinstance(item, str):
            return Text(item)
        if isinstance(item, pai.TextContent):
            return Text(item.content)
        if isinstance(item, pai.ImageUrl):
            return Image(item.media_type, url=item.url)
        if isinstance(item, pai.BinaryContent) and item.is_image:
            return Image(item.media_type, data=bytes(item.data))
        if isinstance(item, (pai.BinaryContent, pai.FileUrl)) and item.media_type in FILE_KINDS:
            kind = FILE_KINDS[item.media_type][0]
            if isinstance(item, pai.FileUrl):
                return File(kind, item.media_type, url=item.url)
            return File(kind, item.media_type, data=bytes(item.data))
        raise ValueError(f"the reference does not map user content of type {type(item).__name__}"
                         f"{f' ({item.media_type})' if isinstance(item, (pai.BinaryContent, pai.FileUrl)) else ''}")

    def file_part(self, item: File, profile: Provider) -> str | None:
        """The part (or block) that carries ``item`` in the provider's body, or None where a
        URL of its kind goes as text. Bytes of a kind the provider does not take cannot be
        sent at all: :class:`~chatconform.errors.UnsendableContent`."""
        if item.url is not None:
            return profile.linked_files.get(item.kind)
        part = profile.inline_files.get(item.kind)
        if part is None:
            raise UnsendableContent(f"{profile.id} takes no {item.kind} as bytes ({item.media_type}, "
                                    f"{len(item.data or b'')} bytes in a user prompt): it cannot be sent, "
                                    "and dropping it would lose it")
        return part

    def inline_data(self, data: bytes | None) -> str:
        """A file's bytes as the base64 text the body carries (an :class:`Image` without a
        URL always holds them): every byte encoded, whatever the bytes look like."""
        assert data is not None
        return base64.b64encode(data).decode("ascii")

    def keeps_text(self, text: str) -> bool:
        """Whether a text item is sent: blank ones never are (Anthropic A7, Bedrock B7)."""
        return bool(text.strip())

    def stored_results(self, history: Sequence[ModelMessage]) -> dict[str, ToolReturnPart | deque[ToolReturnPart]]:
        """Every stored result by call id, in history order: the result itself, or a queue
        of them when an id is reused (most ids have one result, and need no queue)."""
        results: dict[str, ToolReturnPart | deque[ToolReturnPart]] = {}
        for message in history:
            if isinstance(message, pai.ModelRequest):
                for part in message.parts:
                    if isinstance(part, pai.ToolReturnPart):
                        held = results.setdefault(part.tool_call_id, part)
                        if held is part:
                            continue
                        if isinstance(held, deque):
                            held.append(part)
                        else:
                            results[part.tool_call_id] = deque((held, part))
        return results

    def take_result(self, stored: dict[str, ToolReturnPart | deque[ToolReturnPart]],
                    call_id: str) -> ToolReturnPart | None:
        """The result that answers the next call with ``call_id``: the earliest not taken."""
        held = stored.pop(call_id, None)
        if not isinstance(held, deque):
            return held
        taken = held.popleft()  # a queue is never left empty in the table
        if held:
            stored[call_id] = held
        return taken

    #: Send a call whose id an earlier call used under a fresh id (False: the stored id).
    unique_call_ids = True

    def wire_id(self, call_id: str, used: set[str], history_ids: Container[str]) -> str:
        """The id a call is sent under when an earlier call was sent under ``call_id``:
        ``<id>_<n>``, used by no call and no id of the history (a call whose id is not in
        ``used`` keeps it, and never gets here)."""
        if not self.unique_call_ids:
            return call_id
        n = 2
        while True:
            suffix = f"_{n}"
            candidate = call_id[:64 - len(suffix)] + suffix
            if candidate not in used and candidate not in history_ids:
                return candidate
            n += 1

    def reasoning_item(self, part: Any, response: Any, sending: Sending) -> Reasoning | None:
        """What a ``ThinkingPart`` is sent as (None: not sent), by the provider's slot."""
        slot = sending.profile.reasoning_slot
        if not sending.replays() or slot is None or slot == "thought_signatures":
            return None
        own = sending.own(part, response)
        if slot == "thinking_blocks":  # only Anthropic's own, signed blocks (A21)
            return Reasoning(part.content, part.signature, part.id == "redacted_thinking") \
                if own and part.signature else None
        if slot == "reasoning_details":
            return Reasoning(part.content, details=openrouter_detail(part)) if own else None
        if slot == "reasoning_items":  # OpenAI's own items, by id (the dialect keeps those it can send)
            return Reasoning(part.content, part.signature, id=part.id) if own and part.id else None
        # reasoning_content: a string with no signature; another provider's reasoning is not sent
        return Reasoning(part.content) if own or (part.provider_name or response.provider_name) is None else None

    def replayable_reasoning(self, items: list) -> list:
        """A response's items without the OpenAI reasoning items the API refuses: one whose
        encrypted content the history lacks (X6: with store=false nothing is looked up by id),
        or with no text or call right after it (X5: a run cancelled while it reasoned). The
        summaries of one item share its id and go together."""
        signed = {item.id for item in items if isinstance(item, Reasoning) and item.signature}
        kept: list = []
        after: Any = None  # what follows the current item's reasoning item, as sent
        for item in reversed(items):
            if not isinstance(item, Reasoning):
                kept.append(item)
                after = item
                continue
            if isinstance(after, Reasoning) and after.id == item.id:
                kept.append(item)  # another summary of a reasoning item already kept
            elif item.id in signed and after is not None and not isinstance(after, Reasoning):
                kept.append(item)
                after = item
        kept.reverse()
        return kept

    def part_signature(self, part: Any, response: Any, sending: Sending) -> str | None:
        """The Gemini thought signature pydantic-ai keeps on a part (``provider_details``)."""
        if sending.profile.reasoning_slot != "thought_signatures" or not sending.own(part, response):
            return None
        signature = (part.provider_details or {}).get("thought_signature")
        return signature if isinstance(signature, str) and signature else None

    def turns(self, history: Sequence[ModelMessage], sending: Sending | None = None) -> list[Turn]:
        # Pass 1: every stored result by call id (and every call id, if ever asked for).
        results = self.stored_results(history)
        call_ids = _CallIds(history)
        # Pass 2: turns in history order; one turn per voice change within a request.
        turns: list[Turn] = []
        used: set[str] = set()
        sent_as: dict[str, deque[str]] = {}  # stored id -> wire ids of its calls not yet answered
        part: Any  # a request part, then a response part
        for message in history:
            if isinstance(message, pai.ModelRequest):
                current: Turn | None = None
                for part in message.parts:
                    if isinstance(part, pai.ToolReturnPart):
                        if not self.results_follow_calls and part.tool_call_id in call_ids:
                            queue = sent_as.get(part.tool_call_id)
                            wire = queue.popleft() if queue else part.tool_call_id
                            current = Turn("tool", [self._result(part, wire)])
                            turns.append(current)
                        continue  # placed after its call (or an orphan: dropped)
                    role = self.part_role(part)
                    if role is None:
                        continue
                    kept = [i for i in self.part_items(part)
                            if not isinstance(i, Text) or self.keeps_text(i.text)]
                    if current is None or current.role != role:
                        current = Turn(role, [])
                        turns.append(current)
                    current.items.extend(kept)
            elif isinstance(message, pai.ModelResponse):
                items: list = []
                owed: list[Result] = []
                pending: str | None = None  # a Gemini signature a ThinkingPart hands the next part
                for part in message.parts:
                    if isinstance(part, pai.ThinkingPart):
                        if sending is not None:
                            if (item := self.reasoning_item(part, message, sending)) is not None:
                                items.append(item)
                            if sending.profile.reasoning_slot == "thought_signatures" and part.signature \
                                    and sending.own(part, message):
                                pending = part.signature
                        continue
                    signature = pending if sending is None else (self.part_signature(part, message, sending)
                                                                 or pending)
                    pending = None
                    if isinstance(part, pai.TextPart) and self.keeps_text(part.content):
                        items.append(Text(part.content, signature))
                    elif isinstance(part, pai.ToolCallPart):
                        wire = part.tool_call_id
                        sent = len(used)
                        used.add(wire)  # one lookup, not two: the common id is new
                        if len(used) == sent:
                            wire = self.wire_id(wire, used, call_ids)
                            used.add(wire)
                        items.append(Call(wire, part.tool_name, _arguments(part), signature))
                        if not self.results_follow_calls:
                            sent_as.setdefault(part.tool_call_id, deque()).append(wire)
                            if part.tool_call_id not in results:
                                owed.append(self._interrupted(part, wire))
                            continue
                        stored = self.take_result(results, part.tool_call_id)
                        owed.append(self._result(stored, wire) if stored else self._interrupted(part, wire))
                if sending is not None and sending.requires() and sending.profile.reasoning_slot == \
                        "reasoning_content" and owed and not any(isinstance(i, Reasoning) for i in items):
                    items.insert(0, Reasoning(""))  # the field a tool-call turn must carry (D3, K2)
                if sending is not None and sending.profile.reasoning_slot == "reasoning_items":
                    items = self.replayable_reasoning(items)
                turns.append(Turn("assistant", items))
                if owed:
                    turns.append(Turn("tool", owed))
        return turns

    @staticmethod
    def _result(part: ToolReturnPart, wire_id: str) -> Result:
        return Result(wire_id, part.tool_name, _json_copy(part.content, f"the result of tool call {wire_id!r}"),
                      part.outcome in ERROR_OUTCOMES)

    @staticmethod
    def _interrupted(call: ToolCallPart, wire_id: str) -> Result:
        """The result of a call that has none: what pydantic-ai's repair writes."""
        return Result(wire_id, call.tool_name, pai.INTERRUPTED_TOOL_RETURN_CONTENT, error=False)

    # -- step 2: the system slot ---------------------------------------------------------
    def system_slot(self, turns: list[Turn], instructions: str | None, provider: str) -> tuple[str | None, list[Turn]]:
        """All system text, history order then instructions, as one string; the rest."""
        texts = [item.text for turn in turns if turn.role == "system" for item in turn.items]
        if instructions and instructions.strip():
            texts.append(instructions)
        rest = [turn for turn in turns if turn.role != "system"]
        return ("\n\n".join(texts) if texts else None), rest

    # -- step 3: bridging and merging ----------------------------------------------------
    def bridge(self, turns: list[Turn]) -> list[Turn]:
        """A :data:`NO_REPLY_TEXT` assistant turn wherever tool results meet a user turn."""
        out: list[Turn] = []
        for turn in turns:
            if turn.role == "user" and out and out[-1].role == "tool":
                out.append(Turn("assistant", [Text(NO_REPLY_TEXT)]))
            out.append(turn)
        return out

    def merges_turns(self, provider: str) -> bool:
        return get_provider(provider).merges_turns

    def merge(self, turns: list[Turn], provider: str) -> list[Turn]:
        """Merge runs of same-role turns; tool results count as user content."""
        merged: list[Turn] = []
        for turn in turns:  # the turns are this call's own: merged in place, not copied
            if turn.role == "tool":
                turn.role = "user"
            if merged and merged[-1].role == turn.role and not self._kept_apart(merged[-1], turn, provider):
                merged[-1].items.extend(turn.items)
            else:
                merged.append(turn)
        return merged

    @staticmethod
    def _kept_apart(previous: Turn, turn: Turn, provider: str) -> bool:
        if not get_provider(provider).keeps_results_apart:
            return False
        holds_results = [isinstance(item, Result) for item in (previous.items[-1], turn.items[0])]
        return holds_results[0] != holds_results[1]

    # -- step 4: the dialect ------------------------------------------------------------------
    def render(self, provider: str, system: str | None, turns: list[Turn]) -> dict:
        """The body in the provider's dialect (``chatconform.dialects``), which calls this
        mapper's :meth:`inline_data` and :meth:`file_part` for files."""
        profile = get_provider(provider)
        return get_dialect(profile.dialect).render(self, profile, system, turns)


_REFERENCE = PayloadMapper()


def to_payload(history: Sequence[ModelMessage], *, provider: str, instructions: str | None = None,
               model: str | None = None, reasoning: bool | None = None) -> dict:
    """The reference request body for ``provider`` (one of :data:`PROVIDER_IDS`), for ``model``
    with reasoning on or off where they are said."""
    return _REFERENCE.to_payload(history, provider=provider, instructions=instructions, model=model,
                                 reasoning=reasoning)


def links_sent_as_text(history: Sequence[ModelMessage], provider: str) -> list[str]:
    """Each link of the history's prompts that ``provider`` cannot take as a link, which the
    reference sends as its URL in text (a document URL for OpenAI, any image URL for
    Bedrock): a fallback of the reference's choosing, so a mapper that refuses such a link
    instead (raises, saying why) has not crashed."""
    profile = get_provider(provider)
    found = []
    for message in history:
        if not isinstance(message, pai.ModelRequest):
            continue
        for part in message.parts:
            if not isinstance(part, pai.UserPromptPart) or isinstance(part.content, str):
                continue
            for item in part.content:
                if isinstance(item, pai.ImageUrl):
                    if not get_dialect(profile.dialect).takes_image_links:
                        found.append(f"image by URL ({item.url})")
                elif isinstance(item, pai.FileUrl) and item.media_type in FILE_KINDS:
                    kind = FILE_KINDS[item.media_type][0]
                    if kind not in profile.linked_files:
                        found.append(f"{kind} by URL ({item.url})")
    return found
