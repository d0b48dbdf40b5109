"""What a contract is: the typed base every contract module builds on.

A contract names one method an implementation may provide, how to draw its inputs, how to
call it, what the reference answers, and which checks judge the result. Each contract is
one module of :mod:`chatconform.contracts` that builds one :class:`Contract`
instance, ``CONTRACT``, and registers its checks on it with :meth:`Contract.check`. A
contract that misses a hook cannot be instantiated, so the mistake shows at import, not
halfway through a run.
"""

from __future__ import annotations

import inspect
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import InitVar, dataclass, field
from functools import cached_property
from typing import Any, ClassVar

from chatconform.errors import ERROR, LEVELS, WARNING, NotApplicable, UnsendableContent
from chatconform.frame.calls import Caller
from chatconform.frame.lifecycle import LifecycleStep
from chatconform.frame.registry import Check, register
from chatconform.frame.snapshot import Frozen
from chatconform.frame.wire import WireMethod

#: Why ``<contract>.slow`` is there: a mapper that walks a long history slowly holds up every
#: request it builds, but time depends on the machine, so it warns and never fails the run.
SLOW_RATIONALE = ("a request transform walking a long conversation with the GIL held stalls every request it "
                  "builds (NousResearch/hermes-agent#111723; openai/openai-python#3616): slow is not hung, so a "
                  "warning; `chatconform bench` measures how the time grows")


@dataclass(frozen=True)
class Option:
    """A per-implementation setting a contract reads from the implementation object.

    ``parse(value, label)`` turns the attribute's value into the setting, or raises
    :class:`ConfigError` naming ``label`` (the implementation) and what is wrong. An
    attribute that is absent or None gives ``default``.
    """

    name: str
    description: str
    default: Any
    parse: Callable[[Any, str], Any]

    def read(self, obj: Any, label: str) -> Any:
        value = getattr(obj, self.name, None)
        return self.default if value is None else self.parse(value, label)


@dataclass(frozen=True)
class Call:
    """How the engine calls one method of a contract: ``positional`` arguments by position,
    then every name of ``keywords`` by keyword (a parameter with a default included: the
    engine always passes it). ``text`` is the method's part of the contract's signature, and
    ``result`` what it says the method returns (``history``, ``dict``)."""

    method: str
    positional: int
    keywords: tuple[str, ...]
    text: str
    result: str = ""

    def mismatch(self, fn: Callable) -> tuple[str, str] | None:
        """``fn``'s signature and why it cannot take this call (what binding the call's
        arguments to it says), or None; None too where ``fn`` has no signature to read (some
        builtins), as its calls will show."""
        try:
            found = inspect.signature(fn)
        except (TypeError, ValueError):
            return None
        try:
            found.bind(*range(self.positional), **dict.fromkeys(self.keywords))
        except TypeError as exc:
            return f"{self.method}{found}", str(exc)
        return None


_CALL = re.compile(r"\s*(\w+)\(([^()]*)\)\s*(?:->\s*(.*))?$")


def parse_calls(signature: str) -> list[Call]:
    """The calls of a signature text such as ``to_payload(history, *, provider, instructions=None)
    -> dict``; several methods are separated by ``;``. Empty where any part does not read so."""
    calls = []
    for text in signature.split(";"):
        match = _CALL.match(text)
        if match is None:
            return []
        params = [p.strip() for p in match.group(2).split(",") if p.strip()]
        star = params.index("*") if "*" in params else len(params)
        keywords = tuple(p.split("=")[0].strip() for p in params[star + 1:])
        calls.append(Call(match.group(1), star, keywords, text.strip(), (match.group(3) or "").strip()))
    return calls


_TAKES: dict[tuple[Any, tuple[str, ...]], frozenset[str]] = {}


