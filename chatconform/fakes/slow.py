"""Slow fakes: the reference, with each call taking a second.

A request transform that walks the whole conversation with the GIL held takes seconds on
a long one (NousResearch/hermes-agent#111723: the openai SDK's ``chat.completions.create``
transform; openai/openai-python#3616, BerriAI/litellm#29769). Such a call returns: it is
slow, not hung. Against the 2 s deadline the project's tests give the fakes (slow past
0.4 s, hung past 2 s), each fake here must be reported by ``<contract>.slow`` as a warning,
and never by ``no_crash``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from chatconform.fakes.base import Fake
from chatconform.reference import ReferenceImplementation
from chatconform.reference.serde import load

#: How long each call takes.
SECONDS = 1.0

_REPRODUCES = ("a request transform that walks the whole conversation takes seconds on a long one "
               "(https://github.com/NousResearch/hermes-agent/issues/111723)")


def _slowed(method: str) -> Callable[..., Any]:
    """The reference's ``method``, called after :data:`SECONDS`."""
    reference = getattr(ReferenceImplementation, method)

    def slowed(self: Any, *args: Any, **kwargs: Any) -> Any:
        time.sleep(SECONDS)
        return reference(*args, **kwargs)

    slowed.__name__ = slowed.__qualname__ = method
    return slowed


def _slow_fake(class_name: str, contract: str, method: str, **more: Any) -> type[Fake]:
    """A fake whose ``method`` (the ``contract``'s own) is the reference's, slowed."""
    return type(class_name, (Fake,), {
        "__module__": __name__, "__doc__": f"The reference's {method}, taking {SECONDS:g} s a call.",
        "name": f"fake-slow-{contract}", "reproduces": _REPRODUCES, "violates": (), "warns": (f"{contract}.slow",),
        method: _slowed(method), **more})


SlowThreads = _slow_fake("SlowThreads", "thread", "extract_thread")
SlowPayload = _slow_fake("SlowPayload", "payload", "to_payload", providers=frozenset({"openai-chat"}))
SlowCompaction = _slow_fake("SlowCompaction", "compaction", "compact")
SlowPersist = _slow_fake("SlowPersist", "persist", "persist_run")
SlowSanitize = _slow_fake("SlowSanitize", "sanitize", "sanitize")
SlowTrim = _slow_fake("SlowTrim", "trim", "trim")
SlowRepair = _slow_fake("SlowRepair", "repair", "repair")
SlowSerde = _slow_fake("SlowSerde", "serde", "dump", load=staticmethod(load))
SlowLifecycle = _slow_fake("SlowLifecycle", "lifecycle", "repair")
