"""The reference implementation: one small, obviously-correct module per contract.

Each module of this package lists in ``CONTRACT_METHODS`` the contract methods it
defines, and in ``IMPLEMENTATION_SETTINGS`` any settings an implementation of them
declares (``providers`` for ``to_payload``). :class:`ReferenceImplementation` gathers
them, so a new contract's reference is its own module and nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from chatconform.reference.thread import UUID_NIL, Row, extract_thread
from chatconform.version import __version__

__all__ = ["UUID_NIL", "ReferenceImplementation", "Row", "__version__", "extract_thread"]


def _gathered() -> dict[str, Any]:
    members: dict[str, Any] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for method in getattr(module, "CONTRACT_METHODS", ()):
            members[method] = staticmethod(getattr(module, method))
        members.update(getattr(module, "IMPLEMENTATION_SETTINGS", {}))
    return members


ReferenceImplementation = type("ReferenceImplementation", (), {
    "__doc__": "Defines the expected behaviour of every contract.",
    "__module__": __name__,
    "name": "reference",
    "version": __version__,
    **_gathered(),
})
