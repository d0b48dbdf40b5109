"""A result's data pickle costs, to load and to walk, at most a bounded multiple of its bytes:
what a pickler writes for data loads as it was; a value built to expand when walked, a cycle,
and a pickle that changes a class of the run's process are refused before the unpickler runs."""

from __future__ import annotations

import base64
import collections
import datetime
import decimal
import pickle
import struct
import time
import uuid

import pytest

from chatconform.runner.protocol import datapickle
from chatconform.strategies.large import large_edge_history


def text(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def refused(data: bytes) -> str:
    """Why ``loads`` refuses ``data``, read within a tenth of a second."""
    started = time.perf_counter()
    with pytest.raises(ValueError, match="not a data pickle") as caught:
        datapickle.loads(text(data))
    assert time.perf_counter() - started < 0.1
    return str(caught.value)


def _history():
    return large_edge_history(3, 60)


NOW = datetime.datetime(2026, 1, 5, 9, 0, tzinfo=datetime.UTC)
SHARED = {"when": NOW}

#: What implementations return, sharing as pickles of real results do: interned names,
#: classes, ``timezone.utc``, a datetime and a message held twice, a dict key built of tuples.
VALUES = {
    "history": _history(),
    "a message twice": [_history()[0], _history()[1], _history()[0]],
    "an object in two places": [SHARED, SHARED, {"same": SHARED}],
    "containers": (collections.OrderedDict(a=[1, 2]), collections.deque([b"x"]), frozenset({(1, 2)}), {(1, "a"): None},
                   {1, 2}, complex(1, 2), decimal.Decimal("1.5"), uuid.UUID(int=7), [NOW, NOW], ValueError("no")),
    "a string shared across the body": {"messages": [{"role": "user", "content": "x" * 1000}] * 50},
}


@pytest.mark.parametrize("name", list(VALUES))
def test_data_a_pickler_writes_loads_as_it_was(name):
    value = VALUES[name]
    sent = datapickle.dumps(value)
    assert sent is not None
    loaded = datapickle.loads(sent)
    assert type(loaded) is type(value)
    assert repr(loaded) == repr(value)


def _tuple_dag(levels: int) -> bytes:
    """A frozenset holding t_n, where t_0 = () and t_k = (t_k-1, t_k-1): 4 bytes a level, and
    2**n tuples to hash as the frozenset is made."""
    body = b"))\x86\x94" + b"".join(b"h" + bytes([level]) + b"\x86\x94" for level in range(levels))
    return b"\x80\x05(" + body + b"\x91."


def _cycle() -> bytes:
    loop: list = []
    loop.append(loop)
    return pickle.dumps(loop, protocol=5)


def _class_attribute() -> bytes:
    """pydantic-ai's ModelRequest with ``__eq__`` set to ``slice`` (which makes every request
    equal to anything: ``slice(other)`` is true), by BUILD's slot state on the class itself."""
    global_ = b"\x8c\x14pydantic_ai.messages\x8c\x0cModelRequest\x93"
    state = b"N}\x8c\x06__eq__\x8c\x08builtins\x8c\x05slice\x93s\x86"
    return b"\x80\x05" + global_ + state + b"b."


#: Each amplifying or forging construction, with what its refusal says.
ATTACKS = {
    "tuples shared down 100 levels, hashed into a frozenset": (_tuple_dag(100), "shared to more than"),
    "a list of 100,000 references to a list of 1,000 items": (pickle.dumps([[0] * 1000] * 100_000, protocol=5),
                                                             "shared to more than"),
    "a megabyte string referenced 100 times": (pickle.dumps(["x" * 2**20] * 100, protocol=5), "shared to more than"),
    "a list that holds itself": (_cycle(), "adds to an object fetched from the memo (a cycle"),
    "a class attribute set by BUILD": (_class_attribute(), "adds to what is not being built (an atom or a class)"),
    "DUP, which no pickler writes": (b"\x80\x05)\x32\x86.", "opcode DUP"),
    "a memo store at index 10**9": (b"\x80\x05N" + b"r" + struct.pack("<I", 10**9) + b".", "opcode LONG_BINPUT"),
    "a fetch of an entry never stored": (b"\x80\x05h\x05.", "a memo entry"),
    "a frame longer than the pickle": (b"\x80\x05\x95" + struct.pack("<Q", 2**40) + b"N.", "claims more bytes"),
    "a string longer than the pickle": (b"\x80\x05X" + struct.pack("<I", 2**31) + b"ab.", "past the end"),
    "a range walked by a deque": (b"\x80\x05\x8c\x0bcollections\x8c\x05deque\x93\x8c\x08builtins\x8c\x05range\x93"
                                 b"J\x00\xca\x9a;\x85RK\x00\x86R.", "builtins.range is not a data class"),
    "a pop past the stack": (b"\x80\x050.", "does not hold"),
    "no STOP": (b"\x80\x05N", "no end"),
}


@pytest.mark.parametrize("name", list(ATTACKS))
def test_an_amplifying_or_forging_pickle_is_refused_in_bounded_time(name):
    data, said = ATTACKS[name]
    assert len(data) < 2 * 2**20
    assert said in refused(data)


def test_a_class_attribute_is_left_as_it_was():
    from pydantic_ai.messages import ModelRequest

    before = ModelRequest.__dict__.get("__eq__")
    refused(_class_attribute())
    assert ModelRequest.__dict__.get("__eq__") is before
    assert ModelRequest(parts=[]) != ModelRequest(parts=[], instructions="other")


def test_what_a_pickler_writes_and_the_run_refuses_is_told_apart():
    """Sharing past the bound and a cycle, which a pickler of data writes, are Shared: the run
    asks for such a result as JSON. The rest is an implementation's malformed result."""
    for data in (_cycle(), pickle.dumps([[0] * 1000] * 100_000, protocol=5), _tuple_dag(100)):
        with pytest.raises(datapickle.Shared):
            datapickle.loads(text(data))
    for data in (_class_attribute(), ATTACKS["DUP, which no pickler writes"][0]):
        with pytest.raises(ValueError) as caught:
            datapickle.loads(text(data))
        assert not isinstance(caught.value, datapickle.Shared)


def test_the_bound_is_a_multiple_of_the_bytes():
    """A list shared 100 times (25,100 objects met, within the floor) loads; shared until what
    a walk meets passes SHARED_PER_BYTE times the bytes plus the floor, it is refused."""
    item = list(range(250))  # a walk meets 251 objects; a fetch of it costs 2 bytes
    datapickle.loads(text(pickle.dumps([item] * 100, protocol=5)))
    times = 2 * datapickle.SHARED_FLOOR // 251
    over = pickle.dumps([item] * times, protocol=5)
    assert 251 * times > datapickle.SHARED_PER_BYTE * len(over) + datapickle.SHARED_FLOOR
    assert "shared to more than" in refused(over)


#: A payload implementation whose body shares one 10,000-character string 300 times: a walk
#: meets 3 MB of a 10 kB pickle.
SHARING = '''
from chatconform.reference.payload import to_payload


class Sharing:
    name, version = "sharing", "1"
    providers = {"openai-chat"}

    def to_payload(self, history, *, provider, instructions=None):
        body = to_payload(history, provider=provider, instructions=instructions)
        body["metadata"] = {"tags": ["x" * 10_000] * 300}
        return body
'''


def test_a_result_shared_past_the_bound_is_read_as_json(tmp_path, monkeypatch):
    """The run refuses the pickle, asks the host for the same result as JSON, and judges that:
    the body the implementation returned, every copy of the string in it."""
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    from chatconform.reference.payload import to_payload
    from chatconform.runner import discovery

    refusals, original = [], datapickle.loads

    def loads(sent: str):
        try:
            return original(sent)
        except datapickle.Shared as exc:
            refusals.append(str(exc))
            raise

    monkeypatch.setattr(datapickle, "loads", loads)
    (tmp_path / "sharing.py").write_text(SHARING)
    history = [ModelRequest(parts=[UserPromptPart(content="hi", timestamp=NOW)])]
    sharing = discovery.hosted(f"{tmp_path / 'sharing.py'}:Sharing")
    try:
        body = sharing.obj.to_payload(history, provider="openai-chat")
    finally:
        sharing.obj.close()
    assert body == {**to_payload(history, provider="openai-chat"), "metadata": {"tags": ["x" * 10_000] * 300}}
    assert len(refusals) == 1 and "shared to more than" in refusals[0]
