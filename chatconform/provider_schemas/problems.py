"""The problem record, provider ids and JSON-path helpers shared by the schema and sequence checks.

Paths are JSON paths into the request body (``$.messages[3].role``) so a problem can be
located in a recorded body without knowing which dialect produced it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from chatconform.errors import UnknownProvider
from chatconform.providers import PROVIDER_IDS, PROVIDERS, get_provider

__all__ = ["GENERIC_RULE", "MESSAGES_KEY", "PROVIDER_IDS", "Problem", "UnknownProvider", "check_provider",
           "json_path", "path_tokens", "sort_problems"]


# The key that holds the message array in each dialect (a bare list body is taken as it).
MESSAGES_KEY: dict[str, str] = {p.id: p.messages_key for p in PROVIDERS.values()}

# The rule id given to a shape error that no more specific rule covers: "<letter>0" is
# "the request does not match the provider's published request shape".
GENERIC_RULE: dict[str, str] = {p.id: p.generic_rule for p in PROVIDERS.values()}


@dataclass(frozen=True)
class Problem:
    """One rule a request body breaks, with the provider's own error text."""

    rule: str
    path: str
    message: str
    provider: str
    severity: str = "error"  # or "warning"
    source: str = field(kw_only=True)  # "schema" or "sequence"


def check_provider(provider: object) -> str:
    return get_provider(provider).id


_IDENT = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$-]*$")


def json_path(parts: Iterable[Any]) -> str:
    """``["messages", 3, "role"]`` -> ``$.messages[3].role`` (odd keys in ``['...']``)."""
    out = ["$"]
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _IDENT.match(part):
            out.append(f".{part}")
        else:
            out.append("[" + json.dumps(part).replace('"', "'") + "]")
    return "".join(out)


_TOKEN = re.compile(r"\.([^.\[]+)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]")


@lru_cache(maxsize=8192)
def path_tokens(path: str) -> tuple[str | int, ...]:
    """The keys and indexes of a path made by :func:`json_path` (the inverse, for sorting)."""
    tokens: list[str | int] = []
    for name, index, quoted in _TOKEN.findall(path[1:]):
        if index:
            tokens.append(int(index))
        else:
            tokens.append(name or quoted)
    return tuple(tokens)


def sort_problems(problems: list[Problem], body: dict) -> list[Problem]:
    """Order problems as their paths occur in the body (top-level keys in the body's own order)."""
    rank = {key: i for i, key in enumerate(body)}

    def key(problem: Problem) -> tuple:
        tokens = path_tokens(problem.path)
        if not tokens:
            return ((-1, 0, ""),)
        first = tokens[0]
        head = (0, rank.get(first, len(rank)), str(first))
        rest = tuple((1, t, "") if isinstance(t, int) else (2, 0, t) for t in tokens[1:])
        return (head, *rest)

    return sorted(problems, key=key)
