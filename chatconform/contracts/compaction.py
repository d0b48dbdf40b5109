"""The ``compaction`` contract: ``compact(history, *, cut, summary) -> history``.

The implementation replaces ``history[:cut]`` by ``summary`` and returns the history to
persist. The checks judge what a compacted history must still be: sendable and user-led
on every provider, holding the summary and the standing system prompt once each, with
tool pairs whole and the kept tail intact, and really compacted. The cuts are drawn where
compactions broke (:mod:`chatconform.strategies.cuts`).

The implementation may move the cut earlier to keep a tool pair together; how far it
must move is the reference's :func:`~chatconform.reference.compaction.safe_cut` (the
latest cut that splits no pair), and the checks that care about what was cut compare
against it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from chatconform.contracts.payload import CONTRACT as PAYLOAD_CONTRACT
from chatconform.contracts.payload import PROVIDERS_OPTION
from chatconform.errors import ERROR, WARNING, NotApplicable, Violation
from chatconform.frame.contract import Case, Example
from chatconform.frame.history_contract import HistoryContract, check_same_items, register_pairs_intact
from chatconform.frame.lifecycle import Conversation, LifecycleStep, cut_at
from chatconform.history import Item, and_more, history_problem, item_label, lost_items, out_of_order, visible_items
from chatconform.lazy import pai
from chatconform.provider_schemas import turn_view
from chatconform.provider_schemas.levels import check_level, cite
from chatconform.providers import PROVIDER_IDS
from chatconform.reference.compaction import compact, safe_cut, standing_system_parts
from chatconform.reference.payload import to_payload
from chatconform.strategies.cuts import compaction_cases
from chatconform.strategies.large import large_history
from chatconform.strategies.lifecycles import Step

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage


@dataclass
class CompactionCase(Case):
    history: list[ModelMessage]
    cut: int
    summary: str


def _compact(conversation: Conversation, step: Step) -> Any:
    """Compaction at the cut the step's pick names, with its summary."""
    history = conversation.history
    cut = cut_at(history, step.pick)
    mine = conversation.call("compact", history, cut=cut, summary=step.summary)
    return conversation.record(mine, conversation.reference("compact", history, cut=cut, summary=step.summary),
                               step.summary)


