"""Run this folder's tests against ``chatconform serve`` and gate on its report.

When ``OPENAI_BASE_URL`` is set (the workflow started a server and gates on its report
itself), the tests use it as they are. Otherwise a server starts in this process for the
session, with the script the tests expect, and the session fails when a request the
application sent broke a rule the provider rejects on: the report is the gate, so an error the
application swallowed still fails the run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

HERE = Path(__file__).parent
#: Where the session's report goes (the workflow's artifact step can upload it).
REPORT = Path(os.environ.get("CHATCONFORM_REPORT", "serve.jsonl"))


@pytest.fixture(scope="session", autouse=True)
def chatconform_serve(request):
    if os.environ.get("OPENAI_BASE_URL"):
        yield None
        return
    import json

    from chatconform.serve import start

    endpoint = start(script=json.loads((HERE / "replies.json").read_text()), report=REPORT)
    patch = pytest.MonkeyPatch()
    patch.setenv("OPENAI_BASE_URL", endpoint.base_url("openai-chat"))
    patch.setenv("OPENAI_API_KEY", "test")
    yield endpoint
    patch.undo()
    endpoint.stop()
    request.config.chatconform_broken = [
        f"request {v.number} ({v.route}): {p.rule} at {p.path}: {p.message}"
        for v in endpoint.verdicts for p in v.problems if p.severity == "error"]


def pytest_sessionfinish(session, exitstatus):
    broken = getattr(session.config, "chatconform_broken", [])
    if broken:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        reporter.write_sep("=", f"chatconform serve: the provider rejects {len(broken)} of the requests "
                                f"(report: {REPORT})")
        for line in broken:
            reporter.write_line(line)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
