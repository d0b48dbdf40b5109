"""An application built as pydantic-ai's documentation and its neighbours lead one to build it.

The bundled adapters judge each library method by method. An application chains them: it
stores each run with pydantic-ai (``persist_run``), sanitizes and repairs histories a client
posts back with pydantic-ai's ``sanitize_messages`` and ``repair_messages``, stores them
through ``ModelMessagesTypeAdapter`` and maps them with pydantic-ai's provider models
(:class:`~chatconform.adapters.pydantic_ai.PydanticAIAdapter`), compacts with
pydantic-ai-harness's ``SummarizingCompaction``
(:class:`~chatconform.adapters.pydantic_ai_harness.PydanticAIHarnessAdapter`) and trims with
langchain-core's ``trim_messages``
(:class:`~chatconform.adapters.langchain_core.LangChainCoreAdapter`). This implementation is
those methods, unchanged, for the ``lifecycle`` contract to run as one conversation
(``chatconform run --impl chatconform.adapters.application:PydanticAIApplication --contract
lifecycle``); what it finds is in docs/compliance.md.

Needs the ``pydantic-ai``, ``pydantic-ai-harness`` and ``langchain-core`` extras.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from chatconform.adapters.langchain_core import LangChainCoreAdapter
from chatconform.adapters.pydantic_ai import PydanticAIAdapter
from chatconform.adapters.pydantic_ai_harness import PydanticAIHarnessAdapter

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

#: What the composition gets wrong, as the lifecycle finds it (docs/compliance.md has each
#: minimal step sequence), on top of what each library gets wrong alone.
LIFECYCLE_FAILURES = {
    "lifecycle.continuable": (
        "pydantic-ai stores a run cut off after a response with tool calls as it left it, unmarked, so the next "
        "user turn raises 'Cannot provide a new user prompt when the message history contains unprocessed tool "
        "calls' (persist.continuable; https://github.com/langgenius/dify/issues/41616)"),
    "lifecycle.no_instructions": (
        "pydantic-ai stores every request of a run with its instructions (persist.no_instructions)"),
    "lifecycle.payload_accepted": (
        "pydantic-ai's provider models send what the history holds where the provider rejects it: the "
        "rejections payload.schema_valid and payload.provider_rules list (an empty text item sent to Gemini "
        "as an empty text part is one only for gemini-2.0 and older, G12)"),
    "lifecycle.user_texts_kept": (
        "trim_messages counts the system prompt and each part of a request as messages of their own, so a "
        "budget the stored history fits drops its first user text (trim.keeps_latest)"),
    "lifecycle.summary_once": (
        "the same count: a summary stored by the harness is a HumanMessage to trim_messages and is cut under a "
        "budget the history fits (trim.keeps_latest)"),
}


class PydanticAIApplication:
    """pydantic-ai for persistence, client histories, storage and payloads; pydantic-ai-harness
    for compaction; langchain-core for trimming."""

    name = "pydantic-ai-application"

    def __init__(self) -> None:
        self._ai = PydanticAIAdapter()
        self._harness = PydanticAIHarnessAdapter()
        self._langchain = LangChainCoreAdapter()
        self.version = (f"pydantic-ai {self._ai.version}, pydantic-ai-harness {self._harness.version}, "
                        f"langchain-core {self._langchain.version}")
        self.providers = PydanticAIAdapter.providers
        self.models = dict(PydanticAIAdapter.models)
        self.expected_failures = {
            **self._ai.expected_failures,
            **self._harness.expected_failures,
            **{k: v for k, v in self._langchain.expected_failures.items() if k.startswith("trim.")},
            **LIFECYCLE_FAILURES,
        }

    def warm_up(self) -> None:
        """Warm up the libraries it composes before a run's first call."""
        self._harness.warm_up()
        self._langchain.warm_up()

    def persist_run(self, previous: Sequence[ModelMessage], captured: Sequence[ModelMessage],
                    outcome: str) -> list[ModelMessage]:
        return self._ai.persist_run(previous, captured, outcome)

    def sanitize(self, history: Sequence[ModelMessage]) -> list[ModelMessage]:
        return self._ai.sanitize(history)

    def repair(self, history: Sequence[ModelMessage]) -> list[ModelMessage]:
        return self._ai.repair(history)

    def dump(self, history: Sequence[ModelMessage]) -> bytes:
        return self._ai.dump(history)

    def load(self, data: bytes | str) -> list[ModelMessage]:
        return self._ai.load(data)

    def to_payload(self, history: Sequence[ModelMessage], *, provider: str, instructions: str | None = None) -> Any:
        return self._ai.to_payload(history, provider=provider, instructions=instructions)

    def compact(self, history: Sequence[ModelMessage], *, cut: int, summary: str) -> list[ModelMessage]:
        return self._harness.compact(history, cut=cut, summary=summary)

    def trim(self, history: Sequence[ModelMessage], *, max_messages: int) -> list[ModelMessage]:
        return self._langchain.trim(history, max_messages=max_messages)
