"""Load the per-provider JSON Schemas and turn jsonschema errors into rule-tagged problems.

Each failing subschema is tagged with ``x-rule`` (a rule id of docs/provider-rules.md) and
``x-error`` (the provider's error text, a template). An error is attributed to the deepest
tagged subschema on its schema path, so every problem carries a rule id: the root of every
schema is tagged with the provider's generic shape rule.

Template fields of ``x-error``: ``{i}``/``{j}``/``{k}`` the first/second/third array index of
the failing path; ``{loc}`` the path in dotted form (``messages.2.content.1``), ``{oai}`` in
OpenAI's form (``messages[2].content[1]``), ``{gloc}`` in Gemini's proto form
(``contents[2].parts[0]``, snake_case field names); ``{top}`` the top-level key;
``{value}`` the failing value; ``{detail}`` a short description of what failed; ``{kind}`` the
``type`` of the failing object (a content block's).
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from .problems import MESSAGES_KEY, Problem, check_provider, json_path
from .rules import RULES

Tag = tuple[str, str]  # (rule id, error template)


@cache
def _schema(provider: str) -> dict:
    text = resources.files(__package__).joinpath("schemas", f"{provider}.json").read_text("utf-8")
    return json.loads(text)


def load_schema(provider: str) -> dict:
    """The provider's request-body schema (a fresh copy: callers may change it freely)."""
    return copy.deepcopy(_schema(check_provider(provider)))


def _resolve_local(root: dict, ref: str) -> Any:
    node: Any = root
    for part in ref.removeprefix("#/").split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _inline(node: Any, root: dict, expanding: tuple[str, ...] = ()) -> Any:
    """A copy of ``node`` with every local ``$ref`` replaced by its target.

    Resolving a ``$ref`` costs jsonschema a registry lookup on every use; the schemas have no
    recursive references, so the compiled validators get them expanded once. The schema paths
    of errors are unchanged (jsonschema does not name ``$ref`` steps in them).
    """
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            if ref in expanding:
                raise ValueError(f"recursive $ref {ref}")
            return _inline(_resolve_local(root, ref), root, (*expanding, ref))
        return {key: _inline(value, root, expanding) for key, value in node.items() if key != "$defs"}
    if isinstance(node, list):
        return [_inline(value, root, expanding) for value in node]
    return node


class _Tagger:
    """Finds the tag of the deepest tagged subschema on an error's schema path.

    It walks the ``$ref``-free schema the error came from, starting with the tag ``inherited``
    from the schema's ancestors in the provider's full schema.
    """

    def __init__(self, schema: Any, inherited: Tag, default_error: str) -> None:
        self.schema = schema
        self.inherited = inherited
        self.default_error = default_error
        self._cache: dict[tuple, Tag] = {}

    def _tag_of(self, node: Any, tag: Tag) -> Tag:
        if isinstance(node, dict) and "x-rule" in node:
            return node["x-rule"], node.get("x-error", self.default_error)
        return tag

    def walk(self, schema_path: tuple) -> Tag:
        node = self.schema
        tag = self._tag_of(node, self.inherited)
        for step in schema_path:
            try:
                node = node[step]
            except (KeyError, IndexError, TypeError):
                break
            tag = self._tag_of(node, tag)
        return tag

    def tag(self, schema_path: tuple) -> Tag:
        tag = self._cache.get(schema_path)
        if tag is None:
            tag = self._cache[schema_path] = self.walk(schema_path)
        return tag


@dataclass(frozen=True)
class _Finding:
    """One schema error, reduced to what a problem needs (no references into the body)."""

    parts: tuple  # path inside the validated instance, ending at a missing member if any
    rule: str
    template: str
    value: str
    detail: str
    kind: str = "?"  # the failing object's own ``type`` (a block's), for ``{kind}``


class _Checker:
    """A compiled validator and the tagger for its schema."""

    def __init__(self, schema: Any, inherited: Tag, default_error: str) -> None:
        self.validator = Draft202012Validator(schema)  # format checking off: no rule uses it
        self.tags = _Tagger(schema, inherited, default_error)
        self.fast = _rust_validator(schema)

    def findings(self, instance: Any) -> list[_Finding]:
        if self.fast is not None and _FAST[0] and _fast_says_valid(self.fast, instance):
            return []
        return [_finding(error, self.tags) for error in self.validator.iter_errors(instance)]


def _discriminator_chain(node: Any) -> tuple[str, list[tuple[list[str], Any]], Any] | None:
    """Read ``if K == v1 then T1 else if K == v2 then T2 ... else R`` off an item schema.

    Returns (K, [(values, T)], R or None), or None when the node is not such a chain (each
    ``if`` exactly ``{"required": [K], "properties": {K: {"const"|"enum": strings}}}``, the
    ``else`` nodes holding nothing but the chain).
    """
    key, branches, current = None, [], node
    while isinstance(current, dict) and "if" in current:
        if current is not node and set(current) - {"if", "then", "else"}:
            return None
        test = current["if"]
        if not isinstance(test, dict) or set(test) != {"required", "properties"} or len(test["properties"]) != 1:
            return None
        ((name, condition),) = test["properties"].items()
        if test["required"] != [name] or (key is not None and name != key) or not isinstance(condition, dict):
            return None
        if set(condition) == {"const"}:
            values = [condition["const"]]
        elif set(condition) == {"enum"}:
            values = list(condition["enum"])
        else:
            return None
        if not all(isinstance(value, str) for value in values):
            return None
        key = name
        branches.append((values, current.get("then", True)))
        current = current.get("else")
    if key is None:
        return None
    return key, branches, current


