"""Shared settings of the project's own property tests.

Every ``@settings(...)`` in these tests names only what differs (usually ``max_examples``);
the rest comes from this profile: the same cases on every run, no example database, no
deadline (CI machines are slow and shared). The engine's own run profiles are pinned
apart from Hypothesis' loaded profile, so this one cannot change what they mean.
"""

from hypothesis import settings

settings.register_profile("chatconform-tests", derandomize=True, database=None, deadline=None)
settings.load_profile("chatconform-tests")

# Hypothesis now and then draws a literal found in the local modules a process imported, so
# a search written with ``@given`` here would draw other cases when other test modules are
# collected (one file alone, a -k selection, an xdist worker). The engine's searches leave
# that pool out; these tests do too, for the whole session.
from chatconform.engine import no_local_constants  # noqa: E402

no_local_constants().__enter__()


# `chatconform run` starts one worker process per CPU unless told otherwise; the tests run
# many small runs, under pytest-xdist's own workers, so each runs its searches here. Tests of
# the default itself, and of --jobs, say so (tests/frontends/test_jobs_default.py).
import os  # noqa: E402

os.environ["CHATCONFORM_JOBS"] = "1"

import socket  # noqa: E402

import pytest  # noqa: E402


class NetworkBlocked(OSError):
    """A test tried to open a connection or look up a name."""


@pytest.fixture
def no_network(monkeypatch):
    """Any connection or name lookup during the test raises: what an offline adapter must
    never need. Adapter tests use it for every test (``pytestmark``)."""
    def blocked(*args, **kwargs):
        raise NetworkBlocked(f"network access attempted: {args[:2]!r}")

    for owner, name in ((socket.socket, "connect"), (socket.socket, "connect_ex"),
                        (socket, "create_connection"), (socket, "getaddrinfo")):
        monkeypatch.setattr(owner, name, blocked)


@pytest.fixture
def short_run(tmp_path, monkeypatch):
    """A few unshrunk examples of one contract, from a scratch folder; asserts no engine error
    and that the calls neither crashed nor touched their input. Returns the verdicts by check.

    An expected failure that a few examples do not reach is undecided (``skip``): a quick
    look cannot tell a fixed deviation from one the budget missed. A library that crashes on
    some valid input declares ``no_crash`` expected; then it may be ``xfail`` too. A refusal
    of a link the provider cannot take (``warn``) is not a crash."""
    from chatconform import api
    from chatconform.frame.status import Status

    def run(implementation, contract, examples=4):
        monkeypatch.chdir(tmp_path)
        verdicts = api.run_conformance(implementation, contracts=[contract], examples=examples, shrink=False)
        assert verdicts
        assert not [v for v in verdicts if v.status == Status.ERROR]
        by_check = {v.check: v.status for v in verdicts}
        crash = f"{contract}.no_crash"
        declared = crash in getattr(implementation, "expected_failures", {})
        assert by_check[crash] in ((Status.PASS, Status.WARN, Status.XFAIL, Status.SKIP) if declared
                                   else (Status.PASS, Status.WARN))
        assert by_check[f"{contract}.input_untouched"] == Status.PASS
        return by_check

    return run


@pytest.fixture
def start_run(tmp_path):
    """Start ``chatconform run ARGS`` in ``tmp_path`` as a terminal would
    (:func:`tests.processes.start_chatconform`); whatever is left of each run's process group
    is killed at teardown."""
    from tests.processes import kill_group, start_chatconform

    started = []

    def start(*args: str):
        started.append(start_chatconform(tmp_path, "run", *args))
        return started[-1]

    yield start
    for process in started:
        kill_group(process)
