"""The CI recipes work as written: the steps of action.yml and the workflows of docs/ci.md,
played here the way a GitHub runner plays them (each ``run:`` as a script file under
``bash --noprofile --norc -eo pipefail``, a fresh GITHUB_OUTPUT file per step read back into
``steps.<id>.outputs``, one GITHUB_STEP_SUMMARY and RUNNER_TEMP per job, ``${{ }}``
expressions filled in, a step without ``if:`` skipped once a step failed).

Stood in for, not played: the install steps (``pip install``: chatconform is installed in
this environment and PYTHONPATH puts this checkout first; ``pip install -e .`` of the
reader's package puts the job's folder on PYTHONPATH), ``actions/checkout`` (it copies the
reader's package into the job's folder) and ``actions/setup-python`` (this interpreter);
``actions/upload-artifact@v4`` and ``download-artifact@v4`` are a folder per artifact, and
the upload refuses a name already used in the run, or one with a character v4 forbids.
Every ``chatconform run`` gets ``--examples 5 --in-process``, so a recipe plays in seconds.
The JUnit XML recipe is not played (pytest with every installed plugin starts in more
seconds than these tests take); its ``--chatconform-*`` options are checked against the
plugin's. The sharded recipe (four shards and a merge) is marked slow.
"""

from __future__ import annotations

import fnmatch
import itertools
import os
import re
import shutil
import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"
CI_DOC = ROOT / "docs" / "ci.md"
QUICK = "--examples 5 --in-process"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
INSTALL = re.compile(r"^\s*(python -m )?pip install ", re.M)
# the Action as docs/ci.md tells the reader to name it: a repository pinned to a ref the
# reader fills in, or a copy in the job's folder
THIS_ACTION = re.compile(r"<owner>/chatconform@<commit>|\./[\w./-]*chatconform")
FORBIDDEN_IN_ARTIFACT_NAMES = set('":<>|*?\r\n\\/')  # actions/upload-artifact@v4

APP = '''\
from chatconform.reference import extract_thread
from chatconform.reference.payload import to_payload
{imports}

class MyHistory:
    name = "my-history"
    version = "0"
    providers = {{"openai-chat"}}
    extract_thread = {thread}
    to_payload = staticmethod(to_payload)
'''
PASSING = {"imports": "", "thread": "staticmethod(extract_thread)"}
# Dify's walk before its fix: thread.parent_chain and others fail
FAILING = {"imports": "from chatconform.fakes.thread import UnscopedHeadCheck",
           "thread": "UnscopedHeadCheck.extract_thread"}


def write_app(repository: Path, variant: dict) -> Path:
    """The reader's repository: a package ``my_app`` with ``my_app/conformance.py:MyHistory``."""
    package = repository / "my_app"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "conformance.py").write_text(APP.format(**variant))
    return repository


# -- a runner, as far as the recipes need one ------------------------------------------------

def evaluate(expression: str, context: dict) -> str:
    """The expressions the recipes use: a context's property (``inputs.report``,
    ``steps.run.outputs.code``) and ``a || b`` (the first that is not empty)."""
    value = ""
    for alternative in expression.split("||"):
        names = alternative.strip().split(".")
        assert names[0] in context, f"the player knows no context {names[0]!r} (in {expression!r})"
        found = context[names[0]]
        for name in names[1:]:
            if names[0] == "inputs":
                assert name in found, f"no input {name!r} in action.yml"
            found = found.get(name, "") if isinstance(found, dict) else ""
        value = str(found)
        if value:
            break
    return value


def fill(text, context: dict) -> str:
    return EXPRESSION.sub(lambda m: evaluate(m.group(1), context), str(text))


def read_outputs(path: Path) -> dict:
    """``name=value`` lines, as the runner reads GITHUB_OUTPUT (the recipes write no
    ``name<<DELIMITER`` blocks; the player refuses one rather than misread it)."""
    outputs = {}
    for line in path.read_text().splitlines():
        name, equals, value = line.partition("=")
        assert equals and "<<" not in name, f"the player reads no output line {line!r}"
        outputs[name] = value
    return outputs


