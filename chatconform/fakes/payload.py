"""Payload fakes: the reference mapper with one step changed to a bug that shipped.

Each class overrides exactly one step of :class:`~chatconform.reference.payload.PayloadMapper`,
so everything else (dialects, id rules, merging) is the reference's and the fake fails
only the checks its bug explains.
"""

from __future__ import annotations

import base64
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING

from chatconform.dialects.base import Call, File, Image, Reasoning, Text, Turn
from chatconform.fakes.base import Fake
from chatconform.lazy import pai
from chatconform.providers import get_provider
from chatconform.reference.payload import OPENAI_STYLE, PayloadMapper

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage


class _Fake(Fake, PayloadMapper):
    """``providers`` names where each bug is documented; the suite runs the fake there."""


def _one_per_part(turns: list[Turn]) -> list[Turn]:
    """System turns split into one turn per system part, as mappers that emit one
    system message per ``SystemPromptPart`` do."""
    out: list[Turn] = []
    for turn in turns:
        if turn.role == "system":
            out.extend(Turn("system", [item]) for item in turn.items)
        else:
            out.append(turn)
    return out


class DifyAgentPre39136(_Fake):
    """dify-agent before PR #39136: every system part stays a system message where it
    was; the instructions become another one, spliced in after the leading run."""

    name = "fake-dify-agent-pre-39136"
    # Where it is rejected (Qwen on vLLM: Q3; hosted Mistral: M1), and OpenAI, where most of
    # Dify's users send it and it is a warning; the other Chat Completions hosts judge it as OpenAI does.
    providers = frozenset({"qwen-vllm", "mistral", "openai-chat"})
    reproduces = ("dify-agent before PR #39136 splices instructions in as extra system messages and leaves "
                  "mid-conversation ones in place; Qwen3.5+ on vLLM: 'System message must be at the beginning.' "
                  "(https://github.com/langgenius/dify/pull/39136)")
    # Qwen's "System message must be at the beginning." is a schema rule (Q3); hosted
    # Mistral's "Unexpected role 'system' after role 'tool'" a sequence rule (M1).
    violates = ("payload.system_first", "payload.schema_valid", "payload.provider_rules", "lifecycle.payload_accepted")
    warns = ("payload.matches_reference",)

    def system_slot(self, turns, instructions, provider):
        if provider not in OPENAI_STYLE:
            return super().system_slot(turns, instructions, provider)
        turns = _one_per_part(turns)
        if instructions and instructions.strip():
            first_other = next((i for i, t in enumerate(turns) if t.role != "system"), len(turns))
            turns.insert(first_other, Turn("system", [Text(instructions)]))
        return None, turns


class SortSystemFirst39372(_Fake):
    """The sort-only fix (dify PR #39372): system messages moved to the front, but
    still one per part, plus one for the instructions."""

    name = "fake-dify-sort-system-first-39372"
    providers = frozenset({"qwen-vllm", "openai-chat"})  # rejected by Qwen (Q3), a warning on OpenAI
    reproduces = ("dify PR #39372 sorts system messages first but keeps them separate; Qwen3.5+ rejects a "
                  "second adjacent system message (https://github.com/langgenius/dify/pull/39372, "
                  "https://github.com/vllm-project/vllm/issues/41114)")
    violates = ("payload.system_first", "payload.schema_valid")  # Q3: schema
    warns = ("payload.matches_reference",)

    def system_slot(self, turns, instructions, provider):
        if provider not in OPENAI_STYLE:
            return super().system_slot(turns, instructions, provider)
        turns = _one_per_part(turns)
        systems = [t for t in turns if t.role == "system"]
        if instructions and instructions.strip():
            systems.append(Turn("system", [Text(instructions)]))
        return None, systems + [t for t in turns if t.role != "system"]


