"""The schema files themselves: valid 2020-12, local references only, every tag a catalogued rule."""

from __future__ import annotations

import string
from importlib import resources

import pytest
from jsonschema import Draft202012Validator

from chatconform.provider_schemas import PROVIDER_IDS, UnknownProvider, load_schema, turn_view, validate
from chatconform.provider_schemas.catalog import RULES
from chatconform.provider_schemas.problems import GENERIC_RULE

TEMPLATE_FIELDS = {"i", "j", "k", "loc", "oai", "gloc", "top", "value", "detail", "kind"}
ANNOTATIONS = {"$comment", "description", "title", "x-rule", "x-error"}


def _nodes(node):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _nodes(value)
    elif isinstance(node, list):
        for value in node:
            yield from _nodes(value)


def test_provider_ids_in_order():
    assert PROVIDER_IDS == ("openai-chat", "openai-responses", "qwen-vllm", "glm", "deepseek", "kimi", "groq",
                            "openrouter", "mistral", "anthropic", "gemini", "bedrock-converse")


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_schema_is_valid_draft_2020_12(provider):
    schema = load_schema(provider)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_schema_ships_as_package_data(provider):
    path = resources.files("chatconform.provider_schemas").joinpath("schemas", f"{provider}.json")
    assert path.is_file()


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_references_are_local_and_bare(provider):
    schema = load_schema(provider)
    for node in _nodes(schema):
        ref = node.get("$ref")
        if not isinstance(ref, str):
            continue
        assert ref.startswith("#/$defs/"), ref
        assert ref.removeprefix("#/$defs/") in schema["$defs"], ref
        # The tagger relies on this: nothing but annotations next to a $ref.
        assert set(node) - {"$ref"} <= ANNOTATIONS, node


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_every_tag_is_a_catalogued_rule_with_a_known_template(provider):
    schema = load_schema(provider)
    assert schema["x-rule"] == GENERIC_RULE[provider] and schema["x-error"]
    for node in _nodes(schema):
        if "x-rule" in node:
            assert node["x-rule"] in RULES[provider], node["x-rule"]
            assert RULES[provider][node["x-rule"]].check in ("schema", "schema+sequence")
        if "x-error" in node:
            fields = {name for _, name, _, _ in string.Formatter().parse(node["x-error"]) if name}
            assert fields <= TEMPLATE_FIELDS, node["x-error"]


def test_load_schema_returns_a_private_copy():
    schema = load_schema("openai-chat")
    schema["properties"]["messages"]["items"] = False
    assert load_schema("openai-chat")["properties"]["messages"]["items"] != False  # noqa: E712
    assert validate([{"role": "user", "content": "hi"}], "openai-chat") == []


@pytest.mark.parametrize("call", [load_schema, lambda p: validate([], p), lambda p: turn_view([], p)])
def test_unknown_provider_lists_the_known_ids(call):
    with pytest.raises(UnknownProvider) as info:
        call("openai")
    assert isinstance(info.value, ValueError)
    for provider in PROVIDER_IDS:
        assert provider in str(info.value)
