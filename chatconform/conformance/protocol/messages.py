"""The protocol's messages: one JSON Schema per message, shipped in ``schemas/``.

Replies from the program are validated here before chatconform reads them; requests are
built by chatconform and validated against the same schemas by the project's tests. A
schema's ``$defs`` entry can be used on its own (``call-reply`` holds one per contract
for the ``result``). jsonschema-rs answers "valid?" where it is installed; ``jsonschema``
words what is wrong.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

#: Every message of the protocol, by the name of its schema file.
MESSAGES = ("hello", "hello-reply", "call", "call-reply", "stop")


@lru_cache(maxsize=None)
def schema(name: str, part: str | None = None) -> dict:
    """The schema of message ``name``, or of its ``$defs`` entry ``part``."""
    if name not in MESSAGES:
        raise KeyError(f"no protocol message {name!r}; known: {', '.join(MESSAGES)}")
    whole = json.loads(resources.files(__package__).joinpath("schemas", f"{name}.json").read_text("utf-8"))
    if part is None:
        return whole
    return {**whole["$defs"][part], "$defs": whole["$defs"]}


@lru_cache(maxsize=None)
def _validator(name: str, part: str | None) -> Draft202012Validator:
    return Draft202012Validator(schema(name, part))


@lru_cache(maxsize=None)
def _fast(name: str, part: str | None) -> Any:
    try:
        import jsonschema_rs
    except ImportError:
        return None
    return jsonschema_rs.validator_for(schema(name, part), validate_formats=False)


def problem(message: Any, name: str, part: str | None = None) -> str | None:
    """The first way ``message`` breaks the schema (``$.path: what``), or None."""
    fast = _fast(name, part)
    if fast is not None:
        try:
            if fast.is_valid(message):
                return None
        except (ValueError, TypeError, OverflowError, RecursionError):
            pass  # not plain JSON data: jsonschema says what is wrong
    error = best_match(_validator(name, part).iter_errors(message))
    if error is None:
        return None
    path = "$" + "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in error.absolute_path)
    text = error.message if len(error.message) <= 200 else error.message[:200] + " …"
    return f"{path}: {text}"
