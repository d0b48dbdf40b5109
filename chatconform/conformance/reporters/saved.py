"""Saving each failure of a finished run under ``.chatconform/failures/``, so that
``chatconform replay`` re-runs it and the reporters after this one name the file."""

from __future__ import annotations

from chatconform.conformance.engine import Event, RunFinished
from chatconform.conformance.repro import FAILURES_DIR, save_failures


class SavedFailures:
    """The handler that saves the failures when the run finishes (before the others show them)."""

    def __init__(self, directory=FAILURES_DIR) -> None:
        self.directory = directory

    def __call__(self, event: Event) -> None:
        if isinstance(event, RunFinished):
            save_failures(event.outcome.verdicts, self.directory)
