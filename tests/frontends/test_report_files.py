"""The files a run writes survive a hostile run: a failed write keeps the old file and leaves
no temporary one, a FIFO or device is refused at the start without being opened, a chdir
during the run does not move them, and a second run writing the same report is refused."""

import errno
import json
import os
import socket
import textwrap
import threading

import pytest

from chatconform.cli import main
from chatconform.errors import ConfigError
from chatconform.outputs import files as outputs
from chatconform.outputs.repro import save_failures

QUICK = ("--impl", "reference", "--contract", "thread", "--examples", "5")
OLD = '{"type": "header"}\n{"type": "footer"}\n'


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


def leftovers(folder) -> list[str]:
    """Temporary and lock files a writer left in ``folder``."""
    return sorted(p.name for p in folder.iterdir() if p.name.endswith((".tmp", ".lock")))


def disk_full(monkeypatch) -> None:
    def fsync(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", fsync)


# -- the atomic writer -------------------------------------------------------------------------

@pytest.mark.parametrize("step", ["fsync", "replace"])
def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary_one(step, tmp_path, monkeypatch):
    (tmp_path / "r.jsonl").write_text(OLD)

    def fail(*args):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, step, fail)
    with pytest.raises(ConfigError) as raised:
        outputs.write_atomic(tmp_path / "r.jsonl", "new\n" * 1000)
    assert str(raised.value) == f"cannot write the report {tmp_path / 'r.jsonl'}: No space left on device"
    assert (tmp_path / "r.jsonl").read_text() == OLD
    assert os.listdir(tmp_path) == ["r.jsonl"]


def test_an_interrupted_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        outputs.write_atomic(tmp_path / "r.jsonl", "new\n")
    assert os.listdir(tmp_path) == []


