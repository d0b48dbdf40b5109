"""The ``payload`` contract: ``to_payload(history, *, provider, instructions=None) -> dict``.

Run once per provider the implementation declares. Every dialect is read through one
turn view (role, texts, tool calls, tool results), so the checks are written once.
"""

from __future__ import annotations

import base64
import html
import itertools
import json
from collections import Counter, deque
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

from hypothesis import strategies as st

from chatconform.errors import ERROR, WARNING, ConfigError, NotApplicable, Violation
from chatconform.frame.contract import Case, Example, Option, Refusal, taken_keywords
from chatconform.frame.history_contract import HistoryContract
from chatconform.frame.lifecycle import Conversation, LifecycleStep
from chatconform.frame.wire import as_is
from chatconform.history import (
    ERROR_OUTCOMES,
    INLINE,
    Item,
    and_more,
    counted,
    first_difference,
    item_label,
    list_difference,
    visible_items,
)
from chatconform.lazy import pai
from chatconform.provider_schemas import turn_view, validate
from chatconform.provider_schemas.levels import (
    REUSED_ID,
    check_level,
    cite,
    reasoning_level,
    reasoning_levels,
    variant_levels,
)
from chatconform.providers import PROVIDER_IDS, PROVIDERS, get_provider
from chatconform.reference.payload import links_sent_as_text, to_payload
from chatconform.strategies.histories import histories, instructions
from chatconform.strategies.large import large_history
from chatconform.strategies.lifecycles import Step
from chatconform.strategies.reasoning import family_models, with_reasoning
from chatconform.strategies.runs import EPOCH

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage, ToolReturnPart


@dataclass
class PayloadCase(Case):
    history: list[ModelMessage]
    instructions: str | None = None
    #: The request's reasoning setting (None: not said), passed as ``reasoning=`` to a
    #: ``to_payload`` that takes it.
    reasoning: bool | None = None
    #: The model the request goes to where a rule depends on it (None: not said), passed as
    #: ``model=`` to a ``to_payload`` that takes it.
    model: str | None = None


def _case_model(case: Any, provider: str) -> str | None:
    """The case's model where it is one of ``provider``'s: a case is drawn once for every
    provider (each is judged on the same histories), its model from every provider's
    families, and a provider is sent only a model of its own."""
    model = getattr(case, "model", None)
    if not model:
        return None
    profile = PROVIDERS.get(provider)
    return model if profile is not None and any(f.example == model for f in profile.reasoning_families) else None


def _extras(fn: Any, case: PayloadCase, provider: str) -> dict[str, Any]:
    """``model`` and ``reasoning``, as far as the case says them and ``fn`` takes them."""
    said = {"reasoning": case.reasoning, "model": _case_model(case, provider)}
    return {name: said[name] for name in taken_keywords(fn, PayloadContract.optional_keywords)
            if said[name] is not None}


def _known(ids, label: str) -> None:
    unknown = sorted(set(ids) - set(PROVIDER_IDS))
    if unknown:
        raise ConfigError(f"{label} declares unknown provider(s) {', '.join(unknown)}; "
                          f"known: {', '.join(PROVIDER_IDS)}")


def _parse_providers(value: Any, label: str) -> frozenset[str]:
    if isinstance(value, str) or not all(isinstance(p, str) for p in value):
        raise ConfigError(f"{label}: providers must be a set of provider ids such as "
                          f"{{'openai-chat'}}, got {value!r}")
    _known(value, label)
    return frozenset(value)


#: The provider ids an implementation maps to; every provider-bound contract reads it.
PROVIDERS_OPTION = Option("providers", "the provider ids to_payload maps to", frozenset(), _parse_providers)


def _parse_models(value: Any, label: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) and v
                                              for k, v in value.items()):
        raise ConfigError(f"{label}: models must map provider ids to model ids, such as "
                          f"{{'bedrock-converse': 'meta.llama4-maverick-17b-instruct-v1:0'}}, got {value!r}")
    _known(value, f"{label}: models")
    return dict(value)


#: The model each provider id is used with. A rule that some of a provider's models break
#: and others accept (docs/provider-rules.md, "by model") is an error for a model known to
#: reject it, and only a warning while the model is not known.
MODELS_OPTION = Option("models", "the model id each provider is used with (for model-dependent rules)",
                       {}, _parse_models)


#: The run's instructions a lifecycle's request maps with its history.
REQUEST_INSTRUCTIONS = "Answer briefly. (instructions)"


def _request(conversation: Conversation, step: Step) -> Any:
    """A request: the history repaired, the next prompt added, and mapped for each provider."""
    number = conversation.number
    prompt = pai.UserPromptPart(f"Step {number}: a question (u-request-{number})", timestamp=EPOCH)
    sent = [*conversation.call("repair", conversation.history), pai.ModelRequest([prompt], timestamp=EPOCH)]
    payloads = [(provider, conversation.call("to_payload", sent, provider=provider, instructions=REQUEST_INSTRUCTIONS))
                for provider in conversation.providers]
    return conversation.record(conversation.history, conversation.history, sent=sent, payloads=payloads)