class MergeDropsListSystemContent(_Fake):
    """A merge that joins only ``str`` system content. The mapper renders a request's
    run of several system parts as one system message whose content is a list of text
    parts (the OpenAI SDK / dify ``PromptMessageContent`` shape); the join skips it."""

    name = "fake-merge-drops-list-system-content"
    providers = frozenset({"openai-chat", "anthropic"})
    reproduces = ("merging system messages must handle 'both str and list-typed content' (dify PR #39136); "
                  "a str-only join silently drops list-typed system content "
                  "(https://github.com/langgenius/dify/pull/39136)")
    violates = ("payload.nothing_lost",)
    warns = ("payload.matches_reference",)

    def system_slot(self, turns, instructions, provider):
        contents: list[str | list[dict]] = []
        for turn in turns:
            if turn.role == "system":
                texts = [item.text for item in turn.items]
                contents.append(texts[0] if len(texts) == 1 else [{"type": "text", "text": t} for t in texts])
        if instructions and instructions.strip():
            contents.append(instructions)
        kept = [content for content in contents if isinstance(content, str)]  # the bug
        rest = [turn for turn in turns if turn.role != "system"]
        return ("\n\n".join(kept) if kept else None), rest


class ToolResultAfterUser(_Fake):
    """Request parts are emitted in stored order, so a user message typed while tools
    ran (stored ahead of their results) ends up between the calls and the results."""

    name = "fake-tool-result-after-user"
    providers = frozenset({"openai-chat", "anthropic"})
    reproduces = ("tool results not moved ahead of other content: Anthropic 'tool_use ids were found without "
                  "tool_result blocks immediately after', OpenAI \"messages with role 'tool' must be a response "
                  "to a preceding message with 'tool_calls'\" (https://github.com/QwenLM/qwen-code/pull/8165)")
    violates = ("payload.tool_pairing", "payload.provider_rules")
    warns = ("payload.matches_reference",)

    results_follow_calls = False


class BedrockUnmergedUserTurns(_Fake):
    """Bedrock turns sent one per history request: consecutive user turns (a summary
    after the task, a user message after tool results, a dropped empty response)."""

    name = "fake-bedrock-unmerged-user-turns"
    providers = frozenset({"bedrock-converse"})
    reproduces = ("Bedrock Converse: 'A conversation must alternate between user and assistant roles.' "
                  "(https://github.com/langchain-ai/langchain-aws/issues/130)")
    violates = ("payload.provider_rules",)
    warns = ("payload.matches_reference",)

    def merges_turns(self, provider):
        return not get_provider(provider).requires_alternation and super().merges_turns(provider)


class SummaryAsSystem(_Fake):
    """The compaction summary is sent in the system voice. When the compacted tail holds
    no user message the payload has no user turn at all: GLM answers 1214."""

    name = "fake-summary-as-system"
    providers = frozenset({"glm", "openai-chat"})
    reproduces = ("GLM 1214 'The messages parameter is illegal' after compaction: summary sent as a system "
                  "message, leaving a user-less payload ("
                  "https://github.com/pydantic/pydantic-ai-harness/issues/679, https://github.com/HKUDS/nanobot/pull/3086)")
    violates = ("payload.user_led",)
    warns = ("payload.matches_reference",)

    def part_role(self, part):
        return "system" if isinstance(part, pai.CompactionPart) else super().part_role(part)


class SummaryHoisted(_Fake):
    """Requests holding a compaction summary are moved to the front (after leading
    system-only requests), ahead of the first user prompt that the history keeps
    before it: the layout of pydantic-ai-harness 0.36, which 0.62 reversed."""

    name = "fake-summary-hoisted"
    providers = frozenset({"openai-chat", "gemini"})
    reproduces = ("reorders history: summary ahead of the kept first prompt, as pydantic-ai-harness 0.36 laid it "
                  "out (0.62 stores prompt, then summary) (https://github.com/pydantic/pydantic-ai-harness)")
    violates = ("payload.order_preserved",)
    warns = ("payload.matches_reference",)

    def ordered(self, history: Sequence[ModelMessage]) -> Sequence[ModelMessage]:
        def is_summary(m):
            return isinstance(m, pai.ModelRequest) and any(isinstance(p, pai.CompactionPart) for p in m.parts)

        def system_only(m):
            return isinstance(m, pai.ModelRequest) and m.parts and all(self.part_role(p) == "system" for p in m.parts)

        lead = 0
        while lead < len(history) and system_only(history[lead]):
            lead += 1
        summaries = [m for m in history[lead:] if is_summary(m)]
        return [*history[:lead], *summaries, *(m for m in history[lead:] if not is_summary(m))]


