"""validate() and turn_view() on arbitrary JSON: problems, never exceptions; every problem has a
catalogued rule id."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatconform.provider_schemas import PROVIDER_IDS, turn_view, validate
from chatconform.provider_schemas.catalog import RULES
from chatconform.provider_schemas.problems import sort_problems

KEYS = [
    "role", "content", "type", "text", "tool_calls", "id", "function", "name", "arguments", "tool_call_id",
    "tool_use_id", "input", "parts", "functionCall", "functionResponse", "function_call", "response", "args",
    "toolUse", "toolResult", "toolUseId", "messages", "contents", "system", "systemInstruction", "prefix",
    "model", "source", "image_url", "cachePoint", "document", "thought", "toolConfig", "is_error",
]
WORDS = [
    "user", "assistant", "system", "tool", "model", "developer", "function", "text", "tool_use", "tool_result",
    "image", "image_url", "c1", "call00001", "", " ", "claude-opus-4-6", "o1-mini", "<tool_response>x</tool_response>",
]

leaves = st.none() | st.booleans() | st.integers(-2, 3) | st.sampled_from(WORDS) | st.text(max_size=3)
json_values = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=4),
    max_leaves=12,
)
messages = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(WORDS[:7])},
        optional={key: json_values for key in ("content", "tool_calls", "tool_call_id", "parts", "prefix")},
    ),
    max_size=5,
)
bodies = st.one_of(json_values, messages,
                   st.builds(lambda m, k: {k: m}, messages, st.sampled_from(["messages", "contents"])))

FUZZ = settings(max_examples=150, suppress_health_check=list(HealthCheck))


@FUZZ
@given(body=bodies, provider=st.sampled_from(PROVIDER_IDS))
def test_any_json_gives_problems_not_exceptions(body, provider):
    problems = validate(body, provider)
    for problem in problems:
        assert problem.rule in RULES[provider], problem
        assert problem.path.startswith("$") and problem.message
        assert problem.severity in ("error", "warning") and problem.source in ("schema", "sequence")
        assert problem.provider == provider
    if isinstance(body, dict):
        assert sort_problems(problems, body) == problems
    turns = turn_view(body, provider)
    assert all(turn.role in ("system", "user", "assistant", "tool") for turn in turns)


def test_deeply_nested_body_is_one_problem():
    body: object = "x"
    for _ in range(5000):
        body = {"content": [body]}
    problems = validate({"messages": [{"role": "user", "content": [body]}]}, "openai-chat")
    assert problems and all(p.rule.startswith("O") for p in problems)


@FUZZ
@given(item=messages.flatmap(lambda ms: st.sampled_from(ms) if ms else st.just({"role": "user"})),
       provider=st.sampled_from(PROVIDER_IDS))
def test_role_dispatch_finds_what_the_whole_item_schema_finds(item, provider):
    # The per-role validators are an optimization: same findings as the unsplit item schema.
    from chatconform.provider_schemas.schema_check import _Checker, _compiled, _inline, _schema

    schema = _schema(provider)
    compiled = _compiled(provider)
    whole = _inline(schema, schema)["properties"][compiled.key]["items"]
    inherited = compiled.items.fallback.tags.inherited
    reference = _Checker(whole, inherited, schema["x-error"]).findings(item)
    assert sorted(map(repr, compiled.items.findings(item))) == sorted(map(repr, reference))
