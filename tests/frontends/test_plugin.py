"""The pytest plugin: the run options it shares with ``chatconform run`` act as they do there."""

from __future__ import annotations

import os

pytest_plugins = ["pytester"]


def test_the_provider_and_memory_options_reach_the_run_as_on_the_command_line(pytester, monkeypatch):
    from chatconform import plugin
    from chatconform.runner.protocol.host_codes import MEMORY_VARIABLE

    monkeypatch.setenv(MEMORY_VARIABLE, "4096")  # restored after the test, whatever the plugin sets
    config = pytester.parseconfigure("--chatconform-impl=reference", "--chatconform-in-process",
                                     "--chatconform-provider=glm", "--chatconform-provider=gemini",
                                     "--chatconform-memory-limit=512")
    reference = config.stash[plugin._LOADED][1]["reference"]
    assert reference.options["providers"] == {"glm", "gemini"}
    assert reference.left_out["providers"]  # the reference declares every provider: the others are left out
    assert os.environ[MEMORY_VARIABLE] == "512"
