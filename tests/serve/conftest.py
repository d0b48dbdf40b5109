"""One ``chatconform serve`` endpoint per test module, in a thread on a free port: the SDK
tests drive it through a few turns each, every test in a conversation of its own (its own
first user text), so a test reads only its own verdicts."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def server():
    pytest.importorskip("starlette", reason="chatconform serve needs the serve extra (starlette, uvicorn)")
    pytest.importorskip("uvicorn", reason="chatconform serve needs the serve extra (starlette, uvicorn)")
    from chatconform.serve import start

    endpoint = start(version="test")
    yield endpoint
    endpoint.stop()