class RaisesOnCompactionPart(Fake, PayloadMapper):
    """dify-agent's mapper raises UnexpectedModelBehavior for parts it has no mapping
    for (CompactionPart among them), so a compacted history fails the whole run."""

    name = "fake-raises-on-compaction"
    providers = frozenset({"openai-chat"})
    reproduces = ("dify-agent _map_messages_to_prompt_messages raises UnexpectedModelBehavior on "
                  "CompactionPart (https://github.com/langgenius/dify/blob/main/dify-agent/src/dify_agent/"
                  "adapters/llm/model.py)")
    violates = ("payload.no_crash",)

    def part_role(self, part):
        if isinstance(part, pai.CompactionPart):
            from pydantic_ai.exceptions import UnexpectedModelBehavior

            raise UnexpectedModelBehavior(f"Unsupported message part: {type(part).__name__}")
        return super().part_role(part)


class StripsSystemPromptsInPlace(Fake, PayloadMapper):
    """Hoists the system prompts, then deletes them from the caller's requests so they
    are "not stored twice": the history the caller persists has lost its system prompts."""

    name = "fake-strips-system-in-place"
    providers = frozenset({"openai-chat"})
    reproduces = ("dify-agent replace_run_history strips run data with dataclasses.replace so the source "
                  "history stays intact; editing ModelRequest.parts in place corrupts what the caller stores "
                  "(https://github.com/langgenius/dify/blob/main/dify-agent/src/dify_agent/runtime/history.py)")
    violates = ("payload.input_untouched",)

    def to_payload(self, history, *, provider, instructions=None, model=None, reasoning=None):
        body = super().to_payload(history, provider=provider, instructions=instructions, model=model,
                                  reasoning=reasoning)
        for message in history:
            if isinstance(message, pai.ModelRequest):
                message.parts = [p for p in message.parts if not isinstance(p, pai.SystemPromptPart)]
        return body


class DropsImagesFromHistory(_Fake):
    """Replays earlier user turns as text only: images (and any other file) in the
    history are left out, so the model answers about a picture it never saw."""

    name = "fake-drops-images-from-history"
    providers = frozenset({"openai-chat", "anthropic", "gemini"})
    reproduces = ("history builders that keep only the text of earlier user turns drop their images "
                  "(https://github.com/d-kuro/kirocc/pull/134)")
    violates = ("payload.nothing_lost",)
    warns = ("payload.matches_reference",)

    def user_item(self, item):
        mapped = super().user_item(item)
        return mapped if isinstance(mapped, Text) else None


class KeepsOnlyImageFiles(_Fake):
    """Replays earlier user turns with their images but not their other files: a PDF, a
    recording or a clip attached to an earlier prompt is gone from every later request, so
    the next question about it is about nothing."""

    name = "fake-keeps-only-image-files"
    providers = frozenset({"openai-chat", "anthropic", "gemini", "bedrock-converse"})
    reproduces = ("inline PDF attachments 'don't persist past the first prompt': the app dropped them from "
                  "the history it sent (https://github.com/Ichigo3766/Open-Relay/issues/121)")
    violates = ("payload.nothing_lost",)
    warns = ("payload.matches_reference",)

    def user_item(self, item):
        mapped = super().user_item(item)
        return None if isinstance(mapped, File) else mapped


