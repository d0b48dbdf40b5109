"""Provider request-body rules: one JSON Schema per provider plus the sequence rules in code.

``validate(body, provider)`` lists every rule a recorded request body breaks, each with the
rule id of docs/provider-rules.md (generated from ``catalog.RULES``: the ``CATALOG`` of each
``rules/<provider>.py``), its JSON path in the body and the provider's own error text.
``turn_view(body, provider)`` reads any dialect as one list of turns for the payload checks.

Rule ids: ``O`` openai-chat, ``Q`` qwen-vllm, ``Z`` glm, ``M`` mistral, ``A`` anthropic,
``G`` gemini, ``B`` bedrock-converse. ``<letter>0`` is each provider's generic shape rule:
the body does not match the provider's published request shape and no more specific rule
applies. ``catalog.RULES`` lists every rule id with what it checks and where.
"""

from __future__ import annotations

from typing import Any

from chatconform.providers import get_provider

from .capabilities import content_problems
from .models import apply_model
from .problems import (
    GENERIC_RULE,
    MESSAGES_KEY,
    PROVIDER_IDS,
    Problem,
    UnknownProvider,
    check_provider,
    sort_problems,
)
from .rules import refine, replayed_problems, sequence_problems
from .schema_check import load_schema, schema_problems
from .turns import Turn, turn_view

__all__ = ["PROVIDER_IDS", "Problem", "Turn", "UnknownProvider", "load_schema", "replay_problems", "turn_view",
           "validate"]


def _not_a_body(body: Any, provider: str) -> Problem:
    kind = "null" if body is None else type(body).__name__
    message = get_provider(provider).blanket_error or (
        f"The request body must be a JSON object (or a bare {MESSAGES_KEY[provider]} array), got {kind}."
    )
    return Problem(GENERIC_RULE[provider], "$", message, provider, source="schema")


def _model(body: dict[str, Any], model: str | None) -> str | None:
    """The model a body goes to: its own ``model`` field, else ``model``."""
    named = body.get("model")
    return named if isinstance(named, str) and named else model


def replay_problems(body: dict[str, Any], provider: str, model: str | None, earlier: list[str]) -> list[Problem]:
    """The problems of a request against the answers recorded before it in the same
    conversation (their texts, oldest first): what it fails to bring back as they were (a rules
    module's ``replayed``). As in :func:`validate`, the model is the body's (else ``model``) and a
    model-dependent rule is at its level for it."""
    model = _model(body, model)
    return apply_model(replayed_problems(body, provider, model, earlier), provider, model)


def validate(body: Any, provider: str, *, model: str | None = None, reasoning: bool | None = None) -> list[Problem]:
    """Every problem of one request body (schema, then sequence), in body order.

    ``model`` is the model the body goes to when the body does not name it (its ``model``
    field wins): a model-dependent rule is an error for a model known to reject and dropped
    for one known to accept (``models.MODEL_DEPENDENT``), and content the model's family does
    not take is an error (``capabilities``). ``reasoning`` is the request's reasoning setting
    when the body does not carry it (``thinking``, ``reasoning_effort``): the rules on reasoning
    sent back (Anthropic A20, DeepSeek D3, Kimi K2, OpenRouter P2) apply with it on.

    ``body`` is JSON data (dicts with string keys, lists, strings, numbers, booleans, None).
    A bare list is taken as the message array (``contents`` for gemini); paths still read
    ``$.messages[i]``. Raises only :class:`UnknownProvider`; anything else that is not a body
    is reported as one problem.
    """
    check_provider(provider)
    if isinstance(body, list):
        body = {MESSAGES_KEY[provider]: body}
    if not isinstance(body, dict):
        return [_not_a_body(body, provider)]
    try:
        problems = schema_problems(body, provider)
        problems.extend(sequence_problems(body, provider, reasoning))
        problems = refine(body, provider, problems)
        model = _model(body, model)
        problems = apply_model(problems, provider, model)
        problems.extend(content_problems(body, provider, model))
    except RecursionError:
        message = get_provider(provider).blanket_error or "The request body is nested too deeply to validate."
        return [Problem(GENERIC_RULE[provider], "$", message, provider, source="schema")]
    return sort_problems(problems, body) if len(problems) > 1 else problems
