"""Tool-call arguments valid for the tool's declared JSON schema: what a model sends when it
calls a tool, so a framework that validates arguments (pydantic-ai, the OpenAI Agents SDK)
runs the tool instead of ending the conversation on a validation error.

The leaves (strings with a ``pattern`` or ``format``, bounded numbers, enums) come from
hypothesis-jsonschema. Objects and arrays are built here: its object strategy drives a private
Hypothesis API (``cu.many(...).more()``) that the Hypothesis releases chatconform allows no
longer have. Structure follows what a model sends: every required property, each optional
one or not, no property the schema does not name; ``$ref`` into the schema's own ``$defs``
(or ``definitions``) is followed, a recursive one down to :data:`MAX_DEPTH`. Every drawn value
is checked against the schema with ``jsonschema`` (a ``oneOf`` whose branches overlap, an
``allOf`` whose parts clash), so a value that does not validate is never returned.

A schema no value can be drawn for (a recursion that never ends, an invalid schema) is an
:class:`Undrawable` when the strategy is built, so a caller can leave that tool uncalled.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

__all__ = ["MAX_DEPTH", "Undrawable", "arguments"]

#: How deep a drawn value nests objects and arrays; below it only what is required is drawn.
MAX_DEPTH = 6
#: The keywords a leaf schema may hold, handed to hypothesis-jsonschema as they are.
_LEAF_KEYWORDS = frozenset({"type", "enum", "const", "pattern", "format", "minLength", "maxLength", "minimum",
                            "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"})
_JSON_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")


class Undrawable(ValueError):
    """No value can be drawn for this schema (said why)."""


def _pointer(root: Mapping[str, Any], ref: str) -> Any:
    if not ref.startswith("#"):
        raise Undrawable(f"$ref {ref!r} points outside the schema")
    node: Any = root
    for part in filter(None, ref[1:].split("/")):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, Mapping) or part not in node:
            raise Undrawable(f"$ref {ref!r} names nothing in the schema")
        node = node[part]
    return node


def _merged(parts: list[Any]) -> dict[str, Any]:
    """An ``allOf`` as one schema: properties and required names joined, other keywords the
    later part's (a clash is caught by the final validation)."""
    out: dict[str, Any] = {}
    for part in parts:
        if not isinstance(part, Mapping):
            continue
        for key, value in part.items():
            if key == "properties" and isinstance(value, Mapping):
                out["properties"] = {**out.get("properties", {}), **value}
            elif key == "required" and isinstance(value, list):
                out["required"] = list(dict.fromkeys([*out.get("required", []), *value]))
            else:
                out[key] = value
    return out


