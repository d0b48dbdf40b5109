"""pydantic-ai is imported when a history is first handled, not when chatconform loads:
``--help``, ``list`` and a ``thread`` run never import its agent graph (chatconform.lazy)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import types
from pathlib import Path

import pydantic_ai.messages
import pytest

from chatconform.contracts import get_check
from chatconform.lazy import LazyModule, pai

ROOT = Path(__file__).resolve().parent.parent


def _pydantic_ai_after(argv: list[str]) -> list[str]:
    """The pydantic_ai modules a fresh interpreter holds after ``chatconform ARGV``."""
    code = ("import contextlib, io, json, sys\nfrom chatconform.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
            "    try:\n"
            f"        code = main({argv!r})\n"
            "    except SystemExit as exc:\n"
            "        code = exc.code\n"
            "print(json.dumps([code, sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic_ai')]))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env=os.environ.copy())
    assert done.returncode == 0, done.stderr
    code, modules = json.loads(done.stdout.strip().splitlines()[-1])
    assert code == 0, f"chatconform {' '.join(argv)} exited {code}"
    return modules


@pytest.mark.parametrize("argv", [
    ["--help"],
    ["run", "--help"],
    ["list", "--format", "json"],
    ["list"],
    ["list", "--levels"],
    ["run", "--impl", "reference", "--contract", "thread", "--examples", "5"],
], ids=" ".join)
def test_these_commands_never_import_pydantic_ai(argv):
    assert _pydantic_ai_after(argv) == []


def test_a_run_that_handles_histories_imports_it():
    """The premise: the probe above sees pydantic-ai when a command does import it."""
    assert "pydantic_ai.agent" in _pydantic_ai_after(
        ["run", "--impl", "reference", "--contract", "repair", "--examples", "2"])


def test_the_handle_reads_the_real_classes():
    assert pai.ModelRequest is pydantic_ai.messages.ModelRequest
    assert type(pai) is types.ModuleType  # loaded: later reads are plain module reads
    assert pai.ModelRequest is pydantic_ai.messages.ModelRequest


def test_a_lazy_module_imports_at_its_first_attribute_read_only(tmp_path, monkeypatch):
    (tmp_path / "chatconform_lazy_probe.py").write_text("VALUE = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "chatconform_lazy_probe", raising=False)
    handle = LazyModule("chatconform_lazy_probe")
    with pytest.raises(AttributeError):
        handle.__wrapped__  # what copy, pickle and inspect ask for: not an import  # noqa: B018
    assert "chatconform_lazy_probe" not in sys.modules
    assert handle.VALUE == 42
    assert "chatconform_lazy_probe" in sys.modules
    assert type(handle) is types.ModuleType


def test_the_repair_rationale_names_pydantic_ais_own_marker():
    """The rationale spells the marker out (reading it would import pydantic-ai to list the checks)."""
    rationale = get_check("repair.synthesized_marked_interrupted").rationale
    assert repr(pydantic_ai.messages.SYNTHESIZED_TOOL_RETURN_METADATA_KEY) in rationale


def test_the_import_at_a_first_read_leaves_the_global_random_stream_as_it_was(tmp_path, monkeypatch):
    """A first read may come while Hypothesis draws a case; a module that draws from
    ``random`` as it loads (rich does, through httpx) would show as a strategy using it."""
    (tmp_path / "chatconform_random_probe.py").write_text("import random\nVALUE = random.getrandbits(24)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "chatconform_random_probe", raising=False)
    handle = LazyModule("chatconform_random_probe")
    before = random.getstate()
    assert isinstance(handle.VALUE, int)
    assert random.getstate() == before
