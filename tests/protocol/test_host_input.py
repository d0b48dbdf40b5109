"""How the run tells whether an implementation behind the built-in host changed the input it
was sent: from the bytes it sent and what the host sends back, decided in the run's process."""

from __future__ import annotations

import base64
import pickle

from pydantic_ai.messages import ModelRequest, UserPromptPart

from chatconform.frame.snapshot import Frozen
from chatconform.runner.protocol import host, kept
from chatconform.runner.protocol.program import input_change


def _sent() -> tuple[bytes, str]:
    history = [ModelRequest(parts=[UserPromptPart(content="Hello")], instructions="Be brief.")]
    blob = pickle.dumps(((history,), {"provider": "openai-chat", "instructions": "Be brief."}),
                        protocol=pickle.HIGHEST_PROTOCOL)
    return blob, base64.b64encode(blob).decode("ascii")


def test_an_untouched_copy_of_a_payload_call_comes_back_as_the_digest_of_the_bytes_sent():
    """``to_payload(history, provider=..., instructions=...)``: the keyword ``instructions`` and
    the requests' attribute of that name are one string in the run's process. Loaded, the
    copy must pickle back to the same bytes, or every call would send the copy back."""
    blob, sent = _sent()
    args, kwargs = Frozen.from_pickle(blob).copy()
    reply = host._returned_input(blob, (args, kept.named(kwargs)))
    assert reply == {"input_digest": kept.digest(blob)}
    assert input_change(sent, reply) is None


def test_a_change_is_decided_here_whatever_the_host_would_say():
    blob, sent = _sent()
    args, kwargs = Frozen.from_pickle(blob).copy()
    args[0][0].parts[0].content = "Hello!"
    reply = host._returned_input(blob, (args, kept.named(kwargs)))
    assert set(reply) == {"input_digest", "input_copy"} and "input_changed" not in reply
    assert input_change(sent, reply) == "the implementation changed its input"
    # An equal value rebound in place pickles differently, and is no change.
    args, kwargs = Frozen.from_pickle(blob).copy()
    args[0][0].parts[0].content = "".join(["Hel", "lo"])
    assert input_change(sent, host._returned_input(blob, (args, kept.named(kwargs)))) is None


def test_a_reply_that_gives_no_account_of_its_input_or_a_forged_copy_is_a_change():
    blob, sent = _sent()
    assert input_change(sent, {"id": 1}) == "its process gave no account of the input after the call"
    assert input_change(sent, {"id": 1, "input_digest": "0" * 32}) == "the implementation changed its input"
    other = pickle.dumps(((["x"],), {}), protocol=pickle.HIGHEST_PROTOCOL)
    forged = {"input_digest": kept.digest(blob), "input_copy": base64.b64encode(other).decode()}
    assert input_change(sent, forged) is None  # the digest of what was sent: the bytes it names are those
    mismatched = {"input_digest": "1" * 32, "input_copy": base64.b64encode(other).decode()}
    assert "unlike its digest" in input_change(sent, mismatched)
    not_data = pickle.dumps(((Frozen,), {}), protocol=pickle.HIGHEST_PROTOCOL)
    hostile = {"input_digest": kept.digest(not_data), "input_copy": base64.b64encode(not_data).decode()}
    assert "not data" in input_change(sent, hostile)
