"""Every rule id this package reports, per provider: what it checks, where, and on whose word.

Each rule carries the error text the package reports for it (one representative text; words
in braces are filled in from the failing body) and a public source: the provider's
documentation, its validator or SDK source, or an issue where the error was seen. ``text``
says how far that error text can be trusted: "verbatim" (the provider's error as seen in the
wild or in its validator source), "adapted" (a verbatim text with another location filled
in, or a pass-through prefix), or "synthesized" (no captured text exists; written in the
provider's style). ``<letter>0`` is the provider's generic shape rule: the body does not
match the published request shape and no more specific rule applies.

Each provider's entries sit in its rules module (``rules/<provider>.py``, ``CATALOG`` and
``LEFT_OUT``), next to the checks that report them; this module gathers them into the page.

The same facts, as a page: docs/provider-rules.md, generated from this module with

    python -m chatconform.provider_schemas.catalog > docs/provider-rules.md
"""

from __future__ import annotations

import sys

from chatconform.providers import PROVIDERS

from .rules import LEFT_OUT, MODEL_DEPENDENT, RULES
from .rules.common import BOTH, CONTENT, SCHEMA, SEQUENCE, ModelDependence, RuleInfo

__all__ = ["LEFT_OUT", "REGENERATE", "RULES", "RuleInfo", "markdown"]

REGENERATE = "python -m chatconform.provider_schemas.catalog > docs/provider-rules.md"


# --- the generated page ------------------------------------------------------------------

_CHECK_WORDS = {SCHEMA: "schema", SEQUENCE: "sequence", BOTH: "schema and sequence", CONTENT: "model content"}


def _letter(rule_id: str) -> str:
    return rule_id.rstrip("0123456789")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _prose(text: str) -> str:
    """A table cell of plain text (``<`` escaped, so ``<tool_response>`` is not read as HTML)."""
    return _cell(text).replace("<", "&lt;")


def _code(text: str) -> str:
    """``text`` as an inline code span (longer fences when it holds backticks)."""
    fence = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{fence}{pad}{_cell(text)}{pad}{fence}"


def _by_model(dependence: ModelDependence) -> str:
    """The level cell of a model-dependent rule: each family's verdict, dated, and the unnamed level."""
    families = "; ".join(
        f"{family.name}: {'accepts' if family.accepts else 'rejects'} ([{family.date}]({family.evidence}))"
        for family in dependence.families)
    return f"by model: {families}; model not named: {dependence.unnamed or 'no problem'}"


def markdown() -> str:
    """docs/provider-rules.md: the catalog as one section per provider."""
    lines = [
        "# Provider rules",
        "",
        f"<!-- Generated from chatconform/provider_schemas/catalog.py; do not edit. Regenerate with: {REGENERATE} -->",
        "",
        f"This page is generated from `chatconform/provider_schemas/catalog.py`. To regenerate it, run `{REGENERATE}`.",
        "",
        "`chatconform.provider_schemas.validate(body, provider)` reports each rule below that a request body",
        "breaks, with the rule id, the JSON path of the failing part and the error text shown here.",
        "",
        "* **Level**: an *error* is a body the provider rejects; a *warning* is a body the provider may",
        "  accept or silently rewrite (the evidence is old or indirect), or a field or type chatconform's",
        "  schema of its date does not know (a newer API may take it). *by model*: some of the provider's",
        "  model families reject it and others accept it, each listed with its evidence and the evidence's",
        "  date; it is an error for a family known to reject and nothing for one known to accept. A model",
        "  the table does not know is judged as its last family (the newest), as a warning that says so;",
        "  a body that names no model gets the level written after *model not named* (the model comes",
        "  from `validate(..., model=...)`, the body's `model`, or an implementation's `models` setting).",
        "* **Checked in**: *schema* rules are JSON Schema (draft 2020-12) constraints in",
        "  `chatconform/provider_schemas/schemas/<provider>.json`, tagged with `x-rule` and `x-error`;",
        "  *sequence* rules relate two messages, need the last message or match ids across messages, which",
        "  JSON Schema cannot express, and are checked in `chatconform/provider_schemas/rules/<provider>.py`;",
        "  *model content* rules hold a named model to the content its family takes (the profile's",
        "  `model_content` table, checked in `chatconform/provider_schemas/capabilities.py`).",
        "* **Error text**: one representative text per rule. Words in braces are filled in from the failing",
        "  body: `{i}` and `{j}` are message and block indexes; `{loc}`, `{oai}` and `{gloc}` the failing",
        "  path in the provider's own notation; `{detail}` a short description of what failed; any other",
        "  word in braces (`{value}`, `{id}`, `{ids}`, `{role}`, ...) a value taken from the body.",
        "* **Text**: how far the error text can be trusted. *verbatim*: the provider's own text, seen in",
        "  the wild or in its validator source; *adapted*: a verbatim text with another location filled in,",
        "  or passed through with a prefix; *synthesized*: no captured text exists, so it is written in the",
        "  provider's style.",
        "* **Source**: public evidence for the rule: the provider's documentation, its validator or SDK",
        "  source, or an issue or pull request where the error was reported.",
        "* `<letter>0` is each provider's generic shape rule: the body does not match the provider's",
        "  published request shape and no more specific rule applies.",
    ]
    for provider, rules in RULES.items():
        info = PROVIDERS[provider]
        lines += [
            "",
            f"## {info.title} (`{provider}`)",
            "",
            f"Documentation: <{info.docs}>",
            "",
            "| Rule | What it checks | Level | Checked in | Error text | Text | Source |",
            "|---|---|---|---|---|---|---|",
        ]
        for rule in rules.values():
            level = rule.severity
            if (provider, rule.id) in MODEL_DEPENDENT:
                level = _by_model(MODEL_DEPENDENT[(provider, rule.id)])
            lines.append(
                f"| {rule.id} | {_prose(rule.summary)} | {level} | {_CHECK_WORDS[rule.check]} "
                f"| {_code(rule.error)} | {rule.text} | {' '.join(f'<{url}>' for url in rule.sources)} |"
            )
        letter = _letter(next(iter(rules)))
        left_out = {rule_id: why for rule_id, why in LEFT_OUT.items() if _letter(rule_id) == letter}
        lines += ["", "Rules left out:" if left_out else "Rules left out: none."]
        if left_out:
            lines.append("")
            lines += [f"* {rule_id}: {_prose(why)}." for rule_id, why in left_out.items()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(markdown())