class CompactionContract(HistoryContract):
    name = "compaction"
    method = "compact"
    signature = "compact(history, *, cut, summary) -> history"
    crash_rationale = ("compactions that raise on the histories they meet stop the agent run at the "
                       "point its context is full (atomic #1300: 'Compaction failed: Deleting tool call "
                       "... would leave tool result ... orphaned')")
    mutation_rationale = ("a compaction that edits the history in place corrupts the stored "
                          "conversation it was meant to shorten, even when its result is discarded")
    listing_order = 30
    options = (PROVIDERS_OPTION,)
    case_type = CompactionCase
    wire_fields: ClassVar[dict[str, Any]] = {"cut": {"type": "integer", "minimum": 0}, "summary": {"type": "string"}}
    result_description = "The result of compact: the history to persist, in the same JSON as the input history."
    reference_module = "chatconform.reference.compaction"
    lifecycle_steps = (LifecycleStep("compact", "compaction (pick {pick})", order=40, picks=True, compacts=True,
                                     methods=("compact",), play=_compact),)
    guard_tests = ("tests/contracts/test_compaction.py", "tests/reference/test_compaction_policy.py")

    def cases(self, variant):
        return compaction_cases().map(lambda c: CompactionCase(*c))

    def call(self, fn, case, variant):
        return fn(case.history, cut=case.cut, summary=case.summary)

    def reference(self, case, variant):
        return compact(case.history, cut=case.cut, summary=case.summary)

    def large_case(self, size, seed, variant):
        history = large_history(seed, size)
        return CompactionCase(history, cut=len(history) // 2, summary="Summary: the first half of the conversation.")

    def floor(self, case, variant):
        # A compaction must see every tool call before the cut (its result may be anywhere
        # after it) and copy out the tail.
        _ = [part for message in case.history[:case.cut] for part in message.parts
             if isinstance(part, pai.ToolCallPart)]
        _ = case.history[case.cut:]

    def output_problem(self, output, case):
        return history_problem(output)


CONTRACT = CompactionContract()


# -- what the case and the result hold ---------------------------------------------------------

def _moved_cut(ex: Example) -> int:
    """Where the cut must move to keep every tool pair whole (the reference's cut)."""
    return ex.case_once("moved", lambda: safe_cut(ex.case.history, ex.case.cut))


def _result_items(ex: Example) -> list[Item]:
    return ex.once("result_items", lambda: visible_items(ex.output))


def _standing(ex: Example) -> list[str]:
    return ex.case_once("standing", lambda: [p.content for p in standing_system_parts(ex.case.history)
                                        if p.content.strip()])


def _texts(items: list[Item]) -> list[str]:
    return [item.value for item in items if item.kind not in ("call", "result", "media")]


# -- user_led: mapped through a payload mapper -------------------------------------------------

def _mapper(ex: Example):
    """(how to map, which providers, a description): the implementation's own ``to_payload``
    for the providers it declares, else the reference's for every provider (of those the
    run selected, with ``run --provider``)."""
    impl = ex.impl
    own = impl.method(PAYLOAD_CONTRACT) if impl is not None else None
    providers = impl.options.get("providers") if impl is not None else None
    if own is not None and providers:
        return own, [p for p in PROVIDER_IDS if p in providers], f"{impl.name}'s own to_payload"
    selected = getattr(impl, "selected", {}).get("providers") if impl is not None else None
    return (to_payload, [p for p in PROVIDER_IDS if selected is None or p in selected],
            "the reference to_payload")


#: How many opening messages of the result the reference mapper is first given.
_OPENING = 8


def _mapped(ex: Example, mapper, provider: str, which: str) -> Any:
    """The result as ``provider``'s request body.

    The implementation's own mapper gets the whole result, guarded like any call into it.
    The reference mapper is ours and order-preserving: its first non-system turn comes
    from the opening messages, so it is first given only those, and the whole result only
    when they hold no such turn. That keeps seven mappings cheap on histories of thousands
    of messages without changing the answer.
    """
    if mapper is to_payload:
        opening = to_payload(ex.output[:_OPENING], provider=provider)
        if len(ex.output) <= _OPENING or any(t.role != "system" for t in turn_view(opening, provider)):
            return opening
        return to_payload(ex.output, provider=provider)
    outcome = ex.calls.call(lambda history: mapper(history, provider=provider), list(ex.output),
                             size=len(ex.output))
    if outcome.error is not None or outcome.timed_out:
        raise NotApplicable(f"{which} could not map the result for {provider} (payload.no_crash judges that)")
    return outcome.output


#: The row of chatconform.provider_schemas.levels that weighs it.
USER_LED = "compaction.user_led"


@CONTRACT.check(
    "user_led",
    title="the compacted history, mapped for each provider, leads with a user turn",
    rationale="GLM 1214 'The messages parameter is illegal': a summary persisted with the system role "
              "and a cut after the last user message left [system, system, assistant, tool, ...] "
              "(HKUDS/nanobot PR #3086; pydantic-ai-harness #679, PR #676)",
    level_note="an error when a provider whose rule is cited rejects the mapped payload (glm Z1, qwen-vllm Q2, "
               "bedrock-converse B2), a warning when only providers that answer it were mapped "
               "(payload.user_led's levels; `chatconform list --levels`)",
)
def user_led(ex: Example) -> None:
    mapper, providers, which = _mapper(ex)
    failed: dict[str, str] = {}  # provider -> the role its payload leads with
    for provider in providers:
        first = next((t for t in turn_view(_mapped(ex, mapper, provider, which), provider)
                      if t.role != "system"), None)
        if first is None or first.role != "user":
            failed[provider] = first.role if first else "no turn but system"
            if check_level(USER_LED, provider).level == ERROR:
                break  # a rejection: no need to map for the rest
    if failed:
        # The worst level among the providers mapped: a rejection first.
        provider = next((p for p in failed if check_level(USER_LED, p).level == ERROR), next(iter(failed)))
        raise Violation(f"mapped with {which}, the {provider} payload does not lead with a user turn "
                        f"({cite(USER_LED, provider)})", expected="user", actual=failed[provider],
                        level=check_level(USER_LED, provider).level)


# -- summary_once ------------------------------------------------------------------------------

@CONTRACT.check(
    "summary_once",
    title="the summary is stored exactly once, with at most one framing line",
    rationale="a summary stored twice, or wrapped in a second frame (moltis PR #653 stored "
              "'[Conversation Summary]' around a continuation message with a frame of its own), "
              "costs the tokens compaction was meant to save and reads as two summaries",
)
def summary_once(ex: Example) -> None:
    summary = ex.case.summary.strip()
    holders = [text for text in _texts(_result_items(ex)) if summary in text]
    found = sum(text.count(summary) for text in holders)
    if found != 1:
        raise Violation(f"the summary is stored {found} times", expected=1, actual=found)
    frame = [line.strip() for line in holders[0].replace(summary, "\n").splitlines() if line.strip()]
    if len(frame) > 1:
        raise Violation(f"the summary is framed {len(frame)} times",
                        expected="at most one framing line", actual=frame[:4])


# -- system_prompt_once ------------------------------------------------------------------------

@CONTRACT.check(
    "system_prompt_once",
    title="each standing system prompt text is in the result exactly once",
    rationale="compactions that re-add the standing prompt with a preserved first request send it "
              "twice (UKGovernmentBEIS/inspect_ai PR #4804: the task prompt re-prepended on every "
              "turn); one that drops it loses the agent's instructions",
)
def system_prompt_once(ex: Example) -> None:
    standing = _standing(ex)
    if not standing:
        raise NotApplicable("the history has no standing system prompt")
    in_input = Counter(_texts(visible_items(ex.case.history, kinds=frozenset({"system"}))))
    texts = _texts(_result_items(ex))
    for value in standing:
        if in_input[value] != 1:
            continue  # the history itself repeats it: once is not the rule to hold it to
        found = sum(text.count(value) for text in texts)
        if found != 1:
            raise Violation(f"the standing system prompt {value[:200]!r} is in the result {found} times",
                            expected=1, actual=found)


# -- pairs_intact ------------------------------------------------------------------------------

register_pairs_intact(
    CONTRACT,
    rationale="pydantic-ai-harness _is_safe_cutoff checks pairs only 5 messages either way, so a "
              "call answered later is cut from its result; providers then reject the orphan "
              "('No tool call found for function call output', vellum-assistant PR #39919)",
)


# -- tail_preserved ----------------------------------------------------------------------------

@CONTRACT.check(
    "tail_preserved",
    title="everything from the cut on survives, in order",
    rationale="kimi-code PR #1054 dropped the tool results left at the head of the kept tail after a "
              "cut inside a parallel batch; a compaction that loses kept messages loses what the "
              "caller chose to keep verbatim",
    level_note="a warning where the only kept items missing are earlier summaries the new summary "
               "replaced (incremental summarizing: the summarizer is handed them to update)",
)
def tail_preserved(ex: Example) -> None:
    kept = visible_items(ex.case.history[ex.case.cut:])
    if not kept:
        raise NotApplicable("the tail is empty")
    result = _result_items(ex)
    lost = lost_items(kept, result)
    if lost:
        first = lost[0]
        folded = all(item.kind == "summary" for item in lost) and any(
            item.kind == "summary" and ex.case.summary in item.value for item in result)
        # An earlier summary replaced by the new one is incremental summarizing (the summarizer
        # is handed the previous summary to update: pydantic-ai-harness's incremental=True,
        # opencode's anchored update): its content lives on in the new summary if the
        # summarizer kept it, which the result cannot show. A warning, not a loss.
        note = ("; an earlier summary folded into the new one survives only if the summarizer was "
                "given it to update" if folded else "")
        raise Violation(f"{first.kind} {first.value[:200]!r} of the kept tail is missing"
                        + and_more(lost, "missing item") + note,
                        expected=[item_label(i) for i in lost[:5]], actual="not in the result",
                        level=WARNING if folded else None)
    stray = out_of_order(kept, result)
    if stray is not None:
        raise Violation(f"{stray.kind} {stray.value[:200]!r} of the kept tail comes earlier than it should",
                        expected="tail order")


# -- cut_respected -----------------------------------------------------------------------------

@CONTRACT.check(
    "cut_respected",
    title="nothing before the cut survives but the standing system prompt and the summary",
    rationale="a compaction that keeps what it summarized (or never compacts) grows the context it "
              "was meant to shrink until the provider rejects it for length, and sends everything twice",
)
def cut_respected(ex: Example) -> None:
    moved = _moved_cut(ex)
    standing = set(_standing(ex))
    summarized = [item for item in visible_items(ex.case.history[:moved])
                  if not (item.kind == "system" and item.value in standing)]
    if not summarized:
        raise NotApplicable("nothing but the standing system prompt comes before the cut")
    kept = Counter(visible_items(ex.case.history[moved:]))
    result = Counter(_result_items(ex))
    survived = [item for item in dict.fromkeys(summarized) if result[item] > kept[item]]
    if survived:
        first = survived[0]
        raise Violation(f"{first.kind} {first.value[:200]!r} from before the cut (message < {moved}) survived"
                        + and_more(survived, "surviving item"),
                        expected="summarized away", actual=[item_label(i) for i in survived[:5]])


# -- matches_reference -------------------------------------------------------------------------

@CONTRACT.check(
    "matches_reference",
    title="the same visible items as the reference's result, in the same order",
    rationale="the reference policy (cut moved to keep pairs, standing prompt once, one summary in "
              "the user's voice, the tail untouched) is what every provider accepts",
)
def matches_reference(ex: Example) -> None:
    check_same_items(visible_items(ex.reference), _result_items(ex))

