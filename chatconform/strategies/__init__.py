"""Public Hypothesis strategies: conversation trees (as stored rows), agent histories (also as
an untrusted client sends them back), compaction cuts into them, trim budgets, malformed
stored histories, agent runs played to an ending on a real pydantic-ai agent, and the
replies a provider may answer with (``serve --generate``), and whole conversations as programs of
steps (the lifecycle contract's cases).

Every strategy is a function with keyword-only knobs that builds valid data by
construction and shrinks toward the simplest case.
"""

from chatconform.history import SUMMARY_METADATA_KEY
from chatconform.strategies.budgets import budgets, trim_cases
from chatconform.strategies.cuts import compaction_cases, cuts
from chatconform.strategies.histories import histories, instructions
from chatconform.strategies.hostile import expand_hostile_history, hostile_histories
from chatconform.strategies.large import (
    expand_conversation,
    expand_history,
    large_conversations,
    large_edge_history,
    large_history,
    large_rows,
    recorded_payloads,
    write_json_lines,
)
from chatconform.strategies.lifecycles import lifecycles
from chatconform.strategies.malformed import malform, serde_cases
from chatconform.strategies.replies import replies
from chatconform.strategies.runs import run_cases, run_scenario, scenarios
from chatconform.strategies.trees import conversation_rows

__all__ = [
    "SUMMARY_METADATA_KEY",
    "budgets",
    "compaction_cases",
    "conversation_rows",
    "cuts",
    "expand_conversation",
    "expand_history",
    "expand_hostile_history",
    "histories",
    "hostile_histories",
    "instructions",
    "large_conversations",
    "large_edge_history",
    "large_history",
    "large_rows",
    "lifecycles",
    "malform",
    "recorded_payloads",
    "replies",
    "run_cases",
    "run_scenario",
    "scenarios",
    "serde_cases",
    "trim_cases",
    "write_json_lines",
]