class _Builder:
    """Strategies for the sub-schemas of one root schema (whose ``$ref`` s it resolves)."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root

    def value(self, schema: Any, depth: int) -> st.SearchStrategy[Any]:
        if schema is True or schema == {}:
            return _ANY
        if schema is False or not isinstance(schema, Mapping):
            raise Undrawable("a schema that nothing matches")
        if depth > MAX_DEPTH:
            raise Undrawable(f"the schema nests deeper than {MAX_DEPTH} levels wherever it goes")
        if "$ref" in schema:
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            target = _pointer(self.root, schema["$ref"])
            return self.value(_merged([target, rest]) if rest else target, depth + 1)
        if "allOf" in schema:
            rest = {k: v for k, v in schema.items() if k != "allOf"}
            return self.value(_merged([*schema["allOf"], rest]), depth)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                rest = {k: v for k, v in schema.items() if k != key}
                return self._first_drawable([_merged([rest, branch]) for branch in schema[key]], depth)
        if "const" in schema:
            return st.just(schema["const"])
        if "enum" in schema:
            return st.sampled_from(list(schema["enum"])) if schema["enum"] else self.value(False, depth)
        kinds = schema.get("type")
        if isinstance(kinds, list):
            return self._first_drawable([{**schema, "type": kind} for kind in kinds], depth)
        if kinds is None:
            kinds = _implied_type(schema)
            if kinds is None:
                return _ANY
        if kinds == "object":
            return self._object(schema, depth)
        if kinds == "array":
            return self._array(schema, depth)
        if kinds not in _JSON_TYPES:
            raise Undrawable(f"unknown type {kinds!r}")
        leaf = {k: v for k, v in schema.items() if k in _LEAF_KEYWORDS} | {"type": kinds}
        if kinds == "integer" and "multipleOf" not in leaf:  # a JavaScript client reads no larger integer exactly
            leaf.setdefault("minimum", -(2**53))
            leaf.setdefault("maximum", 2**53)
        return _leaf(json.dumps(leaf, sort_keys=True))

    def _first_drawable(self, options: list[Any], depth: int) -> st.SearchStrategy[Any]:
        drawable = []
        for option in options:
            try:
                drawable.append(self.value(option, depth))
            except Undrawable:
                continue
        if not drawable:
            raise Undrawable("no branch of the schema can be drawn")
        return st.one_of(drawable)

    def _object(self, schema: Mapping[str, Any], depth: int) -> st.SearchStrategy[dict]:
        properties = schema.get("properties") or {}
        required = [name for name in schema.get("required") or () if isinstance(name, str)]
        fixed = {name: self.value(properties.get(name, True), depth + 1) for name in required}
        optional = {}
        for name, sub in properties.items():
            if name in fixed:
                continue
            try:
                optional[name] = self.value(sub, depth + 1)
            except Undrawable:
                continue  # an optional property that cannot be drawn is left out
        return st.fixed_dictionaries(fixed, optional=optional)

    def _array(self, schema: Mapping[str, Any], depth: int) -> st.SearchStrategy[list]:
        low = schema.get("minItems", 0)
        high = schema.get("maxItems", low + 3)
        prefix = schema.get("prefixItems")
        items = schema.get("items", True)
        if isinstance(items, list):  # draft 4's tuple form
            prefix, items = items, schema.get("additionalItems", True)
        head = [self.value(sub, depth + 1) for sub in prefix or ()]
        if items is False or len(head) >= high:
            return st.tuples(*head[:max(high, low)]).map(list)
        tail_low, tail_high = max(0, low - len(head)), min(high, low + 3) - len(head)
        if tail_low == 0 and depth + 1 >= MAX_DEPTH:
            return st.tuples(*head).map(list)
        unique = schema.get("uniqueItems") is True
        tail = st.lists(self.value(items, depth + 1), min_size=tail_low, max_size=max(tail_low, tail_high),
                        unique_by=_canonical if unique else None)
        return st.tuples(st.tuples(*head), tail).map(lambda parts: [*parts[0], *parts[1]])


def _implied_type(schema: Mapping[str, Any]) -> str | None:
    """The type a schema without ``type`` implies by its keywords (pydantic leaves it out of
    some), or None: any value."""
    if "properties" in schema or "required" in schema:
        return "object"
    if "items" in schema or "prefixItems" in schema:
        return "array"
    return None


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


@functools.cache
def _leaf(schema_json: str) -> st.SearchStrategy[Any]:
    from hypothesis_jsonschema import from_schema

    # no NUL: a model writes none, and some tools pass strings on to C libraries
    return from_schema(json.loads(schema_json), allow_x00=False)


#: A value of a property the schema says nothing about: a scalar, as a model fills one in.
_ANY = st.none() | st.booleans() | st.integers(-(2**31), 2**31) | st.text(max_size=20)


@functools.lru_cache(maxsize=256)
def _cached(schema_json: str) -> st.SearchStrategy[dict]:
    import jsonschema

    schema = json.loads(schema_json)
    if not isinstance(schema, dict):
        raise Undrawable("the parameters schema is not an object")
    validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        validator_class.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise Undrawable(f"not a valid JSON schema: {exc.message}") from None
    if schema.get("type", "object") != "object" and _implied_type(schema) != "object":
        raise Undrawable("the arguments of a call are an object, and this schema takes none")
    strategy = _Builder(schema).value(schema, 0)
    validator = validator_class(schema)
    return strategy.filter(lambda value: isinstance(value, dict) and validator.is_valid(value))


def arguments(schema: Mapping[str, Any]) -> st.SearchStrategy[dict]:
    """A strategy for the arguments of a call to a tool whose parameters ``schema`` declares
    (a JSON schema of an object): valid for it, shrinking toward the required properties
    alone, each at its simplest. :class:`Undrawable` if no value can be drawn for it.

    >>> arguments({"type": "object", "properties": {"city": {"type": "string"}},
    ...            "required": ["city"]}).example()  # doctest: +SKIP
    {'city': 'Ko'}
    """
    return _cached(_canonical(schema))
