"""Reasoning as providers return it, laid over a drawn history.

:func:`with_reasoning` gives each response of a history a producer, as a conversation that
switched provider has several: Anthropic (signed ``thinking``, ``redacted_thinking``), Gemini
(a ``thoughtSignature`` on the first call or text, or on a ``ThinkingPart`` that hands it to
the next part), DeepSeek or Kimi (``reasoning_content``, unsigned), OpenRouter (a
``reasoning_details`` entry), OpenAI (a Responses API reasoning item: its id, its encrypted
content as the signature), or none (a history stored before providers were named).
Its thinking may be cut mid-stream (no signature), and a response of tool calls may gain
thinking before them. Valid by construction: pydantic-ai builds every part the same way.
Shrinks towards the history as drawn (no producer, nothing added).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import strategies as st

from chatconform.lazy import pai
from chatconform.providers import PROVIDERS

__all__ = ["PRODUCERS", "family_models", "own_producer", "with_reasoning"]

#: The ``provider_name`` pydantic-ai gives each producer's parts (None: a history that names none).
PRODUCERS = (None, "anthropic", "google-gla", "deepseek", "moonshotai", "openrouter", "openai")
#: Signatures are opaque base64 to a client; each drawn one is unique in its history.
_SIGNATURE = "EqQBCkYIBxgCKkD{n}c2lnbmF0dXJl"


def family_models(provider: str | None) -> st.SearchStrategy[str | None]:
    """No model, or one model of each of the provider's reasoning families (``None``: of
    every provider's, once each)."""
    profiles = [PROVIDERS[provider]] if provider is not None else list(PROVIDERS.values())
    examples = dict.fromkeys(f.example for p in profiles for f in p.reasoning_families if f.example)
    return st.sampled_from((None, *examples))


def _thinking(draw: Any, producer: str | None, n: int, text: str) -> Any:
    """One ``ThinkingPart`` as ``producer`` returns it (``cut``: the stream stopped before its
    signature came)."""
    cut = draw(st.booleans()) and draw(st.booleans())
    signature = None if cut else _SIGNATURE.format(n=n)
    if producer == "anthropic" and not cut and draw(st.booleans()) and draw(st.booleans()):
        return pai.ThinkingPart("", id="redacted_thinking", signature=signature, provider_name=producer)
    if producer == "openrouter":
        details = {"type": "reasoning.text", "format": "anthropic-claude-v1", "index": 0}
        return pai.ThinkingPart(text, id=f"rd_{n}", signature=signature, provider_name=producer,
                                provider_details=details)
    if producer == "openai":  # a Responses API reasoning item: its id, its encrypted content
        return pai.ThinkingPart(text, id=f"rs_{n}", signature=signature, provider_name=producer)
    if producer in ("deepseek", "moonshotai", None):
        return pai.ThinkingPart(text, provider_name=producer)
    return pai.ThinkingPart(text, signature=signature, provider_name=producer)


def own_producer(provider: str) -> str | None:
    """The producer whose reasoning ``provider`` signs (None: it signs none)."""
    return next((p for p in PRODUCERS if p in PROVIDERS[provider].reasoning_signers), None)


#: How many of a history's newest messages may carry drawn reasoning.
_LAID_WINDOW = 64


@st.composite
def _laid(draw: Any, history: list, own: str | None) -> list:
    out = []
    n = 0
    # A conversation is mostly one provider's (``own`` where given, else drawn once for the
    # whole history, whatever provider it is then sent to); one reply in four is a switch.
    home = own if own is not None else draw(st.sampled_from([p for p in PRODUCERS if p is not None]))
    # Only the newest responses draw their reasoning: a long history laid message by message
    # would overrun Hypothesis' buffer and never be drawn, and the replay rules bite at the end.
    first_laid = max(0, len(history) - _LAID_WINDOW)
    for index, message in enumerate(history):
        if (index < first_laid or not isinstance(message, pai.ModelResponse)
                or draw(st.integers(0, 3)) == 3):  # one in four left bare
            out.append(message)
            continue
        producer = draw(st.sampled_from(PRODUCERS)) if draw(st.integers(0, 3)) == 3 else home
        parts: list = []
        calls = [p for p in message.parts if isinstance(p, pai.ToolCallPart)]
        # A reasoning model thinks before most replies: three in four of the calls, one in two
        # of the texts, gain a thought where the drawn reply has none.
        if (producer is not None and not any(isinstance(p, pai.ThinkingPart) for p in message.parts)
                and draw(st.integers(0, 3)) < (3 if calls else 2)):
            n += 1
            parts.append(_thinking(draw, producer, n, "I should call a tool first." if calls else "Let me think."))
        # Gemini 3 signs the first function call of every step it returns; a text-only reply
        # may carry one on its first text part.
        signed_first = producer == "google-gla" and (bool(calls) or draw(st.booleans()))
        for part in message.parts:
            if isinstance(part, pai.ThinkingPart):
                n += 1
                part = _thinking(draw, producer, n, part.content)
            elif isinstance(part, (pai.ToolCallPart, pai.TextPart)):
                fields: dict[str, Any] = {"provider_name": producer}
                if signed_first and (part is calls[0] if calls else isinstance(part, pai.TextPart)):
                    n += 1
                    fields["provider_details"] = {"thought_signature": _SIGNATURE.format(n=n)}
                    signed_first = False
                part = dataclasses.replace(part, **fields)
            parts.append(part)
        out.append(dataclasses.replace(message, parts=parts, provider_name=producer))
    return out


def with_reasoning(history: list, own: str | None = None) -> st.SearchStrategy[list]:
    """``history`` as drawn (one case in three), or with reasoning laid over its responses,
    mostly by one producer (``own`` where given, else one drawn for the history)."""
    # Hypothesis draws the smallest choice (here: as drawn) far more often than its share,
    # so the choice is one of four, and inside a laid history the smallest choices lay.
    return st.integers(0, 3).flatmap(lambda lay: _laid(history, own) if lay else st.just(history))
