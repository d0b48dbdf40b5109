"""``python -m chatconform`` is the ``chatconform`` command."""

import subprocess
import sys


def test_python_dash_m_runs_the_command():
    done = subprocess.run([sys.executable, "-m", "chatconform", "--version"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("chatconform "), done


def test_python_dash_m_names_the_command_in_its_usage_errors():
    done = subprocess.run([sys.executable, "-m", "chatconform", "frob"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith("chatconform: error: "), done.stderr
