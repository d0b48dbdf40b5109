"""The contracts: one module per contract in this package, plus any a third party registers.

Every module here defines ``CONTRACT``, an instance of a
:class:`~chatconform.frame.contract.Contract` subclass; the engine finds them by
listing the package, so adding a contract is adding its module. A module that fails to
import is an error, never a silent skip. Other packages add contracts through the entry-point
group ``chatconform.contracts`` (the value is a contract instance or class), as they add
implementations through ``chatconform.implementations``.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
from importlib.metadata import entry_points

from chatconform.errors import ConfigError, ContractLoadError
from chatconform.frame.contract import Contract
from chatconform.frame.registry import Check, find_check, registered_checks

GROUP = "chatconform.contracts"

_CONTRACTS: dict[str, Contract] = {}


def _bundled() -> list[tuple[str, Contract]]:
    found = []
    for info in pkgutil.iter_modules(__path__):
        module_name = f"{__name__}.{info.name}"
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:
            raise ContractLoadError(f"contract module {module_name} failed to import: "
                                    f"{type(exc).__name__}: {exc}") from exc
        contract = getattr(module, "CONTRACT", None)
        if not isinstance(contract, Contract):
            raise ContractLoadError(f"contract module {module_name} defines no CONTRACT (a Contract instance)")
        found.append((module_name, contract))
    return sorted(found, key=lambda pair: (pair[1].listing_order, pair[1].name))


def _registered() -> list[tuple[str, Contract]]:
    found = []
    for ep in entry_points(group=GROUP):
        try:
            target = ep.load()
            contract = target() if isinstance(target, type) else target
        except Exception as exc:
            raise ContractLoadError(f"contract entry point {ep.name!r} ({ep.value}) failed to load: "
                                    f"{type(exc).__name__}: {exc}") from exc
        if not isinstance(contract, Contract):
            raise ContractLoadError(f"contract entry point {ep.name!r} ({ep.value}) is "
                                    f"{type(contract).__name__}, not a chatconform Contract")
        found.append((f"entry point {ep.name!r}", contract))
    return found


def all_contracts() -> dict[str, Contract]:
    """Every contract by name: the bundled ones, then the registered ones."""
    if not _CONTRACTS:
        origin: dict[str, str] = {}
        for where, contract in _bundled() + _registered():
            if contract.name in origin:
                raise ContractLoadError(f"two contracts are named {contract.name!r}: "
                                        f"{origin[contract.name]} and {where}")
            origin[contract.name] = where
            _CONTRACTS[contract.name] = contract
    return _CONTRACTS


def get_contract(name: str) -> Contract:
    contracts = all_contracts()
    if name not in contracts:
        raise ConfigError(f"unknown contract {name!r}; known: {', '.join(contracts)}")
    return contracts[name]


def all_checks() -> list[Check]:
    """Every check of every contract, in registration order."""
    all_contracts()
    return registered_checks()


def get_check(check_id: str) -> Check:
    """The check with id ``check_id``; a ConfigError suggesting close ids when there is none."""
    all_contracts()
    check = find_check(check_id)
    if check is None:
        close = difflib.get_close_matches(check_id, [c.id for c in registered_checks()], n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else "; `chatconform list` shows them"
        raise ConfigError(f"unknown check id {check_id!r}{hint}")
    return check
