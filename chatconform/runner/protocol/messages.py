"""The protocol's messages: one JSON Schema per message, shipped in ``schemas/``.

Replies from the program are validated here before chatconform reads them; requests are
built by chatconform and validated against the same schemas by the project's tests. A
schema's ``$defs`` entry can be used on its own (``call-reply`` holds one per contract
for the ``result``). jsonschema-rs answers "valid?" where it is installed; ``jsonschema``
words what is wrong.

The files hold what no contract decides; what each contract decides (its name, its
methods, their inputs and results: :meth:`~chatconform.frame.contract.Contract.wire`)
is filled in from the contract catalog when a schema loads, so the schemas cannot drift
from the contracts. ``python -m chatconform.runner.protocol.messages DIR`` writes the
filled-in schemas, for a program's own tests.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from chatconform.contracts import all_contracts
from chatconform.frame.wire import WireMethod

#: Every message of the protocol, by the name of its schema file.
MESSAGES = ("hello", "hello-reply", "call", "call-reply", "stop")


@cache
def schema(name: str, part: str | None = None) -> dict:
    """The schema of message ``name``, or of its ``$defs`` entry ``part``."""
    if name not in MESSAGES:
        raise KeyError(f"no protocol message {name!r}; known: {', '.join(MESSAGES)}")
    whole = json.loads(resources.files(__package__).joinpath("schemas", f"{name}.json").read_text("utf-8"))
    _FILL.get(name, lambda whole, wires: None)(whole, carried())
    if part is None:
        return whole
    return {**whole["$defs"][part], "$defs": whole["$defs"]}


def carried() -> dict[str, tuple[WireMethod, ...]]:
    """The wire format of every contract that travels over the protocol, by name, in catalog order."""
    return {name: contract.wire() for name, contract in all_contracts().items() if contract.wire()}


def _fill_hello(whole: dict, wires: dict[str, tuple[WireMethod, ...]]) -> None:
    properties = whole["properties"]
    properties["contracts"]["propertyNames"] = {"enum": list(wires)}
    properties["more_methods"]["propertyNames"] = {"enum": [name for name, wire in wires.items() if len(wire) > 1]}


def _fill_call(whole: dict, wires: dict[str, tuple[WireMethod, ...]]) -> None:
    whole["properties"]["contract"] = {"enum": list(wires)}
    rules = whole["allOf"]
    for name, wire in wires.items():
        own = wire[0]
        method = {"const": own.name} if len(wire) == 1 else {"enum": [m.name for m in wire]}
        then: dict[str, Any] = {"properties": {"method": method}}
        if len(wire) == 1:
            then["properties"]["input"] = own.input
        if own.provider:
            then["required"] = ["provider"]
        else:
            then["not"] = {"required": ["provider"]}
        rules.append({"if": {"properties": {"contract": {"const": name}}}, "then": then})
        if len(wire) > 1:
            rules.extend({"if": {"properties": {"contract": {"const": name}, "method": {"const": m.name}}},
                          "then": {"properties": {"input": m.input}}} for m in wire)


def _fill_call_reply(whole: dict, wires: dict[str, tuple[WireMethod, ...]]) -> None:
    for name, wire in wires.items():
        for index, method in enumerate(wire):
            whole["$defs"][name if index == 0 else f"{name}.{method.name}"] = method.result


#: How each schema that names contracts is filled in from the catalog.
_FILL = {"hello": _fill_hello, "call": _fill_call, "call-reply": _fill_call_reply}


@cache
def _validator(name: str, part: str | None) -> Draft202012Validator:
    return Draft202012Validator(schema(name, part))


@cache
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


def main(argv: list[str] | None = None) -> int:
    """Write every message's filled-in schema to a folder."""
    import argparse
    from pathlib import Path

    parser = argparse.ArgumentParser(description=main.__doc__, allow_abbrev=False)
    parser.add_argument("folder", type=Path)
    folder = parser.parse_args(argv).folder
    folder.mkdir(parents=True, exist_ok=True)
    for name in MESSAGES:
        (folder / f"{name}.json").write_text(json.dumps(schema(name), indent=2, ensure_ascii=False) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