def taken_keywords(fn: Any, names: tuple[str, ...]) -> frozenset[str]:
    """Those of ``names`` that ``fn`` takes (all of them where it takes ``**kwargs``): a
    method written before a keyword existed is called as it always was."""
    key = (getattr(fn, "__func__", fn), names)
    takes = _TAKES.get(key)
    if takes is None:
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            params = {}  # type: ignore[assignment]
        wide = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        takes = _TAKES[key] = frozenset(n for n in names if wide or n in params)
    return takes


class Case:
    """The base of a contract's case class: Hypothesis never pretty-prints one. The engine writes
    a failing case as JSON itself, and Hypothesis' own print of the case on its last replay of a
    failure (thrown away: the engine's searches are quiet) took seconds for a history of
    thousands of messages, on every search that found one."""

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(f"{type(self).__name__}(...)")


@dataclass(frozen=True)
class Refusal:
    """Why an implementation may raise on a case instead of answering (``Contract.refusable``)."""

    why: str
    #: The reference answers it by a fallback of its choosing (a link sent as text), so the
    #: refusal is reported as a warning, saying how to send it; else it is simply right.
    warns: bool = False


@dataclass(frozen=True)
class _Declined:
    """The reference declined a case (kept in place of its answer)."""

    why: str


@dataclass
class Example:
    """One evaluated input: what the checks see."""

    contract: Contract
    case: Any
    output: Any
    variant: str | None
    #: The implementation under test (a discovery ``Implementation``), for the few checks
    #: that judge the output through another of its methods (``compaction.user_led`` maps
    #: the compacted history with the implementation's own ``to_payload``; the ``serde``
    #: checks read what ``dump`` wrote back with its ``load``).
    impl: Any = None

    memo: dict[str, Any] = field(default_factory=dict)
    #: What was derived from the case alone, shared with the examples of every other
    #: implementation judged on the same drawn case (``engine.drawn``); this example's own
    #: memo where the case is not kept.
    shared: dict[Any, Any] | None = None
    #: What was derived from the case and this example's variant alone (the reference's
    #: answer for the provider, what checks derive from it), shared the same way
    #: (:meth:`chatconform.engine.drawn.DrawnCase.for_variant`).
    variant_shared: dict[Any, Any] | None = None
    #: The caller of the evaluation (its run's timeout); one for :attr:`impl` when none is given.
    caller: InitVar[Caller | None] = None
    #: How the checks call :attr:`impl` again (``persist.idempotent``, ``serde``'s ``load``),
    #: and run the suite's own code on what it returned, within the run's deadline.
    calls: Caller = field(init=False, repr=False)

    def __post_init__(self, caller: Caller | None) -> None:
        self.calls = caller if caller is not None else Caller(self.impl.obj if self.impl is not None else None)

    @cached_property
    def reference(self) -> Any:
        """The reference's answer for this case and variant. Where the reference declines the
        case (content the provider cannot take: :class:`UnsendableContent`), a check that
        compares with it has nothing to compare with: :class:`NotApplicable`."""
        answer = self.variant_once("reference", self._reference_or_refusal)
        if isinstance(answer, _Declined):
            raise NotApplicable(f"the reference declines this case: {answer.why}")
        return answer

    def _reference_or_refusal(self) -> Any:
        try:
            return self.contract.reference(self.case, self.variant)
        except UnsendableContent as exc:  # kept, so it is asked once
            return _Declined(str(exc))

    def declined(self) -> str | None:
        """Why the reference declines this case (content the provider cannot take), or None
        where it answers; its answer is kept, as :attr:`reference` keeps it."""
        answer = self.variant_once("reference", self._reference_or_refusal)
        return answer.why if isinstance(answer, _Declined) else None

    def keep_reference(self, answer: Any = None, *, declined: UnsendableContent | None = None) -> None:
        """Keep what the bundled reference, judged as an implementation, answered (or the
        content it declined) as the reference's answer: it is the reference."""
        self.variant_once("reference", lambda: answer if declined is None else _Declined(str(declined)))

    def once(self, key: str, compute: Callable[[], Any]) -> Any:
        """A value several checks derive from this example, computed once."""
        if key not in self.memo:
            self.memo[key] = compute()
        return self.memo[key]

    @cached_property
    def is_reference_answer(self) -> bool:
        """Whether the output is the reference's answer, value for value: the same object, or
        equal with the same JSON (so ``1``, ``1.0`` and ``True`` are not taken for one another).
        Then what checks derive from the output alone is what they derive from the reference's
        answer, and :meth:`output_once` shares it."""
        try:
            reference = self.reference
        except Exception:
            return False
        if self.output is reference:
            return True
        try:
            if self.output != reference:  # compared in C, and unequal bodies differ early
                return False
            mine = json.dumps(self.output, sort_keys=True, allow_nan=False)
            theirs = self.variant_once("reference answer as JSON", lambda: json.dumps(
                reference, sort_keys=True, allow_nan=False))
        except Exception:
            return False
        return mine == theirs

    def output_once(self, key: Any, compute: Callable[[], Any]) -> Any:
        """A value derived from the output alone (with the case and the variant), computed once
        for this example; where the output is the reference's answer
        (:attr:`is_reference_answer`), once for every implementation that gave that answer, and
        the same as :meth:`reference_once` gives. ``compute`` must read nothing of the
        implementation (its options, its methods)."""
        if self.is_reference_answer:  # compute reads the output, equal to the reference's answer
            return self.reference_once(key, compute)
        return self.once(key, compute)

    def reference_once(self, key: Any, compute: Callable[[], Any]) -> Any:
        """What :meth:`output_once` derives under ``key``, for the reference's answer, computed
        once for the case: ``compute`` reads :attr:`reference` where the other reads the output."""
        return self.variant_once(("derived from the reference's answer", key), compute)

    def case_once(self, key: Any, compute: Callable[[], Any]) -> Any:
        """A value derived from the case alone, computed once for every implementation judged
        on the case. It must not depend on the variant, the output or the implementation, and
        nobody may change it."""
        memo = self.memo if self.shared is None else self.shared
        if key not in memo:
            memo[key] = compute()
        return memo[key]

    def variant_once(self, key: Any, compute: Callable[[], Any]) -> Any:
        """:meth:`case_once` for a value derived from the case and the variant (the reference's
        answer for this provider)."""
        memo = self.memo if self.variant_shared is None else self.variant_shared
        key = ("for the variant", key) if memo is self.memo else key
        if key not in memo:
            memo[key] = compute()
        return memo[key]


