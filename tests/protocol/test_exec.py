"""Implementations over the exec: protocol: the examples, every fault as a verdict, start-up errors."""

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from jsonschema import Draft202012Validator

from chatconform import check_case
from chatconform.cli import main
from chatconform.contracts import all_contracts, get_contract
from chatconform.errors import RejectedInput
from chatconform.runner.protocol import hello, messages, program

ROOT = Path(__file__).resolve().parents[2]
PYTHON_EXAMPLE = f"exec:{sys.executable} {ROOT / 'examples/python/impl.py'}"
NODE_EXAMPLE = f"exec:node {ROOT / 'examples/node/impl.js'}"
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def results(path):
    return {(r["implementation"], r["check"]): r for r in map(json.loads, open(path)) if r["type"] == "result"}


# -- the examples ----------------------------------------------------------------------------

@needs_node
def test_both_examples_smoke(tmp_path):
    code = main(["run", "--impl", PYTHON_EXAMPLE, "--impl", NODE_EXAMPLE, "--contract", "thread",
                 "--examples", "30", "--report", "r.jsonl"])
    assert code == 0
    found = results(tmp_path / "r.jsonl")
    assert {impl for impl, _ in found} == {"example-python", "example-node"}
    assert all(r["status"] == "pass" and r["evaluated"] for r in found.values())


@pytest.mark.release
def test_python_example_passes_under_ci(tmp_path):
    """thread and payload under ci; the four history contracts a few cases each (below), as a
    ci search of all four costs about 40 s more."""
    assert main(["run", "--impl", PYTHON_EXAMPLE, "--contract", "thread", "--contract", "payload",
                 "--report", "r.jsonl"]) == 0
    found = results(tmp_path / "r.jsonl")
    ran = {check for (_, check), r in found.items() if r["status"] != "skip"}
    # OpenAI's chat takes no reasoning back and rejects none: those two checks cannot apply.
    cannot = {"payload.reasoning_kept", "payload.no_rejected_reasoning"}
    assert {c.id for name in ("thread", "payload") for c in get_contract(name).checks} - cannot == ran
    assert all(r["status"] in ("pass", "skip") for r in found.values())


NEW_CONTRACTS = ("sanitize", "repair", "trim", "serde")


def test_sanitize_repair_trim_and_serde_run_over_exec(tmp_path):
    """Every check of the four contracts is evaluated on the example's answers, and holds;
    serde reaches the program's load (round_trip, rejects_malformed)."""
    code = main(["run", "--impl", PYTHON_EXAMPLE, *(a for c in NEW_CONTRACTS for a in ("--contract", c)),
                 "--examples", "12", "--report", "r.jsonl"])
    found = results(tmp_path / "r.jsonl")
    assert code == 0, {check: r["message"] for (_, check), r in found.items() if r["status"] != "pass"}
    assert {check for _, check in found} == {c.id for name in NEW_CONTRACTS for c in get_contract(name).checks}
    assert all(r["status"] == "pass" and r["evaluated"] for r in found.values())


def test_the_example_rejects_malformed_data_as_a_value_error():
    """load's refusal travels as an error with invalid_input: a ValueError, as in Python."""
    from chatconform.runner import discovery

    impl = discovery.load(PYTHON_EXAMPLE)
    try:
        history = impl.obj.load('[{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "Hi"}]}]')
        assert impl.obj.load(impl.obj.dump(history)) == history
        with pytest.raises(RejectedInput, match="hologram") as refused:
            impl.obj.load('[{"kind": "request", "parts": [{"part_kind": "hologram"}]}]')
        assert isinstance(refused.value, ValueError)
        with pytest.raises(RejectedInput, match="not JSON"):
            impl.obj.load(b'[{"kind": "req')
    finally:
        impl.obj.close()


#: A serde program built on the example's dump and load that gets one thing wrong.
SERDE = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {examples!r})
    from impl import InvalidData, dump, load

    mode = sys.argv[1]
    hello = {{"protocol": 1, "name": "serde-" + mode, "version": "0", "contracts": ["serde"]}}
    if mode != "no-load":
        hello["more_methods"] = ["load"]
    for line in sys.stdin:
        request = json.loads(line)
        if request["type"] == "stop":
            break
        if request["type"] == "hello":
            reply = hello
        elif request["method"] == "dump":
            reply = {{"id": request["id"], "result": json.loads(dump(request["input"]["history"]))
                      if mode == "bad-dump" else dump(request["input"]["history"])}}
        else:
            try:
                reply = {{"id": request["id"], "result": load(request["input"]["data"])}}
            except InvalidData as exc:  # refused, but not said to be a validation error
                reply = {{"id": request["id"], "error": {{"type": "SyntaxError", "message": str(exc)}}}}
        sys.stdout.write(json.dumps(reply) + "\\n"); sys.stdout.flush()
