"""The engine: one Hypothesis search per (implementation, contract, variant).

Each drawn case goes through the implementation once and then through every check of the
contract (:func:`evaluate_case`). An exploring pass records what fails; each check seen
failing then gets a pass of its own that shrinks its failure (:func:`search`). Verdicts
are folded per (implementation, check): a check passes only where it was evaluated, and a
check evaluated on no case at all is ``not_evaluated``, never a pass.

A run is planned as a list of :class:`Unit` (one search each, or one skipped
(implementation, contract)); the units are independent, so they can run in any order, in
other processes (:mod:`chatconform.conformance.parallel`) or in other CI jobs (shards), and
fold to the same verdicts. What a search draws depends only on its own key: derandomized
runs seed it from the contract, random ones from the run's stream and the contract, and
the pool of "local constants" Hypothesis would otherwise collect from whatever modules the
process happens to have imported is held empty while a search runs.
"""

from __future__ import annotations

import hashlib
import random
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import hypothesis
from hypothesis import given
from hypothesis.errors import HypothesisException

from chatconform.conformance.contract import Contract, Example
from chatconform.conformance.contracts import all_contracts, get_contract
from chatconform.conformance.discovery import Implementation
from chatconform.conformance.guard import DEFAULT_TIMEOUT, guarded_call
from chatconform.conformance.profiles import Profile, get_profile
from chatconform.conformance.contracts import get_check
from chatconform.errors import ERROR, WARNING, ConfigError, EngineCaseError, NotApplicable, Violation
from chatconform.conformance.status import Status


@dataclass
class Failure:
    """One check failing on one (shrunk) case."""

    check: str
    message: str
    case: Any  # JSON
    variant: str | None = None
    expected: Any = None
    actual: Any = None
    shrunk: bool = True
    saved: str | None = None  # where the run saved it, once it has
    level: str = ERROR  # "error" fails the run; "warning" only under --strict


@dataclass
class Verdict:
    implementation: str  # the name it reports
    spec: str  # how to load it again
    contract: str
    check: str
    status: Status
    message: str = ""
    failures: list[Failure] = field(default_factory=list)
    examples: int = 0  # cases the search drew and ran
    evaluated: int = 0  # of those, cases this check was evaluated on


class _CheckFailed(Exception):
    failure: Failure


_FAILURE_TYPES: dict[str, type[_CheckFailed]] = {}


def _failure_type(check_id: str) -> type[_CheckFailed]:
    """One exception class per check: Hypothesis tells failures apart by type."""
    if check_id not in _FAILURE_TYPES:
        _FAILURE_TYPES[check_id] = type(f"CheckFailed[{check_id}]", (_CheckFailed,), {})
    return _FAILURE_TYPES[check_id]


@dataclass
class Evaluation:
    """What one case gave: failures in check order, checks whose own code raised, whether
    the call hung, whether its output could be judged, and the checks evaluated on it."""

    failures: list[Failure] = field(default_factory=list)
    broken: dict[str, str] = field(default_factory=dict)
    hung: bool = False
    judged: bool = True
    evaluated: set[str] = field(default_factory=set)


