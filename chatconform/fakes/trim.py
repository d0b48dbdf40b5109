"""Trim fakes: keep-recent history processors with a bug that shipped.

Each reproduces one real trim (a slice, a window that moves to a legal start, an
in-place cut), so it fails the checks its bug explains and ``trim.matches_reference``.
"""

from __future__ import annotations

import copy

from chatconform.fakes.base import Fake
from chatconform.lazy import pai
from chatconform.reference.compaction import standing_system_parts
from chatconform.reference.trim import check_budget, trim, valid_starts


class KeepLastN(Fake):
    """``history[-max_messages:]``, as the keep-recent processor in pydantic-ai's docs did."""

    name = "fake-keep-last-n"
    reproduces = ("pydantic-ai issue #2050: a history processor that keeps messages[-N:] splits a tool "
                  "call from its return, so the trimmed history opens with an orphaned tool result "
                  "(https://github.com/pydantic/pydantic-ai/issues/2050); the docs now warn about it")
    violates = ("trim.pairs_intact", "trim.user_led", "trim.matches_reference", "lifecycle.system_prompt_once")

    def trim(self, history, *, max_messages):
        check_budget(max_messages)
        return list(history[-max_messages:])


class FirstPlusLast(Fake):
    """The first message, then the last ``max_messages - 1``: ``history[-0:]`` at a budget of 1."""

    name = "fake-first-plus-last"
    reproduces = ("SciLink kept the first message on top of the newest ones; for a small cap the slice "
                  "arithmetic gave history[-0:], the whole list, so a trim grew the history and repeated "
                  "its first message (https://github.com/ziatdinovmax/SciLink/pull/514)")
    violates = ("trim.within_budget", "trim.suffix_only", "trim.matches_reference")

    def trim(self, history, *, max_messages):
        check_budget(max_messages)
        if len(history) <= max_messages:
            return list(history)
        return [*history[:1], *history[-(max_messages - 1):]]


class EmptyWithoutUserStart(Fake):
    """The newest ``max_messages``, moved forward to the first user prompt in the window;
    none there, and nothing is kept."""

    name = "fake-empty-without-user-start"
    reproduces = ("nanobot's find_legal_message_start returned len(messages) when no legal start was left "
                  "in the window, and the caller kept messages[len:], an empty history "
                  "(https://github.com/HKUDS/nanobot/pull/4229); langchain-core trim_messages with "
                  "start_on='human' drops the same turn in progress")
    violates = ("trim.keeps_latest", "trim.matches_reference")

    def trim(self, history, *, max_messages):
        check_budget(max_messages)
        window = history[-max_messages:]
        start = next((i for i, m in enumerate(window) if isinstance(m, pai.ModelRequest)
                      and any(isinstance(p, pai.UserPromptPart) for p in m.parts)), len(window))
        return list(window[start:])


class RaisesOnEmpty(Fake):
    """Reads the first message to keep a leading system prompt, without looking whether
    there is one: an empty history raises ``IndexError``."""

    name = "fake-raises-on-empty"
    reproduces = ("langchain-core trim_messages(strategy='last', include_system=True) raised IndexError on "
                  "an empty message list (https://github.com/langchain-ai/langchain/issues/26895, fixed in "
                  "https://github.com/langchain-ai/langchain/pull/26896)")
    violates = ("trim.no_crash",)

    def trim(self, history, *, max_messages):
        check_budget(max_messages)
        history[0]
        return trim(history, max_messages=max_messages)


class TrimsInPlace(Fake):
    """Cuts the caller's list in place (``history[:] = ...``) and returns it."""

    name = "fake-trims-in-place"
    reproduces = ("MeshCenter trims its message list in place (messages[:] = messages[-MAX:]); the list is "
                  "shared, so the trim evicts history other code still reads "
                  "(https://github.com/FlintUA/MeshCenter/issues/7)")
    violates = ("trim.input_untouched",)

    def trim(self, history, *, max_messages):
        history[:] = trim(history, max_messages=max_messages)
        return history


class SystemPromptOnTop(Fake):
    """The reference's valid starts, but the budget counts the kept suffix only: the standing
    system prompt goes back in front afterwards, one message over a budget the suffix filled."""

    name = "fake-system-prompt-on-top"
    reproduces = ("zep-python issue #243: the example agent trims its messages with langchain-core "
                  "trim_messages(max_tokens=3, token_counter=len) and sends [system_message] + messages, "
                  "so the model gets one message more than the budget "
                  "(https://github.com/getzep/zep-python/issues/243); a trim that puts the system prompt back "
                  "after counting must count it too")
    violates = ("trim.within_budget", "trim.matches_reference")

    def trim(self, history, *, max_messages):
        check_budget(max_messages)
        if len(history) <= max_messages:
            return list(history)
        starts = valid_starts(history)
        start = next((s for s in starts if len(history) - s <= max_messages), starts[-1])
        standing = [copy.deepcopy(part) for part in standing_system_parts(history, start)]
        return [*([pai.ModelRequest(standing)] if standing else []), *history[start:]]