""")


@pytest.mark.parametrize("mode, check, message", [
    ("bad-dump", "serde.no_crash", "not a serde result: $: "),
    ("plain-error", "serde.rejects_malformed", "raised SyntaxError: "),
])
def test_a_serde_program_that_breaks_the_rules_fails_the_check(mode, check, message, tmp_path):
    script = tmp_path / "serde.py"
    script.write_text(SERDE.format(examples=str(ROOT / "examples/python")))
    assert main(["run", "--impl", f"exec:{sys.executable} {script} {mode}", "--contract", "serde",
                 "--examples", "8", "--report", "r.jsonl"]) == 1
    found = results(tmp_path / "r.jsonl")
    failed = {c for (_, c), r in found.items() if r["status"] == "fail"}
    assert check in failed and message in found[(f"serde-{mode}", check)]["message"], found
    if mode == "plain-error":  # everything else holds: the valid dumps load back
        assert failed == {check}


def test_a_serde_program_without_load_is_skipped_with_the_reason(tmp_path, capsys):
    script = tmp_path / "serde.py"
    script.write_text(SERDE.format(examples=str(ROOT / "examples/python")))
    assert main(["run", "--impl", f"exec:{sys.executable} {script} no-load", "--contract", "serde"]) == 3
    assert "serde-no-load has dump() but no load(): serde judges what dump() writes by loading it back" \
        in capsys.readouterr().err


@pytest.mark.release  # the Python example runs in every test run
@pytest.mark.slow
@needs_node
def test_node_example_passes_under_ci_with_its_expected_failure(tmp_path, capsys):
    assert main(["run", "--impl", NODE_EXAMPLE, "--report", "r.jsonl"]) == 0
    found = results(tmp_path / "r.jsonl")
    assert found[("example-node", "payload.system_first")]["status"] == "xfail"
    assert "dify/pull/39372" in found[("example-node", "payload.system_first")]["message"]
    assert all(r["status"] in ("pass", "skip", "xfail") for r in found.values())
    assert "xfail" in capsys.readouterr().out


@needs_node
def test_check_case_and_regression_tests_take_an_exec_spec():
    two_prompts = {"history": [{"kind": "request", "parts": [
        {"part_kind": "system-prompt", "content": "Be brief."},
        {"part_kind": "user-prompt", "content": "Hello"}]}], "instructions": "Answer in French."}
    check_case(PYTHON_EXAMPLE, "payload.system_first", two_prompts, variant="openai-chat")
    with pytest.raises(AssertionError, match="system"):
        check_case(NODE_EXAMPLE, "payload.system_first", two_prompts, variant="qwen-vllm")


def test_in_process_and_exec_give_the_same_threads():
    from chatconform.runner import discovery

    contract = get_contract("thread")
    local = discovery.load(f"{ROOT / 'examples/python/impl.py'}:InProcessThreads")
    remote = discovery.load(PYTHON_EXAMPLE)

    @settings(max_examples=30)
    @given(contract.cases(None))
    def same(rows):
        ids = [[row.id for row in impl.method(contract)(rows)] for impl in (local, remote)]
        assert ids[0] == ids[1]

    same()
    remote.obj.close()


# -- the messages ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", messages.MESSAGES)
def test_every_schema_is_a_valid_2020_12_schema(name):
    Draft202012Validator.check_schema(messages.schema(name))


def test_requests_follow_their_schemas(monkeypatch):
    """Every request chatconform sends, for every method of every contract, matches the protocol's schemas."""
    assert messages.problem(hello(), "hello") is None
    assert messages.problem({"type": "stop"}, "stop") is None
    sent = []

    def record(self, request):
        sent.append({"type": "call", "id": len(sent) + 1, **request})
        data, method = request["input"], request["method"]
        result = ({"messages": []} if method == "to_payload" else data if method == "extract_thread"
                  else data["captured"] if method == "persist_run" else json.dumps(data["history"])
                  if method == "dump" else json.loads(data["data"]) if method == "load" else data["history"])
        return {"id": len(sent), "result": result}

    monkeypatch.setattr(program.Session, "call", record)
    declared = {"name": "recorder", "version": "1", "contracts": list(hello()["contracts"])}
    more = tuple(m for methods in hello()["more_methods"].values() for m in methods)
    impl = program._program_type(tuple(declared["contracts"]), more)(program.Session("exec:r", ["r"]), declared)
    wires = messages.carried()
    carried = [c for c in all_contracts().values() if not c.composes]  # a composition travels as its methods
    assert list(wires) == [c.name for c in carried], "every contract travels over exec: (Contract.wire)"
    for contract in carried:
        _call_five_cases(impl, contract)
    assert {(r["contract"], r["method"]) for r in sent} \
        == {(name, method.name) for name, wire in wires.items() for method in wire}
    for request in sent:
        assert messages.problem(request, "call") is None, request["contract"]