@dataclass
class Run:
    """One workflow run: its artifacts (name -> folder) and the reader's repository."""
    root: Path
    repository: Path | None = None
    artifacts: dict = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class Job:
    """One job (one matrix leg) on a fresh runner: its folder, step summary and RUNNER_TEMP."""
    run: Run
    folder: Path
    github: dict
    strategy: dict
    matrix: dict
    failed: bool = False
    installed: bool = False
    codes: list = field(default_factory=list)       # (step, exit code) of the steps played
    not_played: list = field(default_factory=list)  # the install scripts
    count: int = 0

    def __post_init__(self):
        self.temp = self.folder.parent / f"{self.folder.name}.temp"
        self.temp.mkdir(parents=True)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.summary = self.temp / "step_summary.md"
        self.summary.touch()

    def context(self, **more) -> dict:
        return {"github": self.github, "strategy": self.strategy, "matrix": self.matrix, "steps": {}, **more}

    def bash(self, script: str, env: dict) -> tuple[int, dict]:
        self.count += 1
        script_file, output = self.temp / f"step{self.count}.sh", self.temp / f"output{self.count}"
        script_file.write_text(script)
        output.touch()
        path = [str(ROOT)] + ([str(self.folder)] if self.installed else [])
        environ = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
                       PYTHONPATH=os.pathsep.join(path), GITHUB_OUTPUT=str(output),
                       GITHUB_STEP_SUMMARY=str(self.summary), RUNNER_TEMP=str(self.temp),
                       GITHUB_JOB=self.github["job"], **env)
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script_file)],
                              cwd=self.folder, env=environ, capture_output=True, text=True, timeout=120)
        return done.returncode, read_outputs(output)

    def upload(self, given: dict) -> int:
        """``path`` is one file per line (blank lines ignored), each copied by its name."""
        name = given.get("name", "artifact")
        sources = [self.folder / line.strip() for line in given["path"].splitlines() if line.strip()]
        if not name or FORBIDDEN_IN_ARTIFACT_NAMES & set(name):
            return 1
        sources = [source for source in sources if source.is_file()]
        if not sources:
            return 1 if given.get("if-no-files-found") == "error" else 0
        with self.run.lock:
            if name in self.run.artifacts:  # v4: "(409) Conflict: an artifact with this name already exists"
                return 1
            self.run.artifacts[name] = folder = self.run.root / "artifacts" / name
        folder.mkdir(parents=True)
        for source in sources:
            shutil.copy(source, folder / source.name)
        return 0

    def download(self, given: dict) -> int:
        target = self.folder / given.get("path", ".")
        for name, folder in sorted(self.run.artifacts.items()):
            if fnmatch.fnmatchcase(name, given.get("pattern", "*")):
                into = target if given.get("merge-multiple", "").lower() == "true" else target / name
                shutil.copytree(folder, into, dirs_exist_ok=True)
        return 0


def play_steps(job: Job, steps: list, context: dict) -> None:
    for number, step in enumerate(steps):
        label = step.get("name") or step.get("id") or f"step {number + 1}"
        condition = step.get("if")
        assert condition in (None, "always()"), f"the player knows no condition {condition!r}"
        if condition is None and job.failed:
            continue
        outputs: dict = {}
        given = {key: fill(value, context) for key, value in (step.get("with") or {}).items()}
        if "run" in step:
            script = fill(step["run"], context)
            env = {key: fill(value, context) for key, value in (step.get("env") or {}).items()}
            if INSTALL.search(script):
                # not played: chatconform is installed here; the reader's package is their folder
                job.not_played.append((script, env))
                job.installed |= bool(re.search(r"pip install -e \.(\s|$)", script))
                continue
            code, outputs = job.bash(script.replace("chatconform run ", f"chatconform run {QUICK} "), env)
        elif step["uses"].startswith(("actions/checkout@", "actions/setup-python@")):
            if step["uses"].startswith("actions/checkout@") and job.run.repository:
                shutil.copytree(job.run.repository, job.folder, dirs_exist_ok=True)
            continue
        elif step["uses"].startswith("actions/upload-artifact@v4"):
            code = job.upload(given)
        elif step["uses"].startswith("actions/download-artifact@v4"):
            code = job.download(given)
        else:
            assert THIS_ACTION.fullmatch(step["uses"]), f"the recipe uses {step['uses']!r}"
            given["args"] = f"{given.get('args', '')} {QUICK}".strip()
            code, outputs, _ = play_action(job, given)
        job.codes.append((label, code))
        job.failed |= code != 0
        if "id" in step:
            context["steps"][step["id"]] = {"outputs": outputs}


