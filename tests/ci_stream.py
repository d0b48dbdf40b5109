"""The cases a contract's search draws under the ``ci`` profile, for tests that count shapes."""

from __future__ import annotations

from typing import Any

from chatconform import run_conformance
from chatconform.contracts import get_contract


def ci_cases(contract_name: str, monkeypatch: Any, *, examples: int | None = None,
             implementation: Any = "reference") -> list:
    """Every case the reference's ``ci`` search of ``contract_name`` draws (of its first
    variant only: each variant is searched on the same cases), in the order drawn.
    ``implementation``: another to search with, such as the reference for one provider only
    (a derandomized exploring pass draws the same cases whatever it judges).

    The cases are taken where the search judges them, not by wrapping the contract's
    strategy: a wrapped strategy (``.map``) has other labels, from which Hypothesis' later
    examples are made, and draws other cases after the first few."""
    from chatconform.engine import search

    get_contract(contract_name)  # an unknown name fails here
    drawn: list = []
    judge = search._Pass.test

    def recording(self, case):
        if self.contract.name == contract_name and self.raise_for is None:  # the exploring pass
            drawn.append((self.variant, case))
        return judge(self, case)

    monkeypatch.setattr(search._Pass, "test", recording)
    run_conformance(implementation, checks=[f"{contract_name}.no_crash"], profile="ci", examples=examples,
                    in_process=True)
    first = drawn[0][0] if drawn else None
    return [case for variant, case in drawn if variant == first]
