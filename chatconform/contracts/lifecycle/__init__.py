"""The ``lifecycle`` contract: a conversation's whole life, every invariant after every step.

Each other contract judges one method on inputs drawn for it; applications break where the
methods meet: a history compacted in a run and stored by ``persist_run``, posted back by a
client and sanitized, trimmed, repaired and mapped for a provider. A case is a program
(:func:`chatconform.strategies.lifecycles.lifecycles`): a stored conversation and steps
in any order an application could take them. The implementation supplies any subset of
the contract methods and the reference the rest (:mod:`chatconform.contracts.lifecycle.play`);
every failure names its step and whose methods the step called, and a failing program
shrinks to the shortest sequence of steps that still fails, printed as numbered steps.

The invariants hold after every step, and a failure names the first step that broke one:
the next run is accepted by a real pydantic-ai ``Agent``; every payload passes its provider's
schema and rules; every user text of the branch is stored, but what a compaction summarized
(its summary is there once, and holds no earlier summary) or a trim cut to its budget, and
none is stored more often than it was said; the standing system prompt is there once; after
a repair every call pairs with one result; a restart changes nothing; a branch's thread
holds its ancestors.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from chatconform.contracts.lifecycle.play import (
    Composition,
    Record,
    Trace,
    bound,
    composed_methods,
    joined,
    play,
    refusal,
    standing_count,
    step_kinds,
)
from chatconform.contracts.lifecycle.play import occurrences as _occurrences
from chatconform.errors import WARNING, ConfigError, NotApplicable, Violation
from chatconform.frame.contract import Contract, Example, Option
from chatconform.history import history_from_json, history_to_json, list_difference, message_text, tool_pairing_problems
from chatconform.provider_schemas import validate
from chatconform.reference import ReferenceImplementation
from chatconform.strategies.lifecycles import TURN_ENDINGS, Lifecycle, Step, lifecycles
from chatconform.strategies.runs import Scenario

_SCENARIO_FIELDS = [f for f in dataclasses.fields(Scenario) if f.name != "previous"]
#: What a search of programs reaches (``reached``; ``--verbose`` prints it).
_ENDINGS_THEN_STEPS = "ending-then-step pairs (a run's ending, the kind of the step after it)"
_KINDS_IN_TURN = "pairs of step kinds one after the other"
_PROGRAMS = "distinct programs (their steps and endings)"
_STEP_DEFAULTS = {"pick": 0, "summary": "", "compact_in_run": False}


def _parse_lifecycle(value: Any, label: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{label}: lifecycle must be True or False, got {value!r}")
    return value


class LifecycleContract(Contract):
    name = "lifecycle"
    method = "lifecycle"
    composes = True
    crash_rationale = ("an application calls these methods one after another on every turn; one that raises "
                       "at any step of a conversation stops that conversation (the cases of each contract "
                       "are in that contract's no_crash)")
    mutation_rationale = ("each step hands the stored history to the next; one that edits what it was given "
                          "changes the store under the steps after it")
    listing_order = 90
    # A case costs its agent runs and a bug needs steps in the right order to show: the ci budget
    # (250 programs) is where every two kinds of step meet, one after the other, in some program.
    examples_scale = 1.25
    options = (Option("lifecycle", "whether the lifecycle contract runs for this implementation (an adapter "
                                   "judged method by method sets False)", True, _parse_lifecycle),)
    guard_tests = ("tests/contracts/test_lifecycle.py",)
    no_large_case = "a lifecycle's cost is its steps, not one input's size: `chatconform bench` times each method"

    @property
    def signature(self) -> str:  # type: ignore[override]  # read from the contracts it composes
        """The calls of every contract that declares lifecycle steps (``Contract.lifecycle_steps``)."""
        return "; ".join(contract.signature for contract in joined())

    def bind(self, impl: Any) -> Any:
        if impl.options.get("lifecycle") is False:
            return None
        providers = impl.options.get("providers")
        return bound(impl.obj, providers if isinstance(providers, frozenset) else None)

    def missing(self, impl: Any) -> str:
        if impl.options.get("lifecycle") is False:
            return f"{impl.name} is judged method by method (its lifecycle option is False)"
        return f"{impl.name} has none of {', '.join(composed_methods())}"

    def cases(self, variant):
        if "_cases" not in vars(self):
            self._cases = lifecycles(tuple(step_kinds().values()))
        return self._cases

    def call(self, fn, case, variant):
        return fn(case)

    def reference(self, case, variant):
        return play(case, Composition(ReferenceImplementation()))

    def inapplicable(self, impl: Any) -> dict[str, str]:
        obj = getattr(impl, "obj", None)
        if obj is None or callable(getattr(obj, "extract_thread", None)):
            return {}
        return {self.check_id("thread_ancestors"): f"{impl.name} has no extract_thread: every thread is the "
                                                     "reference's, so there is none of its own to judge"}

    def input_change(self, output: Any) -> str | None:
        return output.changes[0] if isinstance(output, Trace) and output.changes else None

    def reached(self, case: Lifecycle) -> dict[str, frozenset[str]]:
        """The ending of each run followed by the kind of the step after it, each two kinds of step
        one after the other, and the program's steps as a sequence (so near-copies count once)."""
        pairs = list(zip(case.steps, case.steps[1:], strict=False))
        return {_ENDINGS_THEN_STEPS: frozenset(f"{a.scenario.ending} then {b.kind}" for a, b in pairs
                                               if a.scenario is not None),
                _KINDS_IN_TURN: frozenset(f"{a.kind} then {b.kind}" for a, b in pairs),
                _PROGRAMS: frozenset({" ".join(s.kind + (f"({s.scenario.ending})" if s.scenario else "")
                                               for s in case.steps)})}

    def reachable(self) -> dict[str, int]:
        kinds = step_kinds()
        return {_ENDINGS_THEN_STEPS: len(TURN_ENDINGS) * len(kinds), _KINDS_IN_TURN: len(kinds) ** 2}

    def size(self, case: Lifecycle) -> int:
        # A step is worth a hundred messages of one call: it may play an agent run and map
        # every provider, so a program's deadline grows with its steps.
        return len(case.history) + 100 * len(case.steps)

    def case_to_json(self, case: Lifecycle) -> dict[str, Any]:
        steps = []
        for step in case.steps:
            out: dict[str, Any] = {"step": step.kind}
            out.update({k: getattr(step, k) for k, default in _STEP_DEFAULTS.items() if getattr(step, k) != default})
            if step.scenario is not None:
                sc = step.scenario
                out["scenario"] = {f.name: list(v) if isinstance(v := getattr(sc, f.name), tuple) else v
                                   for f in _SCENARIO_FIELDS if getattr(sc, f.name) != f.default}
            steps.append(out)
        return {"history": history_to_json(case.history), "system_prompt": case.system_prompt, "steps": steps}

    def case_from_json(self, data: Any) -> Lifecycle:
        shape = '{"history": [...], "system_prompt": "...", "steps": [{"step": "turn", ...}]}'
        if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
            raise ValueError(f"a lifecycle case is a JSON object {shape}")
        unknown = sorted(set(data) - {"history", "system_prompt", "steps"})
        if unknown:
            raise ValueError(f"unknown key(s) {', '.join(unknown)} in a lifecycle case {shape}")
        prompt = data.get("system_prompt", Lifecycle.system_prompt)
        if not isinstance(prompt, str):
            raise ValueError("'system_prompt' must be a string")
        if not data["steps"]:
            raise ValueError("a lifecycle case needs at least one step")
        steps = [_step_from_json(item, index) for index, item in enumerate(data["steps"], 1)]
        return Lifecycle(history_from_json(data.get("history", []), "history"), steps, prompt)

    def output_problem(self, output, case):
        return None if isinstance(output, Trace) else f"the play returned {type(output).__name__}"


