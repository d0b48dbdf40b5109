"""The pytest plugin collects an item per (implementation, check) of the contracts each
implementation provides, and none (not even a skipped one) for a contract it has no method for;
the run options it shares with ``chatconform run`` act as they do there."""

from __future__ import annotations

import os
import re

from chatconform.contracts import all_contracts
from chatconform.runner import discovery

pytest_plugins = ["pytester"]

ITEM = re.compile(r"test_conformance\[(?P<spec>.+)::(?P<check>[\w.]+)\]$")


def _collected(pytester, *options: str) -> list[tuple[str, str]]:
    done = pytester.runpytest_inprocess("--pyargs", "chatconform.conformance", "-p", "no:cacheprovider",
                                        "-p", "no:randomly", "--collect-only", "-q", *options)
    assert done.ret == 0, done.stdout.str()[-2000:] + done.stderr.str()[-2000:]
    return [(m["spec"], m["check"]) for m in map(ITEM.search, done.stdout.lines) if m]


def _checks(*contracts: str) -> set[str]:
    return {check.id for name in contracts for check in all_contracts()[name].checks}


def test_an_implementation_gets_items_for_the_contracts_it_provides_only(pytester):
    spec = "chatconform.fakes.trim:KeepLastN"
    provided = discovery.load(spec, in_process=True, warm=False).contracts()
    assert "trim" in provided and "thread" not in provided  # the premise: a trim-only implementation
    items = _collected(pytester, "--chatconform-impl", spec)
    assert sorted(check for _, check in items) == sorted(_checks(*provided))
    assert {impl for impl, _ in items} == {spec}


def test_each_registered_implementation_gets_items_for_its_own_contracts(pytester):
    items = _collected(pytester)
    by_spec: dict[str, set[str]] = {}
    for spec, check in items:
        by_spec.setdefault(spec, set()).add(check)
    assert by_spec["reference"] == _checks(*all_contracts())
    for spec, checks in by_spec.items():
        try:
            provided = discovery.load(spec, in_process=True, warm=False).contracts()
        except Exception:  # not loadable here (a missing extra): its items say why when they run
            continue
        assert checks == _checks(*provided), spec


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
