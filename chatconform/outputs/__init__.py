"""What a run leaves behind: the JSON-lines report format, the failure as people read it,
saved cases and regression tests, the files a run writes, and the reporters (the handlers of
the engine's events, one output format each)."""