def _step_from_json(item: Any, index: int) -> Step:
    where = f"step {index}"
    kinds = step_kinds()
    if not isinstance(item, dict) or item.get("step") not in kinds:
        raise ValueError(f"{where}: a step is an object whose 'step' is one of {', '.join(kinds)}")
    unknown = sorted(set(item) - {"step", "scenario", *_STEP_DEFAULTS})
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)}")
    scenario = None
    if "scenario" in item:
        data = item["scenario"]
        names = {f.name for f in _SCENARIO_FIELDS}
        if not isinstance(data, dict) or set(data) - names:
            raise ValueError(f"{where}: 'scenario' is an object with keys among {', '.join(sorted(names))}")
        values: dict[str, Any] = {k: tuple(v) if k == "rounds" and isinstance(v, list) else v
                                  for k, v in data.items()}
        if values.get("ending") == "deferred":
            raise ValueError(f"{where}: a lifecycle turn is drawn from {', '.join(TURN_ENDINGS)}, not 'deferred' "
                             "(its next run takes the deferred results, not a prompt)")
        try:
            scenario = Scenario(previous=[], **values)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {exc}") from None
    try:
        step = Step(item["step"], scenario, **{k: item[k] for k in _STEP_DEFAULTS if k in item})
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {exc}") from None
    problem = kinds[step.kind].problem(step)
    if problem is not None:
        raise ValueError(f"{where}: {problem}")
    return step


