"""How a contract's calls travel over the ``exec:`` protocol (``docs/protocol.md``).

A contract declares its wire format with :meth:`~chatconform.conformance.contract.Contract.wire`:
one :class:`WireMethod` for its own method, then one for each further method its checks
call on the same implementation (``load`` for ``serde``). Each says how the call's
arguments become the call's ``input`` (the case's JSON, as saved failures use it), how the
reply's ``result`` becomes what the checks read, and the JSON Schema of both: the protocol's
schemas are filled in from these when they load, so a contract's wire format lives with
the contract and nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chatconform.history import history_from_json

#: An input field that holds a history: the history schema every call schema shares.
HISTORY_SCHEMA: dict[str, Any] = {"$ref": "#/$defs/history"}


@dataclass(frozen=True)
class WireMethod:
    """One method's calls over the protocol.

    ``encode(args, kwargs)`` gives the call's ``(input, provider)`` (provider None: the
    call names none); ``decode(result)`` gives what the checks read, or raises ValueError
    naming what is wrong (a ``MalformedResult``). ``input`` and ``result`` are the JSON
    Schemas the call's input and the reply's result follow; ``provider`` says whether the
    call carries a provider id.
    """

    name: str
    encode: Callable[[tuple, dict], tuple[Any, str | None]]
    decode: Callable[[Any], Any]
    input: dict[str, Any]
    result: dict[str, Any]
    provider: bool = False


def as_is(data: Any) -> Any:
    """A result the checks read as the JSON it came in (a request body, a stored text)."""
    return data


def history_result(data: Any) -> Any:
    """A result that is a history, in the same JSON as an input history."""
    return history_from_json(data, "the result")


def history_result_schema(description: str) -> dict[str, Any]:
    """The result schema of a method that returns a history."""
    return {"description": description, "type": "array",
            "items": {"type": "object", "required": ["kind", "parts"]}}


def object_schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """An input that is a JSON object of exactly these fields."""
    return {"type": "object", "required": required, "additionalProperties": False, "properties": properties}
