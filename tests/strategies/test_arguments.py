"""Tool-call arguments drawn from a tool's JSON schema (``serve --generate``), and the reply
entries built on them: every draw validates against the schema it came from, calls go only
to declared tools, a reused id is never sent twice in one reply, interruptions are drawn
only when asked for."""

from __future__ import annotations

import datetime
from typing import Literal

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from chatconform.strategies import replies
from chatconform.strategies.arguments import Undrawable, arguments


class Place(BaseModel):
    city: str = Field(min_length=1)
    unit: Literal["c", "f"] = "c"


class Forecast(BaseModel):
    place: Place
    days: int = Field(ge=1, le=10)
    when: datetime.date | None = None
    tags: list[str] = Field(default=[], max_length=3)


class Tree(BaseModel):
    name: str
    kids: list[Tree] = []


SCHEMAS = {
    "pydantic, nested with $defs": Forecast.model_json_schema(),
    "pydantic, recursive": Tree.model_json_schema(),
    "no properties": {"type": "object", "properties": {}},
    "strict": {"type": "object", "properties": {"q": {"type": "string", "pattern": "^[a-z]{2,5}$"},
                                                "n": {"type": ["integer", "null"], "minimum": 0}},
               "required": ["q", "n"], "additionalProperties": False},
    "allOf and anyOf": {"type": "object", "allOf": [{"properties": {"a": {"type": "integer"}}, "required": ["a"]},
                                                    {"properties": {"b": {"anyOf": [{"const": "x"},
                                                                                    {"type": "boolean"}]}}}]},
    "tuple and unique array": {"type": "object", "properties": {
        "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}], "items": False},
        "ids": {"type": "array", "items": {"enum": [1, 2, 3]}, "uniqueItems": True, "minItems": 2}},
        "required": ["pair", "ids"]},
}


@pytest.mark.parametrize("schema", SCHEMAS.values(), ids=SCHEMAS.keys())
def test_drawn_arguments_validate_against_their_schema(schema):
    validator = jsonschema.Draft202012Validator(schema)

    @settings(max_examples=60, deadline=None, database=None)
    @given(arguments(schema))
    def check(value):
        assert validator.is_valid(value), list(validator.iter_errors(value))

    check()


def test_drawn_arguments_reach_what_the_schema_allows():
    seen = set()

    @settings(max_examples=200, deadline=None, database=None)
    @given(arguments(Forecast.model_json_schema()))
    def collect(value):
        seen.update(value)
        seen.update(f"place.{key}" for key in value["place"])

    collect()
    assert seen == {"place", "days", "when", "tags", "place.city", "place.unit"}


@pytest.mark.parametrize("schema, why", [
    ({"type": "object", "properties": {"me": {"$ref": "#"}}, "required": ["me"]}, "nests deeper"),
    ({"type": "string"}, "takes none"),
    ({"type": "object", "properties": {"x": {"$ref": "https://example.com/s.json"}}, "required": ["x"]},
     "outside the schema"),
    ({"type": "object", "properties": {"x": {"type": 3}}}, "not a valid JSON schema"),
])
def test_a_schema_no_value_fits_is_undrawable(schema, why):
    with pytest.raises(Undrawable, match=why):
        arguments(schema)


@settings(max_examples=150, deadline=None, database=None)
@given(replies(tool_schemas={"forecast": Forecast.model_json_schema(), "impossible": {"type": "string"}},
               reusable_ids=["call_a", "call_b"], max_calls=4), st.data())
def test_a_drawn_reply_calls_declared_drawable_tools_with_valid_arguments(entry, data):
    validator = jsonschema.Draft202012Validator(Forecast.model_json_schema())
    calls = entry.get("tool_calls", [])
    assert {call["name"] for call in calls} <= {"forecast"}  # the tool no value fits is never called
    assert all(validator.is_valid(call["arguments"]) for call in calls)
    ids = [call["id"] for call in calls if "id" in call]
    assert len(ids) == len(set(ids)) and set(ids) <= {"call_a", "call_b"}
    assert not {"status", "cut_stream_after", "delay"} & set(entry)  # no interruption unless asked


def test_interruptions_are_drawn_when_asked_for_each_kind():
    kinds = set()

    @settings(max_examples=300, deadline=None, database=None)
    @given(replies(interruptions=("status", "cut", "drop", "slow"), statuses=(529,)))
    def collect(entry):
        if "status" in entry:
            assert entry["status"] == 529 and "a retry gets the next reply" in entry["message"]
            kinds.add("status")
        elif "cut_stream_after" in entry:
            kinds.add("cut" if entry["cut_stream_after"] else "drop")
        elif "delay" in entry:
            kinds.add("slow")

    collect()
    assert kinds == {"status", "cut", "drop", "slow"}
    with pytest.raises(ValueError, match="unknown interruption 'boom'"):
        replies(interruptions=("boom",))
