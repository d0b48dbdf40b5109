"""The cases a contract's search draws under the ``ci`` profile, for tests that count shapes."""

from __future__ import annotations

from typing import Any

from chatconform import run_conformance
from chatconform.contracts import get_contract


def ci_cases(contract_name: str, monkeypatch: Any, *, examples: int | None = None) -> list:
    """Every case the reference's ``ci`` search of ``contract_name`` draws (of its first
    variant only: each variant is searched on the same cases), in the order drawn."""
    contract = get_contract(contract_name)
    drawn: list = []
    original = contract.cases

    def recording(variant):
        return original(variant).map(lambda case: drawn.append((variant, case)) or case)

    monkeypatch.setattr(contract, "cases", recording)
    run_conformance("reference", checks=[f"{contract_name}.no_crash"], profile="ci", examples=examples,
                    in_process=True)
    first = drawn[0][0] if drawn else None
    return [case for variant, case in drawn if variant == first]
