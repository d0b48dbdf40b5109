"""Reasoning as providers return it, laid over a drawn history.

:func:`with_reasoning` gives each response of a history a producer, as a conversation that
switched provider has several: Anthropic (signed ``thinking``, ``redacted_thinking``), Gemini
(a ``thoughtSignature`` on the first call or text, or on a ``ThinkingPart`` that hands it to
the next part), DeepSeek or Kimi (``reasoning_content``, unsigned), OpenRouter (a
``reasoning_details`` entry), OpenAI (a Responses API reasoning item: its id, its encrypted
content as the signature, often missing: a request that did not ``include`` it), or none
(a history stored before providers were named).
Its thinking may be cut mid-stream (no signature), and a reply may gain thinking before
its text or calls. Valid by construction: pydantic-ai builds every part the same way.
The whole laying is one drawn seed (see :func:`_plan`), and shrinks to the history as drawn.
"""

from __future__ import annotations

import dataclasses
import random
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


@dataclasses.dataclass(frozen=True)
class _Step:
    """What one response gets: left bare, or laid by ``producer`` (thinking added where it
    has none, some of it cut or redacted)."""

    bare: bool
    switched_to: str | None  # another producer for this reply (a conversation that switched)
    adds_thinking: bool
    cut: bool
    redacted: bool
    unencrypted: bool


def _thinking(producer: str | None, n: int, text: str, step: _Step) -> Any:
    """One ``ThinkingPart`` as ``producer`` returns it: cut (the stream stopped before its
    signature came), Anthropic's ``redacted_thinking``, or an OpenAI reasoning item stored
    without its encrypted content (the request did not ``include`` it)."""
    cut, redacted = step.cut, step.redacted
    signature = None if cut or (producer == "openai" and step.unencrypted) else _SIGNATURE.format(n=n)
    if producer == "anthropic" and not cut and redacted:
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


#: How many of a history's newest responses may carry drawn reasoning.
_LAID_RESPONSES = 8


def _plan(seed: int, own: str | None) -> tuple[str, list[_Step]]:
    """The home producer and one step per newest response, from one drawn seed: a history's
    reasoning costs Hypothesis one choice, so it leaves the draws of the history itself as
    they were, and each producer is as likely as the next."""
    rng = random.Random(seed)
    home = own if own is not None else rng.choice([p for p in PRODUCERS if p is not None])
    # The newest reply is the one a cancelled run cut mid-reasoning: one in two is cut there.
    steps = [_Step(bare=rng.random() < 0.25, switched_to=rng.choice(PRODUCERS) if rng.random() < 0.5 else None,
                   adds_thinking=rng.random() < 0.75, cut=rng.random() < (0.5 if newest else 0.2),
                   redacted=rng.random() < 0.25, unencrypted=rng.random() < 0.5)
             for newest in [True] + [False] * (_LAID_RESPONSES - 1)]
    return home, steps


def _lay(history: list, home: str, steps: list[_Step]) -> list:
    """``history`` with ``steps`` laid over its newest responses (the last step on the last)."""
    responses = [i for i, m in enumerate(history) if isinstance(m, pai.ModelResponse)]
    planned = dict(zip(reversed(responses), steps, strict=False))
    out, n = [], 0
    for index, message in enumerate(history):
        step = planned.get(index)
        if step is None or step.bare:
            out.append(message)
            continue
        producer = step.switched_to if step.switched_to is not None else home
        parts: list = []
        calls = [p for p in message.parts if isinstance(p, pai.ToolCallPart)]
        # A reasoning model thinks before most replies: a thought where the drawn reply has none.
        if producer is not None and step.adds_thinking and not any(
                isinstance(p, pai.ThinkingPart) for p in message.parts):
            n += 1
            parts.append(_thinking(producer, n, "I should call a tool first." if calls else "Let me think.", step))
        # Gemini 3 signs the first function call of every step it returns; a text-only reply
        # carries one on its first text part.
        signed_first = producer == "google-gla"
        for part in message.parts:
            if isinstance(part, pai.ThinkingPart):
                n += 1
                part = _thinking(producer, n, part.content, step)
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


def _laid(history: list, own: str | None) -> st.SearchStrategy[list]:
    # A conversation is mostly one provider's (``own`` where given, else drawn once for the
    # whole history, whatever provider it is then sent to); the replay rules bite at the end.
    return st.integers(0, 2**32 - 1).map(lambda seed: _lay(history, *_plan(seed, own)))


def with_reasoning(history: list, own: str | None = None) -> st.SearchStrategy[list]:
    """``history`` as drawn, or with reasoning laid over its newest responses, mostly by one
    producer (``own`` where given, else one drawn for the history). Shrinks to the history
    as drawn: Hypothesis draws that smallest choice more often than its one in four."""
    return st.integers(0, 3).flatmap(lambda lay: _laid(history, own) if lay else st.just(history))
