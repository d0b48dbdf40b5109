"""Where a compaction cuts a history, and whole compaction cases.

A cut is an index ``0..len(history)``: ``history[:cut]`` is summarized, ``history[cut:]``
is kept. Uniform cuts rarely land where compaction bugs live, so :func:`cuts` draws most
of them from a short list of places that broke real compactions:

- between a tool call and its result (a provider rejects the orphaned result);
- inside a pair whose result comes many messages later, where the result is beyond any
  small pairing window (pydantic-ai-harness ``_is_safe_cutoff`` looks 5 messages either
  way);
- right after a response holding parallel calls (kimi-code PR #1054: a fixed split
  index inside a parallel batch orphaned its results);
- right after the last user message, leaving a long agentic tail with no user in it
  (a summary sent as system then leaves a user-less payload: GLM 1214);
- the empty tail (``cut == len(history)``), and the start (``cut == 0``).

:func:`compaction_cases` pairs such cuts with histories that reach them: agent runs from
:func:`~chatconform.strategies.histories.histories` (with earlier compaction summaries,
so a second compaction runs over a first), some with a long tool tail appended in which
one call is answered only after several other tool rounds.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from hypothesis import strategies as st

from chatconform.lazy import pai
from chatconform.strategies.histories import histories

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage, ToolCallPart, ToolReturnPart

__all__ = ["PAIRING_WINDOW", "compaction_cases", "cut_points", "cuts", "late_batch_cuts", "late_result_tail",
           "summaries", "tool_pairs"]

#: The widest pairing window a real compaction used (pydantic-ai-harness: 5 messages
#: either way); a "far" pair is one whose result comes later than this after its call.
PAIRING_WINDOW = 5

_EPOCH = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def tool_pairs(history: Sequence[ModelMessage]) -> list[tuple[int, int, int]]:
    """(call index, result index, calls in the call's response) of every answered call."""
    calls: dict[str, tuple[int, int]] = {}
    pairs: list[tuple[int, int, int]] = []
    for index, message in enumerate(history):
        if isinstance(message, pai.ModelResponse):
            n_calls = sum(isinstance(p, pai.ToolCallPart) for p in message.parts)
            for part in message.parts:
                if isinstance(part, pai.ToolCallPart):
                    calls.setdefault(part.tool_call_id, (index, n_calls))
        else:
            for answer in message.parts:
                if isinstance(answer, (pai.ToolReturnPart, pai.RetryPromptPart)) and answer.tool_call_id in calls:
                    call, n_calls = calls.pop(answer.tool_call_id)
                    pairs.append((call, index, n_calls))
    return pairs


def _after_last_user(history: Sequence[ModelMessage]) -> int | None:
    for index in range(len(history) - 1, -1, -1):
        message = history[index]
        if isinstance(message, pai.ModelRequest) and any(isinstance(p, pai.UserPromptPart) for p in message.parts):
            return index + 1
    return None


def cut_points(history: Sequence[ModelMessage]) -> list[int]:
    """The cuts most likely to break a compaction, most telling first, without repeats."""
    pairs = tool_pairs(history)
    # For a far pair: every cut inside it from which the result is still out of a window's
    # reach, then the cut right after the call.
    far = [cut for call, result, _ in pairs if result - call > PAIRING_WINDOW
           for cut in [*range(call + 2, result - PAIRING_WINDOW + 1), call + 1]]
    parallel = [call + 1 for call, _, n_calls in pairs if n_calls > 1]
    split = [call + 1 for call, _, _ in pairs]
    inside = [result for call, result, _ in pairs if result - call > 1]
    last_user = _after_last_user(history)
    points = [*far, *([last_user] if last_user is not None else []), *parallel, *split, *inside,
              len(history), 0]
    return list(dict.fromkeys(p for p in points if 0 <= p <= len(history)))


def late_batch_cuts(history: Sequence[ModelMessage]) -> list[int]:
    """Every cut between a call of a parallel batch and its result, where the result comes
    after the round that answered the batch (the late call may be any of the batch's)."""
    return list(dict.fromkeys(cut for call, result, n_calls in tool_pairs(history)
                              if n_calls > 1 and result - call > 1 for cut in range(call + 2, result + 1)))


def cuts(history: Sequence[ModelMessage]):
    """A strategy of a cut into ``history``: mostly one of :func:`cut_points`, or one of
    :func:`late_batch_cuts` where the history has them, else any."""
    anywhere = st.integers(0, len(history))
    points, late = cut_points(history), late_batch_cuts(history)
    return ((st.sampled_from(points) if points else st.nothing())
            | (st.sampled_from(late) if late else st.nothing()) | anywhere)


def late_result_tail(start_tag: int, rounds: int, *, width: int = 2, late: int = 0) -> list[ModelMessage]:
    """An agentic tail with no user message: a parallel batch of ``width`` calls in which the
    one at position ``late`` is answered only after ``rounds`` other tool rounds (a
    long-running job whose result is stored late), then the answer.

    The late call's result comes ``2 * rounds - 1`` messages after it, so with more than
    3 rounds it is beyond :data:`PAIRING_WINDOW`; the batch's other calls are answered in
    the first round. Any call of the batch may be the late one: a compaction that pairs only
    a batch's first call with its result splits a later one. Texts carry tags from
    ``start_tag`` (``(x<n>)``), distinct from the history's own.
    """
    if not 0 <= late < width:
        raise ValueError(f"late={late} is not a position in a batch of {width} calls")
    tag = start_tag
    clock = _EPOCH

    def tick() -> datetime:
        nonlocal clock
        clock += timedelta(seconds=7)
        return clock

    def call(name: str, args: dict) -> ToolCallPart:
        nonlocal tag
        tag += 1
        return pai.ToolCallPart(name, args, f"late_{tag}")

    def result(c: ToolCallPart) -> ToolReturnPart:
        nonlocal tag
        tag += 1
        return pai.ToolReturnPart(c.tool_name, f"done (x{tag})", tool_call_id=c.tool_call_id, timestamp=clock)

    late_call = call("run_sql", {"sql": "select count(*) from tickets"})
    others = [call("read_file", {"path": f"docs/part{index}.md" if index else "README.md"})
              for index in range(width - 1)]
    batch = [*others[:late], late_call, *others[late:]]
    messages: list[ModelMessage] = [pai.ModelResponse(batch, timestamp=tick(), model_name="test-model")]
    answered = others
    for index in range(rounds):
        returns = [result(c) for c in answered]
        if index == rounds - 1:
            returns.append(result(late_call))
            messages.append(pai.ModelRequest(returns, timestamp=tick()))
            break
        messages.append(pai.ModelRequest(returns, timestamp=tick()))
        answered = [call("search_docs", {"query": "release notes"})]
        messages.append(pai.ModelResponse(answered, timestamp=tick(), model_name="test-model"))
    tag += 1
    messages.append(pai.ModelResponse([pai.TextPart(f"All jobs finished. (x{tag})")], timestamp=tick(),
                                      model_name="test-model"))
    return messages


_SUMMARY_PHRASES = (
    "The user asked for the weather in Paris; it is sunny and 21 C.",
    "The build failed on step 3; the log was read and a fix proposed.\nOpen question: which branch to use.",
    "Two tickets are open (login, export). Résumé: both plans were compared.",
)


def summaries():
    """A strategy of summary texts, each marked ``[new summary]`` so checks can find it."""
    return st.sampled_from(_SUMMARY_PHRASES).map(lambda text: f"{text} [new summary]")


@st.composite
def history_with_tail(draw, max_bulk_turns: int = 700) -> list[ModelMessage]:
    """A drawn history (ending with a request, so a response may follow), plus maybe a
    long tool tail in which one call of a parallel batch (any of them, not only the first)
    is answered many messages later."""
    history = draw(histories(max_turns=4, max_tool_rounds=5, ends_with_request=True, max_bulk_turns=max_bulk_turns,
                              late_system_requests=True))
    if draw(st.booleans()):
        rounds, width = draw(st.integers(1, 6)), draw(st.integers(2, 4))
        history = [*history, *late_result_tail(10_000, rounds, width=width, late=draw(st.integers(0, width - 1)))]
    return history


@st.composite
def compaction_cases(draw) -> tuple[list[ModelMessage], int, str]:
    """(history, cut, summary): a compaction to run, with the cut where bugs live."""
    history = draw(history_with_tail())
    return history, draw(cuts(history)), draw(summaries())
