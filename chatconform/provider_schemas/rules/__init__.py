"""Sequence rules: the provider rules JSON Schema cannot express, one module per provider.

They relate two messages (role order, a tool call and its answer), need the last message, or
order blocks inside one message. Four primitives cover them all: a role-transition table per
provider (M1, B3, A4, G6/G7), a pending-tool-id tracker (O7-O9, Z2, M4/M5, A8/A9, B4; G8 counts
parts), last-message rules (M2, M3, A10, A11, G10, B8) and in-message ordering (A9: tool_result
blocks first). The shared machinery is in :mod:`.common`.

A provider's rules module is named as its profile module (``Provider.module_name``) and holds
``check(body, report)`` (its sequence rules), ``CATALOG`` (every rule id it reports, schema
rules included, with evidence), ``LEFT_OUT`` (rules known and not checked, and why) and, where
a rule's verdict depends on the model, ``MODEL_DEPENDENT``; where a schema finding's level
depends on context the schema cannot see, ``refine(body, problems)``; where a request must
carry back what an earlier answer of the same conversation returned, ``replayed(body, model,
earlier, report)`` (recorded traffic only: ``validate`` of a cassette).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from chatconform.providers import PROVIDERS

from ..problems import Problem
from .common import ModelDependence, Report, RuleInfo


def _rules_module(provider_id: str) -> ModuleType:
    name = PROVIDERS[provider_id].module_name
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
        raise ImportError(f"provider {provider_id!r} has no rules module: "
                          f"add chatconform/provider_schemas/rules/{name}.py") from None


_MODULES: dict[str, ModuleType] = {provider_id: _rules_module(provider_id) for provider_id in PROVIDERS}

#: Every rule id each provider reports (provider id -> rule id -> what it checks and why).
RULES: dict[str, dict[str, RuleInfo]] = {p: module.CATALOG for p, module in _MODULES.items()}
#: Rules known from the providers' documentation or errors that are left out, and why.
LEFT_OUT: dict[str, str] = {rule: why for module in _MODULES.values() for rule, why in module.LEFT_OUT.items()}
#: The rules whose verdict depends on the model, by (provider id, rule id).
MODEL_DEPENDENT: dict[tuple[str, str], ModelDependence] = {
    (p, rule): dependence
    for p, module in _MODULES.items()
    for rule, dependence in getattr(module, "MODEL_DEPENDENT", {}).items()
}


def sequence_problems(body: dict, provider: str, reasoning: bool | None = None) -> list[Problem]:
    """The sequence-rule problems of one request body (an object; the provider is known),
    with reasoning on or off where the caller says so (None: as the body says)."""
    report = Report(provider, reasoning)
    _MODULES[provider].check(body, report)
    return report.problems


def refine(body: dict, provider: str, problems: list[Problem]) -> list[Problem]:
    """``problems`` as the provider's rules module re-levels them in context (most have no
    ``refine``: the problems unchanged)."""
    hook = getattr(_MODULES[provider], "refine", None)
    return problems if hook is None else hook(body, problems)


def replayed_problems(body: dict, provider: str, model: str | None, earlier: list[str]) -> list[Problem]:
    """What a provider's ``replayed`` rules find in a request against the answers recorded before
    it in the same conversation (their texts, oldest first), at the rules' own levels (see
    :func:`chatconform.provider_schemas.replay_problems`); none for a provider with no such rule."""
    hook = getattr(_MODULES[provider], "replayed", None)
    if hook is None or not earlier:
        return []
    report = Report(provider)
    hook(body, model, earlier, report)
    return report.problems
