"""Public Hypothesis strategies: conversation trees (as stored rows), agent histories,
compaction cuts into them, trim budgets, and malformed stored histories.

Every strategy is a function with keyword-only knobs that builds valid data by
construction and shrinks toward the simplest case.
"""

from chatconform.strategies.budgets import budgets, trim_cases
from chatconform.strategies.cuts import compaction_cases, cuts
from chatconform.strategies.histories import SUMMARY_METADATA_KEY, expand_history, histories, instructions
from chatconform.strategies.malformed import malform, serde_cases
from chatconform.strategies.trees import conversation_rows, expand_conversation, large_conversations

__all__ = [
    "SUMMARY_METADATA_KEY",
    "budgets",
    "compaction_cases",
    "conversation_rows",
    "cuts",
    "expand_conversation",
    "expand_history",
    "histories",
    "instructions",
    "large_conversations",
    "malform",
    "serde_cases",
    "trim_cases",
]
