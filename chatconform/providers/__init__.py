"""The provider table: one profile module per provider, every per-provider fact in one place.

Each module of this package other than ``profile`` and ``levels`` (the level of each
provider-bound check on each provider, built from the profiles) is one provider: it holds
``PROFILE``, a :class:`Provider`. The reference mapper, ``provider_schemas`` (schemas, sequence rules, the
turn view), the checks, the fakes and the adapters read the profiles; none of them compares
provider ids. Adding a provider is the files docs/architecture.md lists under "Adding a
provider": its profile module here, its JSON Schema, its rules module and its tests.
"""

from __future__ import annotations

import importlib
import pkgutil

from chatconform.errors import UnknownProvider

from .profile import CheckLevel, ContentKind, ModelContent, Provider

__all__ = ["PROVIDERS", "PROVIDER_IDS", "CheckLevel", "ContentKind", "ModelContent", "Provider", "get_provider"]


#: The modules of this package that hold no provider: the profile type, the table of levels.
_NOT_PROFILES = frozenset({"profile", "levels"})


def _profiles() -> list[Provider]:
    """The ``PROFILE`` of every provider module of this package, in table order."""
    found = []
    for module in pkgutil.iter_modules(__path__):
        if module.name not in _NOT_PROFILES:
            profile = importlib.import_module(f"{__name__}.{module.name}").PROFILE
            if profile.module_name != module.name:
                raise ImportError(f"{__name__}.{module.name} holds the profile of {profile.id!r}; "
                                  f"name the module {profile.module_name}.py")
            found.append(profile)
    return sorted(found, key=lambda p: p.order)


#: Every provider by id, in the order reports list them.
PROVIDERS: dict[str, Provider] = {p.id: p for p in _profiles()}
PROVIDER_IDS: tuple[str, ...] = tuple(PROVIDERS)


def get_provider(provider_id: object) -> Provider:
    """The profile of ``provider_id``; :class:`UnknownProvider` for an id not in the table."""
    try:
        return PROVIDERS[provider_id]  # type: ignore[index]
    except (KeyError, TypeError):
        raise UnknownProvider(provider_id, PROVIDER_IDS) from None
