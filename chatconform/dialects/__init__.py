"""The request dialects: one module per wire format, each all of it in one place.

A dialect module renders the reference's neutral turns into a request body (what the
reference ``to_payload`` and the fakes send), reads a body back into turns (what the payload
checks and ``validate`` read), and answers over HTTP as the provider does (``chatconform
serve``): the protocol is :class:`~chatconform.dialects.base.Dialect`. Each module but the
shared ones (``base``, ``http``, ``eventstream``) holds ``DIALECT``, named as the module; a
provider's profile names its dialect, and a name no module answers to fails the profile's
import. Adding a dialect is the files docs/architecture.md lists under "Adding a dialect".
"""

from __future__ import annotations

import importlib
import pkgutil

from chatconform.errors import UnknownDialect

from .base import Dialect

__all__ = ["DIALECTS", "Dialect", "get_dialect"]

#: The modules of this package that are no dialect: the protocol and neutral turns, the
#: HTTP answer data, AWS's event stream.
_SHARED = frozenset({"base", "http", "eventstream"})


def _dialects() -> dict[str, Dialect]:
    """The ``DIALECT`` of every dialect module of this package, by name."""
    found = {}
    for module in pkgutil.iter_modules(__path__):
        if module.name in _SHARED:
            continue
        dialect = importlib.import_module(f"{__name__}.{module.name}").DIALECT
        if not isinstance(dialect, Dialect) or getattr(dialect, "name", None) != module.name:
            raise ImportError(f"{__name__}.{module.name}.DIALECT must be a Dialect named {module.name!r}")
        if not getattr(dialect, "routes", None):
            raise ImportError(f"{__name__}.{module.name}: the dialect lists no routes for serve to answer at")
        found[module.name] = dialect
    return found


#: Every dialect by name.
DIALECTS: dict[str, Dialect] = _dialects()


def get_dialect(name: object) -> Dialect:
    """The dialect called ``name``; :class:`UnknownDialect` for a name no module answers to."""
    try:
        return DIALECTS[name]  # type: ignore[index]
    except (KeyError, TypeError):
        raise UnknownDialect(name, tuple(DIALECTS)) from None