def test_a_replaced_file_keeps_its_mode(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(OLD)
    path.chmod(0o640)
    outputs.write_atomic(path, "new\n")
    assert path.read_text() == "new\n" and path.stat().st_mode & 0o777 == 0o640


# -- a run that cannot write its files at the end --------------------------------------------

@pytest.mark.parametrize("option, name", [("--report", "r.jsonl"), ("--junit-xml", "j.xml")])
def test_a_run_on_a_full_disk_keeps_the_previous_file(option, name, tmp_path, monkeypatch, capsys):
    (tmp_path / name).write_text(OLD)
    disk_full(monkeypatch)
    assert main(["run", *QUICK, option, name]) == 2
    err = capsys.readouterr().err  # the run's progress, then the error
    assert [line for line in err.splitlines() if "error" in line] == [err.splitlines()[-1]] and "Traceback" not in err
    assert "No space left on device" in err
    assert (tmp_path / name).read_text() == OLD
    assert leftovers(tmp_path) == []


def test_a_saved_failure_that_cannot_be_written_says_so_and_leaves_nothing(tmp_path, monkeypatch):
    from chatconform.engine import Failure, Verdict
    from chatconform.frame.status import Status

    failure = Failure("thread.no_crash", "raised", [{"id": "1"}])
    verdict = Verdict("x", "reference", "thread", "thread.no_crash", Status.FAIL, "raised", failures=[failure])
    disk_full(monkeypatch)
    save_failures([verdict], tmp_path / "failures")
    assert failure.saved.startswith("not saved (cannot write the saved failure ") and "No space left" in failure.saved
    assert os.listdir(tmp_path / "failures") == []


# -- not a regular file: refused at the start, never opened ---------------------------------

def _special(kind: str, tmp_path) -> str:
    if kind == "fifo":
        os.mkfifo(tmp_path / "out")
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind("out")  # relative: a socket's path is limited to about 100 characters
        sock.close()
    elif kind == "folder":
        (tmp_path / "out").mkdir()
    else:
        return os.devnull
    return "out"


def bounded(argv: list[str], fifo=None) -> int | None:
    """``main(argv)`` on a thread for at most 10 s; None if it hung (a FIFO is then opened
    for reading, so the blocked writer goes on and the suite does not hang)."""
    done: list[int] = []
    thread = threading.Thread(target=lambda: done.append(main(argv)), daemon=True)
    thread.start()
    thread.join(10)
    if thread.is_alive() and fifo is not None:
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        thread.join(10)
    return done[0] if done else None


@pytest.mark.parametrize("kind, text", [("fifo", "it is a FIFO, not a regular file"),
                                        ("socket", "it is a socket, not a regular file"),
                                        ("device", "it is a character device, not a regular file"),
                                        ("folder", "it is a folder")])
@pytest.mark.parametrize("command, what", [(["run", *QUICK, "--report"], "the report"),
                                           (["run", *QUICK, "--junit-xml"], "the JUnit XML"),
                                           (["bench", "--impl", "reference", "--contract", "thread", "--sizes",
                                             "50", "--json"], "the timings")])
def test_a_fifo_a_socket_a_device_or_a_folder_is_refused_at_the_start(kind, text, command, what, tmp_path,
                                                                       capsys):
    path = _special(kind, tmp_path)
    assert bounded([*command, path], fifo=path if kind == "fifo" else None) == 2
    err = one_line_error(capsys)
    assert f"cannot write {what} {path}: {text}" in err
    assert capsys.readouterr().out == "" and leftovers(tmp_path) == []  # nothing ran


# -- a chdir during the run -----------------------------------------------------------------

WANDERER = """
import os

class Wanderer:
    name = "wanderer"
    version = "1"

    def extract_thread(self, rows_newest_first):
        os.chdir({away!r})
        return []  # no thread at all: the run has failures to save
"""


def test_a_chdir_during_the_run_does_not_move_the_report_junit_or_failures(tmp_path, capsys):
    away = tmp_path / "away"
    away.mkdir()
    (tmp_path / "wander.py").write_text(textwrap.dedent(WANDERER.format(away=str(away))))
    # In this process, where its chdir moves the run (in a process of its own it cannot).
    code = main(["run", "--impl", "wander.py:Wanderer", "--check", "thread.starts_at_newest", "--examples", "5",
                 "--report", "r.jsonl", "--junit-xml", "j.xml", "--in-process"])
    assert code == 1 and os.getcwd() == str(away)  # it did move
    lines = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert lines[0]["type"] == "header" and lines[-1]["type"] == "footer"
    assert (tmp_path / "j.xml").read_text().startswith("<?xml")
    saved = list((tmp_path / ".chatconform" / "failures").glob("*.json"))
    assert saved and os.listdir(away) == [] and leftovers(tmp_path) == []
    out = capsys.readouterr().out
    assert "chatconform replay .chatconform/failures/wander.py_Wanderer--" in out  # named from where it started


# -- a second run writing the same report ---------------------------------------------------

@pytest.mark.parametrize("option, name, what", [("--report", "r.jsonl", "the report"),
                                                ("--junit-xml", "j.xml", "the JUnit XML")])
def test_a_second_run_writing_the_same_file_is_refused(option, name, what, tmp_path, capsys):
    (tmp_path / name).write_text(OLD)
    with outputs.claim(tmp_path / name, what, option):  # the first run, still going
        assert bounded(["run", *QUICK, option, f"./{name}"]) == 2
    err = one_line_error(capsys)
    assert (f"another chatconform run is writing {what} ./{name} (lock {tmp_path / name}.lock); "
            f"wait for it or choose another {option}") in err
    assert (tmp_path / name).read_text() == OLD
    assert leftovers(tmp_path) == []  # released: the lock file goes with it
    assert main(["run", *QUICK, option, name]) == 0  # once the first is done


PROBE = """
from chatconform.outputs import files as outputs
from chatconform.errors import ConfigError

class Probe:
    name = "probe"
    version = "1"

    def extract_thread(self, rows_newest_first):
        try:
            with outputs.claim("r.jsonl"):
                seen = "claimed"
        except ConfigError as exc:
            seen = str(exc)
        with open({seen!r}, "a") as out:
            out.write(seen + "\\n")
        return rows_newest_first
"""


def test_the_lock_is_held_for_the_whole_run(tmp_path, capsys):
    (tmp_path / "probe.py").write_text(PROBE.format(seen=str(tmp_path / "seen.txt")))
    assert main(["run", "--impl", "probe.py:Probe", "--check", "thread.no_crash", "--examples", "5",
                 "--report", "r.jsonl"]) == 0
    seen = (tmp_path / "seen.txt").read_text().splitlines()
    assert seen and all(s.startswith("another chatconform run is writing the report r.jsonl") for s in seen)


def test_a_lock_file_left_by_a_killed_run_blocks_nothing(tmp_path, capsys):
    (tmp_path / "r.jsonl.lock").write_text("")  # no process holds its flock
    assert main(["run", *QUICK, "--report", "r.jsonl"]) == 0
    assert json.loads((tmp_path / "r.jsonl").read_text().splitlines()[-1])["type"] == "footer"
    assert leftovers(tmp_path) == []


def test_the_lock_is_released_when_the_run_fails(tmp_path, monkeypatch, capsys):
    fsync = os.fsync
    disk_full(monkeypatch)
    assert main(["run", *QUICK, "--report", "r.jsonl"]) == 2
    monkeypatch.setattr(os, "fsync", fsync)
    with outputs.claim("r.jsonl"):
        pass
    assert leftovers(tmp_path) == []


# -- the spec a report records -----------------------------------------------------------------

THREADS = """
from chatconform.reference.thread import extract_thread

class Threads:
    name, version = "threads", "1"

    def extract_thread(self, rows_newest_first):
        return extract_thread(rows_newest_first)[:1]  # the newest row only: failures to save
"""


def test_a_report_records_a_file_spec_as_given_and_the_failures_still_load_it(tmp_path, capsys):
    (tmp_path / "impls").mkdir()
    (tmp_path / "impls" / "threads.py").write_text(THREADS)
    assert main(["run", "--impl", "./impls/threads.py:Threads", "--check", "thread.reaches_root",
                 "--examples", "20", "--report", "r.jsonl", "--in-process"]) == 1
    header = (tmp_path / "r.jsonl").read_text().splitlines()[0]
    assert json.loads(header)["implementations"]["threads"]["spec"] == "impls/threads.py:Threads"
    assert str(tmp_path) not in header
    saved = list((tmp_path / ".chatconform" / "failures").glob("*.json"))
    # A saved case names it as the report does; check_case finds it again from the test's project.
    assert saved and json.loads(saved[0].read_text())["implementation"] == "impls/threads.py:Threads"
    capsys.readouterr()
    assert main(["replay", str(saved[0]), "--impl", "impls/threads.py:Threads", "--in-process"]) == 1
    assert main(["summary", "r.jsonl"]) == 0


def test_the_recorded_spec_is_relative_to_its_project_root_or_the_working_directory_or_as_given(tmp_path):
    from chatconform.runner.discovery import relative_spec

    assert relative_spec(f"{tmp_path}/a/b.py:C", tmp_path) == "a/b.py:C"
    assert relative_spec("./a/../b.py:C", tmp_path) == "b.py:C"
    assert relative_spec("../elsewhere/b.py:C", tmp_path) == "../elsewhere/b.py:C"
    assert relative_spec("/elsewhere/b.py:C", tmp_path) == "/elsewhere/b.py:C"
    assert relative_spec("my_package.module:C", tmp_path) == "my_package.module:C"
    assert relative_spec("exec:python /x/impl.py", tmp_path) == "exec:python /x/impl.py"
    # inside a project (a pyproject.toml, setup.py, setup.cfg or .git): from its root, wherever the run is
    (tmp_path / "project" / "impl").mkdir(parents=True)
    (tmp_path / "project" / "pyproject.toml").write_text("")
    assert relative_spec(f"{tmp_path}/project/impl/b.py:C", tmp_path / "elsewhere") == "impl/b.py:C"
    assert relative_spec("impl/b.py:C", tmp_path / "project") == "impl/b.py:C"
    assert relative_spec("b.py:C", tmp_path / "project" / "impl") == "impl/b.py:C"