def _call_five_cases(impl, contract):
    variant = "openai-chat" if contract.name == "payload" else None

    @settings(max_examples=5)
    @given(contract.cases(variant))
    def call(case):
        output = contract.call(getattr(impl, contract.method), case, variant)
        assert contract.output_problem(output, case) is None
        if contract.name == "serde":
            assert impl.load(output) == case.history
            assert impl.load(output.encode()) == case.history  # bytes travel as their text

    call()


def test_reply_problems_name_the_path():
    assert messages.problem([{"id": "a"}], "call-reply", "thread") \
        == "$[0]: 'created_at' is a required property"
    assert messages.problem({"id": 1}, "call-reply") is not None
    assert messages.problem({"protocol": 1, "name": "x", "version": "1", "contracts": []}, "hello-reply") \
        .startswith("$.contracts")


# -- faults: a verdict, and the run goes on ----------------------------------------------------

#: A thread implementation that breaks the protocol once (the first call of the run; a
#: marker file remembers it across restarts) and answers correctly ever after.
FAULTY = textwrap.dedent("""
    import json, os, subprocess, sys, time
    sys.path.insert(0, {examples!r})
    from impl import thread_of

    mode, marker = sys.argv[1], sys.argv[2]
    out = sys.stdout
    def say(message):
        out.write(json.dumps(message) + "\\n"); out.flush()

    for line in sys.stdin:
        request = json.loads(line)
        if request["type"] == "hello":
            say({{"protocol": 1, "name": "faulty-" + mode, "version": "0", "contracts": ["thread"]}})
            continue
        if request["type"] == "stop":
            break
        answer = {{"id": request["id"], "result": thread_of(request["input"], lambda r, k: r.get(k))}}
        if os.path.exists(marker):
            say(answer)
            continue
        open(marker, "w").close()
        sys.stderr.write("about to misbehave: " + mode + "\\n"); sys.stderr.flush()
        if mode == "exit":
            sys.exit(3)
        elif mode == "not-json":
            out.write("debug: got a call\\n"); out.flush()
        elif mode == "wrong-id":
            say(dict(answer, id=request["id"] + 1))
        elif mode == "out-of-turn":
            say(answer); say(answer)
        elif mode == "hang":
            time.sleep(60)
        elif mode == "flood":
            out.write("x" * (3 << 20)); out.flush(); time.sleep(60)
        elif mode == "error":
            say({{"id": request["id"], "error": {{"type": "KeyError", "message": "'parent'"}}}})
        elif mode == "malformed":
            say({{"id": request["id"], "result": [{{"id": "x"}}]}})
        elif mode == "exit-held":  # a process of its own session keeps the program's stdout open
            held = subprocess.Popen(["sleep", "60"], start_new_session=True)
            with open(marker + ".held", "w") as noted:
                noted.write(str(held.pid))
            sys.exit(7)
""")

FAULTS = {
    "exit": "exited with status 3",
    "not-json": "a line that is not JSON: 'debug: got a call'",
    "wrong-id": "when call 1 was asked",
    "out-of-turn": "wrote to stdout out of turn",
    "hang": "gave no answer in time",
    "flood": "more than 1 MiB without ending the line",
    "error": "raised KeyError: 'parent'",
    "malformed": "not a thread result: $[0]: 'created_at' is a required property",
    "exit-held": "exited with status 7",
}


