"""How a contract's calls travel over the ``exec:`` protocol (``docs/protocol.md``).

A contract declares its wire format with :meth:`~chatconform.frame.contract.Contract.wire`:
one :class:`WireMethod` for its own method, then one for each further method its checks
call on the same implementation (``load`` for ``serde``). Each says how the call's
arguments become the call's ``input`` (the case's JSON, as saved failures use it), how the
reply's ``result`` becomes what the checks read, and the JSON Schema of both: the protocol's
schemas are filled in from these when they load, so a contract's wire format lives with
the contract and nowhere else.

The same format serves the other side: the built-in host
(:mod:`chatconform.runner.protocol.host`), which runs a Python implementation in a
process of its own, turns a call back into the method's arguments and its result into the
reply's JSON with :attr:`WireMethod.receive` and :attr:`WireMethod.reply`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chatconform.history import history_from_json
from chatconform.lazy import pai

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

    The host's side: ``reply(output)`` gives the JSON of what a Python implementation
    returned (``decode`` reads it back); ``receive(input)`` gives the ``(args, kwargs)`` of a
    further method (the contract's own method is called on the case its input loads as).
    """

    name: str
    encode: Callable[[tuple, dict], tuple[Any, str | None]]
    decode: Callable[[Any], Any]
    input: dict[str, Any]
    result: dict[str, Any]
    provider: bool = False
    reply: Callable[[Any], Any] | None = None
    receive: Callable[[Any], tuple[tuple, dict]] | None = None

    def result_json(self, output: Any) -> Any:
        """What the host sends for ``output``: :attr:`reply`'s JSON, else the output as it is."""
        return output if self.reply is None else self.reply(output)


def as_is(data: Any) -> Any:
    """A result the checks read as the JSON it came in (a request body, a stored text)."""
    return data


def history_result(data: Any) -> Any:
    """A result that is a history, in the same JSON as an input history."""
    return history_from_json(data, "the result")


def history_reply(output: Any) -> Any:
    """A history result as the host sends it: pydantic-ai's own JSON, every field written
    (which :func:`history_result` reads back as it reads the slim form, and several times
    faster to write than :func:`~chatconform.history.history_to_json`)."""
    return pai.ModelMessagesTypeAdapter.dump_python(list(output), mode="json")


def history_result_schema(description: str) -> dict[str, Any]:
    """The result schema of a method that returns a history."""
    return {"description": description, "type": "array",
            "items": {"type": "object", "required": ["kind", "parts"]}}


def object_schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """An input that is a JSON object of exactly these fields."""
    return {"type": "object", "required": required, "additionalProperties": False, "properties": properties}
