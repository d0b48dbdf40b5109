"""Rules whose verdict depends on the model behind the provider id.

One provider id serves many models, and some rules hold for some of them only: Bedrock
Converse takes text beside a ``toolResult`` from Claude, Nova and Qwen but rejects it from
Llama and Mistral (B5); newer Claude models reject a final assistant message (A11); Claude 3
took a ``tool_result`` for another call in 2024 that every Claude since rejects (A8, A9). Each
such rule is listed in its provider's rules module (``MODEL_DEPENDENT``) as a table of model
families, each with its verdict, its evidence and the evidence's date
(:class:`~.rules.common.ModelDependence`): an error for a family known to reject, no problem
for one known to accept; a model the table does not know is judged as the newest family, as
a warning naming the table's date; a body that names no model gets the table's ``unnamed``
level.
"""

from __future__ import annotations

from dataclasses import replace

from .problems import Problem
from .rules import MODEL_DEPENDENT
from .rules.common import MODEL_TABLE_DATE, ModelDependence

__all__ = ["MODEL_DEPENDENT", "ModelDependence", "apply_model", "rule_level"]


def rule_level(provider: str, rule: str, model: str | None) -> tuple[str | None, str]:
    """The level of a model-dependent rule for ``model`` ("error", "warning", or None: the model
    takes the body) and a note for the message ("" when there is nothing to add). Raises
    KeyError for a rule not listed here."""
    dependence = MODEL_DEPENDENT[(provider, rule)]
    if not model:
        return dependence.unnamed, "" if dependence.unnamed == "error" else f" (model not named: {dependence.why})"
    family = dependence.family(model)
    if family is not None:
        return (None if family.accepts else "error"), ""
    newest = dependence.newest
    if newest.accepts:
        return None, ""
    return "warning", (f" (model {model} is not in chatconform's model table of {MODEL_TABLE_DATE}: judged as "
                       f"{newest.name}, the newest family, which rejects it)")


def apply_model(problems: list[Problem], provider: str, model: str | None) -> list[Problem]:
    """``problems`` with each model-dependent rule at its level for ``model``."""
    out = []
    for problem in problems:
        if (provider, problem.rule) not in MODEL_DEPENDENT:
            out.append(problem)
            continue
        level, note = rule_level(provider, problem.rule, model)
        if level is not None:
            out.append(replace(problem, severity=level, message=problem.message + note))
    return out