def evaluate_case(impl: Implementation, contract: Contract, case: Any, variant: str | None,
                  *, timeout: float, only: frozenset[str] | None = None) -> Evaluation:
    """Run one case through the implementation and every (selected) check.

    Checks that judge the output are evaluated only when the call returned a well-formed
    result; where it raised, hung or returned something malformed they were not evaluated
    on this case (``<contract>.no_crash`` says why). Raises :class:`EngineCaseError` when
    the engine cannot handle the case itself.
    """
    def wanted(check_id: str) -> bool:
        return only is None or check_id in only

    try:
        frozen = contract.freeze(case)
        working = frozen.copy()
    except Exception as exc:  # noqa: BLE001 - the engine's own failure, reported as such
        raise EngineCaseError("copy or fingerprint", exc, case) from exc
    fn = impl.method(contract)
    outcome = guarded_call(lambda: contract.call(fn, working, variant), timeout)
    result = Evaluation()
    as_json: list[Any] = []  # the case as JSON, made only when something fails

    def case_json() -> Any:
        if not as_json:
            try:
                as_json.append(contract.case_to_json(case))
            except Exception as exc:  # noqa: BLE001
                raise EngineCaseError("write as JSON", exc, case) from exc
        return as_json[0]

    def fail(check_id: str, message: str, expected: Any = None, actual: Any = None,
             level: str = ERROR) -> None:
        result.failures.append(Failure(check_id, message, case_json(), variant, expected, actual,
                                       level=level))

    crash, untouched = contract.check_id("no_crash"), contract.check_id("input_untouched")
    result.evaluated.add(crash)
    if outcome.timed_out:
        result.hung, result.judged = True, False
        fail(crash, f"the call did not return within {timeout:g}s (hung)")
        return result
    problem = None
    if outcome.error is not None:
        problem = f"raised {outcome.describe_error()}"
        fail(crash, problem, expected="a result",
             actual=outcome.error_trace.strip() or outcome.describe_error())
    elif (problem := contract.output_problem(outcome.output, case)) is not None:
        fail(crash, problem)
    result.judged = problem is None
    if wanted(untouched):
        result.evaluated.add(untouched)
        try:
            mutated, detail = frozen.changed(working), ""
        except Exception as exc:  # noqa: BLE001 - the implementation broke the input's shape
            mutated, detail = True, f" ({type(exc).__name__}: {exc})"
        if mutated:
            fail(untouched, "the implementation changed its input" + detail)
    if not result.judged:
        return result
    example = Example(contract, case, outcome.output, variant, impl=impl)
    for check in contract.ordered_checks():
        if check.evaluate is None or not wanted(check.id):
            continue
        try:
            check.evaluate(example)
        except NotApplicable:
            continue
        except Violation as violation:
            fail(check.id, violation.message, violation.expected, violation.actual,
                 violation.level or check.level_for(variant))
        except Exception as exc:  # noqa: BLE001 - a check must not take the run down
            result.broken[check.id] = f"the check itself raised {type(exc).__name__}: {exc}"
        result.evaluated.add(check.id)
    return result


@dataclass
class SearchResult:
    failures: dict[str, Failure] = field(default_factory=dict)
    broken: dict[str, str] = field(default_factory=dict)
    hung: Failure | None = None
    aborted: str | None = None  # Hypothesis itself gave up (health check, bad strategy)
    engine_error: EngineCaseError | None = None
    examples: int = 0  # cases the exploring pass ran through the implementation
    unjudged: int = 0  # of those, cases whose output could not be judged
    evaluated: Counter = field(default_factory=Counter)  # check id -> cases evaluated on
    replayed: int = 0  # cases the shrinking passes ran


