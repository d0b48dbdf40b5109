"""Saving each failure of a finished run under ``.chatconform/failures/``, so that
``chatconform replay`` re-runs it and the reporters after this one name the file."""

from __future__ import annotations

from pathlib import Path

from chatconform.engine import Event, RunFinished
from chatconform.outputs.repro import FAILURES_DIR, save_failures


class SavedFailures:
    """The handler that saves the failures when the run finishes (before the others show them).

    The folder is made absolute here, at the start, so a chdir during the run does not move
    it; each failure still names its file as ``directory`` does, from where the run started.
    """

    def __init__(self, directory: str | Path = FAILURES_DIR) -> None:
        self.shown = Path(directory)
        self.directory = self.shown.absolute()

    def __call__(self, event: Event) -> None:
        if isinstance(event, RunFinished):
            save_failures(event.outcome.verdicts, self.directory, shown=self.shown)