class PayloadContract(HistoryContract):
    name = "payload"
    method = "to_payload"
    signature = "to_payload(history, *, provider, instructions=None) -> dict"
    optional_keywords = ("model", "reasoning")
    crash_rationale = ("dify-agent raised UnexpectedModelBehavior on history parts it did not "
                       "map; a mapper that raises takes the whole agent run down")
    mutation_rationale = ("pydantic-ai ModelRequest.__post_init__ mutates a parts list passed in; "
                          "a mapper that edits the stored history corrupts what is persisted")
    # Run once per provider: half the profile's budget each still covers 3.5x in all.
    examples_scale = 0.5
    listing_order = 20
    options = (PROVIDERS_OPTION, MODELS_OPTION)
    case_type = PayloadCase
    wire_fields: ClassVar[dict[str, Any]] = {
        "instructions": {"description": "Left out when there are none.", "type": ["string", "null"]},
        "reasoning": {"description": "The request's reasoning setting (thinking on or off); left out when not said.",
                      "type": ["boolean", "null"]},
        "model": {"description": "The model the request goes to, where a provider's rule depends on it; left out "
                                 "when not said.", "type": ["string", "null"]}}
    reference_module = "chatconform.reference.payload"
    lifecycle_steps = (LifecycleStep("request", "a request: to_payload for each provider", order=70,
                                     methods=("repair", "to_payload"), play=_request),)
    guard_tests = ("tests/reference/test_payload.py", "tests/reference/test_payload_policy.py",
                   "tests/reference/test_payload_files.py", "tests/strategies/test_large_inputs.py")

    def variants(self, impl):
        return [p for p in PROVIDER_IDS if p in impl.options["providers"]]

    def inapplicable(self, impl):
        """The reasoning checks none of the implementation's providers can meet: no reasoning
        goes back to a provider with no slot for it, and none rejects it but Groq and DeepSeek R1."""
        profiles = [get_provider(p) for p in self.variants(impl)]
        names = ", ".join(p.id for p in profiles)
        cannot = {}
        if not any(p.reasoning_slot for p in profiles):
            cannot["payload.reasoning_kept"] = f"none of {names} takes reasoning back"
        if not any(f.replay == "rejected" for p in profiles for f in p.reasoning_families):
            cannot["payload.no_rejected_reasoning"] = f"no model of {names} is known to reject reasoning"
        return cannot

    def skip_reason(self, impl):
        if not impl.options["providers"] and "providers" in impl.selected:
            return (f"{impl.name} declares none of the providers selected with --provider "
                    f"({', '.join(sorted(impl.selected['providers']))})")
        if not impl.options["providers"]:
            return f"{impl.name} declares no providers (set .providers to the ids it maps to)"
        return None

    def cases(self, variant):
        # One history in four ends in a response (a continuation, or a caller that maps
        # the stored thread as it is): each provider's last-message rule meets it. Some are
        # cut off while their tools ran: the reference closes the calls left without a
        # result, the Vercel AI SDK throws on them (AI_MissingToolResultsError, vercel/ai#4290).
        ending = st.sampled_from((True, True, True, False))
        # Half the cases carry reasoning as providers return it (signed, cut, another
        # provider's), with the request's reasoning on or off and, where a provider's rule
        # depends on it, one model of each family.
        drawn = ending.flatmap(lambda request: histories(
            ends_with_request=request, file_kinds=True, blank_prompts=True, cut_tool_rounds=True))
        # The draw does not depend on the provider: every provider is judged on the same cases
        # (a run keeps one contract's cases and judges every provider on them).
        return st.builds(PayloadCase, drawn.flatmap(lambda history: with_reasoning(history, None)), instructions(),
                         st.sampled_from((None, True, True, False)), family_models(None))

    def call(self, fn, case, variant):
        return fn(case.history, provider=variant, instructions=case.instructions, **_extras(fn, case, variant))

    def reference(self, case, variant):
        return to_payload(case.history, provider=variant, instructions=case.instructions,
                          model=_case_model(case, variant), reasoning=case.reasoning)

    def wire(self):
        """The call names the provider; the result is the request body, read as it came."""
        (own,) = super().wire()
        return (replace(own, decode=as_is, reply=None, provider=True, result={
            "description": "The result of to_payload: the request body, in the provider's own JSON.",
            "type": "object"}),)

    def bench_variants(self, variants):
        # The providers of one dialect share one renderer: the first of each dialect.
        return [p for p in variants if p in _DIALECT_FIRSTS] or variants

    def large_case(self, size, seed, variant):
        return PayloadCase(large_history(seed, size), instructions="Be concise. (instructions)")

    def floor(self, case, variant):
        # A mapper reads every part of every message and writes something for it.
        sent = []
        for message in case.history:
            for part in message.parts:
                sent.append(getattr(part, "content", None))

    def refusable(self, case, variant):
        links = links_sent_as_text(case.history, variant)
        if links:
            return Refusal(f"{variant} takes no {links[0]}, so no request was built and none rejected; the "
                           "reference sends the URL as text. Fix: send the link as text, or download it and "
                           "send the bytes", warns=True)
        return None

    def output_problem(self, output, case):
        if not isinstance(output, dict):
            return f"returned {type(output).__name__}, expected a request body (dict)"
        try:
            json.dumps(output)
        except (TypeError, ValueError) as exc:
            return f"the request body is not JSON-serializable ({exc})"
        return None


CONTRACT = PayloadContract()

#: The first provider of each dialect in the table (what the benchmark times).
_DIALECT_FIRSTS = frozenset({p.dialect: p.id for p in reversed(PROVIDERS.values())}.values())


def _provider(ex: Example) -> str:
    """The provider a payload example is for: its variant (a payload search is one provider's)."""
    assert ex.variant is not None, "a payload example is made for one provider"
    return ex.variant


def _cited(ex: Example, check: str, message: str, **details: Any) -> Violation:
    """A failure of a check the provider may reject, at the level chatconform.provider_schemas.levels
    gives it on this provider: an error names the provider's rule, a warning says why."""
    return Violation(f"{message} ({cite(check, _provider(ex))})", level=check_level(check, _provider(ex)).level,
                     **details)


# -- what the history holds ------------------------------------------------------------------

#: Items sent as non-system content, in history order (thinking is not required: no
#: provider takes a signature-less replay of it).
_CONTENT = frozenset({"user", "summary", "feedback", "assistant", "call", "media"})
_VOICED = frozenset({"user", "summary"})


def _items(ex: Example) -> list[Item]:
    return ex.case_once("items", lambda: visible_items(ex.case.history))


def _system_texts(ex: Example) -> list[str]:
    texts = [item.value for item in _items(ex) if item.kind == "system"]
    if ex.case.instructions and ex.case.instructions.strip():
        texts.append(ex.case.instructions)
    return texts


def _turns(ex: Example):
    return ex.output_once("turns", lambda: turn_view(ex.output, _provider(ex)))


def _result_names(turns) -> Counter:
    """Tool results by tool name, the name taken from the matching call when it is absent:
    the latest call with that id before the result (an id may be reused in a later round)."""
    names: dict[str, str] = {}
    found: Counter = Counter()
    for t in turns:
        for call_id, name in t.tool_results:
            found[name or names.get(call_id, "")] += 1
        names.update(t.tool_calls)
    return found


# -- checks ------------------------------------------------------------------------------------

def _model(ex: Example) -> str | None:
    """The model the implementation declares for the provider (it is configured for that
    one, whatever the case says), else the case's model."""
    declared = ex.impl.options.get("models", {}).get(ex.variant) if ex.impl is not None else None
    return declared if declared is not None else _case_model(ex.case, _provider(ex))


def _problems(ex: Example, source: str) -> None:
    """Fail on the body's problems from ``source``: errors always; warnings only where the
    reference's body avoids them. A warning every faithful body has (a history that ends
    in a response is a prefill wherever it is sent) is about the history, not the mapper."""
    model = _model(ex)
    # The case's reasoning setting is not passed: a history whose last tool turn has no signed
    # thinking cannot be sent with thinking on at all; reasoning_kept judges the replay instead.
    problems = ex.output_once(("problems", model), lambda: validate(ex.output, _provider(ex), model=model))
    found = [p for p in problems if p.source == source and p.severity == "error"]
    level = "error"
    if not found:
        warned = [p for p in problems if p.source == source]
        if warned:
            try:
                inherent = {p.rule for p in ex.reference_once(
                    ("problems", model), lambda: validate(ex.reference, _provider(ex), model=model))}
            except NotApplicable:  # the reference declines the case: every warning is the body's own
                inherent = set()
            found, level = [p for p in warned if p.rule not in inherent], "warning"
    if found:
        first = found[0]
        raise Violation(f"{first.rule} at {first.path}: {first.message}"
                        + and_more(found, "problem"),
                        expected="no problems",
                        actual=[f"{p.rule} {p.path}: {p.message}" for p in found[:5]], level=level)


