"""The frame every contract plugs into: discovery, the typed base, options, verdicts you can trust."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import pytest
from hypothesis import strategies as st
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart

from chatconform import contracts as contracts_package
from chatconform import run_conformance
from chatconform.contracts import all_contracts
from chatconform.engine import exit_code
from chatconform.errors import ConfigError, ContractLoadError, Violation
from chatconform.frame import registry
from chatconform.frame.contract import Contract
from chatconform.frame.history_contract import HistoryContract
from chatconform.frame.profiles import get_profile
from chatconform.frame.status import Status
from chatconform.history import tool_pairing_problems
from chatconform.outputs.report import Cell, header
from chatconform.reference.thread import extract_thread
from chatconform.runner.discovery import wrap


@pytest.fixture
def fresh_registry(monkeypatch):
    """Contracts and checks registered inside a test are forgotten after it. The catalog is
    loaded first: a contract module imported only under the patch would register its checks
    in the throwaway registry, and never again in the real one."""
    all_contracts()
    monkeypatch.setattr(registry, "_CHECKS", dict(registry._CHECKS))
    monkeypatch.setattr(contracts_package, "_CONTRACTS", {})
    yield
    contracts_package._CONTRACTS.clear()


def test_every_module_of_the_contracts_package_is_a_contract():
    import pkgutil

    modules = {info.name for info in pkgutil.iter_modules(contracts_package.__path__)}
    found = all_contracts()
    assert modules <= set(found) and list(found)[:2] == ["thread", "payload"]
    for contract in found.values():
        assert contract.method and contract.signature and contract.checks


def test_a_contract_missing_a_hook_fails_when_built():
    class NoReference(Contract):
        name, method, signature = "broken", "broken", "broken(x)"
        crash_rationale = mutation_rationale = "a real bug"

        def cases(self, variant):
            return st.none()

        def call(self, fn, case, variant):
            return fn(case)

        def case_to_json(self, case):
            return case

        def case_from_json(self, data):
            return data

    with pytest.raises(TypeError, match="reference"):
        NoReference()

    class NoName(NoReference):
        name = None

        def reference(self, case, variant):
            return case

    with pytest.raises(TypeError, match="does not set name"):
        NoName()


def test_a_contract_module_that_fails_to_import_stops_the_run(tmp_path, fresh_registry, monkeypatch):
    (tmp_path / "broken_contract.py").write_text("raise ImportError('a missing dependency')\n")
    monkeypatch.setattr(contracts_package, "__path__", [*contracts_package.__path__, str(tmp_path)])
    monkeypatch.delitem(sys.modules, "chatconform.contracts.broken_contract", raising=False)
    with pytest.raises(ContractLoadError, match="broken_contract failed to import: ImportError: a missing"):
        all_contracts()


@dataclass
class _LengthCase:
    history: list
    limit: int = 1


class _LastMessagesContract(HistoryContract):
    """A third party's contract: ``last_messages(history, *, limit)`` keeps the newest ``limit``."""

    name = "lastmessages"
    method = "last_messages"
    signature = "last_messages(history, *, limit) -> history"
    crash_rationale = mutation_rationale = "a third party's bug"
    case_type = _LengthCase

    def cases(self, variant):
        texts = st.text(min_size=1, max_size=5).map(lambda t: ModelRequest([UserPromptPart(t)]))
        return st.builds(_LengthCase, st.lists(texts, max_size=6), st.integers(1, 4))

    def call(self, fn, case, variant):
        return fn(case.history, limit=case.limit)

    def reference(self, case, variant):
        return case.history[-case.limit:]


def _third_party_contract():
    contract = _LastMessagesContract()

    @contract.check("within_limit", title="at most limit messages", rationale="a third party's bug")
    def within_limit(ex):
        if len(ex.output) > ex.case.limit:
            raise Violation("too many messages", expected=ex.case.limit, actual=len(ex.output))

    return contract


@pytest.mark.slow
def test_a_third_party_adds_a_contract_through_the_entry_point_group(fresh_registry, monkeypatch):
    class EntryPoint:
        name, value = "lastmessages", "theirs:CONTRACT"

        def load(self):
            return _third_party_contract()

    monkeypatch.setattr(contracts_package, "entry_points",
                        lambda group: [EntryPoint()] if group == contracts_package.GROUP else [])
    assert "lastmessages" in all_contracts()

    class KeepsAll:
        name, version = "keeps-all", "1"

        def last_messages(self, history, *, limit):
            return history

    verdicts = {v.check: v for v in run_conformance(KeepsAll, contracts=["lastmessages"])}
    assert verdicts["lastmessages.within_limit"].status == Status.FAIL
    assert verdicts["lastmessages.no_crash"].status == Status.PASS


