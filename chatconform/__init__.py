"""chatconform: a property-based conformance suite for LLM chat-history code.

``run_conformance(impl)`` runs the checks against an implementation;
``check_case(impl, check_id, case)`` re-runs one saved failure as a regression test
(``saved_case(name)`` loads a long case from the failure chatconform saved);
``lifecycle_machine(impl)`` is the lifecycle contract as a Hypothesis state machine.
"""

from __future__ import annotations

from typing import Any

from chatconform.version import __version__

__all__ = ["__version__", "check_case", "lifecycle_machine", "run_conformance", "saved_case"]


def __getattr__(name: str) -> Any:
    if name == "run_conformance":
        from chatconform.api import run_conformance

        return run_conformance
    if name == "check_case":
        from chatconform.outputs.repro import check_case

        return check_case
    if name == "saved_case":
        from chatconform.outputs.repro import saved_case

        return saved_case
    if name == "lifecycle_machine":
        from chatconform.contracts.lifecycle import lifecycle_machine

        return lifecycle_machine
    raise AttributeError(name)
