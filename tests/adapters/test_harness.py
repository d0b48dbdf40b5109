"""The pydantic-ai-harness adapter: the cut mapped onto keep_messages, the harness's own
result (its quirks included), offline and deterministic, registered behind its extra."""

import asyncio
import copy
import tomllib
from importlib.metadata import EntryPoint, version
from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai_harness")

from pydantic_ai.messages import (
    CompactionPart,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from chatconform.adapters.pydantic_ai_harness import PydanticAIHarnessAdapter, harness_strategy
from chatconform.history import tool_pairing_problems
from chatconform.runner import discovery

ROOT = Path(__file__).resolve().parents[2]
MARK = "pydantic-ai-harness.compaction.summary.v1"


#: Sockets are blocked in every test here (the ``no_network`` fixture of conftest.py).
pytestmark = pytest.mark.usefixtures("no_network")


@pytest.fixture(scope="module")
def adapter():
    return PydanticAIHarnessAdapter()


def chat(turns=3):
    """System + first user prompt, then answer / question turns."""
    history = [ModelRequest(parts=[SystemPromptPart("SYS"), UserPromptPart("task")])]
    for n in range(1, turns):
        history += [ModelResponse(parts=[TextPart(f"a{n}")]), ModelRequest(parts=[UserPromptPart(f"u{n}")])]
    return history


def contents(history):
    return [[(type(p).__name__, p.content if isinstance(p, (SystemPromptPart, UserPromptPart, TextPart,
                                                               CompactionPart)) else p.tool_call_id)
             for p in m.parts] for m in history]


def test_declares_name_version_and_compaction_only(adapter):
    """The harness sends through pydantic-ai's provider models, which the pydantic-ai adapter
    judges: judging them here too would count the same code twice."""
    impl = discovery.wrap(adapter, "pydantic-ai-harness")
    assert adapter.name == "pydantic-ai-harness"
    assert adapter.version == version("pydantic-ai-harness") == "0.62.0"
    assert sorted(impl.contracts()) == ["compaction"]
    assert not any(check.startswith("payload.") for check in adapter.expected_failures)


@pytest.mark.parametrize("cut", [0, 1, 3, 5])
def test_a_cut_maps_to_the_tail_it_keeps(cut):
    history = chat(3)
    strategy = harness_strategy(history, cut, model=None)
    assert strategy.keep_messages == len(history) - cut
    assert (strategy.preserve_first_user_message, strategy.incremental, strategy.receipts) == (True, True, False)


def test_the_harness_result_as_it_stores_it(adapter):
    """Standing prompt in a request of its own, the first user request kept, then the summary
    (a marked CompactionPart, stripped as the harness strips it), then the tail."""
    history = chat(3)
    result = adapter.compact(history, cut=3, summary="  the gist  ")
    assert contents(result) == [[("SystemPromptPart", "SYS")], [("UserPromptPart", "task")],
                                [("CompactionPart", "the gist")], [("TextPart", "a2")], [("UserPromptPart", "u2")]]
    summary = result[2].parts[0]
    assert summary.metadata[MARK] is True and summary.provider_name is None
    assert result[3] is history[3]


def test_cut_zero_stores_no_summary(adapter):
    """keep_messages = len(history): the harness has nothing to summarize and returns the history."""
    history = chat(3)
    assert contents(adapter.compact(history, cut=0, summary="S")) == contents(history)


def test_cut_at_the_end_keeps_the_newest_message(adapter):
    """keep_messages = 0 keeps one: the harness always keeps the request being answered."""
    history = chat(3)
    result = adapter.compact(history, cut=len(history), summary="S")
    assert contents(result)[-1] == [("UserPromptPart", "u2")]


def test_a_pair_answered_far_away_is_split(adapter):
    """The harness looks for split pairs 5 messages either side of the cut; a result that comes
    later keeps the result and drops its call (the result is what the checks judge)."""
    history = [ModelRequest(parts=[UserPromptPart("task")]),
               ModelResponse(parts=[ToolCallPart("slow", {}, "far")])]
    for n in range(4):
        history += [ModelRequest(parts=[UserPromptPart(f"u{n}")]), ModelResponse(parts=[TextPart(f"a{n}")])]
    history += [ModelRequest(parts=[ToolReturnPart("slow", "late", "far")]), ModelResponse(parts=[TextPart("end")])]
    assert tool_pairing_problems(history) == []
    result = adapter.compact(history, cut=len(history) - 4, summary="S")
    assert tool_pairing_problems(result)


def test_deterministic_and_input_untouched(adapter):
    history = chat(4)
    before = copy.deepcopy(history)
    first = adapter.compact(history, cut=4, summary="S")
    assert adapter.compact(history, cut=4, summary="S") == first
    assert history == before


def test_callable_from_a_running_event_loop(adapter):
    async def inside_a_loop():
        return adapter.compact(chat(3), cut=3, summary="S")

    assert contents(asyncio.run(inside_a_loop()))[2] == [("CompactionPart", "S")]


# -- registration and a short run --------------------------------------------------------------

def test_registered_as_an_entry_point_behind_its_extra():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    target = project["entry-points"]["chatconform.implementations"]["pydantic-ai-harness"]
    impl = discovery.wrap(EntryPoint("pydantic-ai-harness", target, discovery.GROUP).load(), "pydantic-ai-harness")
    assert impl.name == "pydantic-ai-harness"
    extras = project["optional-dependencies"]
    assert {"pydantic-ai-harness==0.62.0", "pydantic-ai-slim==2.62.0", "chatconform[pydantic-ai]"} <= \
        set(extras["harness"])
    assert "harness" in extras["all"][0]


def test_short_compaction_run_has_no_engine_errors(short_run):
    short_run(PydanticAIHarnessAdapter, "compaction")
