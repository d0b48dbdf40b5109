"""jsonschema-rs answers "valid?" first; jsonschema defines the problems. Both paths must give
the same problems, with the same rule ids, paths and texts, on valid and invalid bodies."""

from __future__ import annotations

import copy
import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatconform.provider_schemas import PROVIDER_IDS, validate
from chatconform.provider_schemas.schema_check import clear_memo, schema_problems, use_fast_validator
from chatconform.reference.payload import to_payload
from chatconform.strategies import histories, instructions, recorded_payloads

STRANGE = [None, 0, -1, 2.5, True, "", " ", "x", "tool", "assistant", [], [{}], {}, {"type": "text"}]


def both_ways(check, *args):
    """``check(*args)`` with the fast first pass, then with jsonschema alone."""
    clear_memo()
    fast = check(*args)
    previous = use_fast_validator(False)
    try:
        clear_memo()
        slow = check(*args)
    finally:
        use_fast_validator(previous)
        clear_memo()
    return fast, slow


def mutate(data: st.DataObject, body: dict) -> dict:
    """The body with one value somewhere inside it replaced or deleted."""
    body = copy.deepcopy(body)
    node: object = body
    while True:
        keys = list(node) if isinstance(node, dict) else list(range(len(node))) if isinstance(node, list) else []
        if not keys:
            break
        key = data.draw(st.sampled_from(keys))
        child = node[key]
        if isinstance(child, (dict, list)) and child and data.draw(st.booleans()):
            node = child
            continue
        if isinstance(node, dict) and data.draw(st.booleans()):
            del node[key]
        else:
            node[key] = data.draw(st.sampled_from(STRANGE))
        break
    return body


def test_jsonschema_rs_is_installed_by_default():
    import jsonschema_rs  # noqa: F401 - a core dependency: the default install is the fast one


@settings(max_examples=60, suppress_health_check=list(HealthCheck))
@given(history=histories(max_turns=4, max_bulk_turns=40), note=instructions(),
       provider=st.sampled_from(sorted(PROVIDER_IDS)), data=st.data())
def test_same_problems_on_generated_bodies(history, note, provider, data):
    body = to_payload(history, provider=provider, instructions=note)
    for candidate in (body, mutate(data, body), mutate(data, body)):
        fast, slow = both_ways(schema_problems, candidate, provider)
        assert fast == slow


@pytest.mark.parametrize("provider", ["openai-chat", "anthropic"])
def test_same_problems_on_recorded_bodies(provider):
    bodies = list(recorded_payloads(7, 3_000, provider=provider, broken=0.5))
    fast, slow = both_ways(lambda: [validate(body, provider) for body in bodies])
    assert fast == slow
    assert sum(map(len, fast)) > 50  # the bodies are broken often enough to be a test
    assert any(p.source == "schema" for p in itertools.chain.from_iterable(fast))
