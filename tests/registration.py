"""How the adapter tests load a bundled adapter: through its entry point in pyproject.toml,
the way an installed chatconform finds it."""

import tomllib
from importlib.metadata import EntryPoint
from pathlib import Path

from chatconform.runner import discovery

ROOT = Path(__file__).resolve().parents[1]


def project() -> dict:
    """The ``[project]`` table of pyproject.toml."""
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def registered(name: str):
    """The implementation the entry point ``name`` of ``chatconform.implementations`` loads."""
    target = project()["entry-points"][discovery.GROUP][name]
    return discovery.wrap(EntryPoint(name, target, discovery.GROUP).load(), name)
