"""What a contract is, and the table of contracts the engine knows.

A contract names one method an implementation may provide, how to draw its inputs,
how to call it, and which checks judge the result. Adding a contract is one module
that builds a :class:`Contract` and registers its checks.
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from chatconform.conformance.registry import Check, ConfigError, register

# One module per contract; each defines CONTRACT.
CONTRACT_MODULES = {
    "thread": "chatconform.conformance.thread",
    "payload": "chatconform.conformance.payload",
}


@dataclass
class Example:
    """One evaluated input: what the checks see."""

    contract: Contract
    case: Any
    output: Any
    variant: str | None

    memo: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def reference(self) -> Any:
        return self.contract.reference(self.case, self.variant)

    def once(self, key: str, compute: Callable[[], Any]) -> Any:
        """A value several checks derive from this example, computed once."""
        if key not in self.memo:
            self.memo[key] = compute()
        return self.memo[key]


class Contract:
    """Base class; one subclass instance per contract module."""

    name: str
    method: str
    signature: str
    crash_rationale: str
    mutation_rationale: str
    # Cheap contracts search more cases per profile example budget.
    examples_scale: float = 1.0

    def __init__(self) -> None:
        self.checks: list[Check] = []
        self._register(self.check_id("no_crash"), "returns a well-formed result on valid input, "
                       "without raising or hanging", self.crash_rationale, None)
        self._register(self.check_id("input_untouched"), "leaves its input unchanged",
                       self.mutation_rationale, None)

    # -- checks -------------------------------------------------------------------
    def check_id(self, short: str) -> str:
        return f"{self.name}.{short}"

    def check(self, short: str, *, title: str, rationale: str) -> Callable:
        """Decorator registering ``fn(example)`` as check ``<contract>.<short>``."""

        def decorate(fn: Callable[[Example], None]) -> Callable[[Example], None]:
            self._register(self.check_id(short), title, rationale, fn)
            return fn

        return decorate

    def _register(self, check_id, title, rationale, fn) -> None:
        check = register(Check(check_id, self.name, title, rationale, fn))
        self.checks.append(check)

    def ordered_checks(self) -> list[Check]:
        """Engine order: crash and mutation first, matches_reference last (the catch-all)."""
        last = self.check_id("matches_reference")
        return sorted(self.checks, key=lambda c: c.id == last)

    # -- what each contract module provides ------------------------------------------
    def variants(self, impl: Any) -> list[str | None]:
        """The separate searches to run for one implementation (e.g. one per provider)."""
        return [None]

    def skip_reason(self, impl: Any) -> str | None:
        return None

    def cases(self, variant: str | None):  # -> SearchStrategy
        raise NotImplementedError

    def call(self, fn: Callable, case: Any, variant: str | None) -> Any:
        raise NotImplementedError

    def copy_case(self, case: Any) -> Any:
        """A private copy for the implementation to receive (and perhaps mutate)."""
        return copy.deepcopy(case)

    def fingerprint(self, case: Any) -> Any:
        """A comparable snapshot of the input, to detect mutation."""
        raise NotImplementedError

    def reference(self, case: Any, variant: str | None) -> Any:
        raise NotImplementedError

    def output_problem(self, output: Any) -> str | None:
        """Why the output is not a well-formed result, or None."""
        return None

    def case_to_json(self, case: Any) -> Any:
        raise NotImplementedError

    def case_from_json(self, data: Any) -> Any:
        raise NotImplementedError

    def size(self, case: Any) -> int:
        """How big a case is; the deep profile steers toward large ones."""
        return 0


_CONTRACTS: dict[str, Contract] = {}


def all_contracts() -> dict[str, Contract]:
    if not _CONTRACTS:
        for name, module in CONTRACT_MODULES.items():
            try:
                mod = importlib.import_module(module)
            except ModuleNotFoundError as exc:
                if exc.name == module:
                    continue  # contract not built yet
                raise
            _CONTRACTS[name] = mod.CONTRACT
    return _CONTRACTS


def get_contract(name: str) -> Contract:
    contracts = all_contracts()
    if name not in contracts:
        raise ConfigError(f"unknown contract {name!r}; known: {', '.join(contracts)}")
    return contracts[name]
