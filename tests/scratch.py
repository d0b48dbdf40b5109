"""A copy of the project with files added, and commands run in it: how the scratch tests show
that a new contract or dialect is its own files."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def copy_project(tmp: Path, copied: Iterable[str], added: Mapping[str, str]) -> None:
    """The package and the files ``copied`` (paths in the project) in ``tmp``, and each source
    of ``added`` written to its path there, dedented."""
    shutil.copytree(ROOT / "chatconform", tmp / "chatconform", ignore=shutil.ignore_patterns("__pycache__"))
    for name in copied:
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp / name)
    for name, source in added.items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text(textwrap.dedent(source).lstrip())


def run_in(tmp: Path, *argv: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """``argv`` run in the copy, importing its package."""
    env = {**os.environ, "PYTHONPATH": str(tmp)}
    return subprocess.run(argv, cwd=tmp, env=env, capture_output=True, text=True, timeout=timeout)
