"""A ninth contract is its own files: added to a copy of the project, it is listed, runs,
travels over ``exec:``, gets its rows in the docs from their generator, has every part and
takes part in the lifecycle, with nothing else edited (docs/architecture.md, "Adding a contract")."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from tests.scratch import copy_project, run_in

ROOT = Path(__file__).resolve().parents[2]

#: The files a new contract adds, and the rows it adds to the docs.
CONTRACT_MODULE = '''
    """The ``scratch`` contract: ``echo_history(history) -> history``, the history unchanged."""

    from chatconform.frame.history_contract import HistoryCase, HistoryTransformContract
    from chatconform.frame.lifecycle import LifecycleStep
    from chatconform.errors import Violation
    from chatconform.reference.scratch import echo_history
    from chatconform.strategies import expand_history, histories


    def _echo(conversation, step):
        history = conversation.history
        return conversation.record(conversation.call("echo_history", history),
                                   conversation.reference("echo_history", history))


    class ScratchContract(HistoryTransformContract):
        name = "scratch"
        method = "echo_history"
        signature = "echo_history(history) -> history"
        crash_rationale = "an echo that raises loses the conversation"
        mutation_rationale = "an echo that edits the history in place changes what the caller holds"
        listing_order = 90
        result_description = "The result of echo_history: the history, in the same JSON as the input history."
        reference_module = "chatconform.reference.scratch"
        guard_tests = ("tests/contracts/test_scratch.py",)
        lifecycle_steps = (LifecycleStep("echo", "an echo of the stored history", methods=("echo_history",),
                                         play=_echo),)

        def transform(self, history):
            return echo_history(history)

        def histories(self):
            return histories()

        def expand(self, seed, size):
            return expand_history(seed, size)


    CONTRACT = ScratchContract()


    @CONTRACT.check("keeps_length", title="returns as many messages as it got",
                    rationale="an echo that drops a message loses a turn")
    def keeps_length(ex):
        if len(ex.output) != len(ex.case.history):
            raise Violation(f"{len(ex.output)} messages for {len(ex.case.history)}")


    @CONTRACT.check("matches_reference", title="the same history as the reference",
                    rationale="the reference defines the echo")
    def matches_reference(ex):
        if ex.output != ex.reference:
            raise Violation("the result differs from the reference")
'''

REFERENCE_MODULE = '''
    """The reference echo."""

    CONTRACT_METHODS = ("echo_history",)


    def echo_history(history):
        return list(history)
'''

FAKES_MODULE = '''
    """Echo fakes."""

    from chatconform.fakes.base import Fake


    class Raises(Fake):
        name, version = "fake-echo-raises", "0"
        reproduces = "an echo that raises"
        violates = ("scratch.no_crash",)

        def echo_history(self, history):
            raise KeyError("echo")


    class ReversesInPlace(Fake):
        name, version = "fake-echo-reverses-in-place", "0"
        reproduces = "an echo that reverses the caller's list"
        violates = ("scratch.input_untouched",)

        def echo_history(self, history):
            history.reverse()
            return list(reversed(history))


    class Slow(Fake):
        name, version = "fake-echo-slow", "0"
        reproduces = "an echo that takes a second"
        violates = ()
        warns = ("scratch.slow",)

        def echo_history(self, history):
            import time

            time.sleep(1.0)
            return list(history)


    class DropsLast(Fake):
        name, version = "fake-echo-drops-last", "0"
        reproduces = "an echo that drops the last message"
        violates = ("scratch.keeps_length", "scratch.matches_reference")

        def echo_history(self, history):
            return list(history[:-1])
'''

TESTS_MODULE = '''
    from chatconform.reference.scratch import echo_history


    def test_echo_keeps_the_history():
        assert echo_history([1, 2]) == [1, 2]
'''

PAGE = "# The `scratch` contract\n\nMethod: `echo_history(history) -> history`, the history unchanged.\n"

#: The rows the docs' generator writes for it (tools/generate_docs.py), as they read.
README_ROW = ("| [`scratch`](docs/contracts/scratch.md) | `echo_history(history) -> history` | `keeps_length`, "
              "`matches_reference` |\n")
INPUT_ROW = '| `scratch` | `echo_history` | `{"history": [...]}` |\n'
RESULT_ROW = "| `scratch` | `echo_history` | the history, in the same JSON as the input history. |\n"
#: What the generator reads and writes, copied as they are.
DOCS = ("README.md", "docs/protocol.md", "docs/mutation.md", "docs/provider-rules.md", "tools/generate_docs.py",
        "tools/mutate.py", "tools/mutation-scores.json")

#: An implementation of the scratch contract over the protocol, in no package.
PROGRAM = '''
    import json, sys

    for line in sys.stdin:
        request = json.loads(line)
        if request["type"] == "stop":
            break
        if request["type"] == "hello":
            assert request["contracts"]["scratch"] == "echo_history", request
            reply = {"protocol": 1, "name": "echo-program", "version": "1", "contracts": ["scratch"]}
        else:
            reply = {"id": request["id"], "result": request["input"]["history"]}
        sys.stdout.write(json.dumps(reply) + "\\n")
        sys.stdout.flush()
'''


def _copy_with_scratch(tmp: Path) -> None:
    copy_project(tmp, ("pyproject.toml", "tests/conftest.py", "tests/contracts/test_contract_parts.py", *DOCS),
                 {"chatconform/contracts/scratch.py": CONTRACT_MODULE,
                  "chatconform/reference/scratch.py": REFERENCE_MODULE,
                  "chatconform/fakes/scratch.py": FAKES_MODULE,
                  "tests/contracts/test_scratch.py": TESTS_MODULE})
    (tmp / "docs" / "contracts").mkdir(parents=True)
    (tmp / "docs" / "contracts" / "scratch.md").write_text(PAGE, "utf-8")


def test_a_ninth_contract_is_its_own_files(tmp_path):
    _copy_with_scratch(tmp_path)
    (tmp_path / "program.py").write_text(textwrap.dedent(PROGRAM))
    cli = [sys.executable, "-c", "import sys; from chatconform.cli import main; sys.exit(main(sys.argv[1:]))"]

    listed = run_in(tmp_path, *cli, "list", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    checks = {check["id"]: check for check in json.loads(listed.stdout)["checks"]}
    assert "fake-echo-drops-last" in checks["scratch.keeps_length"]["violated_by"]

    ran = run_in(tmp_path, *cli, "run", "--impl", "reference", "--impl", f"exec:{sys.executable} program.py",
                 "--contract", "scratch", "--examples", "5", "--report", "r.jsonl")
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    verdicts = {(r["implementation"], r["check"]): r["status"]
                for r in map(json.loads, (tmp_path / "r.jsonl").read_text().splitlines()) if r["type"] == "result"}
    checks = {"scratch.no_crash", "scratch.input_untouched", "scratch.slow", "scratch.keeps_length",
              "scratch.matches_reference"}
    assert verdicts == {(impl, check): "pass" for impl in ("reference", "echo-program") for check in checks}

    # Its rows in the docs come from the generator, with no edit by hand.
    docs = run_in(tmp_path, sys.executable, "tools/generate_docs.py")
    assert docs.returncode == 0, docs.stderr
    assert README_ROW in (tmp_path / "README.md").read_text("utf-8")
    protocol = (tmp_path / "docs" / "protocol.md").read_text("utf-8")
    assert INPUT_ROW in protocol and RESULT_ROW in protocol
    assert "| `reference/scratch.py` | not measured" in (tmp_path / "docs" / "mutation.md").read_text("utf-8")

    # The copy holds only the new contract's tests, so only its parts are checked there.
    parts = run_in(tmp_path, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                   "tests/contracts/test_contract_parts.py::test_every_contract_has_its_parts[scratch]",
                 "tests/contracts/test_scratch.py")
    assert parts.returncode == 0, parts.stdout[-3000:]
    assert "2 passed" in parts.stdout


@pytest.mark.slow  # a lifecycle search, shrunk
def test_a_contract_joins_the_lifecycle_from_its_own_module(tmp_path):
    """The scratch contract declares a lifecycle step in its module: the lifecycle draws it and
    composes its method, so a fake with no method but echo_history is played, and its edit of
    the stored history is caught by an invariant of the lifecycle."""
    _copy_with_scratch(tmp_path)
    cli = [sys.executable, "-c", "import sys; from chatconform.cli import main; sys.exit(main(sys.argv[1:]))"]
    ran = run_in(tmp_path, *cli, "run", "--impl", "chatconform.fakes.scratch:ReversesInPlace",
                 "--contract", "lifecycle", "--check", "lifecycle.input_untouched", "--examples", "5",
                 "--report", "r.jsonl")
    results = [r for r in map(json.loads, (tmp_path / "r.jsonl").read_text().splitlines()) if r["type"] == "result"]
    assert [(r["check"], r["status"]) for r in results] == [("lifecycle.input_untouched", "fail")], ran.stdout[-2000:]
    assert "echo_history()" in results[0]["message"]
