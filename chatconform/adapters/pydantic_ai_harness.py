"""pydantic-ai-harness's ``SummarizingCompaction`` as a ``compact`` implementation, run offline.

``compact(history, *, cut, summary)`` runs the harness's own strategy the way an
application compacts by hand between runs (``pydantic_ai_harness.compaction.compact_now``),
with a pydantic-ai ``FunctionModel`` as the summarizer that answers ``summary`` verbatim.
Nothing is fixed up: the history the strategy returns is the result.

How a ``cut`` maps onto the harness's knobs
-------------------------------------------

The harness does not take an index: ``SummarizingCompaction`` keeps the newest
``keep_messages`` messages (its message-count mode) and summarizes the rest, moving the
cutoff earlier while ``_is_safe_cutoff`` sees a tool pair split across it. So::

    SummarizingCompaction(model=<summarizer>, max_messages=1, keep_messages=len(history) - cut)

``max_messages`` is only the trigger of the in-run capability; ``compact_now`` applies the
strategy unconditionally. Every other setting is the harness's default
(``preserve_first_user_message=True``, ``incremental=True``, no receipts), as an application
that follows the harness's README would have it.

Two cuts have no faithful expression, and are passed as they map (they are not faked):

- ``cut == 0`` (summarize nothing): ``keep_messages = len(history)`` and the harness returns
  the history unchanged, without storing the summary.
- ``cut == len(history)`` (keep nothing): ``keep_messages = 0``, and the harness always
  keeps the newest message ("the newest message is always kept, so 0 keeps one"), so the
  result holds one message from before the cut.

The token mode (``keep_tokens``) follows tool dependencies fully but counts a budget of
estimated tokens, not messages, so it cannot place the cut at a given index either.

The summarizer is a ``FunctionModel`` (no network; model requests stay disallowed during
the call). The harness strips the text it returns and stores it as a provider-less
``CompactionPart`` marked with ``pydantic-ai-harness.compaction.summary.v1``. The harness
stamps a summary with the time it was written; here that time is the newest timestamp of
the input history (the harness's own hook for a durable engine replaying a summary), so
equal inputs give equal results.

The adapter judges compaction only. An application on the harness sends its compacted
history through pydantic-ai's own provider models, which the ``pydantic-ai`` adapter
(:mod:`chatconform.adapters.pydantic_ai`) already judges; a ``to_payload`` here would judge
the same code twice. The reported version is the installed ``pydantic-ai-harness``; it pins
the ``pydantic-ai-slim`` release it runs on.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from importlib.metadata import version
from typing import TYPE_CHECKING, Any

from chatconform.adapters import Library, Once
from chatconform.errors import MissingDependency

if TYPE_CHECKING:
    from pydantic_ai_harness.compaction import SummarizingCompaction

__all__ = ["DISTRIBUTION", "EXTRA", "PydanticAIHarnessAdapter", "harness_strategy"]

#: The extra that installs the harness with the pydantic-ai release it pins.
EXTRA = "harness"
#: The distribution whose version the adapter reports.
DISTRIBUTION = "pydantic-ai-harness"

if importlib.util.find_spec("pydantic_ai_harness") is None:
    raise MissingDependency(f"the pydantic-ai-harness adapter needs pydantic-ai-harness: "
                            f"pip install 'chatconform[{EXTRA}]'")

from chatconform.adapters.pydantic_ai import run_offline  # noqa: E402
from chatconform.lazy import pai  # noqa: E402

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage, ModelResponse
    from pydantic_ai.models.function import AgentInfo, FunctionModel

#: pydantic-ai-harness's compaction, imported by warm_up or else on first use (listing the adapter imports none of it).
_function = Library("pydantic_ai.models.function", adapter="pydantic-ai-harness", extra=EXTRA)
_compaction = Library("pydantic_ai_harness.compaction", adapter="pydantic-ai-harness", extra=EXTRA)
_summarizing = Library("pydantic_ai_harness.compaction._summarizing_compaction", adapter="pydantic-ai-harness",
                       extra=EXTRA)
_summary = Library("pydantic_ai_harness.compaction._summary", adapter="pydantic-ai-harness", extra=EXTRA)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _summarizing_maker() -> Callable[[FunctionModel, int, datetime], SummarizingCompaction]:
    """What makes the strategy (for a model, the messages it keeps and the summary's time): its
    class, made from the harness's on first use."""
    base: Any = _compaction.SummarizingCompaction  # read from the harness imported on first use: Any to mypy

    class _Summarizing(base):
        """``SummarizingCompaction`` with the summary's time given rather than read from the clock.

        ``_summarize`` is the strategy's durable operation: a durable engine replays the text
        with its time. This does what the harness does there (``write_summary``, with the
        strategy's own prompts and settings), with ``written_at`` as the time.
        """

        written_at: datetime = _EPOCH

        async def _summarize(self, messages: list[ModelMessage], ctx: Any, *,
                             previous_summary: str | None = None) -> Any:
            text = await _summarizing.write_summary(self, messages, ctx, previous_summary=previous_summary)
            return _summary.WrittenSummary(text, self.written_at)

    def made(model: FunctionModel, keep_messages: int, written_at: datetime) -> SummarizingCompaction:
        strategy = _Summarizing(model=model, max_messages=1, keep_messages=keep_messages)
        strategy.written_at = written_at
        return strategy

    return made


_SUMMARIZING = Once(_summarizing_maker)


def _summarizer(summary: str) -> FunctionModel:
    """A model that answers every request with ``summary``, as it is."""
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return pai.ModelResponse(parts=[pai.TextPart(summary)])

    return _function.FunctionModel(answer, model_name="chatconform-summarizer")


def _newest_time(history: Sequence[ModelMessage]) -> datetime:
    times = [t for t in (getattr(m, "timestamp", None) for m in history) if isinstance(t, datetime)]
    return max(times, key=lambda t: t if t.tzinfo else t.replace(tzinfo=UTC), default=_EPOCH)


def harness_strategy(history: Sequence[ModelMessage], cut: int, model: FunctionModel) -> SummarizingCompaction:
    """The strategy a ``cut`` maps to (see the module docstring)."""
    return _SUMMARIZING.get()(model, max(0, len(history) - cut), _newest_time(history))


class PydanticAIHarnessAdapter:
    """``compact`` through pydantic-ai-harness (see the module docstring)."""

    #: Judged method by method; chatconform.adapters.application composes them into one lifecycle.
    lifecycle = False

    name = "pydantic-ai-harness"
    #: Check id -> why pydantic-ai-harness 0.62.0 fails it, each with its minimal case in
    #: docs/adapters.md.
    expected_failures = {
        "compaction.pairs_intact": (
            "_is_safe_cutoff looks for split tool pairs only 5 messages either side of the cut "
            "(_TOOL_PAIR_SEARCH_RANGE), so a call answered more than 5 messages later is summarized "
            "away and its result kept; no upstream issue found"),
        "compaction.system_prompt_once": (
            "_extract_system_prompts keeps only the system prompts before the first other part, so a "
            "system prompt in a later request before the first response is summarized away"),
        "compaction.cut_respected": (
            "preserve_first_user_message=True (the default) keeps the first user request beside the "
            "summary, and keep_messages=0 (cut == len(history)) still keeps the newest message"),
        "compaction.summary_once": (
            "a cut that leaves nothing to summarize as the harness counts (cut 0; cut == len(history) "
            "of a one-message history, keep_messages=0 keeping one) returns the history unchanged, "
            "without the summary"),
        "compaction.matches_reference": (
            "follows from the four above: the first user request kept, standing prompts after it "
            "summarized, pairs split at a distance, no summary when nothing is cut"),
    }

    def __init__(self) -> None:
        self.version = version(DISTRIBUTION)

    def warm_up(self) -> None:
        """Import the harness's compaction (and make the strategy's class) before a run's first call."""
        _SUMMARIZING.get()
        for library in (_function, _summarizing, _summary):
            library.module()

    def compact(self, history: Sequence[ModelMessage], *, cut: int, summary: str) -> list[ModelMessage]:
        model = _summarizer(summary)
        strategy = harness_strategy(history, cut, model)
        messages = list(history)
        return run_offline(lambda: _compaction.compact_now(strategy, messages, model=model))
