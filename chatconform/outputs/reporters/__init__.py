"""The reporters: handlers of the engine's events (:mod:`chatconform.engine.events`),
one output format each.

A run gives every event to its reporters in order, so one may rely on those before it:
:class:`SavedFailures` first (the others name where each failure was saved), then the
terminal, then the files. A reporter that cannot write its file raises
:class:`~chatconform.errors.ConfigError`. Adding a format is adding a module here; the
engine does not change.
"""

from chatconform.outputs.reporters.jsonl import JsonlReporter
from chatconform.outputs.reporters.junit import JunitReporter
from chatconform.outputs.reporters.markdown import markdown
from chatconform.outputs.reporters.saved import SavedFailures
from chatconform.outputs.reporters.terminal import BenchProgress, TerminalReporter, print_matrix

__all__ = ["BenchProgress", "JsonlReporter", "JunitReporter", "SavedFailures", "TerminalReporter", "markdown",
           "print_matrix"]
