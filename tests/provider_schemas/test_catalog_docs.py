"""The rule catalog and the page generated from it: docs/provider-rules.md is the generated text,
and the catalog lists exactly the rule ids the schemas and the sequence checks can report."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from chatconform import dialects
from chatconform.provider_schemas import PROVIDER_IDS, load_schema, rules
from chatconform.provider_schemas.catalog import LEFT_OUT, REGENERATE, RULES, markdown
from chatconform.provider_schemas.problems import GENERIC_RULE
from chatconform.providers import PROVIDERS
from chatconform.providers.glm import GLM_1214

PAGE = Path(__file__).resolve().parents[2] / "docs" / "provider-rules.md"
RULE_ID = re.compile(r"^[A-Z][0-9]+$")
LETTER = {GENERIC_RULE[provider][0]: provider for provider in PROVIDER_IDS}


def _nodes(node):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _nodes(value)
    elif isinstance(node, list):
        for value in node:
            yield from _nodes(value)


def _schema_tags(provider: str) -> dict[str, set[str]]:
    """Rule id -> the x-error templates tagged with it (a tag without one uses the root's)."""
    schema = load_schema(provider)
    tags: dict[str, set[str]] = {}
    for node in _nodes(schema):
        if "x-rule" in node:
            template = node.get("x-error", schema["x-error"])  # braces doubled for str.format read as one
            tags.setdefault(node["x-rule"], set()).add(template.replace("{{", "{").replace("}}", "}"))
    return tags


def _rules_trees() -> list[ast.Module]:
    """The syntax trees of the rules package: each provider's module and the shared one."""
    return [ast.parse(path.read_text("utf-8")) for path in sorted(Path(rules.__file__).parent.glob("*.py"))]


def _dialect_trees() -> list[ast.Module]:
    """The syntax trees of the dialect modules, whose ``serve`` sessions refuse a request for what
    it continues (``Refusal("X8", ...)``: a rule the body alone cannot break)."""
    return [ast.parse(path.read_text("utf-8")) for path in sorted(Path(dialects.__file__).parent.glob("*.py"))]


def _refused_ids() -> set[str]:
    """Every rule id a dialect module gives a ``Refusal``."""
    return {node.args[0].value for tree in _dialect_trees() for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Refusal"
            and node.args and isinstance(node.args[0], ast.Constant)}


def _sequence_ids() -> set[str]:
    """Every rule id the rules modules pass to ``report.error`` / ``report.warning``, or give a
    problem they re-level (``replace(problem, rule=...)`` in a module's ``refine``).

    A literal id is taken as it is; an id held in a variable is one of the rule-id literals of
    the enclosing function (its lookup table).
    """
    ids: set[str] = set()
    for function in (node for tree in _rules_trees() for node in tree.body):
        if not isinstance(function, ast.FunctionDef):
            continue
        literals = {
            node.value
            for node in ast.walk(function)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and RULE_ID.match(node.value)
        }
        for node in ast.walk(function):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "replace":
                ids |= {k.value.value for k in node.keywords
                        if k.arg == "rule" and isinstance(k.value, ast.Constant)}
                continue
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("error", "warning")
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "report"
            ):
                continue
            first = node.args[0]
            if isinstance(first, ast.Constant):
                ids.add(first.value)
            else:
                assert literals, f"line {node.lineno}: a variable rule id with no rule-id literal around it"
                ids |= literals
    return ids


def _sequence_texts() -> set[str]:
    """The strings of the rules and dialect modules, f-strings as templates (``f"x {a}"`` -> ``"x {a}"``),
    and GLM's 1214."""
    texts = {GLM_1214}
    for node in (node for tree in [*_rules_trees(), *_dialect_trees()] for node in ast.walk(tree)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            texts.add(node.value)
        elif isinstance(node, ast.JoinedStr):
            texts.add(
                "".join(
                    part.value if isinstance(part, ast.Constant) else "{" + ast.unparse(part.value) + "}"
                    for part in node.values
                )
            )
    return texts


def test_committed_page_is_the_generated_text():
    assert PAGE.is_file(), f"docs/provider-rules.md is missing; run: {REGENERATE}"
    assert PAGE.read_text("utf-8") == markdown(), f"docs/provider-rules.md is stale; run: {REGENERATE}"


def test_page_says_how_to_regenerate_it():
    assert REGENERATE in "\n".join(markdown().splitlines()[:6])


def test_page_has_one_section_per_provider_with_every_rule():
    page = markdown()
    for provider, provider_rules in RULES.items():
        section = page.split(f"(`{provider}`)\n", 1)[1].split("\n## ", 1)[0]
        assert PROVIDERS[provider].docs in section
        for rule_id, info in provider_rules.items():
            assert f"| {rule_id} | " in section and info.source in section
        for rule_id in LEFT_OUT:
            assert (f"* {rule_id}: " in section) == (LETTER[rule_id[0]] == provider)


def test_every_provider_is_catalogued_with_a_docs_link():
    assert tuple(RULES) == PROVIDER_IDS and tuple(PROVIDERS) == PROVIDER_IDS
    for info in PROVIDERS.values():
        assert info.title and info.docs.startswith("https://")


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_catalog_lists_exactly_the_rule_ids_the_code_reports(provider):
    schema_ids = set(_schema_tags(provider))
    sequence_ids = {rule_id for rule_id in _sequence_ids() | _refused_ids() if LETTER[rule_id[0]] == provider}
    content_ids = {PROVIDERS[provider].content_rule} - {None}
    catalogued = RULES[provider]
    assert schema_ids | sequence_ids | content_ids == set(catalogued)
    assert content_ids == {r for r, info in catalogued.items() if info.check == "content"}
    assert schema_ids == {r for r, info in catalogued.items() if "schema" in info.check}
    assert sequence_ids == {r for r, info in catalogued.items() if "sequence" in info.check}


def test_every_rule_has_an_error_text_and_an_https_source():
    for provider, provider_rules in RULES.items():
        for rule_id, info in provider_rules.items():
            assert info.id == rule_id and LETTER[rule_id[0]] == provider
            assert info.summary.strip() and info.error.strip(), rule_id
            for source in info.sources:
                assert re.match(r"^https://[^\s<>|]+$", source), (rule_id, source)
            assert info.check in ("schema", "sequence", "schema+sequence", "content"), rule_id
            assert info.severity in ("error", "warning") and info.text in ("verbatim", "adapted", "synthesized")


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_each_error_text_is_one_the_code_reports(provider):
    tags = _schema_tags(provider)
    sequence_texts = _sequence_texts()
    for rule_id, info in RULES[provider].items():
        reported = set(tags.get(rule_id, ())) if "schema" in info.check else set()
        if "sequence" in info.check:
            reported |= sequence_texts
        if info.check == "content":
            reported |= set(PROVIDERS[provider].content_refusals.values())
        assert info.error in reported, (rule_id, info.error)


def test_left_out_rules_have_reasons_and_are_not_reported():
    for rule_id, why in LEFT_OUT.items():
        assert RULE_ID.match(rule_id) and rule_id[0] in LETTER and why.strip()
        assert all(rule_id not in provider_rules for provider_rules in RULES.values())


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_schema_annotations_cite_only_public_links_or_the_page(provider):
    for node in _nodes(load_schema(provider)):
        for key in ("description", "$comment"):
            text = node.get(key, "")
            assert set(re.findall(r"[\w./-]+\.md\b", text)) <= {"docs/provider-rules.md"}, text
            assert "research" not in text.lower(), text
