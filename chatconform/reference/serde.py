"""The reference ``dump`` and ``load``: a history as pydantic-ai's own JSON, and back.

``dump(history)`` returns the bytes ``pydantic_ai.messages.ModelMessagesTypeAdapter``
writes (``dump_json``): the form pydantic-ai documents for storing message history, with
binary content as base64. ``load(data)`` reads them back with the same adapter
(``validate_json``), from ``bytes`` or ``str``.

Policy, and why:

- **Exact round trip.** ``load(dump(h)) == h`` for every history of JSON-native content
  (what the bundled strategies build): nothing is dropped, defaulted or re-timed.
- **Malformed data is refused, never shortened.** Truncated JSON, a value of the wrong
  type and a part of an unknown ``part_kind`` raise :class:`pydantic.ValidationError` (a
  :class:`ValueError`), naming the path. A loader that skips what it cannot read returns
  a shorter history that looks valid and is stored again as the truth.
- Keys that are not fields are ignored, as pydantic-ai ignores them (data written by a
  newer release still loads); that is not a malformation.

Both are linear in the history (pydantic-core walks it once).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from chatconform.lazy import pai

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

__all__ = ["dump", "load"]

CONTRACT_METHODS = ("dump", "load")


def dump(history: Sequence[ModelMessage]) -> bytes:
    """``history`` as pydantic-ai's JSON."""
    return pai.ModelMessagesTypeAdapter.dump_json(list(history))


def load(data: bytes | str) -> list[ModelMessage]:
    """A history back from pydantic-ai's JSON; :class:`pydantic.ValidationError` if malformed."""
    return pai.ModelMessagesTypeAdapter.validate_json(data)
