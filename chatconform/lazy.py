"""pydantic-ai's message classes, imported when first read rather than when chatconform loads.

Importing ``pydantic_ai.messages`` runs the package's ``__init__``, which imports its agent
graph, models and instrumentation: most of a second, before any case is drawn. The modules
that handle histories read the classes through :data:`pai` (``pai.ModelRequest``), so
``chatconform --help``, ``chatconform list`` and a run of a contract that takes no history
(``thread``) never import pydantic-ai; the first attribute read of :data:`pai` imports it.
Annotations name the classes directly, from an ``if TYPE_CHECKING:`` import.
"""

from __future__ import annotations

import importlib
import random
import types
from typing import TYPE_CHECKING, Any


class LazyModule(types.ModuleType):
    """The module ``name``, imported at the first read of one of its attributes.

    That read copies the module's namespace here and makes this object a plain module, so
    every later read is an ordinary module attribute read. For reading classes and
    constants: a name the module rebinds later is not seen here.
    """

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):  # copy, pickle and inspect ask for these: not the module's
            raise AttributeError(attr)
        # The first read may come in the middle of drawing a case: the modules imported then
        # may draw from the global random stream (rich's style ids, through httpx), which
        # Hypothesis reports as a strategy using `random`. The import leaves it as it was.
        state = random.getstate()
        try:
            module = importlib.import_module(self.__name__)
        finally:
            random.setstate(state)
        self.__dict__.update(module.__dict__)
        self.__class__ = types.ModuleType  # type: ignore[assignment]  # loaded: a module like any other
        return getattr(module, attr)


if TYPE_CHECKING:
    import pydantic_ai.messages as pai
else:
    pai = LazyModule("pydantic_ai.messages")