class RaisesOnDocuments(_Fake):
    """Raises NotImplementedError on a PDF document for a provider that takes PDFs: the
    whole request fails for one attachment the model could have read."""

    name = "fake-raises-on-documents"
    providers = frozenset({"anthropic"})
    reproduces = ("ADK's Claude mapper raised NotImplementedError on PDF parts although Claude takes PDFs "
                  "(https://github.com/google/adk-python/issues/3614)")
    violates = ("payload.no_crash",)

    def user_item(self, item):
        mapped = super().user_item(item)
        if isinstance(mapped, File) and mapped.kind == "document":
            raise NotImplementedError(f"unsupported content type: {mapped.media_type}")
        return mapped


class _EditsItsInput(_Fake):
    """Maps the history after "fixing" it in place: :meth:`edit` runs on every part of the
    caller's messages, so what the caller stores afterwards is not what it had."""

    violates = ("payload.input_untouched",)

    def edit(self, part) -> None:
        raise NotImplementedError

    def to_payload(self, history, *, provider, instructions=None, model=None, reasoning=None):
        for message in history:
            for part in message.parts:
                self.edit(part)
        return super().to_payload(history, provider=provider, instructions=instructions, model=model,
                                  reasoning=reasoning)


class CoercesArgumentsInPlace(_EditsItsInput):
    """Repairs string-typed tool arguments by parsing them and writing the dict back into
    the caller's ``ToolCallPart``."""

    name = "fake-coerces-arguments-in-place"
    providers = frozenset({"openai-chat"})
    reproduces = ("a sanitizer run before sending history rewrote malformed tool-call inputs in the objects "
                  "the chat store owns (https://github.com/ballerina-platform/ballerina-vscode/pull/973)")

    def edit(self, part):
        if isinstance(part, pai.ToolCallPart) and isinstance(part.args, str):
            part.args = part.args_as_dict()


class NormalizesTextInPlace(_EditsItsInput):
    """Collapses runs of whitespace in user text, in the caller's parts, so the stored
    history no longer holds what the user typed."""

    name = "fake-normalizes-text-in-place"
    providers = frozenset({"openai-chat"})
    reproduces = ("history processing that rewrites message content in place changes the stored history "
                  "under every later reader (https://github.com/ahmadrosid/nakama/issues/589)")

    def edit(self, part):
        if isinstance(part, pai.UserPromptPart) and isinstance(part.content, str):
            part.content = " ".join(part.content.split())


class ResultsByIdDict(_Fake):
    """Tool results looked up in a dict keyed by call id, built over the whole history:
    when a server reuses an id in a later round, the later result overwrites the earlier,
    so both calls are answered with the last round's output and the first is lost."""

    name = "fake-results-by-id-dict"
    providers = frozenset({"openai-chat", "anthropic", "gemini"})
    reproduces = ("pairing tool results by id across the whole conversation breaks when a server reuses "
                  "an id (llama.cpp, Kimi): results lost or answered from another round "
                  "(https://github.com/NousResearch/hermes-agent/pull/88324, "
                  "https://github.com/can1357/oh-my-pi/issues/2055)")
    violates = ("payload.tool_pairing",)
    warns = ("payload.matches_reference",)

    def take_result(self, stored, call_id):
        held = stored.get(call_id)  # a result, or the queue of them when the id was reused
        return held[-1] if isinstance(held, deque) else held  # {id: result}: the last one stored wins


class ReusedIdsPassedThrough(_Fake):
    """Sends every call under its stored id: a server that reused ``call_1`` in a later
    round gives a request repeating that id, which Anthropic rejects."""

    name = "fake-reused-ids-passed-through"
    providers = frozenset({"anthropic", "openai-chat"})
    reproduces = ("Anthropic answers a repeated id with 400 'tool_use ids must be unique'; a translator "
                  "passing a reused OpenAI call id through breaks multi-turn tool use "
                  "(https://github.com/NVIDIA-NeMo/Switchyard/issues/502)")
    violates = ("payload.tool_pairing", "payload.provider_rules")  # A15 on anthropic

    unique_call_ids = False


