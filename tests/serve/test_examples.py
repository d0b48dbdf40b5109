"""The recipes of docs/ci.md and docs/serve.md for testing an application against ``chatconform
serve``, run here as a user runs them: the pytest example (``examples/serve/conftest.py``) and
the GitHub Actions workflow (``examples/serve/workflow.yml``), whose shell steps run locally in
order, as the runner would run them. Each passes the example application, and fails on the
bug it plants (a trimmed history that starts at a tool result), naming the provider's rule."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("openai", reason="the example application uses the openai SDK")
pytest.importorskip("starlette", reason="chatconform serve needs the serve extra (starlette, uvicorn)")
yaml = pytest.importorskip("yaml")

pytestmark = pytest.mark.serve

EXAMPLE = Path(__file__).parents[2] / "examples" / "serve"


@pytest.fixture
def workspace(tmp_path) -> Path:
    """A checkout of an application: the example under ``examples/serve``, as the workflow names it."""
    shutil.copytree(EXAMPLE, tmp_path / "examples" / "serve", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PYTEST_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # chatconform, python
    return {**env, **extra}


def pytest_example(workspace: Path, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "examples/serve", "-q", "-p", "no:cacheprovider",
                           "-p", "no:randomly"], cwd=workspace, env=environment(**extra), capture_output=True,
                          text=True, timeout=300)


@pytest.mark.slow
def test_the_pytest_example_passes_a_clean_application_and_writes_the_report(workspace):
    run = pytest_example(workspace)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout
    lines = (workspace / "serve.jsonl").read_text().split("\n")
    assert sum('"type": "request"' in line for line in lines) == 2


@pytest.mark.slow
def test_the_pytest_example_fails_on_a_request_the_provider_rejects(workspace):
    run = pytest_example(workspace, TRIM_HISTORY="1")
    assert run.returncode == 1
    assert "chatconform serve: the provider rejects 1 of the requests (report: serve.jsonl)" in run.stdout
    assert re.search(r"request 2 \(/v1/chat/completions\): O\d+ at \$\.messages\[0\]", run.stdout), run.stdout


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_workflow(workspace: Path, **extra: str) -> tuple[list[tuple[str, int]], str]:
    """The workflow's shell steps, in order, with GitHub's shell (``bash -eo pipefail``), its
    ``env`` and ``${{ env.X }}`` expressions, a step after a failure only when ``if: always()``;
    the ``uses:`` steps and the install are the runner's, not run here (chatconform is this
    checkout). Returns each step's name and exit status (None: skipped), and the step summary."""
    workflow = yaml.safe_load((EXAMPLE / "workflow.yml").read_text())
    [job] = workflow["jobs"].values()
    summary = workspace / "step-summary.md"
    env = environment(**{**job.get("env", {}), "CHATCONFORM_PORT": str(free_port()),
                         "GITHUB_STEP_SUMMARY": str(summary), **extra})
    statuses: list[tuple[str, int]] = []
    failed = False
    for step in job["steps"]:
        if "run" not in step or step["run"].startswith("pip install"):
            continue
        if failed and step.get("if") != "always()":
            statuses.append((step.get("name", step["run"]), -1))
            continue
        step_env = {k: re.sub(r"\$\{\{ env\.(\w+) \}\}", lambda m: env[m.group(1)], str(v))
                    for k, v in step.get("env", {}).items()}
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=workspace,
                              env={**env, **step_env}, capture_output=True, text=True, timeout=300)
        statuses.append((step.get("name", step["run"]), done.returncode))
        failed = failed or done.returncode != 0
    return statuses, summary.read_text() if summary.exists() else ""


STEPS = ["Start chatconform serve", "Run the application's tests against it", "Stop it and gate on its report"]


def test_the_workflow_installs_chatconform_with_the_serve_extra():
    [job] = yaml.safe_load((EXAMPLE / "workflow.yml").read_text())["jobs"].values()
    installs = [step["run"] for step in job["steps"] if step.get("run", "").startswith("pip install")]
    assert len(installs) == 1 and '"chatconform[serve] @ git+https://github.com/<owner>/chatconform@<commit>"' in \
        installs[0]


@pytest.mark.slow
def test_the_workflow_passes_a_clean_application(workspace):
    statuses, summary = run_workflow(workspace)
    assert statuses == [(name, 0) for name in STEPS]
    assert "2 requests judged" in summary and "serve.O8" in summary


@pytest.mark.slow
def test_the_workflow_gates_on_the_report_when_a_request_breaks_a_rule(workspace):
    statuses, summary = run_workflow(workspace, TRIM_HISTORY="1")
    assert statuses == [(STEPS[0], 0), (STEPS[1], 1), (STEPS[2], 1)]
    assert re.search(r"`serve\.O\d+` \| \*\*FAIL\*\*", summary), summary
    assert "1 rejected" in summary
