"""Every reference module has tests that guard it, for ``tools/mutate.py`` to run.

The reference is the oracle of every ``<contract>.matches_reference`` check, so a module
of ``chatconform/reference/`` that no test is declared to pin could change unnoticed: its
contract names it (``Contract.reference_module``) with its ``guard_tests``, or, for a
module no one contract owns, ``SHARED_GUARDS`` in ``tools/mutate.py`` does
(docs/mutation.md). The dialect modules that render and read bodies are part of the
oracle too: each is guarded by the payload tests and its own ``tests/dialects/test_<name>.py``.
"""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _mutate():
    spec = importlib.util.spec_from_file_location("_mutate_tool", ROOT / "tools" / "mutate.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def test_every_reference_module_has_guard_tests_that_exist():
    declared = _mutate().guards()
    modules = sorted(path.relative_to(ROOT).as_posix() for path in (ROOT / "chatconform" / "reference").glob("*.py"))
    assert "chatconform/reference/__init__.py" in modules
    dialects = [path.relative_to(ROOT).as_posix() for path in (ROOT / "chatconform" / "dialects").glob("*.py")
                if path.stem not in ("__init__", "http", "eventstream")]
    assert "chatconform/dialects/openai_chat.py" in dialects
    modules += dialects
    unguarded = [module for module in modules if not declared.get(module)]
    assert not unguarded, ("no guard tests are declared for " + ", ".join(unguarded) + ": name them in the "
                           "contract's guard_tests, or in SHARED_GUARDS of tools/mutate.py")
    missing = [f"{module}: {test}" for module, tests in declared.items() for test in tests
               if not (ROOT / test).is_file()]
    assert not missing, "guard test files that do not exist: " + ", ".join(missing)
    assert set(declared) <= set(modules), "guard tests declared for a module that is no reference or dialect module"
