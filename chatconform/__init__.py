"""chatconform: a property-based conformance suite for LLM chat-history code.

``run_conformance(impl)`` runs the checks against an implementation;
``check_case(impl, check_id, case)`` re-runs one saved failure as a regression test;
``lifecycle_machine(impl)`` is the lifecycle contract as a Hypothesis state machine.
"""

from __future__ import annotations

from typing import Any

from chatconform.version import __version__

__all__ = ["__version__", "check_case", "lifecycle_machine", "run_conformance"]


def __getattr__(name: str) -> Any:
    if name in ("check_case", "lifecycle_machine", "run_conformance"):
        from chatconform import conformance

        return getattr(conformance, name)
    raise AttributeError(name)