def test_providers_option_is_validated_by_its_contract():
    class Loose:
        name, version = "loose", "1"
        providers = "openai-chat"

        def to_payload(self, history, *, provider, instructions=None):
            return {}

    with pytest.raises(ConfigError, match="providers must be a set of provider ids"):
        wrap(Loose)
    Loose.providers = {"openai-chat", "claude"}
    with pytest.raises(ConfigError, match=r"unknown provider.*claude"):
        wrap(Loose)
    Loose.providers = {"glm"}
    impl = wrap(Loose)
    assert header([impl], version="0", profile="ci", seed=None)["implementations"]["loose"]["options"] == {
        "providers": ["glm"], "models": {}, "lifecycle": True}
    Loose.models = {"glm": ""}
    with pytest.raises(ConfigError, match="models must map provider ids to model ids"):
        wrap(Loose)
    Loose.models = {"bedrock": "meta.llama3"}
    with pytest.raises(ConfigError, match=r"unknown provider.*bedrock"):
        wrap(Loose)
    Loose.models = {"glm": "glm-4.6"}
    assert wrap(Loose).options["models"] == {"glm": "glm-4.6"}


# -- a verdict you can trust ----------------------------------------------------------------------

class _AlwaysRaises:
    name, version = "always-raises", "1"

    def extract_thread(self, rows):
        raise RuntimeError("boom")


class _ReturnsNone:
    name, version = "returns-none", "1"

    def extract_thread(self, rows):
        return None


class _Hangs:
    name, version = "hangs", "1"

    def extract_thread(self, rows):
        time.sleep(30)


@pytest.mark.slow
@pytest.mark.parametrize("impl", [_AlwaysRaises, _ReturnsNone, _Hangs], ids=lambda c: c.name)
def test_no_check_passes_that_was_never_evaluated(impl):
    verdicts = {v.check: v for v in run_conformance(impl, contracts=["thread"], examples=30, timeout=0.5)}
    assert verdicts["thread.no_crash"].status == Status.FAIL
    # thread.slow judges the call (it returned, or raised, in time), not its output.
    output_checks = [v for c, v in verdicts.items()
                     if c not in ("thread.no_crash", "thread.input_untouched", "thread.slow")]
    assert {v.status for v in output_checks} == {Status.NOT_EVALUATED}
    assert all(v.evaluated == 0 and "see thread.no_crash" in v.message for v in output_checks)
    untouched = verdicts["thread.input_untouched"]
    # A hung call may still be running: its input cannot be judged either.
    assert untouched.status == (Status.NOT_EVALUATED if impl is _Hangs else Status.PASS)
    assert exit_code(list(verdicts.values())) == 1


@pytest.mark.slow
def test_examples_runs_that_many_examples_per_search():
    class Reference:
        name, version = "ref", "1"
        providers = {"openai-chat", "glm"}

        def extract_thread(self, rows):
            return extract_thread(rows)

        def to_payload(self, history, *, provider, instructions=None):
            from chatconform.reference.payload import to_payload

            return to_payload(history, provider=provider, instructions=instructions)

    verdicts = run_conformance(Reference, contracts=["thread", "payload"], examples=7)
    assert {v.examples for v in verdicts if v.contract == "thread"} == {7}
    assert {v.examples for v in verdicts if v.contract == "payload"} == {14}  # 7 per provider
    # Seven cases may hold none that a narrow check applies to: never a pass, and in a quick
    # look (fewer examples than the profile's) undecided rather than a failure. A check none
    # of the providers can meet (no reasoning goes back to OpenAI Chat or GLM) is skipped, saying so.
    inapplicable = {"payload.reasoning_kept": "none of openai-chat, glm takes reasoning back",
                    "payload.no_rejected_reasoning": "no model of openai-chat, glm is known to reject reasoning"}
    # A .slow check times the call and may warn on a loaded machine.
    assert all(v.status == Status.PASS or (v.check.endswith(".slow") and v.status == Status.WARN) or (
        v.status == Status.SKIP and v.evaluated == 0 and (
        v.message.startswith("undecided in a quick look") or v.message == inapplicable.get(v.check)))
               for v in verdicts)


