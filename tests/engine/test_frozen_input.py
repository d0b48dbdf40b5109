"""input_untouched sees every in-place edit of anything reachable from the input."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest
from pydantic_ai.messages import (
    BinaryImage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)

from chatconform.frame.snapshot import Frozen, snapshot

PNG = bytes.fromhex("89504e470d0a1a0a")


def history():
    when = datetime(2026, 1, 1, tzinfo=UTC)
    return [
        ModelRequest([UserPromptPart(["look (u1)", BinaryImage(data=PNG, media_type="image/png")], timestamp=when)],
                     metadata={"tenant": {"id": 7}}),
        ModelResponse([TextPart("ok (a2)"), ToolCallPart("search", {"filters": {"tags": ["a", "b"]}}, "c1")],
                      timestamp=when),
    ]


EDITS = {
    "a message appended": lambda h: h.append(ModelRequest([UserPromptPart("more")])),
    "messages reordered": lambda h: h.reverse(),
    "a part removed": lambda h: h[1].parts.pop(0),
    "text of a part": lambda h: setattr(h[1].parts[0], "content", "ok (a2) "),
    "an item of list content": lambda h: h[0].parts[0].content.__setitem__(0, "LOOK (u1)"),
    "image bytes": lambda h: setattr(h[0].parts[0].content[1], "data", PNG + b"\0"),
    "nested tool arguments": lambda h: h[1].parts[1].args["filters"]["tags"].append("c"),
    "metadata": lambda h: h[0].metadata["tenant"].update(id=8),
    "a private attribute": lambda h: setattr(h[1], "_cache", "x"),
    "a list turned into a tuple": lambda h: setattr(h[0].parts[0], "content", tuple(h[0].parts[0].content)),
    "a timestamp": lambda h: setattr(h[1], "timestamp", datetime(2026, 1, 2, tzinfo=UTC)),
}


@pytest.mark.parametrize("edit", EDITS, ids=list(EDITS))
def test_every_in_place_edit_is_seen(edit):
    frozen = Frozen(history())
    working = frozen.copy()
    assert not frozen.changed(working)
    EDITS[edit](working)
    assert frozen.changed(working)


@pytest.mark.parametrize("edit", EDITS, ids=list(EDITS))
def test_the_walking_fallback_sees_them_too(edit):
    original = history()
    before = snapshot(original)
    EDITS[edit](original)
    assert snapshot(original) != before


def test_the_copy_shares_nothing_with_the_case():
    case = history()
    copy = Frozen(case).copy()
    copy[1].parts[1].args["filters"]["tags"].append("c")
    assert case[1].parts[1].args["filters"]["tags"] == ["a", "b"]


def test_unpicklable_cases_fall_back_to_the_walk():
    class Local:  # a local class cannot be pickled
        def __init__(self):
            self.items = [1, {"k": math.nan}]

    frozen = Frozen([Local()])
    working = frozen.copy()
    assert not frozen.changed(working)  # a NaN equals itself in the record
    working[0].items[1]["k"] = 0.0
    assert frozen.changed(working)


def test_deep_and_cyclic_data_is_walked_without_recursion():
    deep: list = []
    inner = deep
    for _ in range(20_000):
        inner.append([])
        inner = inner[0]
    cyclic: dict = {}
    cyclic["self"] = cyclic
    assert snapshot([deep, cyclic]) == snapshot([deep, cyclic])


def test_an_equal_value_written_back_is_not_an_edit():
    frozen = Frozen(history())
    working = frozen.copy()
    part = working[1].parts[0]
    part.content = "".join(["ok ", "(a2)"])  # a new string object, equal to the old one
    assert not frozen.changed(working)


def test_an_untouched_copy_is_told_from_one_pickling_after_the_call(monkeypatch):
    import pickle

    from chatconform.frame import snapshot as module

    # A case that was loaded from a pickle (as a drawn one nearly always is, in effect)
    # pickles to the same bytes as its copies: the case's own pickle is the baseline.
    case = pickle.loads(pickle.dumps(history()))
    pickled = []
    real = module._pickled
    monkeypatch.setattr(module, "_pickled", lambda value: pickled.append(1) or real(value))
    frozen = Frozen(case)
    working = frozen.copy()
    assert not frozen.changed(working)
    assert len(pickled) == 2  # the case, before; the copy, after: no baseline was made


def test_a_case_whose_copy_pickles_otherwise_is_untouched_until_edited():
    # A set that lost most of its members iterates in another order once rebuilt by a copy.
    tags = {"x" * n for n in range(1, 60)}
    for n in range(1, 50):
        tags.discard("x" * n)
    frozen = Frozen([{"tags": tags}, history()])
    for _ in range(2):  # the second copy is compared with the first one's baseline
        working = frozen.copy()
        assert not frozen.changed(working)
    working[0]["tags"].add("y")
    assert frozen.changed(working)


@pytest.mark.parametrize("edit", EDITS, ids=list(EDITS))
def test_a_lent_case_is_the_case_itself_and_its_every_edit_is_seen(edit):
    case = history()
    frozen = Frozen(case)
    lent = frozen.lent()
    assert lent is case
    assert not frozen.changed(lent)
    EDITS[edit](lent)
    assert frozen.changed(lent)  # compared with the pickle, not with itself


def test_a_case_that_cannot_be_lent_is_copied():
    class Local:  # unpicklable: nothing could tell what a call changed in the case itself
        items = [1]

    case = [Local()]
    assert Frozen(case).lent() is not case


def test_a_case_that_came_as_a_pickle_is_lent_a_load_of_it():
    import pickle

    blob = pickle.dumps(history())
    frozen = Frozen.from_pickle(blob)
    lent = frozen.lent()
    assert not frozen.changed(lent)
    lent.pop()
    assert frozen.changed(lent)