@CONTRACT.check(
    "schema_valid",
    title="the body matches the provider's request schema",
    rationale="provider 400s on shape: OpenAI 'Invalid value for content: expected a string, got "
              "null', Gemini 'contents.parts must not be empty', Bedrock blank text blocks",
)
def schema_valid(ex: Example) -> None:
    _problems(ex, "schema")


@CONTRACT.check(
    "provider_rules",
    title="the provider's sequence rules hold (role order, tool ids, last message)",
    rationale="Qwen3.5+/vLLM 'System message must be at the beginning.', GLM 1214, Bedrock "
              "'A conversation must alternate between user and assistant roles', Mistral role order",
    level_note="at the level of the worst rule broken (docs/provider-rules.md); a warning-level rule "
               "the reference's body breaks too is about the history and not reported",
)
def provider_rules(ex: Example) -> None:
    _problems(ex, "sequence")


@CONTRACT.check(
    "system_first",
    title="at most one system message, and only at index 0",
    rationale="dify PR #39136: instructions spliced after the leading system block; a sort-only "
              "fix (dify PR #39372) still sends two system messages, which Qwen rejects",
    levels=variant_levels("payload.system_first"),
    level_note="OpenAI and hosted Mistral accept several system messages anywhere (Mistral's role order "
               "is provider_rules' M1), GLM has no known rule; Qwen3.5+ on vLLM, an OpenAI-compatible "
               "server, rejects them: 'System message must be at the beginning.'",
)
def system_first(ex: Example) -> None:
    turns = _turns(ex)
    where = [t.path for t in turns if t.role == "system"]
    if len(where) > 1 or (where and turns[0].role != "system"):
        raise _cited(ex, "payload.system_first", f"system content at {', '.join(where)}",
                     expected="one system message first", actual=[t.role for t in turns])


@CONTRACT.check(
    "user_led",
    title="the first non-system turn is a user turn when the history has user-voiced content",
    rationale="GLM 1214 'The messages parameter is illegal' after compaction: a summary sent as "
              "system left no user message (CLAI provider_bound_summary fix)",
    levels=variant_levels("payload.user_led"),
    level_note="GLM (1214), Qwen on vLLM ('No user query found in messages.') and Bedrock ('A conversation "
               "must start with a user message.') reject a payload that does not lead with a user turn; "
               "OpenAI, Mistral, Anthropic and Gemini answer it",
)
def user_led(ex: Example) -> None:
    if not any(item.kind in _VOICED for item in _items(ex)):
        raise NotApplicable("the history holds no user-voiced content")
    first = next((t for t in _turns(ex) if t.role != "system"), None)
    if first is None or first.role != "user":
        raise _cited(ex, "payload.user_led", "the payload does not lead with a user turn",
                     expected="user", actual=first.role if first else "no turn at all")


@dataclass(frozen=True)
class _Answer:
    """A stored tool result and where the payload answers the call it belongs to."""

    stored: ToolReturnPart
    turn: Any  # the payload turn holding the answer
    index: int  # its position in ``turn.tool_results``


def _stored_results_per_call(history: list[ModelMessage]) -> list[ToolReturnPart | None]:
    """The stored result of every tool call, calls in history order.

    An id may come back in a later round (servers that reuse ``call_1``), so each call
    takes the earliest result of its id that no earlier call took.
    """
    stored: dict[str, deque[ToolReturnPart]] = {}
    for message in history:
        if isinstance(message, pai.ModelRequest):
            for part in message.parts:
                if isinstance(part, pai.ToolReturnPart):
                    stored.setdefault(part.tool_call_id, deque()).append(part)
    out: list[ToolReturnPart | None] = []
    for message in history:
        if isinstance(message, pai.ModelResponse):
            for response_part in message.parts:
                if isinstance(response_part, pai.ToolCallPart):
                    queue = stored.get(response_part.tool_call_id)
                    out.append(queue.popleft() if queue else None)
    return out


def _answers(ex: Example) -> list[_Answer]:
    """Each stored result with the payload answer of its call (calls matched by position,
    results to the open call of their id); empty when the calls do not line up, which
    ``nothing_lost`` and ``order_preserved`` report."""
    def compute():
        wanted = ex.case_once("stored results", lambda: _stored_results_per_call(ex.case.history))
        open_calls: dict[str, deque[int]] = {}
        found: dict[int, tuple[Any, int]] = {}
        position = 0
        for turn in _turns(ex):
            for index, (call_id, _) in enumerate(turn.tool_results):
                queue = open_calls.get(call_id)
                if queue:
                    found[queue.popleft()] = (turn, index)
            for call_id, _ in turn.tool_calls:
                open_calls.setdefault(call_id, deque()).append(position)
                position += 1
        if position != len(wanted):
            return []
        return [_Answer(stored, *found[k]) for k, stored in enumerate(wanted) if stored is not None and k in found]

    return ex.output_once("answers", compute)


def _leaves(value: Any) -> list[str]:
    """The non-blank strings of a tool result's content, edges trimmed."""
    if isinstance(value, str):
        return [value.strip()] if value.strip() else []
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(item)]
    return []


def _spellings(leaf: str) -> tuple[str, ...]:
    """How ``leaf`` may be written in a body's text: as it is, as the inside of a JSON string,
    or as the inside of a Python string literal (a tool's dict sent as ``str(output)``: the
    same text, with its unprintable characters escaped as JSON would)."""
    return tuple(dict.fromkeys((leaf, json.dumps(leaf, ensure_ascii=False)[1:-1], json.dumps(leaf)[1:-1],
                                repr(leaf)[1:-1])))


def _carried(leaf: str, text: str) -> bool:
    """``leaf`` is in ``text`` in one of its :func:`_spellings`."""
    return any(spelling in text for spelling in _spellings(leaf))


#: The row of chatconform.provider_schemas.levels that weighs a pairing fault.
PAIRING = "payload.tool_pairing"


