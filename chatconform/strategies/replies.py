"""Model replies as script entries (``chatconform serve --script``): what a provider may answer
an application with, so ``serve --generate`` can test the application's side of a turn.

An entry is JSON data: ``text``, ``thinking``, and ``tool_calls`` (each ``name``, ``arguments``
and, to reuse an id, ``id``). The edge cases real models produce are all reachable: empty
text, a reply of calls only, parallel calls, arguments with odd keys and nested values, a
reused call id. Entries shrink toward the plain ``{"text": ""}``.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

__all__ = ["replies"]

_SCALARS = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20)
#: Tool-call arguments: a JSON object (models emit nested lists and objects, and odd keys).
_ARGUMENTS = st.dictionaries(
    st.text(min_size=1, max_size=12),
    st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.text(max_size=8), inner, max_size=3), max_leaves=6),
    max_size=4,
)


@st.composite
def _reply(draw, tool_names: tuple[str, ...], max_calls: int, reusable_ids: tuple[str, ...]) -> dict:
    entry: dict = {}
    calls = []
    if tool_names and max_calls:
        for _ in range(draw(st.integers(0, max_calls))):
            call: dict = {"name": draw(st.sampled_from(tool_names)), "arguments": draw(_ARGUMENTS)}
            if reusable_ids and draw(st.booleans()):
                call["id"] = draw(st.sampled_from(reusable_ids))
            calls.append(call)
    if calls:
        entry["tool_calls"] = calls
    if not calls or draw(st.booleans()):  # a reply of calls alone, or with text beside them
        entry["text"] = draw(st.text(max_size=80))
    if draw(st.booleans()):
        entry["thinking"] = draw(st.text(min_size=1, max_size=60))
    return entry


def replies(*, tool_names: Sequence[str] = (), max_calls: int = 3,
            reusable_ids: Sequence[str] = ()) -> st.SearchStrategy[dict]:
    """A strategy for one script entry. ``tool_names``: the tools the request declares (no
    call is drawn without one); ``max_calls``: the most calls in one reply (more than one is
    a parallel call); ``reusable_ids``: call ids seen before, which a call may reuse."""
    if max_calls < 0:
        raise ValueError("max_calls must be >= 0")
    return _reply(tuple(tool_names), max_calls, tuple(reusable_ids))