@pytest.mark.parametrize("mode", list(FAULTS))
def test_a_fault_is_a_no_crash_failure_and_the_run_goes_on(mode, tmp_path, monkeypatch):
    monkeypatch.setattr(program, "MAX_LINE_BYTES", 1 << 20)
    script = tmp_path / "faulty.py"
    script.write_text(FAULTY.format(examples=str(ROOT / "examples/python")))
    spec = f"exec:{sys.executable} {script} {mode} {tmp_path / 'marker'}"
    code = main(["run", "--impl", spec, "--contract", "thread", "--examples", "20", "--timeout", "2",
                 "--report", "r.jsonl"])
    assert code == 1
    found = results(tmp_path / "r.jsonl")
    crash = found[(f"faulty-{mode}", "thread.no_crash")]
    assert crash["status"] == "fail" and FAULTS[mode] in crash["message"], crash["message"]
    if mode not in ("error", "malformed"):  # the program itself broke: restarted, stderr shown
        assert "stderr: about to misbehave: " + mode in crash["message"]
        assert "started again for the next call" in crash["message"]
    others = [r for (_, check), r in found.items() if check != "thread.no_crash"]
    # A hang too: the program is killed and started again, and the search goes on.
    assert others and all(r["status"] == "pass" and r["evaluated"] for r in others), others


def test_an_exit_is_seen_while_a_process_it_started_holds_stdout_open(tmp_path, monkeypatch):
    """Where no supervisor ends what the program left (a system without subreapers), its exit
    is still seen within a fraction of a second, with its status: not a hang at the deadline."""
    import os
    import signal
    import time

    from chatconform.runner.protocol import channel

    monkeypatch.setattr(channel, "supervised", lambda: False)
    script = tmp_path / "faulty.py"
    script.write_text(FAULTY.format(examples=str(ROOT / "examples/python")))
    spec = f"exec:{sys.executable} {script} exit-held {tmp_path / 'marker'}"
    started = time.monotonic()
    try:
        code = main(["run", "--impl", spec, "--contract", "thread", "--examples", "5", "--timeout", "30",
                     "--check", "thread.no_crash", "--report", "r.jsonl"])
    finally:
        held = tmp_path / "marker.held"
        if held.exists():
            os.kill(int(held.read_text()), signal.SIGKILL)
    assert code == 1 and time.monotonic() - started < 20
    crash = results(tmp_path / "r.jsonl")[("faulty-exit-held", "thread.no_crash")]
    assert "exited while a process it started holds its stdout open; it exited with status 7" in crash["message"], \
        crash["message"]


# -- a program that cannot start or fails the hello: exit 2, one line --------------------------

START_FAILURES = {
    "missing": ("exec:/no/such/program --flag", "cannot start '/no/such/program'"),
    "empty": ("exec:", "no command after exec:"),
    "exits": (f"exec:{sys.executable} -c \"import sys; sys.stderr.write('no config\\\\n'); sys.exit(4)\"",
              # it exits before reading: the hello meets a closed stdin or a closed stdout,
              # whichever the operating system reports first
              "the hello failed: the program closed its std"),
    "version": (f"exec:{sys.executable} -c \"print('{{\\\"protocol\\\": 2}}')\"", "protocol version 2"),
    "contract": (f"exec:{sys.executable} -c \"print('{{\\\"protocol\\\": 1, \\\"name\\\": \\\"x\\\", "
                 f"\\\"version\\\": \\\"1\\\", \\\"contracts\\\": [\\\"summarize\\\"]}}')\"",
                 "declares contract(s) summarize"),
    "more-methods": (f"exec:{sys.executable} -c \"print('{{\\\"protocol\\\": 1, \\\"name\\\": \\\"x\\\", "
                     f"\\\"version\\\": \\\"1\\\", \\\"contracts\\\": [\\\"trim\\\"], "
                     f"\\\"more_methods\\\": [\\\"load\\\"]}}')\"",
                     "declares more method(s) load without a declared contract they belong to "
                     "(more methods offered: load (of serde))"),
}


@pytest.mark.parametrize("case", list(START_FAILURES))
def test_a_program_that_cannot_start_is_a_usage_error_in_one_line(case, capsys):
    spec, reason = START_FAILURES[case]
    assert main(["run", "--impl", spec, "--contract", "thread"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and reason in err[0], err
    if case == "exits":
        assert "status 4" in err[0] and "no config" in err[0]


@pytest.mark.slow
def test_the_pytest_plugin_takes_an_exec_spec(tmp_path):
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--pyargs",
                           "chatconform.conformance", f"--chatconform-impl={PYTHON_EXAMPLE}",
                           "--chatconform-contract=thread", "--chatconform-examples=20"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:]
    assert "10 passed" in done.stdout