@CONTRACT.check(
    "tool_pairing",
    title="every tool call is answered once, right after it, by its own result; ids are unique",
    rationale="OpenAI 'messages with role tool must be a response to a preceding message with "
              "tool_calls'; Anthropic 'tool_use ids were found without tool_result blocks "
              "immediately after' and 'tool_use ids must be unique' (a server reusing call_1); "
              "results paired through a dict by id answer a reused id with another round's output",
    levels=variant_levels("payload.tool_pairing"),
    level_note="an error where the provider's rule on pairing is cited (O8, Z2, M4, A9, G8, B4), a warning on "
               "qwen-vllm, where vLLM validates no pairing; an id sent twice, each time answered in its own "
               "round, is an error for anthropic (A15), glm (Z2) and mistral (M5) and a warning elsewhere; an "
               "answer holding another call's result is an error everywhere (`chatconform list --levels`)",
)
def tool_pairing(ex: Example) -> None:
    """Pairing faults weigh what the provider's pairing rule says (``PAIRING``), a reused id
    what its rule on ids says; an answer holding another call's result is always an error.
    Every fault of the body is weighed and the worst reported: a reused id the provider
    accepts, met first, never hides a pairing it rejects."""
    faults: list[Violation] = []
    pending: dict[str, str] = {}  # call id -> path of its call
    seen_calls: set[str] = set()
    answered: set[str] = set()
    # A call without an id (Gemini's ids are optional) is no id to reuse: its result answers
    # the oldest open call without one, as the provider pairs them, by position.
    nameless: deque[str] = deque()
    for turn in _turns(ex):
        for call_id, _ in turn.tool_results:
            if not call_id and nameless:
                call_id = nameless.popleft()
            if call_id not in seen_calls:
                faults.append(_cited(ex, PAIRING, f"tool result {call_id} at {turn.path} has no earlier call"))
            elif call_id in answered:
                faults.append(_cited(ex, PAIRING, f"tool call {call_id} is answered twice (again at {turn.path})"))
            answered.add(call_id)
            pending.pop(call_id, None)
        if pending and not turn.tool_results:
            call_id, path = next(iter(pending.items()))
            faults.append(_cited(ex, PAIRING, f"tool call {call_id} ({path}) is not answered before {turn.path}",
                                 expected="its result next", actual=turn.role))
            pending.clear()  # reported once: what follows is weighed on its own
        if pending and turn.tool_calls:
            faults.append(_cited(ex, PAIRING, f"new tool calls at {turn.path} while {', '.join(pending)} are open"))
            pending.clear()
        for call_id, _ in turn.tool_calls:
            if not call_id:
                call_id = f"(a call without an id, #{len(seen_calls) + 1})"
                nameless.append(call_id)
            elif call_id in seen_calls:
                faults.append(_cited(ex, REUSED_ID, f"tool call id {call_id} is used twice (again at {turn.path})",
                                     expected="a unique id per call (rewrite a reused one)", actual=call_id))
                answered.discard(call_id)  # the new call is answered by the results after it
            seen_calls.add(call_id)
            pending[call_id] = turn.path
    if pending:
        faults.append(_cited(ex, PAIRING, f"tool calls never answered: {', '.join(pending)}"))
    try:
        _results_are_their_own(ex)
    except Violation as own:
        faults.append(own)
    if faults:
        raise Violation.worst(faults)


def _unheld_results(ex: Example) -> list[tuple[_Answer, str]]:
    """Each answer that does not hold the content of the result stored for its call, with
    the first string of that content it lacks."""
    def compute():
        out = []
        for answer in _answers(ex):
            text = "\n".join(answer.turn.texts)
            missing = next((leaf for leaf in _leaves(answer.stored.content) if not _carried(leaf, text)), None)
            if missing is not None:
                out.append((answer, missing))
        return out

    return ex.output_once("unheld results", compute)


def _results_are_their_own(ex: Example) -> None:
    """No call is answered with the result stored for another call (a dict keyed by a
    reused id). An answer that lacks its own content and holds no other is a loss, which
    ``nothing_lost`` reports."""
    unheld = _unheld_results(ex)
    if not unheld:
        return
    # Every result's spellings once: each unheld answer is compared with every result.
    spelt = [(a.stored, [_spellings(leaf) for leaf in leaves]) for a in _answers(ex)
             if (leaves := _leaves(a.stored.content))]
    for answer, missing in unheld:
        text = "\n".join(answer.turn.texts)
        if not text.strip():
            continue  # a blank answer holds no result (every leaf has a non-blank character)
        other = next((stored for stored, spellings in spelt if stored is not answer.stored
                      and all(any(s in text for s in leaf) for leaf in spellings)), None)
        if other is not None:
            raise Violation(f"the answer at {answer.turn.path} to tool call {answer.stored.tool_call_id} "
                            f"holds another call's result, not its own {missing[:200]!r}",
                            expected=missing[:200], actual=[t[:200] for t in answer.turn.texts],
                            level=ERROR)  # levels.OWN_RESULT: accepted, and misread


def _carries_failure(answer: _Answer) -> bool:
    """The answer holds the failure text the history stores for its call (every non-blank
    string of it), in any framing: what an OpenAI-style tool message can say of a failure."""
    leaves = _leaves(answer.stored.content)
    text = "\n".join(answer.turn.texts)
    return bool(leaves) and all(_carried(leaf, text) for leaf in leaves)


@CONTRACT.check(
    "error_flag_kept",
    title="a failed or retried tool result is sent as a failure: with the dialect's error flag, or, where "
          "the dialect has none, with the failure text the history stores",
    rationale="a tool error delivered as a success (senpi hardcoded isError=false) is read as data: "
              "the model builds on a failure; Anthropic is_error, Bedrock status 'error', Gemini an "
              "'error' key in functionResponse.response",
    level_note="an error everywhere: the body is accepted and the model reads a failure as a result. "
               "OpenAI-style tool messages (openai-chat, qwen-vllm, glm, mistral) have no error field, so "
               "there the stored failure text in the tool content is the mark (an {'error': ...} content "
               "too); where the dialect has a flag (Provider.error_flag) a dropped flag fails",
)
def error_flag_kept(ex: Example) -> None:
    failed = [a for a in _answers(ex) if a.stored.outcome in ERROR_OUTCOMES]
    if not failed:
        raise NotApplicable("the history holds no failed or retried tool result")
    flag = get_provider(_provider(ex)).error_flag
    for answer in failed:
        if answer.index in answer.turn.error_results or (flag is None and _carries_failure(answer)):
            continue
        where = f"the {answer.stored.outcome} result of tool call {answer.stored.tool_call_id} at {answer.turn.path}"
        if flag is None:
            raise Violation(f"{where} does not carry its failure text ({ex.variant} tool messages have no "
                            f"error field: the stored failure text is what tells the model)",
                            expected=_leaves(answer.stored.content)[:3] or "an {'error': ...} content",
                            actual=[t[:200] for t in answer.turn.texts])
        raise Violation(f"{where} is not marked as an error", expected=flag, actual="a plain result")


