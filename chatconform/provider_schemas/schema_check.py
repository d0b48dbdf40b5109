"""Load the per-provider JSON Schemas and turn jsonschema errors into rule-tagged problems.

Each failing subschema is tagged with ``x-rule`` (the rule id of research/providers.md) and
``x-error`` (the provider's error text, a template). An error is attributed to the deepest
tagged subschema on its schema path, so every problem carries a rule id: the root of every
schema is tagged with the provider's generic shape rule.

Template fields of ``x-error``: ``{i}``/``{j}``/``{k}`` the first/second/third array index of
the failing path; ``{loc}`` the path in dotted form (``messages.2.content.1``), ``{oai}`` in
OpenAI's form (``messages[2].content[1]``), ``{gloc}`` in Gemini's proto form
(``contents[2].parts[0]``, snake_case field names); ``{top}`` the top-level key;
``{value}`` the failing value; ``{detail}`` a short description of what failed.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from .problems import MESSAGES_KEY, Problem, check_provider, json_path

Tag = tuple[str, str]  # (rule id, error template)


@lru_cache(maxsize=None)
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
            return _inline(_resolve_local(root, ref), root, expanding + (ref,))
        return {key: _inline(value, root, expanding) for key, value in node.items() if key != "$defs"}
    if isinstance(node, list):
        return [_inline(value, root, expanding) for value in node]
    return node


class _Tagger:
    """Finds the tag of the deepest tagged subschema on an error's schema path.

    jsonschema's schema paths step through ``$ref`` without naming it, so a node that holds a
    ``$ref`` is replaced by its target after each step (the schemas never put other keywords
    next to a ``$ref``). ``start`` is where the validated instance sits in the full schema.
    """

    def __init__(self, root: dict, start: tuple = ()) -> None:
        self.root = root
        self.default_error: str = root["x-error"]
        self.node, self.tag_at_start = root, (root["x-rule"], self.default_error)
        self.node, self.tag_at_start = self._walk(start)
        self._cache: dict[tuple, Tag] = {}

    def _enter(self, node: Any, tag: Tag) -> tuple[Any, Tag]:
        while isinstance(node, dict):
            if "x-rule" in node:
                tag = (node["x-rule"], node.get("x-error", self.default_error))
            if "$ref" not in node:
                break
            node = _resolve_local(self.root, node["$ref"])
        return node, tag

    def _walk(self, schema_path: tuple) -> tuple[Any, Tag]:
        node, tag = self._enter(self.node, self.tag_at_start)
        for step in schema_path:
            try:
                node = node[step]
            except (KeyError, IndexError, TypeError):
                break
            node, tag = self._enter(node, tag)
        return node, tag

    def tag(self, schema_path: tuple) -> Tag:
        tag = self._cache.get(schema_path)
        if tag is None:
            tag = self._cache[schema_path] = self._walk(schema_path)[1]
        return tag


@dataclass(frozen=True)
class _Finding:
    """One schema error, reduced to what a problem needs (no references into the body)."""

    parts: tuple  # path inside the validated instance, ending at a missing member if any
    rule: str
    template: str
    value: str
    detail: str


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
        shell = _inline(schema, schema)
        array = shell["properties"][self.key]
        item_schema, array["items"] = array["items"], True
        # Format checking stays off: no rule depends on it.
        self.body_validator = Draft202012Validator(shell)
        self.item_validator = Draft202012Validator(item_schema)
        self.body_tags = _Tagger(schema)
        self.item_tags = _Tagger(schema, ("properties", self.key, "items"))
        self.memo: dict[str, list[_Finding]] = {}

    def body_findings(self, body: dict) -> list[_Finding]:
        return [_finding(e, self.body_tags) for e in self.body_validator.iter_errors(body)]

    def item_findings(self, item: Any) -> list[_Finding]:
        try:
            key = json.dumps(item, sort_keys=True, separators=(",", ":"))
        except (TypeError, ValueError):  # not plain JSON data: check it without the memo
            return [_finding(e, self.item_tags) for e in self.item_validator.iter_errors(item)]
        findings = self.memo.get(key)
        if findings is None:
            if len(self.memo) >= self.MEMO_SIZE:
                self.memo.clear()
            findings = [_finding(e, self.item_tags) for e in self.item_validator.iter_errors(item)]
            self.memo[key] = findings
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
    return {str: "string", list: "array", dict: "object"}.get(type(value), type(value).__name__)


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
    return _Finding(tuple(parts), rule, template, _short(error.instance), detail)


def _fields(parts: list, finding: _Finding) -> _Fields:
    fields = _Fields(
        loc=".".join(str(p) for p in parts) or "body",
        oai="".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts).lstrip(".") or "body",
        gloc="".join(f"[{p}]" if isinstance(p, int) else "." + _CAMEL.sub("_", p).lower() for p in parts).lstrip(".")
        or "body",
        top=str(parts[0]) if parts else "body",
        value=finding.value,
        detail=finding.detail,
    )
    for name, index in zip("ijk", (p for p in parts if isinstance(p, int))):
        fields[name] = index
    return fields


def _problem(finding: _Finding, prefix: list, provider: str) -> Problem:
    parts = prefix + list(finding.parts)
    template = finding.template
    message = template.format_map(_fields(parts, finding)) if "{" in template else template
    return Problem(finding.rule, json_path(parts), message, provider, source="schema")


def schema_problems(body: dict, provider: str) -> list[Problem]:
    """Every schema error of ``body``, attributed to a rule; identical problems once."""
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
