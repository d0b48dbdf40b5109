"""Malformed stored histories, derived from valid dumps, and whole serde cases.

A stored history goes bad in a few ways, each of which a loader must refuse with a
validation error rather than return a shorter history:

- ``truncate``: the text cut short (a write that did not finish, a column too narrow);
  every proper prefix of a JSON array is invalid JSON;
- ``wrong_type``: a message's ``parts`` stored as an object instead of a list;
- ``unknown_part``: a part whose ``part_kind`` this release does not know (data written
  by a newer release, or by hand).

:func:`malform` applies one of them at a drawn position to pydantic-ai's JSON of a
history; :func:`serde_cases` draws (history, malformation, position).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from hypothesis import strategies as st

from chatconform.strategies.histories import histories

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

__all__ = ["MALFORMATIONS", "UNKNOWN_PART_KIND", "malform", "serde_cases"]

MALFORMATIONS = ("truncate", "wrong_type", "unknown_part")
#: The ``part_kind`` no pydantic-ai release has.
UNKNOWN_PART_KIND = "hologram"

_EMPTY_ODDS = 20
#: The longest bulk section a serde case holds (hundreds of messages; benchmarks go further).
_BULK_TURNS = 300


def malform(data: bytes | str, malformation: str, at: int) -> bytes | str:
    """``data`` (pydantic-ai's JSON of a history) with ``malformation`` applied at ``at``
    (any non-negative int: it is taken modulo the places there are); same type as ``data``."""
    if malformation not in MALFORMATIONS:
        raise ValueError(f"malformation={malformation!r} must be one of {', '.join(MALFORMATIONS)}")
    text = data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else data
    if malformation == "truncate":
        out = text[:1 + at % max(1, len(text) - 1)]
    else:
        messages = json.loads(text)
        if not messages:  # nothing to corrupt: a message that is wrong in itself
            messages = [{"kind": "request", "parts": []}]
        message = messages[at % len(messages)]
        parts = message.get("parts") or []
        if malformation == "wrong_type":
            message["parts"] = {str(i): part for i, part in enumerate(parts)}
        elif parts:
            parts[(at // len(messages)) % len(parts)]["part_kind"] = UNKNOWN_PART_KIND
        else:
            message["parts"] = [{"part_kind": UNKNOWN_PART_KIND, "content": "from a newer release"}]
        out = json.dumps(messages, ensure_ascii=False)
    return out if isinstance(data, str) else out.encode("utf-8")


@st.composite
def serde_cases(draw) -> tuple[list[ModelMessage], str, int]:
    """(history, malformation, position): a history to store, and how its dump goes bad."""
    empty = draw(st.integers(0, _EMPTY_ODDS - 1)) == _EMPTY_ODDS - 1
    history = [] if empty else draw(histories(max_bulk_turns=_BULK_TURNS))
    return history, draw(st.sampled_from(MALFORMATIONS)), draw(st.integers(0, 10_000))