@dataclass(frozen=True)
class _Stream:
    """The payload's non-system content as a reader meets it, in order."""

    text: str  # every non-system text, joined with "\n"
    calls: list[str]  # tool calls by name
    media: list[str]  # files by identity (chatconform.provider_schemas.turns.Turn.media)
    inline: list[bool]  # whether each file travels as bytes


def _payload_stream(ex: Example) -> _Stream:
    def compute():
        turns = [t for t in _turns(ex) if t.role != "system"]
        files = [(identity, k in t.inline) for t in turns for k, identity in enumerate(t.media)]
        return _Stream("\n".join(s for t in turns for s in t.texts),
                       [name for t in turns for _, name in t.tool_calls],
                       [identity for identity, _ in files], [inline for _, inline in files])

    return ex.output_once("stream", compute)


def _is_inline(item: Item) -> bool:
    return item.ref == INLINE


def _anonymous(ex: Example) -> list[int]:
    """Positions of the payload's files that are none of the history's: a link the library
    downloaded, sent as bytes the history does not hold (or bytes it uploaded, sent as a
    link), or bytes that decode to something other than what was stored."""
    def compute():
        known = {item.value for item in _items(ex) if item.kind == "media"}
        return [i for i, identity in enumerate(_payload_stream(ex).media) if identity not in known]

    return ex.output_once("anonymous", compute)


#: The first bytes of each file kind a history holds (pydantic-ai's FileUrl kinds), as their
#: formats begin; bytes that begin otherwise are of no kind the check can tell.
_MAGIC: tuple[tuple[str, tuple[bytes, ...]], ...] = (
    ("image-url", (b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"BM")),
    ("document-url", (b"%PDF",)),
    ("audio-url", (b"ID3", b"\xff\xfb", b"\xff\xf3", b"\xff\xf2", b"OggS", b"fLaC")),
    ("video-url", (b"\x1aE\xdf\xa3",)),
)


def _sniffed(data: bytes) -> str | None:
    """The file kind ``data`` begins as, or None."""
    if data[:4] == b"RIFF":  # WebP images, WAV audio, AVI video share the container
        return {b"WEBP": "image-url", b"WAVE": "audio-url", b"AVI ": "video-url"}.get(data[8:12])
    if data[4:8] == b"ftyp":  # MP4, MOV, M4A, HEIC
        return "audio-url" if data[8:11] == b"M4A" else "image-url" if data[8:12] in (b"heic", b"avif") \
            else "video-url"
    return next((kind for kind, heads in _MAGIC if data.startswith(heads)), None)


def _link_kinds(ex: Example) -> dict[str, str]:
    """The file kind of each link the history holds, by URL (tool results' nested ones too)."""
    def compute():
        kinds: dict[str, str] = {}
        stack: list[Any] = [getattr(part, "content", None) for message in ex.case.history for part in message.parts]
        while stack:
            value = stack.pop()
            if isinstance(value, pai.FileUrl):
                kinds.setdefault(value.url, getattr(value, "kind", ""))
            elif isinstance(value, (list, tuple)):
                stack.extend(value)
            elif isinstance(value, dict):
                stack.extend(value.values())
        return kinds

    return ex.case_once("link kinds", compute)


def _download(ex: Example, url: str, identity: str) -> bool | None:
    """Whether bytes the history does not hold (``identity``, their base64) can be the file
    downloaded from ``url``: True when they are recognisably its (of its kind, or naming the
    URL, as an offline stand-in does), False when they are of no kind the check can tell
    (a match, with a warning), None when they are another kind of file (no match). Decided
    once per pair for the example: placing and counting losses both ask."""
    def compute() -> bool | None:
        try:
            data = base64.b64decode(identity, validate=True)
        except ValueError:
            return None
        if url.encode() in data:
            return True
        kind = _sniffed(data)
        if kind is None:
            return False
        return True if kind == _link_kinds(ex).get(url) else None

    decided: bool | None = ex.output_once(("download", url, identity), compute)
    return decided


@dataclass(frozen=True)
class _Placing:
    """The history's content items (indices into ``_items``) found in order, and not."""

    found: list[int]
    missed: list[int]
    #: (item index, start, end) of each text found in ``_Stream.text``, in history order.
    spans: list[tuple[int, int, int]]
    #: Links found as downloaded bytes of no kind the check can tell: (item index, file index).
    unsure: list[tuple[int, int]]


def _placing(ex: Example) -> _Placing:
    """One cursor walk over the payload's text, calls and files: linear in the payload. An
    item the cursor misses was either sent earlier than it should be or not sent at all
    (:func:`_lost` tells which). Each copy of the payload serves one item: two equal
    images of the history need two images in the body."""
    def compute():
        stream = _payload_stream(ex)
        cursor = {"text": 0, "call": 0, "media": 0}
        anonymous = _anonymous(ex)
        spans: list[tuple[int, int, int]] = []
        unsure: list[tuple[int, int]] = []

        def in_text(index: int, value: str) -> bool:
            # Whitespace at the edges of a text is not content: a provider may require it
            # trimmed (Anthropic A10), and a text joined to others is found inside.
            value = value.strip()
            position = stream.text.find(value, cursor["text"])
            if position < 0:
                return False
            cursor["text"] = position + len(value)
            spans.append((index, position, cursor["text"]))
            return True

        def file(index: int, item: Item) -> bool:
            position = _index(stream.media, item.value, cursor["media"])
            if position < 0 and _is_inline(item):
                # Bytes sent as the link they were uploaded to: a link the history does not hold.
                position = next((i for i in anonymous if i >= cursor["media"] and not stream.inline[i]), -1)
            elif position < 0:
                # A link the provider cannot take may travel as its URL in text; else as the
                # bytes downloaded from it: bytes the history does not hold, at its place, of
                # its kind (or of no kind the bytes tell).
                if in_text(index, item.value):
                    return True
                position = next((i for i in anonymous if i >= cursor["media"] and stream.inline[i]
                                 and _download(ex, item.value, stream.media[i]) is not None), -1)
                if position >= 0 and not _download(ex, item.value, stream.media[position]):
                    unsure.append((index, position))
            if position < 0:
                return False
            cursor["media"] = position + 1
            return True

        found: list[int] = []
        missed: list[int] = []
        for index, item in enumerate(_items(ex)):
            if item.kind not in _CONTENT:
                continue
            if item.kind == "call":
                position = _index(stream.calls, item.value, cursor["call"])
                if position >= 0:
                    cursor["call"] = position + 1
                placed = position >= 0
            elif item.kind == "media":
                placed = file(index, item)
            else:
                placed = in_text(index, item.value)
            (found if placed else missed).append(index)
        return _Placing(found, missed, spans, unsure)

    return ex.output_once("placed", compute)