class _ItemChecker:
    """Checks one message. A role (or type) if/then/else chain at the top of the item schema is
    turned into a lookup: jsonschema would evaluate every ``if`` of the chain for every message,
    so each value gets a validator for ``base + its branch`` (the same constraints, found once).
    """

    def __init__(self, schema: Any, inherited: Tag, default_error: str) -> None:
        self.key: str | None = None
        self.by_value: dict[str, _Checker] = {}
        chain = _discriminator_chain(schema)
        if chain is None:
            self.fallback = _Checker(schema, inherited, default_error)
            return
        self.key, branches, rest = chain
        base = {k: v for k, v in schema.items() if k not in ("if", "then", "else")}
        # The chain node's own tag covers its branches too, so the wrapper carries it.
        tags = {k: schema[k] for k in ("x-rule", "x-error") if k in schema}
        for values, then in branches:
            checker = _Checker({**tags, "allOf": [base, then]}, inherited, default_error)
            for value in values:
                self.by_value.setdefault(value, checker)  # the first matching branch wins
        fallback = base if rest is None else {**tags, "allOf": [base, rest]}
        self.fallback = _Checker(fallback, inherited, default_error)

    def findings(self, item: Any) -> list[_Finding]:
        checker = self.fallback
        if self.key is not None and isinstance(item, dict):
            value = item.get(self.key)
            if isinstance(value, str):
                checker = self.by_value.get(value, self.fallback)
        return checker.findings(item)


class _Compiled:
    """One provider's validators, compiled once.

    The message array is checked one message at a time against the item schema, the findings
    memoized by the message's canonical JSON: request logs resend the whole history on every
    call, so most messages were seen before. The rest of the body (top-level keys, array-wide
    rules such as "system only at index 0") is checked against the schema with the item
    schema replaced by ``true``.
    """

    MEMO_SIZE = 50_000

    def __init__(self, provider: str) -> None:
        schema = _schema(provider)
        self.key = MESSAGES_KEY[provider]
        default_error = schema["x-error"]
        full = _inline(schema, schema)
        items_path = ("properties", self.key, "items")
        shell = copy.deepcopy(full)
        shell["properties"][self.key]["items"] = True
        root_tag = (schema["x-rule"], default_error)
        self.body = _Checker(shell, root_tag, default_error)
        item_inherited = _Tagger(full, root_tag, default_error).walk(items_path[:-1])
        self.items = _ItemChecker(full["properties"][self.key]["items"], item_inherited, default_error)
        self.memo: dict[str | bytes, list[_Finding]] = {}

    def body_findings(self, body: dict) -> list[_Finding]:
        return self.body.findings(body)

    def item_findings(self, item: Any) -> list[_Finding]:
        try:
            text = json.dumps(item, sort_keys=True, separators=(",", ":"))
        except (TypeError, ValueError):  # not plain JSON data: check it without the memo
            return self.items.findings(item)
        # A long message (an inline image, say) is remembered by a 128-bit digest, so the memo
        # stays small whatever the messages hold.
        key: str | bytes = text if len(text) <= 256 else hashlib.blake2b(text.encode(), digest_size=16).digest()
        findings = self.memo.get(key)
        if findings is None:
            if len(self.memo) >= self.MEMO_SIZE:
                self.memo.clear()
            findings = self.memo[key] = self.items.findings(item)
        return findings


_COMPILED: dict[str, _Compiled] = {}


def _compiled(provider: str) -> _Compiled:
    compiled = _COMPILED.get(provider)
    if compiled is None:
        compiled = _COMPILED[provider] = _Compiled(provider)
    return compiled


class _Fields(dict):
    def __missing__(self, key: str) -> str:
        return "?"


_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    names: dict[type, str] = {str: "string", list: "array", dict: "object"}
    return names.get(type(value), type(value).__name__)


