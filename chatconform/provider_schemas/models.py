"""Rules whose verdict depends on the model behind the provider id.

One provider id serves many models, and some rules hold for some of them only: Bedrock
Converse takes text beside a ``toolResult`` from Claude, Nova and Qwen but rejects it from
Llama and Mistral (B5); newer Claude models reject a final assistant message (A11). Each such
rule is listed in its provider's rules module (``MODEL_DEPENDENT``): an error when the model is
known to reject, no problem when it is known to accept, and a warning when the model is not
known (no ``model`` in the body, none given).
"""

from __future__ import annotations

from dataclasses import replace

from .problems import Problem
from .rules import MODEL_DEPENDENT
from .rules.common import ModelDependence

__all__ = ["MODEL_DEPENDENT", "ModelDependence", "apply_model", "rule_level"]


def rule_level(provider: str, rule: str, model: str | None) -> str | None:
    """The level of a model-dependent rule for ``model``: "error", "warning" (model not
    known), or None (the model takes it). Raises KeyError for a rule not listed here."""
    dependence = MODEL_DEPENDENT[(provider, rule)]
    if model and dependence.rejected_by.search(model):
        return "error"
    if model and dependence.accepted_by.search(model):
        return None
    return "warning"


def apply_model(problems: list[Problem], provider: str, model: str | None) -> list[Problem]:
    """``problems`` with each model-dependent rule at its level for ``model``."""
    out = []
    for problem in problems:
        if (provider, problem.rule) not in MODEL_DEPENDENT:
            out.append(problem)
            continue
        level = rule_level(provider, problem.rule, model)
        if level == "warning":
            out.append(replace(problem, severity="warning"))
        elif level == "error":
            out.append(replace(problem, severity="error"))
    return out