class DropsToolErrorFlag(_Fake):
    """Every tool result is sent as a success: the failed or retried outcome stored in the
    history is not mapped to the dialect's error marker."""

    name = "fake-drops-tool-error-flag"
    providers = frozenset({"anthropic", "bedrock-converse", "gemini", "openai-chat"})
    reproduces = ("tool failures delivered to the model as successes (isError hardcoded to false), so the "
                  "model reads the error text as a result (https://github.com/code-yeongyu/senpi/issues/1548)")
    violates = ("payload.error_flag_kept",)

    @staticmethod
    def _result(part, wire_id):
        return PayloadMapper._result(part, wire_id)._replace(error=False)


class SendsBlankText(_Fake):
    """Only empty strings are skipped; a whitespace-only text (a streamed answer that was
    just a newline, a blank item of a prompt) is sent as a text block."""

    name = "fake-sends-blank-text"
    providers = frozenset({"anthropic", "bedrock-converse"})
    reproduces = ("Anthropic 'text content blocks must contain non-whitespace text' "
                  "(https://github.com/anthropics/claude-code/issues/23369); Bedrock 'The text field in the "
                  "ContentBlock object ... is blank' (https://github.com/OpenHands/OpenHands/issues/5339)")
    # The blank text is extra content in a turn the reference also sends: matches_reference
    # accepts extra text, so only the schema catches it.
    violates = ("payload.schema_valid",)

    def keeps_text(self, text):
        return text != ""


class SendsBlankPrompts(_Fake):
    """A prompt stored as a plain string is sent as it is; blank text is filtered only among
    a list prompt's items and the model's texts, so an empty input box (``""``, whitespace)
    becomes a user message with no non-blank text."""

    name = "fake-sends-blank-prompts"
    providers = frozenset({"anthropic"})
    reproduces = ("Anthropic rejects a user message whose only text is empty or whitespace: 'all messages must "
                  "have non-empty content except for the optional final assistant message' "
                  "(https://github.com/anthropics/claude-code/issues/3196) and 'text content blocks must contain "
                  "non-whitespace text' (https://github.com/anthropics/claude-code/issues/23369)")
    violates = ("payload.schema_valid",)
    _as_is = False  # the next text item is a plain-string prompt's: sent unfiltered

    def part_items(self, part):
        items = super().part_items(part)
        self._as_is = isinstance(part, pai.UserPromptPart) and isinstance(part.content, str)
        return items

    def keeps_text(self, text):
        as_is, self._as_is = self._as_is, False
        return as_is or super().keeps_text(text)


class GeminiSendsEmptyText(_Fake):
    """Blank text is filtered only where it is whitespace: an empty string (an empty prompt
    in an input box, a streamed answer that produced no text) goes out as ``{"text": ""}``."""

    name = "fake-gemini-sends-empty-text"
    providers = frozenset({"gemini"})
    #: gemini-2.0 and older reject the empty part (G12); gemini-2.5 and 3 were recorded taking it.
    models = {"gemini": "gemini-2.0-flash"}
    reproduces = ("Gemini 2.0 and older reject a part with empty text: 'Unable to submit request because it has "
                  "an empty text parameter' (https://github.com/google-gemini/deprecated-generative-ai-python/"
                  "issues/697); an OpenAI-to-Gemini proxy that padded the history with empty messages hit it "
                  "(https://github.com/zuisong/gemini-openai-proxy/issues/83)")
    violates = ("payload.schema_valid",)

    def keeps_text(self, text):
        return text == "" or super().keeps_text(text)


