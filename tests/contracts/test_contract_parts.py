"""Every contract has every part a contract needs (docs/architecture.md, "Adding a contract").

A failure names the contract and the part it lacks. The parts: its module in the catalog
with ``CONTRACT``, a reference module, a fake claiming each of its checks, a wire format for
the ``exec:`` protocol, guard tests that exist, a large input (or the reason it has none),
its page, and its rows in the README's contract table and in docs/protocol.md's call and
call-reply tables (which ``tools/generate_docs.py`` writes from the catalog).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from chatconform.contracts import all_contracts
from chatconform.fakes import all_fakes
from chatconform.frame.contract import Contract

ROOT = Path(__file__).resolve().parents[2]
#: What writes the docs' rows of a contract from the catalog (tools/generate_docs.py).
COMMAND = "python tools/generate_docs.py"


def _table(text: str, header: str) -> list[list[str]]:
    """The rows (cells) of the Markdown table that opens with ``header``."""
    lines = text.splitlines()
    start = lines.index(header) + 2
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return rows


def protocol_tables(root: Path = ROOT) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """docs/protocol.md's (contract, method) rows of the call input table and of the
    call-reply result table."""
    text = (root / "docs" / "protocol.md").read_text("utf-8")
    return tuple({(row[0].strip("`"), row[1].strip("`")) for row in _table(text, header)}
                 for header in ("| contract | method | input |", "| contract | method | result |"))


def missing_parts(contract: Contract, root: Path = ROOT) -> list[str]:
    """What ``contract`` lacks, each named so the fix is plain; empty when it is whole."""
    missing = []
    module = sys.modules.get(type(contract).__module__)
    if getattr(module, "CONTRACT", None) is not contract:
        missing.append(f"its module {type(contract).__module__} defines no CONTRACT that is this contract")
    if contract.reference_module is None:
        if not contract.composes:  # a composition's reference is the reference of what it composes
            missing.append("a reference module (Contract.reference_module)")
    else:
        try:
            importlib.import_module(contract.reference_module)
        except ImportError as exc:
            missing.append(f"its reference module {contract.reference_module} ({exc})")
    claimed = {check for fake in all_fakes().values() for check in (*fake.violates, *getattr(fake, "warns", ()))}
    unclaimed = [check.id for check in contract.checks if check.id not in claimed]
    if unclaimed:
        missing.append(f"a fake in chatconform/fakes/ claiming {', '.join(unclaimed)} (violates or warns)")
    wire = contract.wire()
    if (not wire or wire[0].name != contract.method) and not contract.composes:  # composed: its methods' calls
        missing.append(f"a wire format whose first method is {contract.method} (Contract.wire)")
    if not contract.guard_tests:
        missing.append("guard tests for its reference (Contract.guard_tests)")
    missing += [f"its guard test {test}, which does not exist" for test in contract.guard_tests
                if not (root / test).is_file()]
    if type(contract).large_case is Contract.large_case and not contract.no_large_case:
        missing.append("a large_case, or the reason it has none (Contract.no_large_case)")
    page = f"docs/contracts/{contract.name}.md"
    if not (root / page).is_file():
        missing.append(f"its page {page} (its input, its checks and the reference's policy)")
    regenerate = f"(run {COMMAND})"
    if f"| [`{contract.name}`]({page}) |" not in (root / "README.md").read_text("utf-8"):
        missing.append(f"its row in the README's contract table {regenerate}")
    for table, rows in zip(("call input", "call-reply result"), protocol_tables(root), strict=True):
        missing += [f"a row for {method.name} in docs/protocol.md's {table} table {regenerate}" for method in wire
                    if (contract.name, method.name) not in rows]
    return missing


@pytest.mark.parametrize("name", list(all_contracts()))
def test_every_contract_has_its_parts(name):
    assert missing_parts(all_contracts()[name]) == [], f"contract {name!r} lacks parts"


def test_the_schema_files_name_no_contract():
    """The contract names in the protocol's schemas come from the catalog, not from the files."""
    folder = ROOT / "chatconform" / "runner" / "protocol" / "schemas"
    for path in folder.glob("*.json"):
        text = path.read_text("utf-8")
        assert not [name for name in all_contracts() if f'"{name}"' in text], path.name