CONTRACT = LifecycleContract()


# -- what the checks share --------------------------------------------------------------------------

def _trace(ex: Example) -> Trace:
    return ex.output


def _fail(ex: Example, record: Record, what: str, **kw: Any) -> Violation:
    """A violation at ``record``, with the program up to it as numbered steps."""
    return Violation(f"after {record.title()}: {what}; the steps: {_trace(ex).program(record.number)}", **kw)


def _records(ex: Example, which: Callable[[Record], bool], what: str) -> list[Record]:
    """The records ``which`` picks; NotApplicable naming ``what`` where there is none."""
    found = [r for r in _trace(ex).records if which(r)]
    if not found:
        raise NotApplicable(f"no {what}")
    return found


# -- continuable ------------------------------------------------------------------------------------

@CONTRACT.check(
    "continuable",
    title="after every step, a real pydantic-ai Agent takes the stored history with the next prompt (the first "
          "step that leaves it stuck is named, whatever the steps after it do)",
    rationale="a stored history that ends in unanswered tool calls makes the next run raise 'Cannot provide a new "
              "user prompt when the message history contains unprocessed tool calls' "
              "(https://github.com/langgenius/dify/issues/41616); in a conversation it is whatever step stored "
              "the history last that leaves it so",
)
def continuable(ex: Example) -> None:
    trace = _trace(ex)
    asked: dict[int, str | None] = {}  # by the stored list: a step that stored nothing new leaves the same one
    for record in trace.records:
        if record.blocked is not None:  # the turn's own run refused what the step before it left
            raise _fail(ex, trace.records[record.number - 2] if record.number > 1 else record,
                        f"the next run refuses the stored history: {record.blocked}",
                        expected="the run goes on", actual=record.blocked)
        if id(record.after) not in asked:
            asked[id(record.after)] = refusal(record.after)
        refused = asked[id(record.after)]
        if refused is not None:
            raise _fail(ex, record, f"the next run refuses the stored history: {refused}",
                        expected="the run goes on", actual=refused)


# -- payload_accepted -------------------------------------------------------------------------------

@CONTRACT.check(
    "payload_accepted",
    title="every request body passes its provider's schema and its error-level rules",
    rationale="a history that each method handled well can still reach the provider in a shape it rejects once "
              "the methods are chained (Qwen on vLLM 'System message must be at the beginning.', GLM 1214, "
              "Anthropic 'tool_use ids were found without tool_result blocks': docs/provider-rules.md)",
)
def payload_accepted(ex: Example) -> None:
    for record in _records(ex, lambda r: bool(r.payloads), "request step"):
        for provider, body in record.payloads:
            problems = [p for p in validate(body, provider) if p.severity == "error"]
            if problems:
                first = problems[0]
                raise _fail(ex, record, f"{provider} rejects the body: {first.rule} at {first.path}: {first.message}",
                            expected="no error", actual=[f"{p.rule} {p.path}: {p.message}" for p in problems[:5]])


# -- user_texts_kept --------------------------------------------------------------------------------

@CONTRACT.check(
    "user_texts_kept",
    title="every user text of the branch is stored, but what a compaction summarized or a trim cut to its budget",
    rationale="a conversation that loses what the user said, silently, at a step where each method alone kept it "
              "(a store that assumes the run's capture starts with the stored history loses the turn after an "
              "in-run compaction: https://github.com/langgenius/dify/pull/40972 stores the capture whole)",
)
def user_texts_kept(ex: Example) -> None:
    for record in _trace(ex).records:
        missing = record.ledger.missing(record.after)
        if missing:
            raise _fail(ex, record, f"the user text {missing[0][:120]!r} is no longer stored",
                        expected=missing[0][:200], actual=list_difference(record.before, record.after, "message",
                                                                          show=message_text))


# -- stored_once ------------------------------------------------------------------------------------

