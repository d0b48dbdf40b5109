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


class SlowThreads(Fake):
    name = "fake-slow-threads"
    reproduces = _REPRODUCES
    violates = ()
    warns = ("thread.slow",)
    extract_thread = _slowed("extract_thread")


class SlowPayload(Fake):
    name = "fake-slow-payload"
    reproduces = _REPRODUCES
    violates = ()
    warns = ("payload.slow",)
    providers = frozenset({"openai-chat"})
    to_payload = _slowed("to_payload")


class SlowCompaction(Fake):
    name = "fake-slow-compaction"
    reproduces = _REPRODUCES
    violates = ()
    warns = ("compaction.slow",)
    compact = _slowed("compact")


class SlowPersist(Fake):
    name = "fake-slow-persist"
    reproduces = _REPRODUCES
    violates = ()
    warns = ("persist.slow",)
    persist_run = _slowed("persist_run")


class SlowSanitize(Fake):
    name = "fake-slow-sanitize"
    reproduces = _REPRODUCES
    violates = ()
    warns = ("sanitize.slow",)
    sanitize = _slowed("sanitize")


class SlowTrim(Fake):
    name = "fake-slow-trim"
    reproduces = _REPRODUCES
    violates = ()
    warns = ("trim.slow",)
    trim = _slowed("trim")


class SlowRepair(Fake):
    name = "fake-slow-repair"
    reproduces = _REPRODUCES
    violates = ()
    warns = ("repair.slow",)
    repair = _slowed("repair")


class SlowSerde(Fake):
    name = "fake-slow-serde"
    reproduces = _REPRODUCES
    violates = ()
    warns = ("serde.slow",)
    dump = _slowed("dump")
    load = staticmethod(ReferenceImplementation.load)