def _index(values: list[str], value: str, start: int) -> int:
    try:
        return values.index(value, start)
    except ValueError:
        return -1


def _body_text(ex: Example) -> str:
    """Every text of the payload, system turns included, as one string, with HTML entities
    read back (pydantic-ai escapes frame-like tags such as ``<system>`` in stored text: the
    words still reach the model)."""
    return ex.output_once("body_text", lambda: html.unescape("\n".join(s for t in _turns(ex) for s in t.texts)))


def _key(item: Item) -> tuple[str, str]:
    """What two equal items share: their kind of content and their content."""
    if item.kind in ("call", "media"):
        return item.kind, item.value
    return "text", item.value.strip()


@dataclass(frozen=True)
class _Loss:
    """Content items the payload holds fewer copies of than the history."""

    items: list[int]  # indices into ``_items``, in history order
    wanted: Counter  # copies the history holds, by _key
    sent: Counter  # copies the payload holds, by _key


def _lost(ex: Example) -> _Loss:
    """The items of the history the payload does not hold, counted as a multiset: an item
    is sent when the payload holds as many copies of its content as the history does, in
    any voice (a text moved into the system message is sent, not lost). A link the body
    does not hold is made up for by a file of bytes the history does not hold (a download),
    and bytes by such a link (an upload), each such file once; bytes the body holds under
    another encoding are not theirs. Of the copies of one content, the last ones are lost."""
    def compute():
        items, placing = _items(ex), _placing(ex)
        if not placing.missed:
            return _Loss([], Counter(), Counter())
        stream, body = _payload_stream(ex), _body_text(ex)
        wanted = Counter(_key(items[i]) for i in (*placing.found, *placing.missed))
        sent: Counter = Counter()
        links = {item.value for item in items if item.kind == "media" and not _is_inline(item)}
        for key in wanted:
            kind, value = key
            if kind == "call":
                sent[key] = stream.calls.count(value)
            elif kind == "media":
                sent[key] = stream.media.count(value)
                if value in links:
                    sent[key] += _count_upto(body, value, wanted[key] - sent[key])
            else:
                sent[key] = _count_upto(body, value, wanted[key])
        short = {key: wanted[key] - sent[key] for key in wanted if wanted[key] > sent[key]}
        uploads = sum(not stream.inline[i] for i in _anonymous(ex))  # links the history does not hold
        downloads = [stream.media[i] for i in _anonymous(ex) if stream.inline[i]]  # bytes it does not hold
        lost = []
        for index in sorted((i for i in (*placing.found, *placing.missed) if _key(items[i]) in short),
                            reverse=True):
            item = items[index]
            key = _key(item)
            if short[key] <= 0:
                continue
            short[key] -= 1
            if item.kind == "media" and _is_inline(item) and uploads > 0:
                uploads -= 1
                continue
            if item.kind == "media" and not _is_inline(item):
                download = next((d for d in downloads if _download(ex, item.value, d) is not None), None)
                if download is not None:
                    downloads.remove(download)
                    continue
            lost.append(index)
        return _Loss(sorted(lost), wanted, sent)

    return ex.output_once("lost", compute)


def _count_upto(text: str, value: str, enough: int) -> int:
    """How often ``value`` occurs in ``text`` (as ``str.count`` counts), counting no further
    than ``enough``: a long body need not be read to its end for every text it holds."""
    if enough <= 0:
        return 0
    found, at = 0, text.find(value)
    while at >= 0:
        found += 1
        if found >= enough:
            return found
        at = text.find(value, at + max(len(value), 1))
    return found


def _what(ex: Example, item: Item) -> str:
    if item.kind == "call":
        return f"tool call {item.value!r}"
    if item.kind != "media":
        return f"{item.kind} text {item.value[:200]!r}"
    if not _is_inline(item):
        return f"file {item.value[:200]!r}"
    size = len(base64.b64decode(item.value))
    return f"file of {size} inline bytes (base64 {item.value[:60]!r})"


def _how_lost(ex: Example, index: int) -> str:
    """Why the first lost item counts as lost, for the failure message."""
    loss, item = _lost(ex), _items(ex)[index]
    key = _key(item)
    if loss.sent[key]:
        return (f"{_what(ex, item)} is sent {counted(loss.sent[key], 'time')} and the history holds it "
                f"{counted(loss.wanted[key], 'time')}: equal items in two places are two items")
    stream = _payload_stream(ex)
    others = [stream.media[i] for i in _anonymous(ex) if stream.inline[i]]
    if item.kind == "media" and _is_inline(item) and others:
        return (f"{_what(ex, item)} is missing from the payload: its inline files decode to other bytes "
                f"(base64 {others[0][:60]!r}); inline data must be the base64 of the stored bytes")
    return f"{_what(ex, item)} is missing from the payload"


@CONTRACT.check(
    "order_preserved",
    title="non-system content keeps its order",
    rationale="dify-agent PR #39136 contract: all non-system messages keep their relative order; "
              "a reordered history answers questions that were never asked last",
)
def order_preserved(ex: Example) -> None:
    items, lost = _items(ex), set(_lost(ex).items)
    text = _payload_stream(ex).text
    for index in _placing(ex).missed:
        item = items[index]
        if index in lost or (_key(item)[0] == "text" and _key(item)[1] not in text):
            continue  # lost (nothing_lost), or moved into the system voice (system_voice)
        what = f"tool call {item.value}" if item.kind == "call" else repr(item.value[:200])
        raise Violation(f"{what} comes earlier than it should", expected="history order")


