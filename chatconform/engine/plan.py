"""Planning a run: which contracts and checks (:func:`select`), one :class:`Unit` per search
(:func:`plan`), and a shard's share of them (:func:`shard_units`).

The units are independent, so they run in any order, in other processes or in other CI
jobs (shards), and fold to the same verdicts.
"""

from __future__ import annotations

from collections.abc import Iterable

from chatconform.contracts import all_contracts, get_check, get_contract
from chatconform.engine.results import Selection, Unit
from chatconform.engine.search import checks_of, contract_stream
from chatconform.errors import ConfigError
from chatconform.runner.discovery import Implementation


def select(contracts: Iterable[str] | None = None, checks: Iterable[str] | None = None) -> Selection:
    """Resolve contract names and check ids (unknown ones are a ConfigError)."""
    check_ids = [get_check(c).id for c in checks or ()]
    names = list(contracts or ())
    if check_ids and not names:
        names = list(dict.fromkeys(get_check(c).contract for c in check_ids))
    chosen = [get_contract(n) for n in names] if names else list(all_contracts().values())
    if check_ids:
        outside = [c for c in check_ids if get_check(c).contract not in {k.name for k in chosen}]
        if outside:
            raise ConfigError(f"check {outside[0]} is not in the selected contracts")
    return Selection(chosen, frozenset(check_ids) if check_ids else None)


def plan(impls: list[Implementation], selection: Selection, *, run_stream: int | None = None) -> list[Unit]:
    """Every unit of a run, in report order: implementations as given, contracts in listing
    order, variants as the contract lists them. A contract none of whose checks is selected
    has no unit."""
    units: list[Unit] = []
    for index, impl in enumerate(impls):
        for contract in selection.contracts:
            if checks_of(contract, selection.checks) == frozenset():
                continue
            reason = (contract.missing(impl) if impl.method(contract) is None
                      else contract.skip_reason(impl))
            variants = [] if reason else contract.variants(impl)
            if not reason and not variants:
                reason = f"{impl.name} gives {contract.name} nothing to search"
            if reason:
                units.append(Unit(index, contract.name, skip=reason))
                continue
            stream = contract_stream(run_stream, contract.name)
            units.extend(Unit(index, contract.name, variant, stream=stream) for variant in variants)
    return units


def shard_units(units: list[Unit], index: int, count: int) -> list[Unit]:
    """Shard ``index`` of ``count`` (1-based): every ``count``-th unit of the plan, starting at
    the ``index``-th. It depends on the plan alone, never on ``--jobs``."""
    if not 1 <= index <= count:
        raise ConfigError(f"shard {index}/{count}: the shard number must be between 1 and {count}")
    return [unit for position, unit in enumerate(units) if position % count == index - 1]


def nothing_ran_in(units: list[Unit]) -> bool:
    """Whether a plan has no search at all (every unit skipped, or none)."""
    return all(u.skip is not None for u in units)



def search_order(units: list[Unit]) -> list[Unit]:
    """The units in the order to search them: contract by contract (in the plan's order of
    contracts), and within a contract variant by variant (in the order the plan first names
    each), each variant's in plan order. A run keeps one contract's drawn cases at a time,
    and what was derived from them for one variant (:mod:`~chatconform.engine.drawn`),
    so every search of a contract meets them kept and every implementation judged for a
    provider meets the reference's answers for it; the verdicts are folded in plan order
    whatever the order searched."""
    first: dict[str, int] = {}
    variant: dict[tuple[str, str | None], int] = {}
    for position, unit in enumerate(units):
        first.setdefault(unit.contract, position)
        variant.setdefault((unit.contract, unit.variant), position)
    return sorted(units, key=lambda unit: (first[unit.contract], variant[unit.contract, unit.variant]))