def play_action(job: Job, given: dict) -> tuple[int, dict, list]:
    """action.yml as a step of ``job``, with the inputs ``given``: its exit code (its first
    failing step's), its outputs and (step, exit code) for each of its steps played."""
    action = yaml.safe_load(ACTION.read_text())
    assert action["runs"]["using"] == "composite"
    declared = action["inputs"]
    assert set(given) <= set(declared), f"inputs the action does not declare: {set(given) - set(declared)}"
    assert all(name in given for name, spec in declared.items() if spec.get("required")), given
    inputs = {name: given.get(name, str(spec.get("default", ""))) for name, spec in declared.items()}
    context = job.context(inputs=inputs, github={**job.github, "action_path": str(ROOT)})
    was_failed, job.failed = job.failed, False
    first = len(job.codes)
    play_steps(job, action["runs"]["steps"], context)
    codes = job.codes[first:]
    del job.codes[first:]
    job.failed = was_failed
    outputs = {name: fill(spec["value"], context) for name, spec in (action.get("outputs") or {}).items()}
    return next((c for _, c in codes if c), 0), outputs, codes


def play_workflow(workflow: dict, run: Run) -> dict:
    """Every job of ``workflow``, in order (each after its ``needs``), its matrix legs side by
    side: job id -> the list of its legs' Jobs."""
    played: dict = {}
    for job_id, spec in workflow["jobs"].items():
        needs = spec.get("needs", [])
        assert all(need in played for need in ([needs] if isinstance(needs, str) else needs))
        matrix = (spec.get("strategy") or {}).get("matrix") or {}
        legs = [dict(zip(matrix, values, strict=True)) for values in itertools.product(*matrix.values())] or [{}]
        jobs = [Job(run, run.root / f"{job_id}-{index}", {"job": job_id},
                    {"job-index": index, "job-total": len(legs)}, values) for index, values in enumerate(legs)]
        with ThreadPoolExecutor(len(jobs)) as pool:
            list(pool.map(lambda job, steps=spec["steps"]: play_steps(job, steps, job.context()), jobs))
        played[job_id] = jobs
    return played


def recipe(containing: str):
    """The one YAML block of docs/ci.md holding ``containing``, read."""
    [block] = [b for b in re.findall(r"```yaml\n(.*?)```", CI_DOC.read_text(), re.S) if containing in b]
    return yaml.safe_load(textwrap.dedent(block))


def action_job(tmp_path: Path, index: int = 0, job_id: str = "conformance") -> Job:
    return Job(Run(tmp_path), tmp_path / "work", {"job": job_id}, {"job-index": index, "job-total": 1}, {})


# -- action.yml -------------------------------------------------------------------------------

STEPS = ["Name the report's artifact", "Run the conformance checks", "Write the summary page", "Upload the report",
         "Write the step summary", "Fail when a check failed"]  # the install step is not played


def test_a_usage_error_is_exit_2_with_no_summary_and_no_artifact(tmp_path):
    job = action_job(tmp_path)
    code, _, codes = play_action(job, {"impl": "reference", "contracts": "no-such-contract", "args": QUICK})
    assert code == 2 and codes[-1] == (STEPS[-1], 2)
    assert job.run.artifacts == {} and job.summary.read_text() == ""


def name_artifact(job: Job, **given) -> str:
    """Only the action's first step, the one that names the report's artifact."""
    action = yaml.safe_load(ACTION.read_text())
    step = action["runs"]["steps"][0]
    assert step["id"] == "artifact" and "upload-artifact" not in str(step)
    inputs = {name: given.get(name, str(spec.get("default", ""))) for name, spec in action["inputs"].items()}
    context = job.context(inputs=inputs)
    code, outputs = job.bash(fill(step["run"], context), {k: fill(v, context) for k, v in step["env"].items()})
    assert code == 0
    return outputs["name"]


def test_the_default_artifact_names_differ_for_each_use_in_a_job_and_each_matrix_leg(tmp_path):
    first, second = action_job(tmp_path / "leg0", index=0), action_job(tmp_path / "leg1", index=1)
    in_one_job = [name_artifact(first, impl="a"), name_artifact(first, impl="b"),
                  name_artifact(first, impl="c", report="out/c.jsonl")]
    assert in_one_job == ["chatconform-conformance-0-chatconform-report",
                          "chatconform-conformance-0-chatconform-report-2", "chatconform-conformance-0-out_c"]
    other_leg = name_artifact(second, impl="a")
    other_job = name_artifact(action_job(tmp_path / "other", job_id="gate"), impl="a")
    names = [*in_one_job, other_leg, other_job]
    assert len(set(names)) == len(names)
    assert not any(FORBIDDEN_IN_ARTIFACT_NAMES & set(name) for name in names)
    odd = name_artifact(first, impl="a", report='a dir/"x":y*.jsonl')
    assert not FORBIDDEN_IN_ARTIFACT_NAMES & set(odd)
    # a name given is used as it is, even twice (upload-artifact then refuses the second)
    assert [name_artifact(second, impl="a", **{"artifact-name": "mine"}) for _ in range(2)] == ["mine", "mine"]


