"""One turn view over every request dialect, so payload checks are written once.

A check that asks "is the first non-system turn a user turn?" or "is every tool call answered?"
reads ``turn_view(body, provider)`` instead of each dialect's shape: the provider's dialect
reads the body back (``Dialect.read`` in ``chatconform.dialects``). The view is forgiving: it
reads what it can and skips what it cannot (the schema reports malformed bodies, not this).
"""

from __future__ import annotations

from chatconform.dialects import get_dialect
from chatconform.dialects.base import BodyTurn as Turn
from chatconform.providers import get_provider

__all__ = ["Turn", "turn_view"]


def turn_view(body: dict | list, provider: str) -> list[Turn]:
    """The body's turns in order, the provider's system slot first (a bare list = the messages)."""
    profile = get_provider(provider)
    if isinstance(body, list):
        body = {profile.messages_key: body}
    if not isinstance(body, dict):
        return []
    return list(get_dialect(profile.dialect).read(body))