def _short(value: Any, limit: int = 60) -> str:
    try:
        text = value if isinstance(value, str) else json.dumps(value, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _detail(error: ValidationError) -> str:
    kind, expected, value = error.validator, error.validator_value, error.instance
    if kind == "required":
        missing = [name for name in expected if not (isinstance(value, dict) and name in value)]
        return f"missing required property {', '.join(repr(m) for m in missing)}"
    if kind == "type":
        wanted = " or ".join(expected) if isinstance(expected, list) else expected
        return f"expected {wanted}, got {_json_type(value)}"
    if kind == "enum":
        return f"{_short(value)!r} is not one of {', '.join(repr(v) for v in expected)}"
    if kind == "const":
        return f"expected {expected!r}, got {_short(value)!r}"
    if kind in ("minItems", "maxItems"):
        return f"expected {'at least' if kind == 'minItems' else 'at most'} {expected} items, got {len(value)}"
    if kind in ("minLength", "maxLength"):
        return f"expected {'at least' if kind == 'minLength' else 'at most'} {expected} characters"
    if kind == "pattern":
        return f"{_short(value)!r} does not match {expected!r}"
    if kind == "oneOf":
        return "must match exactly one of the allowed shapes"
    if kind == "anyOf":
        return "does not match any allowed shape"
    message = error.message
    return message if len(message) <= 200 else message[:197] + "..."


def _finding(error: ValidationError, tags: _Tagger) -> _Finding:
    rule, template = tags.tag(tuple(error.absolute_schema_path))
    parts = list(error.absolute_path)
    if error.validator == "required" and isinstance(error.instance, dict):
        # Point at the missing member itself, not at the object that lacks it.
        missing = next((name for name in error.validator_value if name not in error.instance), None)
        if missing is not None:
            parts.append(missing)
    detail = _detail(error) if "{detail}" in template else ""
    kind = error.instance.get("type") if isinstance(error.instance, dict) else None
    return _Finding(tuple(parts), rule, template, _short(error.instance), detail,
                    kind if isinstance(kind, str) else "?")


def _fields(parts: list, finding: _Finding) -> _Fields:
    fields = _Fields(
        loc=".".join(str(p) for p in parts) or "body",
        oai="".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts).lstrip(".") or "body",
        gloc="".join(f"[{p}]" if isinstance(p, int) else "." + _CAMEL.sub("_", p).lower() for p in parts).lstrip(".")
        or "body",
        top=str(parts[0]) if parts else "body",
        value=finding.value,
        detail=finding.detail,
        kind=finding.kind,
    )
    for name, index in zip("ijk", (p for p in parts if isinstance(p, int)), strict=False):
        fields[name] = index
    return fields


def _problem(finding: _Finding, prefix: list, provider: str) -> Problem:
    parts = prefix + list(finding.parts)
    template = finding.template
    message = template.format_map(_fields(parts, finding)) if "{" in template else template
    info = RULES[provider].get(finding.rule)
    severity = info.severity if info is not None else "error"
    return Problem(finding.rule, json_path(parts), message, provider, severity, source="schema")


#: Whether jsonschema-rs answers "valid?" first (where it is installed); :func:`use_fast_validator`.
_FAST = [True]


def _rust_validator(schema: Any) -> Any:
    """jsonschema-rs's validator of ``schema``, or None where it is not installed.

    It answers only "valid or not", 10 to 15 times faster than ``jsonschema``; whatever it
    finds invalid goes through ``jsonschema``, which defines the problems reported (the
    tests prove both give the same problems on generated bodies).
    """
    try:
        import jsonschema_rs
    except ImportError:
        return None
    return jsonschema_rs.validator_for(schema, validate_formats=False)


def _fast_says_valid(validator: Any, instance: Any) -> bool:
    try:
        return validator.is_valid(instance)
    except (ValueError, TypeError, OverflowError, RecursionError):  # not JSON data: let jsonschema say
        return False


def use_fast_validator(enabled: bool) -> bool:
    """Turn the jsonschema-rs first pass on or off (off: ``jsonschema`` alone, the reference
    behaviour); returns the previous setting."""
    previous, _FAST[0] = _FAST[0], bool(enabled)
    return previous


@cache
def _fast_validator(provider: str) -> Any:
    return _rust_validator(_schema(provider))


def is_valid_fast(body: dict, provider: str) -> bool | None:
    """Whether ``body`` matches the schema, by jsonschema-rs; None where it cannot say."""
    validator = _fast_validator(provider)
    if validator is None or not _FAST[0]:
        return None
    try:
        return validator.is_valid(body)
    except (ValueError, TypeError, OverflowError, RecursionError):  # not JSON data: let jsonschema say
        return None


def schema_problems(body: dict, provider: str) -> list[Problem]:
    """Every schema error of ``body``, attributed to a rule; identical problems once."""
    if is_valid_fast(body, provider):
        return []
    compiled = _compiled(provider)
    problems = [_problem(f, [], provider) for f in compiled.body_findings(body)]
    items = body.get(compiled.key)
    if isinstance(items, list):
        prefix: list = [compiled.key, 0]
        for i, item in enumerate(items):
            findings = compiled.item_findings(item)
            if findings:
                prefix[1] = i
                problems.extend(_problem(f, prefix, provider) for f in findings)
    if len(problems) > 1:  # the same finding reached through two subschemas is reported once
        problems = list({(p.rule, p.path, p.message): p for p in problems}.values())
    return problems


def clear_memo() -> None:
    """Forget the memoized per-message findings (benchmarks use it to measure a cold start)."""
    for compiled in _COMPILED.values():
        compiled.memo.clear()