@pytest.mark.slow
def test_a_quick_look_leaves_an_expected_failure_it_did_not_reach_undecided():
    from chatconform.fakes.thread import UnscopedHeadCheck

    class Known(UnscopedHeadCheck):
        name = "known"
        expected_failures = {"thread.ancestors_only": "https://github.com/langgenius/dify/issues/39031"}

    # One example reaches no branch switch; the profile's 1,000 do.
    quick = {v.check: v for v in run_conformance(Known, contracts=["thread"], examples=1)}
    assert quick["thread.ancestors_only"].status == Status.SKIP
    assert "an expected failure that did not come up" in quick["thread.ancestors_only"].message
    assert exit_code(list(quick.values())) == 0
    # Only fewer examples than the profile's is a quick look.
    assert get_profile("ci", examples=1).cut_short(5.0) == 1000
    assert get_profile("ci", examples=5000).cut_short(5.0) is None
    assert get_profile("ci").cut_short(5.0) is None


@pytest.mark.slow
def test_a_check_that_applies_to_some_cases_says_on_how_many():
    verdicts = {v.check: v for v in run_conformance("reference", contracts=["thread"], examples=60)}
    legacy = verdicts["thread.legacy_linear"]
    assert legacy.status == Status.PASS and 0 < legacy.evaluated < legacy.examples == 60
    assert verdicts["thread.no_crash"].evaluated == 60
    assert Cell(Status.PASS, legacy.evaluated, 60).label == f"pass {legacy.evaluated}/60"
    assert Cell(Status.PASS, 60, 60).label == "pass"


def test_a_case_the_engine_cannot_copy_is_the_engines_error(monkeypatch):
    from chatconform.contracts.payload import PayloadCase

    def deeply_nested_arguments():
        deep: dict = {}
        inner = deep
        for _ in range(3000):
            inner["x"] = {}
            inner = inner["x"]
        return PayloadCase([ModelRequest([UserPromptPart("hi")]),
                            ModelResponse([ToolCallPart("t", deep, "c1"), TextPart("ok")])])

    payload = all_contracts()["payload"]
    monkeypatch.setattr(payload, "cases", lambda variant: st.builds(deeply_nested_arguments))
    verdicts = run_conformance("reference", contracts=["payload"], examples=1, in_process=True)
    assert {v.status for v in verdicts} == {Status.ERROR}
    message = verdicts[0].message
    assert "the engine could not copy or fingerprint a generated case" in message and "chatconform bug" in message
    # In a process of its own (any implementation but the bundled reference), the same case
    # cannot be sent to it: the engine's error again.
    verdicts = run_conformance("chatconform.fakes.payload:SortSystemFirst39372", contracts=["payload"], examples=1)
    assert {v.status for v in verdicts} == {Status.ERROR}
    message = verdicts[0].message
    assert "the engine could not send a generated case" in message and "chatconform bug" in message


def test_status_values_and_which_fail_a_run():
    assert [str(s) for s in Status] == ["pass", "fail", "warn", "not_evaluated", "error", "skip", "xfail"]
    assert {s for s in Status if s.fails_run} == {Status.FAIL, Status.NOT_EVALUATED, Status.ERROR}
    assert {s for s in Status if s.fails(strict=True)} == {Status.FAIL, Status.WARN, Status.NOT_EVALUATED,
                                                           Status.ERROR}
    assert Status.PASS == "pass"


def test_tool_pairing_over_a_history():
    call = ModelResponse([ToolCallPart("t", {}, "c1"), ToolCallPart("t", {}, "c2")])
    from pydantic_ai.messages import ToolReturnPart

    answered = ModelRequest([ToolReturnPart("t", "ok", "c1"), ToolReturnPart("t", "ok", "c2")])
    assert tool_pairing_problems([ModelRequest([UserPromptPart("q")]), call, answered]) == []
    assert tool_pairing_problems([call]) == ["message 0: tool call c1 is never answered",
                                             "message 0: tool call c2 is never answered"]
    assert tool_pairing_problems([answered]) == ["message 0: tool result c1 has no earlier call",
                                                 "message 0: tool result c2 has no earlier call"]
    assert "answered twice" in tool_pairing_problems([call, answered, answered])[0]


def test_without_shrinking_a_failure_is_reported_where_first_seen():
    from chatconform.fakes.thread import OldestFirst

    verdicts = {v.check: v for v in run_conformance(OldestFirst, checks=["thread.starts_at_newest"], shrink=False)}
    verdict = verdicts["thread.starts_at_newest"]
    assert verdict.status == Status.FAIL and not verdict.failures[0].shrunk
