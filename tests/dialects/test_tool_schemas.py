"""Each dialect reads the declared tools' argument schemas out of a request body as JSON Schema
(``Dialect.tool_schemas``), which ``serve --generate`` draws call arguments from."""

from __future__ import annotations

import pytest

from chatconform.dialects import get_dialect

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
NONE = {"type": "object", "properties": {}}

BODIES = {
    "openai_chat": {"tools": [{"type": "function", "function": {"name": "weather", "parameters": CITY}},
                              {"type": "function", "function": {"name": "now"}}]},
    "anthropic_messages": {"tools": [{"name": "weather", "input_schema": CITY}, {"name": "now"},
                                     {"type": "web_search_20250305", "name": "web_search"}]},
    "bedrock_converse": {"toolConfig": {"tools": [{"toolSpec": {"name": "weather", "inputSchema": {"json": CITY}}},
                                                  {"toolSpec": {"name": "now"}}]}},
    "gemini_generate": {"tools": [{"functionDeclarations": [{"name": "weather", "parametersJsonSchema": CITY},
                                                            {"name": "now"}]}]},
}


@pytest.mark.parametrize("dialect", BODIES)
def test_each_dialect_reads_the_declared_schemas(dialect):
    """A server tool (Anthropic's web search) is the provider's own, never a call to the client."""
    assert get_dialect(dialect).tool_schemas(BODIES[dialect]) == {"weather": CITY, "now": NONE}
    assert get_dialect(dialect).tool_names(BODIES[dialect]) == ["weather", "now"]


def test_gemini_reads_its_openapi_schema_as_json_schema():
    body = {"tools": [{"function_declarations": [{"name": "find", "parameters": {
        "type": "OBJECT", "propertyOrdering": ["q", "limit"],
        "properties": {"q": {"type": "STRING", "nullable": True},
                       "kind": {"type": "STRING", "format": "enum", "enum": ["a", "b"], "nullable": True},
                       "limit": {"type": "ARRAY", "items": {"type": "INTEGER"}}},
        "required": ["q"]}}]}]}
    assert get_dialect("gemini_generate").tool_schemas(body) == {"find": {
        "type": "object",
        "properties": {"q": {"type": ["string", "null"]},
                       "kind": {"type": ["string", "null"], "format": "enum", "enum": ["a", "b", None]},
                       "limit": {"type": "array", "items": {"type": "integer"}}},
        "required": ["q"]}}