class _Pass:
    """One Hypothesis run over the contract's cases.

    ``raise_for`` None explores: every case is evaluated, failures are only recorded.
    ``raise_for`` a check id: that check's failures are raised, so Hypothesis shrinks them.
    """

    def __init__(self, impl: Implementation, contract: Contract, variant: str | None,
                 profile: Profile, *, seed: int | None, stream: int | None, timeout: float,
                 selected: frozenset[str] | None, raise_for: str | None,
                 tick: Callable[[], None] | None):
        self.impl, self.contract, self.variant, self.profile = impl, contract, variant, profile
        self.seed, self.stream = seed, stream
        self.timeout, self.selected, self.raise_for = timeout, selected, raise_for
        self.raise_level = ERROR  # the level of failure the shrinking pass raises
        self.tick = tick
        self.done_when_all_seen = False
        self.result = SearchResult()
        self.observed: dict[str, Failure] = {}

    def test(self, case: Any) -> None:
        if self.result.hung is not None or self.result.engine_error is not None:
            return  # an abandoned call may still run: calling again would pile up threads
        if self.done_when_all_seen and self.selected is not None and self.selected <= self.observed.keys():
            raise _AllSeen  # every selected check has failed: nothing left to learn without shrinking
        if self.profile.steer_to_large:
            hypothesis.target(float(self.contract.size(case)), label="size")
        if self.tick:
            self.tick()
        only = frozenset({self.raise_for}) if self.raise_for else self.selected
        try:
            evaluation = evaluate_case(self.impl, self.contract, case, self.variant,
                                       timeout=self.timeout, only=only)
        except EngineCaseError as exc:
            self.result.engine_error = exc
            return
        self.result.examples += 1
        self.result.unjudged += not evaluation.judged
        self.result.evaluated.update(evaluation.evaluated)
        for check_id, message in evaluation.broken.items():
            self.result.broken.setdefault(check_id, message)
        if evaluation.hung:
            evaluation.failures[0].shrunk = False
            self.result.hung = evaluation.failures[0]
            return
        for failure in evaluation.failures:
            if self.selected is None or failure.check in self.selected:
                seen = self.observed.get(failure.check)
                # An error outranks a warning: the verdict and its shrinking follow the error.
                if seen is None or (seen.level == WARNING and failure.level == ERROR):
                    self.observed[failure.check] = failure
        for failure in evaluation.failures:
            if failure.check == self.raise_for and failure.level == self.raise_level:
                error = _failure_type(failure.check)(failure.message)
                error.failure = failure
                raise error

    def run(self) -> SearchResult:
        def test(case):
            self.test(case)

        # The same key in both passes replays the same cases, so the shrinking pass meets
        # the failure the exploring pass saw. Derandomized runs leave the implementation
        # out of the key: every implementation is judged on the same cases. The variant
        # is left out too: every provider is judged on the same histories, so a shape
        # one provider trips on is tried on all (and a saved failure replays on all).
        owner = "" if self.profile.derandomize and self.seed is None else self.impl.spec
        key = f"chatconform|{owner}|{self.contract.name}"
        test._hypothesis_internal_add_digest = key.encode()
        if self.stream is not None:
            # Both passes of a random profile draw from one stream. hypothesis.seed()
            # would also switch the example database off, which the dev profile needs.
            test._hypothesis_internal_use_seed = self.stream
        settings = self.profile.settings(seed=self.seed, scale=self.contract.examples_scale)
        if self.done_when_all_seen:  # stop generating at _AllSeen, without shrinking it
            settings = hypothesis.settings(settings, phases=[p for p in settings.phases
                                                             if p != hypothesis.Phase.shrink])
        wrapped = settings(given(self.contract.cases(self.variant))(test))
        if self.seed is not None:  # the user's --seed: reproducible, as Hypothesis means it
            wrapped = hypothesis.seed(self.seed)(wrapped)
        try:
            with warnings.catch_warnings():
                # Hypothesis warns when it writes out a large failing case; long cases are the point.
                warnings.filterwarnings("ignore", message="Generating overly large repr")
                with no_local_constants():
                    wrapped()
        except BaseException as exc:  # noqa: BLE001 - sorted out below
            if isinstance(exc, KeyboardInterrupt):
                raise
            self._collect(exc)
        return self.result

    def _collect(self, exc: BaseException) -> None:
        for leaf in _leaves(exc):
            if isinstance(leaf, _AllSeen):
                continue
            if isinstance(leaf, _CheckFailed):
                self.result.failures.setdefault(leaf.failure.check, leaf.failure)
            elif isinstance(leaf, HypothesisException):
                self.result.aborted = f"{type(leaf).__name__}: {leaf}"
            else:
                self.result.aborted = f"the case strategy raised {type(leaf).__name__}: {leaf}"


