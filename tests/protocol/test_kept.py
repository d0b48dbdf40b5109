"""The built-in host keeps a case's results, so the checks' further calls give the
implementation back its very objects, as they would in one process, without sending a
long history again (:mod:`chatconform.runner.protocol.kept`)."""

from __future__ import annotations

from pathlib import Path

from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

from chatconform.runner import discovery
from chatconform.runner.protocol import kept


class RemembersItsResults:
    """Says whether the history it maps is made of the messages its last compact returned."""

    name = "remembers-its-results"
    version = "1"

    def __init__(self):
        self.returned: list = []

    def compact(self, history, *, cut, summary):
        self.returned = list(history)[cut:]
        return self.returned

    def to_payload(self, history, *, provider, instructions=None):
        same = len(history) == len(self.returned) and all(a is b for a, b in zip(history, self.returned, strict=False))
        return {"messages": [], "same": same}


HISTORY = [ModelRequest(parts=[UserPromptPart("hi")]), ModelResponse(parts=[TextPart("hello")]),
           ModelRequest(parts=[UserPromptPart("again")]), ModelResponse(parts=[TextPart("yes")])]


def _both():
    spec = f"{Path(__file__).resolve()}:RemembersItsResults"
    return {"isolated": discovery.load(spec), "in-process": discovery.load(spec, in_process=True)}


def test_a_result_given_back_is_the_implementation_s_own_object_in_both_modes():
    for label, impl in _both().items():
        obj = impl.obj
        if impl.hosted:
            obj.watch_input(10.0)
        compacted = obj.compact(HISTORY, cut=2, summary="s")
        assert obj.to_payload(list(compacted), provider="openai-chat")["same"], label
        assert obj.to_payload(compacted, provider="openai-chat")["same"], label


def test_a_new_case_keeps_nothing_of_the_last():
    impl = _both()["isolated"]
    obj = impl.obj
    obj.watch_input(10.0)
    first = obj.compact(HISTORY, cut=2, summary="s")
    obj.watch_input(10.0)
    obj.compact(HISTORY, cut=1, summary="s")  # the next case: the first results are forgotten
    assert not obj.to_payload(list(first), provider="openai-chat")["same"]


def test_keys_name_a_result_and_the_items_of_a_list_but_no_atoms():
    value = [HISTORY[0], "text", 3, HISTORY[1]]
    assert [key for key, _ in kept.handles("7", value)] == ["7", "7.0", "7.3"]
    assert kept.handles("8", "just text") == []


def test_the_host_side_refuses_a_key_it_does_not_hold():
    sent, host = kept.Sent(), kept.Kept()
    sent.remember("1", HISTORY)
    blob = sent.dumps(((list(HISTORY),), {}))
    try:
        host.loads(blob)
    except kept.KeptMissing as exc:
        assert "'1.0'" in str(exc)
    else:
        raise AssertionError("a key the host does not hold was loaded")
    host.keep("1", HISTORY)
    args, _ = host.loads(blob)
    assert args[0][0] is HISTORY[0]


class MapsLikeTheReference:
    """The bundled reference's to_payload, as another implementation would be loaded."""

    version = "1"
    providers = frozenset({"openai-chat"})

    def __init__(self):
        from chatconform.reference.payload import to_payload
        self.to_payload = to_payload


class FirstCopy(MapsLikeTheReference):
    name = "first-copy"


class SecondCopy(MapsLikeTheReference):
    name = "second-copy"


def test_a_case_judged_for_several_hosted_implementations_is_pickled_once_per_provider(monkeypatch):
    from chatconform import engine
    from chatconform.frame.profiles import get_profile

    pickled = []
    real_dumps = kept.Sent.dumps

    def dumps(self, value):
        pickled.append(value)
        return real_dumps(self, value)

    monkeypatch.setattr(kept.Sent, "dumps", dumps)
    impls = [discovery.load(f"{Path(__file__).resolve()}:{name}") for name in ("FirstCopy", "SecondCopy")]
    outcome = engine.run(impls, engine.select(["payload"]), get_profile("ci", examples=8))
    searched = [outcome.results[unit] for unit in outcome.units if unit.skip is None]
    assert len(searched) == 2 and all(result.examples == 8 for result in searched)
    # the second judges the cases the first drew, sent as the first's call pickled them
    assert len(pickled) == 8
    assert {v.status for v in outcome.verdicts if v.check == "payload.matches_reference"} == {"pass"}