class WrapsLaterSystemPrompts(_Fake):
    """System prompts after the first request are sent as ``<system>…</system>`` user
    text, as pydantic-ai does for models without inline system messages."""

    name = "fake-wraps-later-system-prompts"
    providers = frozenset({"anthropic", "openai-chat"})
    reproduces = ("pydantic-ai's prepare_messages wraps every system prompt but the standing one as "
                  "'<system>...</system>' user text on models without inline system messages: the rules "
                  "arrive in the user's voice (https://github.com/pydantic/pydantic-ai, "
                  "_wrap_non_leading_system_prompts)")
    violates = ()
    warns = ("payload.system_voice", "payload.matches_reference")

    def system_slot(self, turns, instructions, provider):
        first_other = next((i for i, t in enumerate(turns) if t.role != "system"), len(turns))
        wrapped = [Turn("user", [Text(f"<system>{item.text}</system>") for item in turn.items])
                   if turn.role == "system" and i > first_other else turn for i, turn in enumerate(turns)]
        return super().system_slot(wrapped, instructions, provider)


class GeminiResultsBesideText(_Fake):
    """Gemini tool results and the user text after them sent in one content, the shape
    pydantic-ai splits apart (its workaround for a Gemini bug)."""

    name = "fake-gemini-results-beside-text"
    providers = frozenset({"gemini"})
    reproduces = ("a Gemini content mixing functionResponse parts and text: Vertex 400 'Requests ending with a "
                  "model turn are not supported.' (https://github.com/Prism-Shadow/agenthub/pull/189), an "
                  "empty response from gemini-3.5-flash (https://github.com/pydantic/pydantic-ai/issues/4210)")
    violates = ("payload.provider_rules",)

    @staticmethod
    def _kept_apart(previous, turn, provider):
        return False


class GluesTexts(_Fake):
    """The texts of a turn concatenated with nothing between them: two answers of one
    response, or a prompt and a summary merged into one turn, arrive as one run-on string
    (``"It is sunny.The build failed."``)."""

    name = "fake-glues-texts"
    providers = frozenset({"openai-chat", "anthropic", "gemini", "bedrock-converse"})
    reproduces = ("content strings of several blocks or calls concatenated with no separator glue the last word "
                  "of one to the first of the next (https://github.com/dust-tt/dust/pull/22255)")
    violates = ("payload.text_boundaries",)
    warns = ("payload.matches_reference",)

    def turns(self, history, sending=None):
        glued = []
        for turn in super().turns(history, sending):
            items: list = []
            for item in turn.items:
                if isinstance(item, Text) and items and isinstance(items[-1], Text):
                    items[-1] = Text(items[-1].text + item.text)
                else:
                    items.append(item)
            glued.append(Turn(turn.role, items))
        return glued


class TakesBase64LookingBytesAsEncoded(_Fake):
    """Image bytes that decode as base64 are taken for base64 already and sent as they are:
    ``b"RIFFWEBPVP8L"`` goes out as the base64 text ``RIFFWEBPVP8L``, which the provider
    decodes to nine other bytes."""

    name = "fake-takes-base64-looking-bytes-as-encoded"
    providers = frozenset({"openai-chat", "anthropic", "gemini", "bedrock-converse"})
    reproduces = ("deciding whether raw bytes are already base64 by trying to decode them sends bytes that happen "
                  "to decode as they are, so the provider reads other bytes "
                  "(https://github.com/run-llama/llama_index/issues/17924)")
    violates = ("payload.nothing_lost",)

    def inline_data(self, data):
        try:
            base64.b64decode(data, validate=True)
        except ValueError:
            return super().inline_data(data)
        return data.decode("ascii")  # "already encoded"


class SendsEqualImagesOnce(_Fake):
    """An image whose bytes (or URL) an earlier prompt already sent is left out of the later
    prompt: the user attached it twice, the model sees it once, and the later question is
    about nothing."""

    name = "fake-sends-equal-images-once"
    providers = frozenset({"openai-chat", "anthropic", "gemini", "bedrock-converse"})
    reproduces = ("model messages built with repeated attachments collapsed to their first occurrence "
                  "(https://github.com/miurla/morphic/pull/947): the later copy is not sent")
    violates = ("payload.nothing_lost",)

    def to_payload(self, history, *, provider, instructions=None, model=None, reasoning=None):
        self._sent: set = set()
        return super().to_payload(history, provider=provider, instructions=instructions, model=model,
                                  reasoning=reasoning)

    def user_item(self, item):
        mapped = super().user_item(item)
        if isinstance(mapped, Image):
            if (mapped.url, mapped.data) in self._sent:
                return None
            self._sent.add((mapped.url, mapped.data))
        return mapped