@CONTRACT.check(
    "nothing_lost",
    title="every system text, user text, assistant text, file, tool call and result is sent, each "
          "copy of equal ones, and inline files as the base64 of the stored bytes",
    rationale="dify-agent merge of list-typed system content dropped it; mappers that drop "
              "empty-looking turns or unsupported files lose the user's words and images, a "
              "mapper that replays one attachment once drops the later copies (miurla/morphic PR "
              "#947), and bytes that merely look like base64 sent as they are decode to other bytes "
              "(llama_index issue #17924)",
)
def nothing_lost(ex: Example) -> None:
    turns = _turns(ex)
    for value in _system_texts(ex):
        if value.strip() not in _body_text(ex):
            raise Violation(f"system text {value[:200]!r} is missing from the payload",
                            expected=value[:200], actual="not sent")
    lost = [_items(ex)[i] for i in _lost(ex).items]
    if lost:
        raise Violation(_how_lost(ex, _lost(ex).items[0]) + and_more(lost, "missing item"),
                        expected=[item_label(i) for i in lost[:5]], actual="not sent")
    results_want = Counter(item.value for item in _items(ex) if item.kind == "result")
    results_have = _result_names(turns)
    if results_want - results_have:
        raise Violation("tool results missing", expected=dict(results_want), actual=dict(results_have))
    unheld = _unheld_results(ex)
    if unheld:
        answer, missing = unheld[0]
        raise Violation(f"the answer at {answer.turn.path} to tool call {answer.stored.tool_call_id} "
                        f"lacks its result's content {missing[:200]!r}" + and_more(unheld, "answer"),
                        expected=missing[:200], actual=[t[:200] for t in answer.turn.texts])
    unsure = _placing(ex).unsure
    if unsure:
        index, position = unsure[0]
        size = len(base64.b64decode(_payload_stream(ex).media[position]))
        raise Violation(f"{_what(ex, _items(ex)[index])} is sent as {size} inline bytes of no file kind "
                        "chatconform can tell: counted as its download, but the bytes cannot be matched to "
                        "the URL" + and_more(unsure, "such file"),
                        expected="the file's bytes (of its kind) or its link", actual="unrecognised bytes",
                        level=WARNING)


def _glued(ex: Example) -> tuple[str, str] | None:
    """Two texts of the history that the body runs together with nothing between them,
    where neither brings whitespace of its own: (the first, the second), or None.

    The non-system texts are read where :func:`_placing` found them; the system texts (and
    the instructions, last) by a walk of their own over the whole body. A pair whose run-on
    the history itself holds (one of its texts contains both) is not a junction."""
    def adjacent(spans):
        return [(a, b) for (a, _, end), (b, start, _) in itertools.pairwise(spans) if start == end]

    items = _items(ex)
    pairs = [(items[a].value, items[b].value) for a, b in adjacent(_placing(ex).spans)]
    system, body, cursor, spans = _system_texts(ex), _body_text(ex), 0, []
    for k, value in enumerate(system):
        position = body.find(value.strip(), cursor)
        if position < 0:
            break
        cursor = position + len(value.strip())
        spans.append((k, position, cursor))
    pairs += [(system[a], system[b]) for a, b in adjacent(spans)]
    if not pairs:
        return None
    own = [item.value for item in items] + system + [leaf for answer in _stored_results_per_call(ex.case.history)
                                            if answer is not None for leaf in _leaves(answer.content)]
    return next(((a, b) for a, b in pairs if not any(a.strip() + b.strip() in text for text in own)), None)


@CONTRACT.check(
    "text_boundaries",
    title="two texts are never run together: the body joins them with whitespace or sends them apart",
    rationale="content strings concatenated with no separator glue the last word of one text to the first "
              "of the next ('It is sunny.The build failed.'; dust PR #22255): the model reads words "
              "no one wrote",
)
def text_boundaries(ex: Example) -> None:
    glued = _glued(ex)
    if glued is not None:
        first, second = (text.strip() for text in glued)
        raise Violation(f"two texts are run together: {first[-60:]!r} + {second[:60]!r} reads "
                        f"{(first[-30:] + second[:30])!r}",
                        expected="the texts joined with whitespace (such as '\\n\\n') or sent as separate blocks",
                        actual=first[-60:] + second[:60])


@CONTRACT.check(
    "system_voice",
    title="every system prompt and the instructions reach the model as system content",
    rationale="pydantic-ai sends a mid-conversation system prompt as '<system>...</system>' user text "
              "on models without inline system messages (Anthropic before Opus 4.8, Gemini): the "
              "model reads the application's rules in the user's voice",
    level=WARNING,
    level_note="the text is sent, so no provider rejects it; whether a model weighs a system rule "
               "given as user text the same is up to the model",
)
def system_voice(ex: Example) -> None:
    texts = _system_texts(ex)
    if not texts:
        raise NotApplicable("the history holds no system prompt and no instructions")
    system = "\n".join(s for t in _turns(ex) if t.role == "system" for s in t.texts)
    for value in texts:
        if value.strip() not in system:
            raise Violation(f"system text {value[:200]!r} is not sent as system content",
                            expected="in a system message or the provider's system slot",
                            actual="elsewhere in the body, or not at all")


def _structure(turns) -> list[dict]:
    """Turns as labelled data for the failure output: role, texts, tool calls by name,
    results by count (empty ones left out)."""
    out = []
    for t in turns:
        shown: dict[str, Any] = {"role": t.role}
        for key, value in (("texts", [x[:80] for x in t.texts]), ("calls", [n for _, n in t.tool_calls]),
                           ("results", len(t.tool_results))):
            if value:
                shown[key] = value
        out.append(shown)
    return out


def _same_turn(expected, actual) -> bool:
    """Same role, calls and results; every text of the reference's turn is inside the
    other's texts (framing around a text, or extra text such as replayed thinking, is
    accepted)."""
    if (expected.role, [n for _, n in expected.tool_calls], len(expected.tool_results)) != (
            actual.role, [n for _, n in actual.tool_calls], len(actual.tool_results)):
        return False
    joined = "\n".join(actual.texts)
    return all(text.strip() in joined for text in expected.texts)


# -- reasoning sent back -------------------------------------------------------------------------


def _assistant_reasoning(turns) -> list[tuple[Any, tuple[str, ...]]]:
    """Each assistant turn of a body with the reasoning it sends back."""
    return [(t, t.reasoning) for t in turns if t.role == "assistant"]


def _reference_turns(ex: Example):
    try:
        return ex.reference_once("turns", lambda: turn_view(ex.reference, _provider(ex)))
    except NotApplicable:
        raise NotApplicable("the reference declines the case") from None


def _reasoning_violation(ex: Example, check: str, message: str, *, required: bool, **details: Any) -> Violation:
    level = reasoning_level(check, _provider(ex))
    if required and level.level == ERROR:
        return Violation(f"{message} ({ex.variant} rejects it: rule {level.rule} of docs/provider-rules.md, "
                         f"{level.evidence})", level=ERROR, **details)
    return Violation(f"{message} (a warning: {ex.variant} answers it, and the model loses the reasoning it had)",
                     level=WARNING, **details)


