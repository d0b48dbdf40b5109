"""Model replies as script entries (``chatconform serve --script``): what a provider may answer
an application with, so ``serve --generate`` can test the application's side of a turn.

An entry is JSON data: ``text``, ``thinking``, and ``tool_calls`` (each ``name``, ``arguments``
and, to reuse an id, ``id``), or an interruption (``status``, ``cut_stream_after``, ``delay``).
A call goes only to a declared tool; given the tool's JSON schema (``tool_schemas``) its
arguments are valid for it, as a model's are (:func:`~chatconform.strategies.arguments.arguments`),
else any object, with odd keys and nested values. The edge cases real models produce are all
reachable: empty text beside calls, a reply of calls only, parallel calls, a reused call id
(only when ``reusable_ids`` offers some, never twice in one reply); a reply without calls has
text, as a model's final answer does. Entries shrink toward a one-character text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

from chatconform.strategies.arguments import Undrawable, arguments

__all__ = ["INTERRUPTIONS", "replies"]

_SCALARS = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20)
#: Tool-call arguments of a tool whose schema is not given: a JSON object (models emit nested
#: lists and objects, and odd keys).
_ARGUMENTS = st.dictionaries(
    st.text(min_size=1, max_size=12),
    st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.text(max_size=8), inner, max_size=3), max_leaves=6),
    max_size=4,
)
#: A model's text: any character a model writes (no control character but newline and tab).
_TEXT = st.characters(codec="utf-8", exclude_categories=("Cc", "Cs"), include_characters="\n\t")
#: The interruptions a reply may be: an error status a busy provider answers, a stream cut
#: mid-way, a connection dropped before the body, a slow answer.
INTERRUPTIONS = ("status", "cut", "drop", "slow")


@st.composite
def _reply(draw, names: tuple[str, ...], schemas: tuple[tuple[str, Any], ...], max_calls: int,
           reusable_ids: tuple[str, ...], interruptions: tuple[str, ...], statuses: tuple[int, ...]) -> dict:
    interruption = draw(st.sampled_from(interruptions)) if interruptions and draw(st.integers(0, 5)) == 0 else None
    if interruption == "status":
        status = draw(st.sampled_from(statuses))
        return {"status": status, "message": f"chatconform serve --generate drew a {status}: the provider is busy; "
                                             "a retry gets the next reply"}
    entry: dict = {}
    calls = []
    tools = [*((name, None) for name in names), *schemas]
    # half the replies call tools, so a drawn tool loop ends as a model's does (within an
    # agent's turn limit: the OpenAI Agents SDK stops at 10 requests)
    if tools and max_calls and draw(st.booleans()):
        offered = list(reusable_ids)
        for _ in range(draw(st.integers(1, max_calls))):
            name, strategy = draw(st.sampled_from(tools))
            call: dict = {"name": name, "arguments": draw(strategy if strategy is not None else _ARGUMENTS)}
            if offered and draw(st.booleans()):
                call["id"] = draw(st.sampled_from(offered))
                offered.remove(call["id"])  # one id once in a reply: no provider sends it twice at once
            calls.append(call)
    if calls:
        entry["tool_calls"] = calls
    if not calls:  # a final answer says something: an empty one is a script's edge case, not a model's habit
        entry["text"] = draw(st.text(_TEXT, min_size=1, max_size=80))
    elif draw(st.booleans()):  # calls alone, or with text beside them (empty too)
        entry["text"] = draw(st.text(_TEXT, max_size=80))
    if draw(st.booleans()):
        entry["thinking"] = draw(st.text(_TEXT, min_size=1, max_size=60))
    if interruption == "cut":
        entry["cut_stream_after"] = draw(st.integers(1, 6))
    elif interruption == "drop":
        entry["cut_stream_after"] = 0
    elif interruption == "slow":
        entry["delay"] = draw(st.sampled_from((0.5, 1.0, 2.0)))
    return entry


def replies(*, tool_names: Sequence[str] = (), tool_schemas: Mapping[str, Mapping[str, Any]] | None = None,
            max_calls: int = 3, reusable_ids: Sequence[str] = (), interruptions: Sequence[str] = (),
            statuses: Sequence[int] = (429, 500, 503)) -> st.SearchStrategy[dict]:
    """A strategy for one script entry.

    ``tool_schemas``: the tools the request declares, each with the JSON schema of its
    arguments (a tool whose schema no value fits is never called); ``tool_names``: declared
    tools whose schema is unknown (any object for arguments). No call is drawn without a
    tool. ``max_calls``: the most calls in one reply (more than one is a parallel call);
    ``reusable_ids``: call ids sent before, which a call may reuse. ``interruptions``: the
    kinds (of :data:`INTERRUPTIONS`) one reply in six is drawn as, ``statuses`` the error
    statuses a ``"status"`` one answers."""
    if max_calls < 0:
        raise ValueError("max_calls must be >= 0")
    unknown = sorted(set(interruptions) - set(INTERRUPTIONS))
    if unknown:
        raise ValueError(f"unknown interruption {unknown[0]!r}; the kinds are {', '.join(INTERRUPTIONS)}")
    if "status" in interruptions and not statuses:
        raise ValueError("a status interruption needs statuses")
    drawable = []
    for name, schema in (tool_schemas or {}).items():
        try:
            drawable.append((name, arguments(schema)))
        except Undrawable:
            continue
    return _reply(tuple(n for n in tool_names if n not in (tool_schemas or {})), tuple(drawable), max_calls,
                  tuple(reusable_ids), tuple(interruptions), tuple(statuses))