@CONTRACT.check(
    "stored_once",
    title="after every step, no user text and no answer of the model is stored more often than the branch said it",
    rationale="a message stored twice is sent twice: the model reads the user's prompt twice, or its own answer "
              "twice, and answers as if asked again (a run appended to a history that already holds it: "
              "all_messages() stored where new_messages() was meant, https://github.com/pydantic/pydantic-ai/issues/1562)",
)
def stored_once(ex: Example) -> None:
    for record in _trace(ex).records:
        doubled = record.ledger.doubled(record.after)
        if doubled:
            what, text, stored, said = doubled[0]
            raise _fail(ex, record, f"the {what} {text[:120]!r} is stored {stored} times where it was said {said} "
                                    f"time{'s' if said != 1 else ''}", expected=said, actual=stored)


# -- summary_not_nested -----------------------------------------------------------------------------

@CONTRACT.check(
    "summary_not_nested",
    title="no stored summary holds an earlier summary inside it",
    rationale="a compaction's summary covers everything before its cut, the earlier summary included; pasted into "
              "it as well, the earlier summary is sent again inside the new one, the model reads it twice, and every "
              "later compaction nests one more frame (moltis PR #653 wrapped a summary in a frame of its own)",
)
def summary_not_nested(ex: Example) -> None:
    records = _trace(ex).records
    if not any(len(r.ledger.written) > 1 for r in records):
        raise NotApplicable("fewer than two compactions on one branch")
    for record in records:
        nested = record.ledger.nested(record.after)
        if nested:
            raise _fail(ex, record, f"one stored part holds {len(nested[0])} summaries: "
                                    + ", ".join(repr(s[-40:]) for s in nested[0]),
                        expected="one summary per part", actual=list(nested[0]))


# -- summary_once -----------------------------------------------------------------------------------

@CONTRACT.check(
    "summary_once",
    title="a compaction's summary is stored, once, until a later compaction or trim takes it (replaced by a "
          "later compaction's own summary is a warning)",
    rationale="the summary stands for every message it replaced; dropped (a client round trip that treats it as "
              "system voice) the conversation before it is gone, doubled it is sent twice "
              "(https://github.com/pydantic/pydantic-ai/pull/6169 keeps request-side compaction parts)",
)
def summary_once(ex: Example) -> None:
    for record in _trace(ex).records:
        new = record.step.summary  # a step that compacts carries its summary
        for summary in sorted(record.ledger.summaries):
            count = _occurrences(record.after, summary)
            if count == 1:
                continue
            # An earlier summary replaced by this compaction's own: an incremental compaction
            # folds it into the new one (its summarizer reads it), so nothing need be lost.
            folded = count == 0 and summary != new and new and _occurrences(record.after, new) == 1
            why = "; replaced by this compaction's summary, which may hold it" if folded else ""
            raise _fail(ex, record, f"the summary {summary!r} is stored {count} times{why}",
                        expected=1, actual=count, level=WARNING if folded else None)
    if not any(r.ledger.summaries for r in _trace(ex).records):
        raise NotApplicable("no summary was stored")


# -- system_prompt_once -----------------------------------------------------------------------------

@CONTRACT.check(
    "system_prompt_once",
    title="the standing system prompt is stored once after every step",
    rationale="an agent that loses its system prompt after a trim, a compaction or a client round trip silently "
              "changes behaviour; planted again on top of the one kept, the model reads its instructions twice, "
              "and sent as two system messages it is rejected (qwen-vllm Q3 'System message must be at the "
              "beginning.': docs/provider-rules.md) "
              "(https://github.com/pydantic/pydantic-ai/issues/2050 slices histories; "
              "https://github.com/langgenius/dify/pull/39136 splices system blocks)",
)
def system_prompt_once(ex: Example) -> None:
    trace = _trace(ex)
    for record in trace.records:
        count = standing_count(record.after, trace.system_prompt)
        if count != 1:
            raise _fail(ex, record, f"the standing system prompt is stored {count} times", expected=1, actual=count)


# -- pairs_intact -----------------------------------------------------------------------------------

@CONTRACT.check(
    "pairs_intact",
    title="after a repair (its own step, or before a request), every tool call is answered once and every result "
          "has its call",
    rationale="providers reject a call without its result and a result without its call (Anthropic 'tool_use ids "
              "were found without tool_result blocks', OpenAI 'No tool call found for function call output'); "
              "repair runs on whatever the steps before it left",
)
def pairs_intact(ex: Example) -> None:
    for record in _records(ex, lambda r: "repair" in r.methods, "repair or request step"):
        repaired = record.after if record.sent is None else record.sent
        problems = tool_pairing_problems(repaired)
        if problems:
            raise _fail(ex, record, problems[0], expected="no pairing problems", actual=problems[:5])