class SendsOnlyTextResults(_Fake):
    """A tool result is sent only when the tool returned text: a structured result (a dict,
    a list, a number) goes as an empty tool message, which still answers its call."""

    name = "fake-sends-only-text-results"
    providers = frozenset({"openai-chat"})
    reproduces = ("a projection that keeps only a result's text content sends a structured result as an empty "
                  "tool message, so 'the next model round receives an empty tool message and loses the result "
                  "semantics' (https://github.com/1024XEngineer/neo-code/issues/233; a list result passed as "
                  "zero content blocks: https://github.com/langchain-ai/langchain/issues/30578)")
    violates = ("payload.nothing_lost",)
    warns = ("payload.matches_reference",)

    @staticmethod
    def _result(part, wire_id):
        result = PayloadMapper._result(part, wire_id)
        return result if isinstance(part.content, str) else result._replace(content="")


class ReasoningNeverSent(_Fake):
    """Every ``ThinkingPart`` left out, whatever the provider needs (the reference's old policy)."""

    name = "fake-reasoning-never-sent"
    providers = frozenset({"anthropic", "deepseek", "kimi"})
    reproduces = ("thinking blocks dropped from the history: Anthropic 'Expected `thinking` or `redacted_thinking`, "
                  "but found `tool_use`' (https://github.com/BerriAI/litellm/issues/15601); reasoning_content "
                  "dropped for DeepSeek's thinking mode (https://github.com/langchain-ai/langchain/issues/34166) "
                  "and Kimi's (https://github.com/bytedance/deer-flow/issues/3043)")
    violates = ("payload.reasoning_kept",)

    def reasoning_item(self, part, response, sending):
        return None

    def turns(self, history, sending=None):
        return super().turns(history, None)  # no request context: no reasoning, not even "" for a tool turn


class ReasoningContentForEveryone(_Fake):
    """Reasoning sent back as ``reasoning_content`` to every OpenAI-style provider."""

    name = "fake-reasoning-content-for-everyone"
    providers = frozenset({"groq", "deepseek"})
    reproduces = ("reasoning_content replayed to every OpenAI-compatible provider: Groq \"property "
                  "'reasoning_content' is unsupported\" (https://github.com/vercel/ai/issues/8056), DeepSeek R1 "
                  "rejects it where V4 needs it (https://github.com/vercel/ai/pull/14739)")
    violates = ("payload.no_rejected_reasoning",)

    def reasoning_item(self, part, response, sending):
        return Reasoning(part.content) if sending.profile.dialect == "openai_chat" else None


class UnsignedThinkingSent(_Fake):
    """Anthropic thinking sent back as a signed block whoever made it, and with an empty
    signature where a cut stream left none."""

    name = "fake-unsigned-thinking-sent"
    providers = frozenset({"anthropic"})
    reproduces = ("a stream stopped mid-reasoning left a thinking block without its signature, sent back as one: "
                  "'Invalid `signature` in `thinking` block' (https://github.com/pydantic/pydantic-ai/issues/5532)")
    violates = ("payload.no_foreign_signature", "payload.provider_rules")

    def reasoning_item(self, part, response, sending):
        if sending.profile.reasoning_slot != "thinking_blocks" or not sending.reasoning:
            return None
        return Reasoning(part.content, part.signature or "")


