"""Contracts, the check registry, the engine, the pytest plugin and reports.

Kept import-light: the pytest plugin lives here and loads in every pytest session of
anyone who installed chatconform.
"""

from __future__ import annotations

from typing import Any

__all__ = ["check_case", "lifecycle_machine", "run_conformance"]


def __getattr__(name: str) -> Any:
    if name == "run_conformance":
        from chatconform.conformance.api import run_conformance

        return run_conformance
    if name == "check_case":
        from chatconform.conformance.repro import check_case

        return check_case
    if name == "lifecycle_machine":
        from chatconform.conformance.contracts.lifecycle import lifecycle_machine

        return lifecycle_machine
    raise AttributeError(name)
