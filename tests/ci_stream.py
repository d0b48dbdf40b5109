"""The cases a contract's search draws under the ``ci`` profile, for tests that count shapes."""

from __future__ import annotations

from typing import Any

from chatconform import run_conformance
from chatconform.contracts import get_contract
from chatconform.reference.payload import PayloadMapper


class _ReferenceForOneProvider(PayloadMapper):
    """The reference for one provider: a derandomized exploring pass draws the same cases
    whatever it judges, and each provider is searched on the same cases, so the payload stream
    is drawn once instead of once per provider (a third of the time)."""

    name = "reference-openai-chat"
    version = "1"
    providers = frozenset({"openai-chat"})


#: The cases drawn, by contract, examples and implementation: each xdist worker draws a stream once.
_drawn: dict[tuple, list] = {}


def ci_cases(contract_name: str, monkeypatch: Any, *, examples: int | None = None,
             implementation: Any = "reference") -> list:
    """Every case the reference's ``ci`` search of ``contract_name`` draws (of its first
    variant only: each variant is searched on the same cases), in the order drawn.
    ``implementation``: another to search with (a derandomized exploring pass draws the same
    cases whatever it judges). A new list each call; its cases are shared, not to be changed.

    The cases are taken where the search judges them, not by wrapping the contract's
    strategy: a wrapped strategy (``.map``) has other labels, from which Hypothesis' later
    examples are made, and draws other cases after the first few."""
    if contract_name == "payload" and implementation == "reference":
        implementation = _ReferenceForOneProvider
    key = (contract_name, examples, implementation)
    if key not in _drawn:
        _drawn[key] = _draw(contract_name, monkeypatch, examples, implementation)
    return list(_drawn[key])


def _draw(contract_name: str, monkeypatch: Any, examples: int | None, implementation: Any) -> list:
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
