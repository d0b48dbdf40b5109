"""Public Hypothesis strategies: conversation trees (as stored rows), agent histories, and
compaction cuts into them.

Every strategy is a function with keyword-only knobs that builds valid data by
construction and shrinks toward the simplest case.
"""

from chatconform.strategies.cuts import compaction_cases, cuts
from chatconform.strategies.histories import SUMMARY_METADATA_KEY, histories, instructions
from chatconform.strategies.large import (
    expand_conversation,
    expand_history,
    hostile_history,
    large_conversations,
    large_history,
    large_rows,
    recorded_payloads,
    write_json_lines,
)
from chatconform.strategies.trees import conversation_rows

__all__ = [
    "SUMMARY_METADATA_KEY",
    "compaction_cases",
    "conversation_rows",
    "cuts",
    "expand_conversation",
    "expand_history",
    "histories",
    "hostile_history",
    "instructions",
    "large_conversations",
    "large_history",
    "large_rows",
    "recorded_payloads",
    "write_json_lines",
]
