"""Known-bug implementations. Each reproduces one real bug; the suite must catch each.

Every fake derives from :class:`~chatconform.fakes.base.Fake` and declares ``reproduces``
(the bug, with a link) and ``violates`` (the check ids that must catch it at error level);
``warns`` names the checks that report it only as a warning (a portability hazard, or
advice). The project's tests hold the suite to all three.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from chatconform.fakes.base import Fake


def all_fakes() -> dict[str, type[Fake]]:
    """``module:Class`` spec -> class, for every fake in this package."""
    found: dict[str, type[Fake]] = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for attr, obj in vars(module).items():
            if (inspect.isclass(obj) and obj.__module__ == module.__name__ and hasattr(obj, "violates")
                    and not attr.startswith("_")):
                if not issubclass(obj, Fake):
                    raise TypeError(f"{module.__name__}:{attr} declares violates but does not derive from Fake")
                found[f"{module.__name__}:{attr}"] = obj
    return found
