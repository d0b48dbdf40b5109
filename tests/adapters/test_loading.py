"""Loading the bundled adapters: listing them imports none of their libraries, a run's load
imports them (``warm_up``), and a library that is installed but fails to import is one line
naming the adapter."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chatconform.adapters import Library
from chatconform.errors import ConfigError, MissingDependency
from chatconform.runner import discovery

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.adapter

#: The third-party libraries the adapters import, by the adapter whose library each is. None
#: of them is imported by chatconform's core or by pydantic-ai's (``core_imports`` checks).
LIBRARIES = {
    "langchain-core": ("langchain_core",),
    "langchain-anthropic": ("langchain_anthropic", "anthropic", "langsmith"),
    "langchain-aws": ("langchain_aws", "boto3", "botocore", "langsmith"),
    "langchain-google-genai": ("langchain_google_genai", "google.genai"),
    "langchain-openai": ("langchain_openai", "openai", "langsmith"),
    "langchain-deepseek": ("langchain_deepseek", "langchain_openai", "openai", "langsmith"),
    "langchain-groq": ("langchain_groq", "groq", "langsmith"),
    "openai-agents": ("agents", "openai"),
    "pydantic-ai-harness": ("pydantic_ai_harness",),
}
EVERY_LIBRARY = sorted({module for modules in LIBRARIES.values() for module in modules})


def _python(code: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


def _imported(code: str) -> list[str]:
    """The libraries of :data:`EVERY_LIBRARY` imported after ``code`` ran in a fresh interpreter."""
    done = _python(f"{code}\nimport json, sys\n"
                   f"print(json.dumps([m for m in {EVERY_LIBRARY!r} if m in sys.modules]))")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _installed() -> list[str]:
    """The adapters of :data:`LIBRARIES` whose extra is installed."""
    return [name for name in LIBRARIES if _loads(name)]


def _loads(name: str) -> bool:
    try:
        discovery.load(name, in_process=True, warm=False)
    except MissingDependency:
        return False
    return True


def test_core_imports_none_of_the_libraries():
    """The premise of the test below: what chatconform list imports besides the adapters."""
    assert _imported("import chatconform.cli\nfrom chatconform.runner import discovery\n"
                     "from chatconform import contracts\n"
                     "from chatconform.fakes import all_fakes\nall_fakes(); contracts.all_contracts()\n"
                     "discovery.load('reference', in_process=True)") == []


def test_chatconform_list_imports_no_adapter_library():
    """``chatconform list`` loads every registered implementation to read its name, version and
    contracts, and runs none: each adapter's library waits for a run."""
    if not _installed():
        pytest.skip("no adapter's extra is installed")
    assert _imported("import contextlib, io\nfrom chatconform.cli import main\n"
                     "with contextlib.redirect_stdout(io.StringIO()):\n"
                     "    assert main(['list', '--format', 'json']) == 0") == []


def test_loading_to_run_imports_each_library_before_the_first_call():
    """A run loads an adapter with its ``warm_up``, so the import is not charged to its first call."""
    installed = _installed()
    if not installed:
        pytest.skip("no adapter's extra is installed")
    done = _python("import json, sys\nfrom chatconform.runner import discovery\nmissing = {}\n"
                   f"for name, modules in {dict((n, LIBRARIES[n]) for n in installed)!r}.items():\n"
                   "    discovery.load(name, in_process=True)\n"
                   "    missing[name] = [m for m in modules if m not in sys.modules]\n"
                   "print(json.dumps(missing))")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {name: [] for name in installed}


@pytest.fixture
def broken_langchain_anthropic(tmp_path):
    """A langchain_anthropic that is found but fails to import, first on the path."""
    if importlib.util.find_spec("langchain_anthropic") is None:
        pytest.skip("the langchain-anthropic extra is not installed")
    package = tmp_path / "langchain_anthropic"
    package.mkdir()
    (package / "__init__.py").write_text("raise ImportError(\"cannot import name 'Thing' from 'anthropic'\")\n")
    return {"PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}


def test_a_library_that_fails_to_import_is_one_line_naming_the_adapter(broken_langchain_anthropic, tmp_path):
    listed = _python("from chatconform.cli import main\nraise SystemExit(main(['list', '--format', 'json']))",
                     broken_langchain_anthropic)
    assert listed.returncode == 0, listed.stderr
    row = next(i for i in json.loads(listed.stdout)["implementations"] if i["name"] == "langchain-anthropic")
    assert row["error"] is None  # listing does not import it
    said = ("langchain-anthropic: the langchain-anthropic adapter could not import langchain_anthropic "
            "(ImportError: cannot import name 'Thing' from 'anthropic'); reinstall its extra: "
            "pip install --force-reinstall 'chatconform[langchain-anthropic]'")
    for where in ([], ["--in-process"]):
        run = subprocess.run([sys.executable, "-m", "chatconform", "run", "--impl", "langchain-anthropic",
                              "--contract", "payload", "--examples", "1", *where],
                             cwd=tmp_path, capture_output=True, text=True, timeout=300,
                             env={**os.environ, **broken_langchain_anthropic, "COLUMNS": "1000"})
        assert run.returncode == 2, run.stdout + run.stderr
        assert run.stderr.strip() == f"error: {said}", where


def test_a_library_imported_on_first_use_fails_in_one_line(tmp_path, monkeypatch):
    """Outside a run's load (an adapter object used directly) the first call imports it, and says the same."""
    (tmp_path / "chatconform_broken_library.py").write_text("raise ImportError('a half-upgraded install')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    library = Library("chatconform_broken_library", adapter="my-adapter", extra="my-extra")
    with pytest.raises(ConfigError) as caught:
        library.Anything  # noqa: B018 - the first read imports it
    assert str(caught.value) == ("the my-adapter adapter could not import chatconform_broken_library (ImportError: "
                                 "a half-upgraded install); reinstall its extra: "
                                 "pip install --force-reinstall 'chatconform[my-extra]'")
