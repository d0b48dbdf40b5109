"""Every provider of the table is complete: the pieces docs/architecture.md ("Adding a provider")
lists all exist, and each failure names the piece that is missing."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from chatconform.errors import LEVELS
from chatconform.providers import PROVIDER_IDS, PROVIDERS, CheckLevel, Provider, get_provider

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "chatconform"
RULE_CASES = ROOT / "tests" / "provider_schemas" / "test_provider_rules.py"


def _case_providers() -> set[str]:
    """The provider ids of the rule cases (the first member of each ``CASES`` tuple)."""
    tree = ast.parse(RULE_CASES.read_text("utf-8"))
    cases = next(node.value for node in tree.body if isinstance(node, ast.Assign)
                 and any(isinstance(t, ast.Name) and t.id == "CASES" for t in node.targets))
    assert isinstance(cases, ast.List)
    return {case.elts[0].value for case in cases.elts
            if isinstance(case, ast.Tuple) and isinstance(case.elts[0], ast.Constant)}


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_profile_module(provider):
    profile = get_provider(provider)
    path = PACKAGE / "providers" / f"{profile.module_name}.py"
    assert path.is_file(), f"{provider}: profile module chatconform/providers/{profile.module_name}.py is missing"
    assert profile.docs.startswith("https://"), f"{provider}: the profile's docs link is not an https URL"


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_schema_file(provider):
    path = PACKAGE / "provider_schemas" / "schemas" / f"{provider}.json"
    assert path.is_file(), f"{provider}: JSON Schema chatconform/provider_schemas/schemas/{provider}.json is missing"


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_rules_module_with_catalog_entries(provider):
    name = get_provider(provider).module_name
    path = PACKAGE / "provider_schemas" / "rules" / f"{name}.py"
    assert path.is_file(), f"{provider}: rules module chatconform/provider_schemas/rules/{name}.py is missing"
    from chatconform.provider_schemas.rules import RULES

    catalog = RULES[provider]
    generic = get_provider(provider).generic_rule
    assert generic in catalog, f"{provider}: rules/{name}.py CATALOG has no entry for its generic rule {generic}"
    letters = {rule_id.rstrip("0123456789") for rule_id in catalog}
    assert letters == {get_provider(provider).rule_prefix}, (
        f"{provider}: rules/{name}.py CATALOG holds rule ids of another prefix: {sorted(catalog)}")


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_a_level_for_every_provider_leveled_payload_check(provider):
    from chatconform.contracts.payload import CONTRACT
    from chatconform.provider_schemas.levels import REJECTION_CHECKS

    profile = get_provider(provider)
    missing = sorted(set(REJECTION_CHECKS) - set(profile.check_levels))
    assert not missing, f"{provider}: the profile's check_levels has no level for {', '.join(missing)}"
    known = {check.id for check in CONTRACT.checks}
    unknown = sorted(set(profile.check_levels) - known)
    assert not unknown, f"{provider}: check_levels names checks the payload contract does not have: {unknown}"
    for check_id, level in (*profile.check_levels.items(), ("reused_call_id", profile.reused_call_id)):
        assert level.level in LEVELS and level.evidence.strip(), f"{provider}: {check_id} has no level or no evidence"


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_a_cited_rule_is_in_the_catalog(provider):
    from chatconform.provider_schemas.rules import RULES

    profile = get_provider(provider)
    for check_id, level in (*profile.check_levels.items(), ("reused_call_id", profile.reused_call_id)):
        assert level.rule is None or level.rule in RULES[provider], (
            f"{provider}: {check_id} cites rule {level.rule}, which its rules module does not catalogue")


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_rule_cases(provider):
    assert provider in _case_providers(), (
        f"{provider}: no rule case in tests/provider_schemas/test_provider_rules.py (CASES)")


def test_table_order_and_lookup():
    assert tuple(PROVIDERS) == PROVIDER_IDS
    assert [p.order for p in PROVIDERS.values()] == sorted(p.order for p in PROVIDERS.values())
    assert len({p.order for p in PROVIDERS.values()}) == len(PROVIDERS), "two profiles share an order"
    assert len({p.rule_prefix for p in PROVIDERS.values()}) == len(PROVIDERS), "two profiles share a rule prefix"
    with pytest.raises(ValueError, match="known providers: openai-chat"):
        get_provider("nope")


def test_every_profile_field_is_documented():
    lines = (PACKAGE / "providers" / "profile.py").read_text("utf-8").splitlines()
    for cls in (Provider, CheckLevel):
        for field in dataclasses.fields(cls):
            at = next(i for i, line in enumerate(lines) if line.startswith(f"    {field.name}:"))
            assert lines[at - 1].strip().startswith("#:"), f"{cls.__name__}.{field.name} has no #: comment"


def _rules_page_ids() -> dict[str, set[str]]:
    """Provider id -> the rule ids of its section of docs/provider-rules.md (table rows)."""
    import re

    found: dict[str, set[str]] = {}
    provider = None
    for line in (ROOT / "docs" / "provider-rules.md").read_text("utf-8").splitlines():
        heading = re.match(r"## .*\(`([a-z-]+)`\)$", line)
        if heading:
            provider = heading.group(1)
        elif provider and (row := re.match(r"\| ([A-Z]\d+) \|", line)):
            found.setdefault(provider, set()).add(row.group(1))
    return found


def test_every_error_level_cites_a_rule_of_the_rules_page():
    """An error of a check whose failure is a rejection names the rule the provider rejects
    it by; only a check that changes the conversation is an error without one."""
    from chatconform.provider_schemas.levels import BY_RULE, CONVERSATION, CONVERSATION_CHECKS, REJECTION, level_table

    page = _rules_page_ids()
    for row in level_table():
        where = f"{row.check} on {row.provider}"
        assert row.why.strip(), f"{where}: no reason given"
        if row.level == "error" and row.basis != CONVERSATION:
            assert row.basis in (REJECTION, BY_RULE) and row.rules, f"{where} is an error and cites no rule"
            unknown = sorted(set(row.rules) - page[row.provider])
            assert not unknown, f"{where} cites {unknown}, which docs/provider-rules.md does not list"
        elif row.level == "error":
            assert row.check in CONVERSATION_CHECKS and not row.rules, where
        else:
            assert row.basis != REJECTION and (row.basis == BY_RULE or not row.rules), where


def test_the_levels_table_covers_the_provider_bound_checks():
    from chatconform.contracts import all_checks
    from chatconform.provider_schemas.levels import CHECKS, level_table

    registered = {check.id for check in all_checks()}
    named = {check.split(" (")[0] for check in CHECKS}
    assert named <= registered
    payload = {c.id for c in all_checks() if c.contract == "payload" and c.evaluate is not None}
    assert payload <= named, f"payload checks missing from the levels table: {sorted(payload - named)}"
    assert len(level_table()) == len(CHECKS) * len(PROVIDERS)


def test_the_check_levels_the_engine_uses_are_the_tables():
    from chatconform.contracts import all_checks
    from chatconform.provider_schemas.levels import REJECTION_CHECKS, level_table

    checks = {c.id: c for c in all_checks()}
    for row in level_table():
        if row.check in REJECTION_CHECKS:
            assert checks[row.check].level_for(row.provider) == row.level, (row.check, row.provider)
