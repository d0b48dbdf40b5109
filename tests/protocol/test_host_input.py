"""How the built-in host tells whether an implementation changed the input it was sent."""

from __future__ import annotations

import pickle

import pytest
from pydantic_ai.messages import ModelRequest, UserPromptPart

from chatconform.frame import snapshot
from chatconform.frame.snapshot import Frozen
from chatconform.runner.protocol import host


def test_an_untouched_copy_of_a_payload_call_pickles_as_the_bytes_it_was_loaded_from(monkeypatch):
    """``to_payload(history, provider=..., instructions=...)``: the keyword ``instructions`` and
    the requests' attribute of that name are one string in the run's process. Loaded, the
    copy must pickle back to the same bytes, or every call costs a second load and pickle of
    the history to tell that nothing changed."""
    history = [ModelRequest(parts=[UserPromptPart(content="Hello")], instructions="Be brief.")]
    blob = pickle.dumps(((history,), {"provider": "openai-chat", "instructions": "Be brief."}),
                        protocol=pickle.HIGHEST_PROTOCOL)
    frozen = Frozen.from_pickle(blob)
    args, kwargs = frozen.copy()
    working = (args, host._named(kwargs))
    assert pickle.dumps(working, protocol=pickle.HIGHEST_PROTOCOL) == blob
    with monkeypatch.context() as patched:
        patched.setattr(snapshot.collector, "loads", lambda data: pytest.fail("the input was loaded again"))
        assert host._changed(frozen, working) is None
    args[0][0].parts[0].content = "Hello!"  # a change is still seen
    assert host._changed(frozen, working) is not None