# -- restart_unchanged ------------------------------------------------------------------------------

@CONTRACT.check(
    "restart_unchanged",
    title="a restart (dump, then load) gives back the history as it was",
    rationale="a store that loses a field on the way to disk loses it for every later step (a summary's marker, "
              "a response's state: https://github.com/pydantic/pydantic-ai/issues/1859)",
)
def restart_unchanged(ex: Example) -> None:
    for record in _records(ex, lambda r: r.reloaded is not None, "restart step"):
        if record.reloaded != record.before:
            raise _fail(ex, record, "the history comes back different: "
                        + list_difference(record.before, record.reloaded or [], "message", show=message_text),
                        expected=len(record.before), actual=len(record.reloaded or []))


# -- thread_ancestors -------------------------------------------------------------------------------

@CONTRACT.check(
    "thread_ancestors",
    title="after every turn, the thread of the newest row is that row and its ancestors, newest first",
    rationale="a regenerated answer starts a branch; a thread that takes rows of another branch shows the user "
              "messages they did not write (https://github.com/langgenius/dify/issues/39031)",
)
def thread_ancestors(ex: Example) -> None:
    if "extract_thread" not in _trace(ex).own:
        raise NotApplicable("the implementation has no extract_thread: its threads are the reference's")
    walked = [r for r in _records(ex, lambda r: r.step.scenario is not None, "turn or branch step")
              if r.thread is not None]
    for record in walked:
        found, expected = record.thread  # type: ignore[misc]
        if found != expected:
            raise _fail(ex, record, f"the thread is {found}, not {expected}", expected=expected, actual=found)


# -- no_instructions --------------------------------------------------------------------------------

@CONTRACT.check(
    "no_instructions",
    title="no stored request carries a run's instructions, after every step",
    rationale="instructions are the current run's system prompt; stored, they come back as stale copies in later "
              "runs (https://github.com/pydantic/pydantic-ai/issues/1943), and after an in-run compaction the "
              "run's own requests are no longer where the stored history ended",
)
def no_instructions(ex: Example) -> None:
    for record in _records(ex, lambda r: r.step.scenario is not None, "turn or branch step"):
        for index, message in enumerate(record.after):
            if getattr(message, "instructions", None) is not None and message.kind == "request":
                raise _fail(ex, record, f"stored request {index} carries instructions", expected=None,
                            actual=str(message.instructions)[:200])



# -- the same, as a Hypothesis state machine ----------------------------------------------------------

def lifecycle_machine(implementation: Any, *, providers: frozenset[str] | None = None, max_turns: int = 2):
    """A ``RuleBasedStateMachine`` playing ``implementation``'s methods (the reference's for the
    rest) on one conversation: every rule a step (:func:`~chatconform.strategies.lifecycles.steps`),
    every error-level check of this contract an invariant after each. For a project's own
    stateful tests (``TestLifecycle = lifecycle_machine(MyStore()).TestCase``); ``chatconform
    run`` draws the same steps as whole programs instead (docs/contracts/lifecycle.md)."""
    from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

    from chatconform.contracts.lifecycle.play import Player
    from chatconform.strategies.lifecycles import numbered, starts, steps

    class ConversationLifecycle(RuleBasedStateMachine):
        player: Player | None = None
        stuck = False

        @initialize(history=starts(max_turns=max_turns))
        def start(self, history):
            self.player = Player(Lifecycle(history, []), Composition(implementation, providers))

        @precondition(lambda self: self.player is not None and not self.stuck)
        @rule(step=steps(tuple(step_kinds().values())))
        def take(self, step):
            player = self.player
            assert player is not None
            step = numbered(step, len(player.lc.steps) + 1)
            player.lc.steps.append(step)
            self.stuck = not player.advance(len(player.lc.steps), step)

        @invariant()
        def every_invariant_holds(self):
            if self.player is None or not self.player.records:
                return
            trace = self.player.trace()
            if trace.changes:
                raise AssertionError(f"lifecycle.input_untouched: {trace.changes[0]}")
            example = Example(CONTRACT, self.player.lc, trace, None)
            for check in CONTRACT.ordered_checks():
                if check.evaluate is None:
                    continue
                try:
                    check.evaluate(example)
                except NotApplicable:
                    continue
                except Violation as violation:
                    if (violation.level or check.level) == WARNING:
                        continue
                    raise AssertionError(f"{check.id}: {violation.message}") from None

    return ConversationLifecycle
