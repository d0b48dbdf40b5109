"""The bundled adapters: real third-party code as implementations, each behind its extra."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable


def missing_modules(modules: Iterable[str]) -> list[str]:
    """The modules of ``modules`` that cannot be imported here (found without importing them)."""
    missing = []
    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:  # its parent package (such as ``google``) is missing
            found = False
        if not found:
            missing.append(module)
    return missing