class Contract(ABC):
    """Base of every contract; subclasses fill in the class attributes and the hooks."""

    #: The contract's name, the prefix of its check ids.
    name: ClassVar[str]
    #: The implementation method it calls (found on an implementation by presence).
    method: ClassVar[str]
    #: How the method is called, ``name(params) -> result`` (several methods separated by
    #: ``;``): listings and errors show it, and loading an implementation checks that each
    #: of its methods takes the calls it describes (:meth:`calls`).
    signature: ClassVar[str]
    #: The real bugs behind ``<name>.no_crash`` and ``<name>.input_untouched``.
    crash_rationale: ClassVar[str]
    mutation_rationale: ClassVar[str]
    #: Cheap contracts search more cases per profile example budget.
    examples_scale: ClassVar[float] = 1.0
    #: Where the contract sits in listings, the matrix and reports (lower first).
    listing_order: ClassVar[int] = 100
    #: The per-implementation settings this contract reads.
    options: ClassVar[tuple[Option, ...]] = ()
    #: The module holding the contract's reference (the oracle), which ``tools/mutate.py``
    #: mutates; None for a contract with no reference module of its own.
    reference_module: ClassVar[str | None] = None
    #: The project's test files that pin the reference: fast ones, since ``tools/mutate.py``
    #: runs them once per mutant of :attr:`reference_module`.
    guard_tests: ClassVar[tuple[str, ...]] = ()
    #: Why the contract has no :meth:`large_case`, when it has none (the benchmark says so).
    no_large_case: ClassVar[str | None] = None
    #: Whether this contract composes the other contracts' methods (``lifecycle``): it has no
    #: method of its own on an implementation, :meth:`bind` finds what it calls, and its
    #: :attr:`signature` is read from the contracts it composes once they are all loaded.
    composes: ClassVar[bool] = False
    #: The steps of a conversation's life this contract's methods take part in, each played by
    #: the ``lifecycle`` contract (:mod:`chatconform.frame.lifecycle`); none: not composed.
    lifecycle_steps: ClassVar[tuple[LifecycleStep, ...]] = ()
    #: Keywords added to :attr:`method` after implementations were written (the payload
    #: contract's ``model`` and ``reasoning``): passed only to a method that takes them
    #: (:func:`taken_keywords`), in this process or a host's.
    optional_keywords: ClassVar[tuple[str, ...]] = ()

    _REQUIRED = ("name", "method", "signature", "crash_rationale", "mutation_rationale")

    def __init__(self) -> None:
        required = [attr for attr in self._REQUIRED if not (attr == "signature" and self.composes)]
        missing = [attr for attr in required if not isinstance(getattr(self, attr, None), str)]
        if missing:
            raise TypeError(f"contract {type(self).__name__} does not set {', '.join(missing)}")
        self.checks: list[Check] = []
        self._register("no_crash", "returns a well-formed result on valid input, without raising or hanging",
                       self.crash_rationale, None)
        self._register("input_untouched", "leaves its input, and everything reachable from it, unchanged",
                       self.mutation_rationale, None)
        self._register("slow", "returns within a fifth of its deadline, which grows with the input",
                       SLOW_RATIONALE, None, level=WARNING, shrinks=False)

    # -- checks -------------------------------------------------------------------
    def check_id(self, short: str) -> str:
        return f"{self.name}.{short}"

    def check(self, short: str, *, title: str, rationale: str, level: str = ERROR,
              levels: dict[str, str] | None = None, level_note: str = "") -> Callable:
        """Decorator registering ``fn(example)`` as check ``<contract>.<short>``.

        The function raises :class:`~chatconform.errors.Violation` when the
        invariant does not hold, and :class:`~chatconform.errors.NotApplicable`
        for a case it has nothing to judge on. ``level`` is how much a failure weighs
        (``"error"`` fails the run, ``"warning"`` only with ``--strict``); ``levels`` sets
        it per variant (a provider id), ``level_note`` says on what evidence.
        """
        table = tuple(sorted((levels or {}).items()))
        unknown = {level, *(v for _, v in table)} - set(LEVELS)
        if unknown:
            raise ValueError(f"{self.name}.{short}: unknown level(s) {sorted(unknown)}")

        def decorate(fn: Callable[[Example], None]) -> Callable[[Example], None]:
            self._register(short, title, rationale, fn, level=level, levels=table, level_note=level_note)
            return fn

        return decorate

    def _register(self, short: str, title: str, rationale: str, fn: Callable | None, **levels: Any) -> None:
        self.checks.append(register(Check(self.check_id(short), self.name, title, rationale, fn, **levels)))

    def ordered_checks(self) -> list[Check]:
        """Engine order: crash and mutation first, matches_reference last (the catch-all)."""
        last = self.check_id("matches_reference")
        return sorted(self.checks, key=lambda c: c.id == last)

    def read_options(self, obj: Any, label: str) -> dict[str, Any]:
        return {option.name: option.read(obj, label) for option in self.options}

    def calls(self) -> list[Call]:
        """The calls :attr:`signature` describes, one per method, in order (``serde``: ``dump``,
        then ``load``); none where it does not read as ``name(params) -> result``."""
        return parse_calls(self.signature)

    # -- hooks every contract provides ---------------------------------------------------
    @abstractmethod
    def cases(self, variant: str | None):  # -> SearchStrategy
        """The Hypothesis strategy of inputs for one search."""

    @abstractmethod
    def call(self, fn: Callable, case: Any, variant: str | None) -> Any:
        """Call the implementation's method on one case."""

    @abstractmethod
    def reference(self, case: Any, variant: str | None) -> Any:
        """The reference implementation's answer for one case."""

    @abstractmethod
    def case_to_json(self, case: Any) -> Any:
        """The case as JSON, as failures print and save it."""

    @abstractmethod
    def case_from_json(self, data: Any) -> Any:
        """The case back from its JSON form; ValueError naming what is wrong."""

    # -- hooks with a default ------------------------------------------------------------
    def bind(self, impl: Any) -> Callable | None:
        """What :meth:`call` gets for an implementation (a discovery ``Implementation``): its
        method, or None where it has none (the contract is then skipped for it)."""
        fn = getattr(impl.obj, self.method, None)
        return fn if callable(fn) else None

    def missing(self, impl: Any) -> str:
        """Why the contract is skipped for ``impl`` (a discovery ``Implementation``) when
        :meth:`bind` finds nothing."""
        return f"{impl.name} has no {self.method}()"

    def inapplicable(self, impl: Any) -> dict[str, str]:
        """The checks that cannot apply to ``impl`` whatever the case, each with why: a check
        none of whose cases applied is then skipped, saying so, not left unevaluated (a
        composition judges no method the implementation lacks)."""
        return {}

    def input_change(self, output: Any) -> str | None:
        """What the result says the call did to inputs it made (a contract whose call makes
        several calls into the implementation records it there), or None."""
        return None

    def variants(self, impl: Any) -> list[str | None]:
        """The separate searches to run for one implementation (e.g. one per provider)."""
        return [None]

    def skip_reason(self, impl: Any) -> str | None:
        """Why this contract cannot run for ``impl`` (beyond a missing method), or None."""
        return None

    def freeze(self, case: Any) -> Frozen:
        """The case before the call: the implementation's private copy, and the record
        ``input_untouched`` compares that copy with afterwards."""
        return Frozen(case)

    def output_problem(self, output: Any, case: Any) -> str | None:
        """Why the output is not a well-formed result, or None."""
        return None

    def refusable(self, case: Any, variant: str | None) -> Refusal | None:
        """Why an implementation may refuse ``case`` (raise on it), or None: content the
        provider can take only by a fallback of the reference's choosing (then the refusal
        warns). Raising there is a refusal, not a crash. The engine asks only where the
        reference answers the case: where it declines it (content the provider cannot take
        in any form, :class:`~chatconform.errors.UnsendableContent`), raising is a refusal
        already."""
        return None

    def size(self, case: Any) -> int:
        """How big a case is; the deep profile steers toward large ones."""
        return 0

    def reached(self, case: Any) -> dict[str, frozenset[str]]:
        """What ``case`` reaches, by measure (the lifecycle: the ending-then-step pairs and the
        pairs of step kinds of its program): a search counts the distinct ones its cases reach,
        and ``--verbose`` prints them against :meth:`reachable`. Empty: nothing counted."""
        return {}

    def reachable(self) -> dict[str, int]:
        """How many there are to reach, by the measures of :meth:`reached`."""
        return {}

    def wire(self) -> tuple[WireMethod, ...]:
        """How the contract's calls travel over the ``exec:`` protocol: its own method
        first, then each further method its checks call on the same implementation.
        Empty: the contract cannot be checked over the protocol."""
        return ()

    # -- benchmark hooks (``chatconform bench``, ``benchmarks/``) ----------------------------
    def bench_variants(self, variants: list[str | None]) -> list[str | None]:
        """Of an implementation's ``variants``, the ones ``chatconform bench`` times when none
        is named (all of them, unless a contract has many that cost the same)."""
        return variants

    def large_case(self, size: int, seed: int, variant: str | None) -> Any | None:
        """A deterministic case of about ``size`` messages (or rows), in exactly the form
        :meth:`call` takes, built in time linear in ``size``; None when the contract has no
        large input (the benchmark then says so)."""
        return None

    def floor(self, case: Any, variant: str | None) -> None:
        """One bare pass over ``case`` doing the least work the contract needs: what a
        benchmark compares the contract's functions with, measured in the same run."""
        return None

