"""chatconform: a property-based conformance suite for LLM chat-history code.

``run_conformance(impl)`` runs the checks against an implementation;
``check_case(impl, check_id, case)`` re-runs one saved failure as a regression test.
"""

from __future__ import annotations

from typing import Any

__all__ = ["check_case", "run_conformance"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from chatconform import conformance

        return getattr(conformance, name)
    raise AttributeError(name)