@CONTRACT.check(
    "reasoning_kept",
    title="reasoning the provider needs back comes back unchanged, on its turn (thinking first)",
    rationale="Anthropic 'Expected `thinking` or `redacted_thinking`, but found `tool_use`' (litellm #15601); "
              "DeepSeek 'Missing `reasoning_content` field' (langchain #34166); Kimi 'reasoning_content is "
              "missing in assistant tool call message' (deer-flow #3043); Gemini signatures lost "
              "(langchain-google #1364); OpenRouter reasoning_details dropped (pydantic-ai #3658)",
    levels=reasoning_levels("payload.reasoning_kept"),
    level_note="an error where the model requires the reasoning at that turn (Anthropic: the last turn with "
               "tool_use, A20; DeepSeek D3 and Kimi K2: every tool-call turn; OpenRouter P2 for Gemini models), "
               "a warning elsewhere (the provider answers, the model loses its reasoning)",
)
def reasoning_kept(ex: Example) -> None:
    wanted = _assistant_reasoning(_reference_turns(ex))
    if not any(tokens for _, tokens in wanted):
        raise NotApplicable("the reference sends no reasoning back for this case")
    sent = _assistant_reasoning(_turns(ex))
    family = get_provider(ex.variant).reasoning_family(_model(ex))
    last_tool = max((k for k, (t, _) in enumerate(wanted) if t.tool_calls), default=None)
    if len(sent) != len(wanted):  # turns merged or dropped: compare the body's reasoning as a whole
        flat = Counter(token for _, tokens in sent for token in tokens)
        lost = [token for _, tokens in wanted for token in tokens if not flat[token]]
        # The provider rejects a tool-call turn sent without its reasoning, not a turn left out
        # (nothing_lost reports that): an error only where a sent tool turn lacks it.
        tool_turns = [held for got, held in sent if got.tool_calls]
        if family is not None and family.turns == "last_tool_turn":
            tool_turns = tool_turns[-1:]
        if lost:
            raise _reasoning_violation(ex, "payload.reasoning_kept", f"reasoning is not sent back unchanged: "
                                       f"{lost[0][:200]}" + and_more(lost, "piece"),
                                       required=family is not None and family.replay == "required"
                                       and any(not held for held in tool_turns))
        return
    faults = []  # every turn is weighed: a loss the provider rejects is never hidden behind one it takes
    for k, ((want, tokens), (got, held)) in enumerate(zip(wanted, sent, strict=True)):
        lost = [token for token in tokens if token not in held]
        required = family is not None and family.replay == "required" and (
            k == last_tool if family.turns == "last_tool_turn" else bool(want.tool_calls))
        if lost:
            faults.append(_reasoning_violation(
                ex, "payload.reasoning_kept", f"the reasoning of {want.path} is not sent back unchanged at "
                f"{got.path}: {lost[0][:200]}" + and_more(lost, "piece"),
                required=required, expected=list(tokens), actual=list(held)))
        elif held and not got.reasoning_leads and k == last_tool:
            faults.append(_reasoning_violation(ex, "payload.reasoning_kept", f"the thinking of {got.path} does "
                                               "not come first in its turn", required=required))
    if faults:
        raise Violation.worst(faults)


@CONTRACT.check(
    "no_rejected_reasoning",
    title="no reasoning is sent to a model that rejects it in the history",
    rationale="Groq \"property 'reasoning_content' is unsupported\" (janhq/jan #8136, vercel/ai #8056); DeepSeek "
              "R1 answers reasoning_content in the input with a 400 (vercel/ai PR #14739: R1 and V4 need "
              "opposite handling)",
    levels=reasoning_levels("payload.no_rejected_reasoning"),
    level_note="an error for Groq (R2) and DeepSeek R1 (D2); elsewhere no model is known to reject it",
)
def no_rejected_reasoning(ex: Example) -> None:
    family = get_provider(ex.variant).reasoning_family(_model(ex))
    if family is None or family.replay != "rejected":
        raise NotApplicable(f"{ex.variant} takes reasoning back for model {_model(ex) or '(not said)'}")
    found = [(t.path, token) for t, tokens in _assistant_reasoning(_turns(ex)) for token in tokens]
    if found:
        path, token = found[0]
        raise _reasoning_violation(ex, "payload.no_rejected_reasoning", f"reasoning sent at {path}: {token[:200]}",
                                   required=True)


def _foreign_signatures(ex: Example) -> set[str]:
    """The signatures of the history the provider did not make (another provider's), and
    the texts of thinking left unsigned (a stream cut before its signature came)."""
    signers = get_provider(ex.variant).reasoning_signers
    found: set[str] = set()
    for message in ex.case.history:
        if not isinstance(message, pai.ModelResponse):
            continue
        for part in message.parts:
            signer = getattr(part, "provider_name", None) or message.provider_name
            details = getattr(part, "provider_details", None) or {}
            signature = getattr(part, "signature", None) or details.get("thought_signature")
            if isinstance(signature, str) and signature and signer not in signers:
                found.add(signature)
    return found


@CONTRACT.check(
    "no_foreign_signature",
    title="no reasoning is sent as signed by this provider unless it signed it",
    rationale="a conversation that switched provider: Anthropic 'Invalid `signature` in `thinking` block' on "
              "another provider's signature, or on a block a cut stream left unsigned (pydantic-ai #5532)",
    levels=reasoning_levels("payload.no_foreign_signature"),
    level_note="an error for Anthropic (A21); a warning elsewhere (no rejection recorded)",
)
def no_foreign_signature(ex: Example) -> None:
    foreign = _foreign_signatures(ex)
    for turn, tokens in _assistant_reasoning(_turns(ex)):
        for token in tokens:
            piece = json.loads(token)
            signature = piece.get("signature", piece.get("data", piece.get("thoughtSignature")))
            if piece.get("type") == "thinking" and not (signature or "").strip():
                raise _reasoning_violation(ex, "payload.no_foreign_signature",
                                           f"a thinking block without a signature at {turn.path}", required=True)
            if signature in foreign:
                raise _reasoning_violation(ex, "payload.no_foreign_signature", f"a signature {ex.variant} did not "
                                           f"make is sent as its own at {turn.path}: {signature[:60]}", required=True)


@CONTRACT.check(
    "matches_reference",
    title="the same turns as the reference: roles, tool calls, results and order; framing around "
          "a text and extra text are accepted (advisory)",
    rationale="the reference policy (dify PR #39136 merge, summary as user, interrupted results "
              "for dangling calls) is one every provider accepts; a difference is where to look "
              "first when another check fails",
    level=WARNING,
    level_note="advisory: a payload can differ from the reference and still be right; the checks "
               "above judge what providers reject",
)
def matches_reference(ex: Example) -> None:
    expected = ex.reference_once("turns", lambda: turn_view(ex.reference, _provider(ex)))
    actual = _turns(ex)
    if actual is expected:  # the reference's own answer
        return
    differ = first_difference(expected, actual, _same_turn)
    if differ < max(len(expected), len(actual)):
        how = list_difference(expected, actual, "turn", same=_same_turn,
                              show=lambda turn: json.dumps(_structure([turn])[0], ensure_ascii=False))
        raise Violation(f"the turns differ from the reference: {how}",
                        expected=_structure(expected[differ:differ + 2]),
                        actual=_structure(actual[differ:differ + 2]))