@contextmanager
def no_local_constants() -> Iterator[None]:
    """Hold Hypothesis' pool of "local constants" empty while a search runs.

    Hypothesis now and then draws a literal found in the source of the local modules the
    process has imported. Which modules those are depends on the process (the command line,
    a worker, a pytest session) and on what ran before, so the cases a search draws would
    too. Its own fixed constants stay.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - a Hypothesis without the pool
        yield
        return
    original = getattr(providers, "_get_local_constants", None)
    cache = getattr(getattr(providers, "CONSTANTS_CACHE", None), "cache", None)
    if original is None or cache is None or not hasattr(providers, "Constants"):
        yield  # pragma: no cover - a Hypothesis without the pool
        return
    empty = providers.Constants()
    providers._get_local_constants = lambda: empty
    cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = original
        cache.clear()


class _AllSeen(Exception):
    """Ends an exploring pass that does not shrink once every selected check has failed:
    the cases still to be generated could teach it nothing, and generating them is most
    of the cost of a search."""


def _leaves(exc: BaseException) -> Iterable[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from _leaves(inner)
    else:
        yield exc


def search(impl: Implementation, contract: Contract, variant: str | None, profile: Profile, *,
           seed: int | None = None, timeout: float = DEFAULT_TIMEOUT,
           selected: frozenset[str] | None = None, tick: Callable[[], None] | None = None,
           shrink: bool = True, stream: int | None = None) -> SearchResult:
    """Search one (implementation, contract, variant); every distinct failure, shrunk.

    Hypothesis stops exploring soon after its first failure, so a rare bug behind a
    common one would go unseen. Instead an exploring pass evaluates every case and raises
    nothing; then each check it saw failing gets a pass of its own, on the same cases,
    that raises only that check and shrinks it. ``shrink=False`` skips those passes and
    reports each failure on the case it was first seen on (enough to know *whether* a
    check fails, as the project's own tests of its fakes ask).
    """
    if stream is None:
        stream = new_stream(profile, seed)
    explore = _Pass(impl, contract, variant, profile, seed=seed, stream=stream, timeout=timeout,
                    selected=selected, raise_for=None, tick=tick)
    explore.done_when_all_seen = not shrink
    result = explore.run()
    for check_id, failure in explore.observed.items():
        if not shrink or result.hung is not None or result.aborted or result.engine_error:
            failure.shrunk = False
            result.failures[check_id] = failure
            continue
        shrinker = _Pass(impl, contract, variant, profile, seed=seed, stream=stream, timeout=timeout,
                         selected=selected, raise_for=check_id, tick=tick)
        shrinker.raise_level = failure.level
        shrunk = shrinker.run()
        result.replayed += shrunk.examples
        if shrunk.hung is not None and result.hung is None:
            result.hung = shrunk.hung  # hung on a case the explore pass never met
        if check_id in shrunk.failures:
            result.failures[check_id] = shrunk.failures[check_id]
        else:  # not met again (a flaky implementation): report the case it was seen on
            failure.shrunk = False
            result.failures[check_id] = failure
    return result


def new_stream(profile: Profile, seed: int | None) -> int | None:
    """The random stream of a run: None where the profile or the seed fixes the cases."""
    return random.getrandbits(64) if seed is None and not profile.derandomize else None


def contract_stream(run_stream: int | None, contract: str) -> int | None:
    """The stream every search of ``contract`` draws from in a random run: made from the
    run's stream and the contract's name alone, so each variant (and each implementation)
    is judged on the same cases whichever process runs the search, and in whatever order."""
    if run_stream is None:
        return None
    return int.from_bytes(hashlib.sha256(f"{run_stream}|{contract}".encode()).digest()[:8], "big")


# -- planning a run: one unit per search -----------------------------------------------------

@dataclass(frozen=True)
class Unit:
    """One search of a run, (implementation, contract, variant), or one (implementation,
    contract) that does not run, with the reason (``skip``). ``impl`` indexes the run's
    implementations; ``stream`` is the search's random stream (None when derandomized or
    seeded)."""

    impl: int
    contract: str
    variant: str | None = None
    skip: str | None = None
    stream: int | None = None


def _checks_of(contract: Contract, checks: frozenset[str] | None) -> frozenset[str] | None:
    """The selected check ids of ``contract`` (None: all of them)."""
    if checks is None:
        return None
    return frozenset(c.id for c in contract.ordered_checks() if c.id in checks)


def plan(impls: list[Implementation], selection: Selection, *, run_stream: int | None = None) -> list[Unit]:
    """Every unit of a run, in report order: implementations as given, contracts in listing
    order, variants as the contract lists them. A contract none of whose checks is selected
    has no unit."""
    units: list[Unit] = []
    for index, impl in enumerate(impls):
        for contract in selection.contracts:
            if _checks_of(contract, selection.checks) == frozenset():
                continue
            reason = (f"{impl.name} has no {contract.method}()" if impl.method(contract) is None
                      else contract.skip_reason(impl))
            variants = [] if reason else contract.variants(impl)
            if not reason and not variants:
                reason = f"{impl.name} gives {contract.name} nothing to search"
            if reason:
                units.append(Unit(index, contract.name, skip=reason))
                continue
            stream = contract_stream(run_stream, contract.name)
            units.extend(Unit(index, contract.name, variant, stream=stream) for variant in variants)
    return units


def shard_units(units: list[Unit], index: int, count: int) -> list[Unit]:
    """Shard ``index`` of ``count`` (1-based): every ``count``-th unit of the plan, starting at
    the ``index``-th. It depends on the plan alone, never on ``--jobs``."""
    if not 1 <= index <= count:
        raise ConfigError(f"shard {index}/{count}: the shard number must be between 1 and {count}")
    return [unit for position, unit in enumerate(units) if position % count == index - 1]


def run_unit(impl: Implementation, unit: Unit, profile: Profile, *, seed: int | None = None,
             timeout: float = DEFAULT_TIMEOUT, checks: frozenset[str] | None = None, shrink: bool = True,
             progress: Callable[..., None] | None = None) -> SearchResult:
    """Run one search unit in this process."""
    contract = get_contract(unit.contract)
    if progress:
        progress("start", impl=impl, contract=contract, variant=unit.variant)
    started = time.perf_counter()
    tick = (lambda: progress("example")) if progress else None
    result = search(impl, contract, unit.variant, profile, seed=seed, timeout=timeout,
                    selected=_checks_of(contract, checks), tick=tick, shrink=shrink, stream=unit.stream)
    if progress:
        progress("end", impl=impl, contract=contract, variant=unit.variant, result=result,
                 seconds=time.perf_counter() - started)
    return result


# -- folding searches into verdicts ---------------------------------------------------------

def contract_verdicts(impl: Implementation, contract: Contract, profile: Profile, *,
                      checks: frozenset[str] | None = None, seed: int | None = None,
                      timeout: float = DEFAULT_TIMEOUT, progress: Callable[..., None] | None = None,
                      shrink: bool = True) -> list[Verdict]:
    """All verdicts of one implementation for one contract (one per selected check)."""
    return execute([impl], Selection([contract], checks), profile, seed=seed, timeout=timeout,
                   progress=progress, shrink=shrink).verdicts


def skip_verdicts(impl: Any, contract: Contract, checks: frozenset[str] | None, reason: str) -> list[Verdict]:
    return [Verdict(impl.name, impl.spec, contract.name, c.id, Status.SKIP, reason)
            for c in contract.ordered_checks() if checks is None or c.id in checks]


def fold_contract(impl: Any, contract: Contract, checks: frozenset[str] | None,
                  results: list[tuple[str | None, SearchResult]], *, partial: bool = False,
                  cut_short: int | None = None) -> list[Verdict]:
    """The verdicts of one (implementation, contract) from its searches, one per selected check.

    ``impl`` needs ``name``, ``spec`` and ``expected_failures``. ``partial``: the searches are
    some of the contract's variants only (one shard's): a check evaluated on none of them, or
    an expected failure that held on all of them, is undecided here (``skip``, saying so),
    as the other shards' searches may decide it. ``cut_short``: the profile's budget a search,
    when ``--examples`` asked for fewer: those two are undecided in such a quick look too.
    """
    selected = [c for c in contract.ordered_checks() if checks is None or c.id in checks]
    examples = sum(r.examples for _, r in results)
    verdicts = []
    for check in selected:
        verdict = _fold(impl, contract, check.id, results)
        verdict.examples = examples
        verdict.evaluated = sum(r.evaluated[check.id] for _, r in results)
        if verdict.status == Status.PASS and not verdict.evaluated:
            verdict.status, verdict.message = Status.NOT_EVALUATED, _why_not_evaluated(contract, results)
        if partial:
            searched = ", ".join(str(v) for v, _ in results)
            _undecided(verdict, impl, f"undecided in this shard ({searched})", "an expected failure that held here",
                       "the merged report decides", any_gap=True)
        if cut_short:
            # Only a gap for want of an applicable case is the budget's doing; a crash on every case is not.
            _undecided(verdict, impl, f"undecided in a quick look (--examples; the profile searches {cut_short} "
                       "examples a search)", "an expected failure that did not come up",
                       "run without --examples to decide", any_gap=False)
        verdicts.append(_apply_expectation(impl, verdict))
    return verdicts


def _undecided(verdict: Verdict, impl: Any, where: str, held: str, decides: str, *, any_gap: bool) -> None:
    """Make what a part of the search cannot decide a ``skip`` that says so: a check evaluated
    on no case (any such with ``any_gap``, else only one no case applied to), and an expected
    failure that held."""
    if verdict.status == Status.NOT_EVALUATED and (any_gap or verdict.message == NO_CASE_APPLIES):
        verdict.status, verdict.message = Status.SKIP, f"{where}: {verdict.message}; {decides}"
    elif verdict.status == Status.PASS and verdict.check in impl.expected_failures:
        verdict.status, verdict.message = Status.SKIP, f"{where}: {held}; {decides}"


def _fold(impl, contract, check_id, results) -> Verdict:
    def verdict(status, message="", failures=()):
        return Verdict(impl.name, impl.spec, contract.name, check_id, status, message, list(failures))

    failures = [r.failures[check_id] for _, r in results if check_id in r.failures]
    hung = [r.hung for _, r in results if r.hung is not None]
    if check_id.endswith(".no_crash") and hung:
        failures = failures + hung
    if failures:
        errors = [f for f in failures if f.level == ERROR]
        # Errors first: the verdict's message and the first failure shown are the worst.
        failures = errors + [f for f in failures if f.level != ERROR]
        where = sorted({f.variant for f in (errors or failures) if f.variant})
        suffix = f" (for {', '.join(where)})" if where else ""
        return verdict(Status.FAIL if errors else Status.WARN, failures[0].message + suffix, failures)
    broken = [r.broken[check_id] for _, r in results if check_id in r.broken]
    if broken:
        return verdict(Status.ERROR, broken[0])
    aborted = [f"{v}: {r.aborted}" if v else r.aborted for v, r in results if r.aborted]
    if aborted:
        return verdict(Status.ERROR, f"search stopped: {aborted[0]}")
    engine = [r.engine_error for _, r in results if r.engine_error is not None]
    if engine:
        return verdict(Status.ERROR, f"{engine[0]}; this is a chatconform bug, not the implementation's "
                                     f"(case: {engine[0].case_text})")
    return verdict(Status.PASS)


#: Why a check was not evaluated when the implementation answered but no case was one the
#: check applies to (a narrow check, a small budget).
NO_CASE_APPLIES = "not evaluated: no generated case was one this check applies to"


def _why_not_evaluated(contract: Contract, results) -> str:
    crash = contract.check_id("no_crash")
    if any(r.hung is not None for _, r in results) and not any(r.examples - r.unjudged for _, r in results):
        return f"not evaluated: the implementation hung before returning any result (see {crash})"
    if any(r.unjudged for _, r in results) and not any(r.examples - r.unjudged for _, r in results):
        return (f"not evaluated: the implementation raised or returned a malformed result on every "
                f"case (see {crash})")
    return NO_CASE_APPLIES


def _apply_expectation(impl: Implementation, verdict: Verdict) -> Verdict:
    """Strict expected failures: expected and failing is xfail, expected and passing is an error."""
    reason = impl.expected_failures.get(verdict.check)
    if reason is None:
        return verdict
    if verdict.status in (Status.FAIL, Status.WARN):
        verdict.status, verdict.message = Status.XFAIL, f"expected failure: {reason} ({verdict.message})"
    elif verdict.status == Status.PASS:
        verdict.status = Status.ERROR
        verdict.message = f"unexpected pass: {verdict.check} is listed as an expected failure ({reason})"
    return verdict


# -- runs ----------------------------------------------------------------------------------------

@dataclass
class Selection:
    contracts: list[Contract]
    checks: frozenset[str] | None


def select(contracts: Iterable[str] | None = None, checks: Iterable[str] | None = None) -> Selection:
    """Resolve contract names and check ids (unknown ones are a ConfigError)."""
    check_ids = [get_check(c).id for c in checks or ()]
    names = list(contracts or ())
    if check_ids and not names:
        names = list(dict.fromkeys(get_check(c).contract for c in check_ids))
    chosen = [get_contract(n) for n in names] if names else list(all_contracts().values())
    if check_ids:
        outside = [c for c in check_ids if get_check(c).contract not in {k.name for k in chosen}]
        if outside:
            raise ConfigError(f"check {outside[0]} is not in the selected contracts")
    return Selection(chosen, frozenset(check_ids) if check_ids else None)


@dataclass
class RunOutcome:
    """What a run found: its verdicts, the units it searched (a shard's, or all) and every
    unit of the run, and each search's result."""

    verdicts: list[Verdict]
    units: list[Unit]
    planned: list[Unit]
    results: dict[Unit, SearchResult]


def execute(impls: list[Implementation], selection: Selection, profile: str | Profile = "ci", *,
            seed: int | None = None, timeout: float = DEFAULT_TIMEOUT,
            progress: Callable[..., None] | None = None, shrink: bool = True, jobs: int = 1,
            shard: tuple[int, int] | None = None, on_plan: Callable[[int], None] | None = None) -> RunOutcome:
    """Plan the run, search its units (``jobs`` > 1: in that many worker processes; ``shard``
    ``(I, N)``: the I-th of N shards only) and fold the verdicts, in plan order whatever
    order the searches finished in."""
    prof = get_profile(profile) if isinstance(profile, str) else profile
    planned = plan(impls, selection, run_stream=new_stream(prof, seed))
    units = planned if shard is None else shard_units(planned, *shard)
    searches = [u for u in units if u.skip is None]
    if on_plan:
        on_plan(len(searches))
    if jobs > 1 and len(searches) > 1:
        from chatconform.conformance.parallel import run_units

        results = run_units(impls, searches, prof, seed=seed, timeout=timeout, checks=selection.checks,
                            shrink=shrink, jobs=jobs, progress=progress)
    else:
        results = {u: run_unit(impls[u.impl], u, prof, seed=seed, timeout=timeout, checks=selection.checks,
                               shrink=shrink, progress=progress) for u in searches}
    return RunOutcome(fold_units(impls, selection, units, planned, results, prof), units, planned, results)


def fold_units(impls: list[Any], selection: Selection, units: list[Unit], planned: list[Unit],
               results: dict[Unit, SearchResult], profile: Profile | None = None) -> list[Verdict]:
    """The verdicts of ``units`` (of the run ``planned``, searched under ``profile``), in plan order."""
    verdicts: list[Verdict] = []
    for index, name in dict.fromkeys((u.impl, u.contract) for u in units):
        contract = get_contract(name)
        mine = [u for u in units if (u.impl, u.contract) == (index, name)]
        whole = [u for u in planned if (u.impl, u.contract) == (index, name)]
        if mine[0].skip is not None:
            verdicts.extend(skip_verdicts(impls[index], contract, selection.checks, mine[0].skip))
            continue
        verdicts.extend(fold_contract(impls[index], contract, selection.checks,
                                      [(u.variant, results[u]) for u in mine], partial=len(mine) < len(whole),
                                      cut_short=profile.cut_short(contract.examples_scale) if profile else None))
    return verdicts


def run(impls: list[Implementation], selection: Selection, profile: str | Profile = "ci", *,
        seed: int | None = None, timeout: float = DEFAULT_TIMEOUT,
        progress: Callable[..., None] | None = None, shrink: bool = True, jobs: int = 1) -> list[Verdict]:
    return execute(impls, selection, profile, seed=seed, timeout=timeout, progress=progress,
                   shrink=shrink, jobs=jobs).verdicts


def nothing_ran(verdicts: list[Verdict]) -> bool:
    return all(v.status == Status.SKIP for v in verdicts)


def nothing_ran_in(units: list[Unit]) -> bool:
    """Whether a plan has no search at all (every unit skipped, or none)."""
    return all(u.skip is not None for u in units)


def exit_code(verdicts: list[Verdict], *, strict: bool = False) -> int:
    """0 all held, 1 something failed (warnings too when ``strict``), 3 nothing ran."""
    if nothing_ran(verdicts):
        return 3
    return 1 if any(Status(v.status).fails(strict=strict) for v in verdicts) else 0
