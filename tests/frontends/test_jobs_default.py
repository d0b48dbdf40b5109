"""`chatconform run` without --jobs: one worker process per CPU, $CHATCONFORM_JOBS, or 1 with
--in-process. (The other tests set CHATCONFORM_JOBS=1 in conftest; these take it away.)"""

import json

import pytest

from chatconform.cli import main
from chatconform.errors import ConfigError
from chatconform.frame import argtypes


@pytest.fixture(autouse=True)
def _no_variable(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(argtypes.JOBS_VARIABLE, raising=False)


def test_the_default_is_one_worker_per_cpu(monkeypatch):
    monkeypatch.setattr(argtypes, "cpus", lambda: 6)
    assert argtypes.default_jobs(in_process=False) == 6


def test_in_process_runs_here_for_a_debuggers_breakpoints(monkeypatch):
    monkeypatch.setattr(argtypes, "cpus", lambda: 6)
    assert argtypes.default_jobs(in_process=True) == 1


@pytest.mark.parametrize(("text", "expected"), [("3", 3), (" 1 ", 1), ("auto", 6)])
def test_the_variable_sets_the_default(monkeypatch, text, expected):
    monkeypatch.setattr(argtypes, "cpus", lambda: 6)
    monkeypatch.setenv(argtypes.JOBS_VARIABLE, text)
    assert argtypes.default_jobs(in_process=False) == expected
    assert argtypes.default_jobs(in_process=True) == expected  # said outright: it is the user's choice


@pytest.mark.parametrize("text", ["0", "two", "-1"])
def test_a_bad_variable_is_a_one_line_usage_error_naming_it(monkeypatch, capsys, text):
    monkeypatch.setenv(argtypes.JOBS_VARIABLE, text)
    with pytest.raises(ConfigError, match=f"^CHATCONFORM_JOBS='{text}': "):
        argtypes.default_jobs(in_process=False)
    assert main(["run", "--impl", "reference", "--contract", "trim", "--examples", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "CHATCONFORM_JOBS" in err[0] and "Traceback" not in err[0]


def test_the_command_line_wins_over_the_variable(monkeypatch, capsys):
    monkeypatch.setenv(argtypes.JOBS_VARIABLE, "not a number")
    assert main(["run", "--impl", "reference", "--contract", "trim", "--examples", "2", "--jobs", "1"]) == 0


@pytest.mark.slow
def test_a_default_run_uses_two_workers_on_two_cpus_and_reports_what_a_serial_run_does(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(argtypes, "cpus", lambda: 2)
    common = ["run", "--impl", "reference", "--impl", "chatconform.fakes.trim:KeepLastN", "--contract", "trim",
              "--examples", "20"]
    assert main([*common, "--report", "parallel.jsonl"]) == 1
    assert "· 2 jobs" in capsys.readouterr().err.splitlines()[0]
    assert main([*common, "--jobs", "1", "--report", "serial.jsonl"]) == 1
    assert "jobs" not in capsys.readouterr().err.splitlines()[0]

    def results(name):
        lines = [json.loads(line) for line in (tmp_path / name).read_text().splitlines()]
        return [{k: v for k, v in line.items() if k != "seconds"} for line in lines if line["type"] == "result"]

    assert results("parallel.jsonl") == results("serial.jsonl")