def test_the_action_writes_the_summary_and_the_code_and_uploads_the_report(tmp_path):
    job = action_job(tmp_path)
    code, outputs, codes = play_action(job, {"impl": "reference", "contracts": "thread", "args": QUICK})
    assert code == 0 and codes == [(step, 0) for step in STEPS]
    summary = job.summary.read_text()
    assert "| check | reference |" in summary and "| `thread.reaches_root` | pass |" in summary
    assert outputs == {"artifact-name": "chatconform-conformance-0-chatconform-report"}
    artifact = job.run.artifacts[outputs["artifact-name"]]
    assert '"reference"' in (artifact / "chatconform-report.jsonl").read_text()
    # the summary page beside it, named in the step summary
    assert "thread.reaches_root" in (artifact / "chatconform-report.html").read_text()
    assert f"`chatconform-report.html` in the artifact `{outputs['artifact-name']}`" in summary
    # the install step, not played, installs the action's own checkout
    [(script, env)] = job.not_played
    assert script.startswith("python -m pip install") and env["PACKAGE"] == str(ROOT)


def test_a_failing_check_fails_the_last_step_after_the_summary_and_the_upload(tmp_path):
    job = action_job(tmp_path)
    earlier = name_artifact(job, impl="reference")  # an earlier use in the same job named its report
    code, outputs, codes = play_action(job, {"impl": "chatconform.fakes.thread:UnscopedHeadCheck",
                                             "contracts": "thread", "args": QUICK})
    # the run step writes code=1 and passes; the summary and the upload follow; the last step exits 1
    assert code == 1 and codes == [(step, 0) for step in STEPS[:-1]] + [(STEPS[-1], 1)]
    assert "| `thread.parent_chain` | **FAIL** |" in job.summary.read_text()
    assert outputs == {"artifact-name": f"{earlier}-2"}
    assert "fake-dify-39031" in (job.run.artifacts[f"{earlier}-2"] / "chatconform-report.jsonl").read_text()


# -- docs/ci.md --------------------------------------------------------------------------------

def test_the_recipes_install_from_the_repository_and_name_the_action_as_the_text_says():
    text = CI_DOC.read_text()
    assert not re.search(r"pip install (-U )?chatconform\s*$", text, re.M)
    assert "replace `<owner>`" in text and "`<commit>` with a tag or a full commit SHA" in text
    installs = re.findall(r"pip install .*", text)
    assert installs and all(
        re.sub(r"^pip install \"chatconform\[[\w,-]+\] @", 'pip install "chatconform @', line).startswith((
            'pip install "chatconform @ git+https://github.com/<owner>/chatconform@<commit>"',
            "pip install -e .", "pip install ./path/to/chatconform"))
        or "finds nothing" in line for line in installs), installs
    uses = re.findall(r"uses: ([^\s`]+)", text)
    ours = [u for u in uses if not u.startswith("actions/")]
    assert ours and all(THIS_ACTION.fullmatch(u) for u in ours), ours
    assert "`uses: ./.github/actions/chatconform`" in text


ACTION_RECIPE = "contracts: thread payload"


def test_the_action_recipe_passes_and_writes_the_summary(tmp_path):
    run = Run(tmp_path, write_app(tmp_path / "repository", PASSING))
    [job] = play_workflow(recipe(ACTION_RECIPE), run)["conformance"]
    assert [code for _, code in job.codes] == [0] and not job.failed  # the action's step
    summary = job.summary.read_text()
    assert "| check | my-history |" in summary and "`payload.schema_valid`" in summary
    assert list(run.artifacts) == ["chatconform-conformance-0-chatconform-report"]


