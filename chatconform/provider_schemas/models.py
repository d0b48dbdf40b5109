"""Rules whose verdict depends on the model behind the provider id.

One provider id serves many models, and some rules hold for some of them only: Bedrock
Converse takes text beside a ``toolResult`` from Claude, Nova and Qwen but rejects it from
Llama and Mistral (B5); newer Claude models reject a final assistant message (A11). A rule
listed here is an error when the model is known to reject, no problem when it is known to
accept, and a warning when the model is not known (no ``model`` in the body, none given).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from .problems import Problem


@dataclass(frozen=True)
class ModelDependence:
    rejected_by: re.Pattern[str]  # model ids the provider answers with the rule's error
    accepted_by: re.Pattern[str]  # model ids known to take the body as it is
    evidence: str  # a public source for both lists


MODEL_DEPENDENT: dict[tuple[str, str], ModelDependence] = {
    # Live Converse tests per model family, in https://github.com/pydantic/pydantic-ai/pull/6098
    ("bedrock-converse", "B5"): ModelDependence(
        rejected_by=re.compile(r"(^|[.:/])(meta\.llama|mistral\.)"),
        accepted_by=re.compile(r"(^|[.:/])(anthropic\.claude|amazon\.nova|qwen\.)"),
        evidence="https://github.com/pydantic/pydantic-ai/pull/6098",
    ),
    # Opus 4.6+ and Sonnet 4.6+ reject prefill; earlier Claude models continue from it.
    ("anthropic", "A11"): ModelDependence(
        rejected_by=re.compile(r"^claude-(opus|sonnet)-(4-[6-9]|[5-9])"),
        accepted_by=re.compile(r"^claude-(3|(opus|sonnet|haiku)-4-[0-5]\b|haiku)"),
        evidence="https://github.com/agenticloops-ai/agentic-ai-engineering/issues/43",
    ),
}


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
