"""The composed application: the bundled adapters' methods chained as one lifecycle."""

import pytest

pytest.importorskip("pydantic_ai_harness")
pytest.importorskip("langchain_core")

from chatconform import run_conformance
from chatconform.adapters.application import LIFECYCLE_FAILURES, PydanticAIApplication
from chatconform.runner import discovery

pytestmark = [pytest.mark.adapter, pytest.mark.usefixtures("no_network")]

SPEC = "chatconform.adapters.application:PydanticAIApplication"


def test_it_composes_every_method_but_threads():
    impl = discovery.wrap(PydanticAIApplication, SPEC)
    assert set(impl.contracts()) == {"payload", "compaction", "persist", "sanitize", "repair", "trim", "serde",
                                     "lifecycle"}
    assert "pydantic-ai" in impl.version and "langchain-core" in impl.version
    assert set(LIFECYCLE_FAILURES) <= set(impl.expected_failures)


@pytest.mark.slow
def test_its_lifecycle_fails_only_as_declared():
    verdicts = {v.check: v for v in run_conformance(SPEC, contracts=["lifecycle"], profile="ci", in_process=True)}
    assert {c for c, v in verdicts.items() if v.status == "xfail"} == set(LIFECYCLE_FAILURES)
    assert not [c for c, v in verdicts.items() if v.status == "fail"]
    assert verdicts["lifecycle.thread_ancestors"].status == "skip"  # no thread of its own
