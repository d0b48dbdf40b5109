"""The reference dump/load, the malformed data derived from dumps, and the serde contract:
how it reaches load(), and how it tells a validation error from a shortened history."""

import json

import pytest
from hypothesis import given, settings
from pydantic import ValidationError
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

from chatconform import run_conformance
from chatconform.contracts import get_contract
from chatconform.engine import evaluate_case
from chatconform.errors import ConfigError
from chatconform.fakes.serde import DropsUnknownParts, StoresContainerModel
from chatconform.reference.serde import dump, load
from chatconform.runner.discovery import wrap
from chatconform.strategies import histories, malform, serde_cases
from chatconform.strategies.malformed import MALFORMATIONS, UNKNOWN_PART_KIND

HISTORY = [ModelRequest([UserPromptPart("Hi (u1)")]), ModelResponse([TextPart("Hello (a2)"), TextPart("More (a3)")])]


def contract():
    return get_contract("serde")


def evaluate(impl, history, malformation="truncate", at=0):
    case = contract().case_type(history, malformation, at)
    return {f.check: f for f in evaluate_case(wrap(impl), contract(), case, None, timeout=5).failures}


# -- the reference ----------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(histories(max_bulk_turns=0))
def test_the_reference_round_trips_generated_histories(history):
    data = dump(history)
    assert isinstance(data, bytes) and load(data) == history and load(data.decode()) == history


def test_the_reference_implementation_offers_dump_and_load():
    from chatconform.reference import ReferenceImplementation

    reference = ReferenceImplementation()
    assert (reference.dump, reference.load) == (dump, load)


@pytest.mark.parametrize("malformation", MALFORMATIONS)
@pytest.mark.parametrize("at", [0, 1, 5, 10_000])
def test_every_malformation_makes_the_reference_load_raise(malformation, at):
    for history in (HISTORY, []):
        with pytest.raises(ValidationError):
            load(malform(dump(history), malformation, at))


def test_malform_keeps_the_type_and_says_what_it_changed():
    text = dump(HISTORY).decode()
    assert isinstance(malform(text, "truncate", 3), str) and isinstance(malform(text.encode(), "truncate", 3), bytes)
    assert text.startswith(malform(text, "truncate", 3)) and len(malform(text, "truncate", 3)) == 4
    wrong = json.loads(malform(text, "wrong_type", 1))
    assert isinstance(wrong[1]["parts"], dict) and wrong[0] == json.loads(text)[0]
    unknown = json.loads(malform(text, "unknown_part", 3))  # message 1, its part 1
    assert [p["part_kind"] for p in unknown[1]["parts"]] == ["text", UNKNOWN_PART_KIND]
    with pytest.raises(ValueError, match="malformation='gone'"):
        malform(text, "gone", 0)


@settings(max_examples=30, deadline=None)
@given(serde_cases())
def test_serde_cases_are_valid_histories_with_a_known_malformation(case):
    history, malformation, at = case
    assert malformation in MALFORMATIONS and at >= 0
    assert load(dump(history)) == history


# -- the contract: reaching load() ------------------------------------------------------------

class DumpOnly:
    name, version = "dump-only", "1"

    def dump(self, history):
        return dump(history)


def test_an_implementation_with_dump_and_no_load_is_skipped_with_the_reason():
    verdicts = run_conformance(DumpOnly, contracts=["serde"], examples=2)
    assert {v.status for v in verdicts} == {"skip"}
    assert "has dump() but no load()" in verdicts[0].message


def test_an_implementation_with_load_alone_is_refused_naming_dump():
    class LoadOnly:
        name, version = "load-only", "1"

        def load(self, data):
            return load(data)

    with pytest.raises(ConfigError, match="dump"):
        wrap(LoadOnly)


def test_a_case_with_an_unknown_malformation_is_a_clear_error():
    with pytest.raises(ValueError, match="malformation='gone' must be one of truncate, wrong_type, unknown_part"):
        contract().case_from_json({"history": [], "malformation": "gone"})
    with pytest.raises(ValueError, match="at=-1"):
        contract().case_from_json({"history": [], "at": -1})


def test_a_case_round_trips_through_its_json():
    case = contract().case_type(HISTORY, "unknown_part", 7)
    assert contract().case_from_json(json.loads(json.dumps(contract().case_to_json(case)))) == case


# -- the contract: what rejects_malformed tells apart -----------------------------------------

def test_a_loader_that_drops_the_unknown_part_is_reported_as_a_shortened_history():
    failures = evaluate(DropsUnknownParts, HISTORY, "unknown_part", 3)
    assert set(failures) == {"serde.rejects_malformed"}
    assert failures["serde.rejects_malformed"].message == (
        "load() returned 2 messages with 2 parts for a part of an unknown part_kind instead of raising "
        "(the valid data holds 2 messages with 3 parts)")


def test_a_loader_that_raises_something_else_is_not_a_validation_error():
    class KeyErrorLoader:
        name, version = "key-error", "1"

        def dump(self, history):
            return dump(history)

        def load(self, data):
            messages = json.loads(data)
            if any(not isinstance(m["parts"], list) for m in messages):
                raise KeyError("parts")
            return load(data)

    failures = evaluate(KeyErrorLoader, HISTORY, "wrong_type", 0)
    assert failures["serde.rejects_malformed"].message.startswith(
        "load() raised KeyError: 'parts' on a message whose parts are an object: not a validation error")
    assert evaluate(KeyErrorLoader, HISTORY, "truncate", 5) == {}  # JSONDecodeError is a ValueError


def test_a_dump_in_another_shape_fails_the_schema_with_its_path():
    failures = evaluate(StoresContainerModel, HISTORY)
    assert set(failures) == {"serde.schema_valid", "serde.matches_reference"}
    assert (failures["serde.schema_valid"].message.startswith("$: ")
            and "array" in failures["serde.schema_valid"].message)


def test_a_str_dump_is_loaded_from_str_and_a_load_that_loses_a_message_fails_round_trip():
    class StrStore:
        name, version = "str", "1"

        def dump(self, history):
            return dump(history).decode()

        def load(self, data):
            assert isinstance(data, str)
            return load(data)[:-1]  # loses the newest message

    failures = evaluate(StrStore, HISTORY)
    message = failures["serde.round_trip"].message
    assert message.startswith('load(dump(history)): expected 2 messages, got 1; first difference at message 1: '
                              'expected {"kind": "response"'), message
    assert message.endswith("got nothing (the list ends)"), message


def test_the_benchmark_hooks_build_a_case_of_about_the_size_asked():
    case = contract().large_case(1_000, seed=3, variant=None)
    assert 1_000 <= len(case.history) <= 1_010 and contract().large_case(1_000, seed=3, variant=None) == case
    assert contract().floor(case, None) is None