def test_the_steps_by_hand_gate_summarise_and_upload(tmp_path):
    # the action recipe with the steps by hand in place of its `uses:` step, as the text says
    workflow = recipe(ACTION_RECIPE)
    steps = workflow["jobs"]["conformance"]["steps"]
    [ours] = [i for i, step in enumerate(steps) if THIS_ACTION.fullmatch(step.get("uses", ""))]
    steps[ours:ours + 1] = recipe("chatconform run --impl my_app.conformance:MyHistory --report report.jsonl")
    run = Run(tmp_path, write_app(tmp_path / "repository", FAILING))
    [job] = play_workflow(workflow, run)["conformance"]
    assert [code for _, code in job.codes] == [1, 0, 0, 0]  # the run fails; summary, page and upload still run
    assert "| `thread.parent_chain` | **FAIL** |" in job.summary.read_text()
    assert (run.artifacts["chatconform-report"] / "report.jsonl").is_file()
    assert "thread.parent_chain" in (run.artifacts["chatconform-report"] / "report.html").read_text()


@pytest.mark.slow  # four shards and a merge: six chatconform processes
def test_the_sharded_recipe_uploads_every_shard_and_the_merged_summary_is_the_gate(tmp_path):
    run = Run(tmp_path, write_app(tmp_path / "repository", FAILING))
    played = play_workflow(recipe("--shard"), run)
    shards = played["conformance"]
    assert len(shards) == 4
    assert sorted(run.artifacts) == [f"chatconform-shard-{i}" for i in range(1, 5)] + ["chatconform-summary"]
    assert [job.failed for job in shards].count(True) == 1  # the shard that searched the thread contract
    [report] = played["conformance-report"]
    assert [code for _, code in report.codes] == [0, 0, 0, 0, 1]  # download, summary, page, its upload, gate
    assert 'data-provider="openai-chat"' in (run.artifacts["chatconform-summary"] / "chatconform.html").read_text()
    merged = report.summary.read_text()
    assert "| `thread.parent_chain` | **FAIL** |" in merged and "| `payload.schema_valid` | pass |" in merged


def test_the_junit_recipe_names_only_options_of_the_plugin():
    from chatconform import plugin

    class Group:
        def __init__(self):
            self.options: list[str] = []

        def addoption(self, *names, **_):
            self.options.extend(names)

    group = Group()
    plugin.pytest_addoption(type("Parser", (), {"getgroup": lambda self, *a: group})())
    named = set(re.findall(r"--chatconform-[a-z-]+", CI_DOC.read_text()))
    assert named and named <= set(group.options), named - set(group.options)


# -- the recipe that tests an application against chatconform serve ----------------------------

APP_TEST = '''\
import os

from openai import OpenAI


def test_the_assistant_answers():
    client = OpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key=os.environ["OPENAI_API_KEY"], max_retries=0)
    messages = [{{"role": "system", "content": "Be brief."}}, {{"role": "user", "content": "Hi"}}, {extra}]
    reply = client.chat.completions.create(model="gpt-4o-mini", messages=[m for m in messages if m])
    assert reply.choices[0].message.content
'''


@pytest.mark.serve
@pytest.mark.parametrize("broken", [False, True], ids=["accepted", "rejected"])
def test_the_serve_recipe_runs_the_applications_tests_and_gates_on_the_report(tmp_path, broken):
    pytest.importorskip("openai")
    pytest.importorskip("starlette")
    import socket

    with socket.socket() as probe:  # a free port in place of the recipe's 8400
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    [block] = [b for b in re.findall(r"```yaml\n(.*?)```", CI_DOC.read_text(), re.S) if "chatconform serve" in b]
    steps = yaml.safe_load(textwrap.dedent(block).replace("8400", str(port)))
    job = action_job(tmp_path, job_id="app")
    # A tool result with no call before it: OpenAI rejects it, and so does the server.
    orphan = '{"role": "tool", "tool_call_id": "call_9", "content": "42"}' if broken else "None"
    (job.folder / "tests").mkdir()
    (job.folder / "tests" / "test_app.py").write_text(APP_TEST.format(extra=orphan))
    play_steps(job, steps, job.context())
    assert [label for label, _ in job.codes] == [
        "Start chatconform serve", "Run the application's tests against it", "Stop it and summarise the requests"]
    assert [code for _, code in job.codes] == ([0, 1, 1] if broken else [0, 0, 0])
    summary = job.summary.read_text()
    assert "openai-chat" in summary and ("**FAIL**" in summary) == broken
    assert (job.folder / "serve.jsonl").is_file()