class GeminiSignaturesDropped(_Fake):
    """Gemini function calls sent back without their thought signature, and without the placeholder."""

    name = "fake-gemini-signatures-dropped"
    providers = frozenset({"gemini"})
    models = {"gemini": "gemini-3-pro-preview"}  # the model family the report is about
    reproduces = ("'Function call is missing a thought_signature in functionCall parts' when the history is "
                  "rebuilt without the signatures (https://github.com/langchain-ai/langchain-google/issues/1364)")
    violates = ("payload.reasoning_kept",)

    def render(self, provider, system, turns):
        body = super().render(provider, system, turns)
        for content in body.get("contents", ()):
            for part in content["parts"]:
                part.pop("thoughtSignature", None)
        return body


class LeavesInterruptedCallsOpen(_Fake):
    """A call whose run stopped before its tool answered is sent without any output: the
    Responses API refuses the whole request, "No tool output found for function call ..."."""

    name = "fake-leaves-interrupted-calls-open"
    providers = frozenset({"openai-responses"})
    reproduces = ("a function_call left without its function_call_output after a cancelled or compacted run; the "
                  "Responses API answers 'No tool output found for function call call_...' "
                  "(https://github.com/massgen/MassGen/issues/590, https://github.com/bytedance/trae-agent/issues/358)")
    violates = ("payload.provider_rules",)
    warns = ("payload.tool_pairing", "payload.matches_reference")

    def turns(self, history, sending=None):
        kept = []
        for turn in super().turns(history, sending):
            if turn.role == "tool":
                turn = Turn("tool", [item for item in turn.items
                                     if item.content != pai.INTERRUPTED_TOOL_RETURN_CONTENT])
            kept.append(turn)
        return kept


class SendsReasoningWithoutItsItem(_Fake):
    """Every OpenAI reasoning item sent back as it stands in the history: one whose run was cut
    before its encrypted content came, or with nothing after it in its response."""

    name = "fake-sends-reasoning-without-its-item"
    providers = frozenset({"openai-responses"})
    reproduces = ("reasoning items replayed whatever followed them: \"Item 'rs_...' of type 'reasoning' was provided "
                  "without its required following item.\" (https://github.com/vercel/ai/issues/7099, "
                  "https://github.com/pydantic/pydantic-ai/issues/2861); one a cut run left without its encrypted "
                  "content is looked up by id and not found under store=false")
    violates = ("payload.provider_rules",)

    def replayable_reasoning(self, items):
        return items


class ReasoningByReference(_Fake):
    """OpenAI reasoning sent back as an ``item_reference`` to its id, as if the API had stored
    it, while the body says ``store: false``."""

    name = "fake-reasoning-by-reference"
    providers = frozenset({"openai-responses"})
    reproduces = ("item ids replayed with store=false: 'Item with id 'rs_...' not found. Items are not persisted "
                  "when `store` is set to false.' (https://github.com/anomalyco/opencode/issues/7724, "
                  "https://github.com/anomalyco/opencode/issues/8987)")
    violates = ("payload.provider_rules",)
    warns = ("payload.reasoning_kept",)

    def render(self, provider, system, turns):
        body = super().render(provider, system, turns)
        body["input"] = [{"type": "item_reference", "id": item["id"]} if item.get("type") == "reasoning" else item
                         for item in body.get("input", ())]
        return body


class DropsReasoningKeepsCall(_Fake):
    """A compaction that drops the OpenAI reasoning items of the turns that called tools and
    keeps their calls: the API answers (nothing is sent by id), the model loses its reasoning."""

    name = "fake-drops-reasoning-keeps-call"
    providers = frozenset({"openai-responses"})
    reproduces = ("compaction dropped a reasoning item but kept the item it produced "
                  "(https://github.com/openai/codex/issues/20774); sent back by id, the API answers \"Item ... was "
                  "provided without its required 'reasoning' item\" (rule X7, judged by serve)")
    warns = ("payload.reasoning_kept",)

    def replayable_reasoning(self, items):
        kept = super().replayable_reasoning(items)
        if any(isinstance(item, Call) for item in kept):
            return [item for item in kept if not isinstance(item, Reasoning)]
        return kept
