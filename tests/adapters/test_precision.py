"""docs/precision.md holds a row for every expected failure of every bundled adapter, and each
row says what makes the failure real: a rejection with its rule id (of a provider the row
names), a loss, a crash, or a verdict that follows from the rows above it."""

import importlib
import re
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from chatconform.contracts import get_check
from chatconform.errors import MissingDependency
from chatconform.provider_schemas.rules import RULES
from chatconform.providers import PROVIDERS

PAGE = Path(__file__).resolve().parents[2] / "docs" / "precision.md"
KINDS = {"rejection", "loss", "crash", "follows"}
RULE_ID = re.compile(r"\b([A-Z]\d{1,2})\b")


def rows():
    out = []
    for line in PAGE.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[1].startswith("`"):
            impl, check, providers, kind, evidence = cells
            out.append((impl, check.strip("`"), [p.strip() for p in providers.split(",") if p.strip()],
                        kind, evidence))
    return out


#: Bundled but not registered (the main job does not run it): the adapters composed as one
#: application, for the lifecycle contract.
COMPOSED = {"pydantic-ai-application": "chatconform.adapters.application:PydanticAIApplication"}


def bundled():
    adapters = {}
    points = [(point.name, point.load) for point in entry_points(group="chatconform.implementations")]
    points += [(name, lambda spec=spec: _class(spec)) for name, spec in COMPOSED.items()]
    for name, load in points:
        if name == "reference":
            continue
        try:
            target = load()
            adapters[name] = target() if name in COMPOSED else target
        except MissingDependency:
            adapters[name] = None
    return adapters


def _class(spec: str):
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)


ROWS = rows()
ADAPTERS = bundled()


def test_the_page_has_rows():
    assert len(ROWS) >= 20 and {impl for impl, *_ in ROWS} <= set(ADAPTERS)


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_every_expected_failure_has_a_row_and_every_row_an_expected_failure(name):
    adapter = ADAPTERS[name]
    if adapter is None:
        pytest.skip(f"{name}'s library is not installed (its extra)")
    expected = set(getattr(adapter, "expected_failures", {}))
    if name in COMPOSED:  # it inherits its parts' expected failures, whose rows are theirs
        expected = {check for check in expected if check.startswith("lifecycle.")}
    listed = {check for impl, check, *_ in ROWS if impl == name}
    assert expected - listed == set(), f"{name}: expected failures with no row in docs/precision.md"
    assert listed - expected == set(), f"{name}: rows in docs/precision.md for checks it does not expect to fail"


@pytest.mark.parametrize("row", ROWS, ids=[f"{r[0]}:{r[1]}:{','.join(r[2])}" for r in ROWS])
def test_each_row_says_what_makes_it_real(row):
    impl, check, providers, kind, evidence = row
    get_check(check)  # a known check id
    assert kind in KINDS and evidence
    if check.startswith("payload."):
        assert providers, "a payload row names the providers it fails on"
        assert set(providers) <= set(PROVIDERS)
        adapter = ADAPTERS.get(impl)
        if adapter is not None:
            assert set(providers) <= set(adapter.providers)
        if kind == "rejection":
            cited = set(RULE_ID.findall(evidence))
            for provider in providers:
                assert cited & set(RULES[provider]), f"no rule of {provider} cited in {evidence!r}"
    else:
        assert not providers, "only payload checks are judged per provider"
    if kind == "rejection":
        cited = set(RULE_ID.findall(evidence))
        known = {rule for rules in RULES.values() for rule in rules}
        assert cited <= known, f"unknown rule ids {sorted(cited - known)}"
        assert cited or '"' in evidence, "a rejection cites a rule id or quotes the error text"
    if kind == "follows":
        assert check.endswith(".matches_reference")
