"""The engine: one Hypothesis search per (implementation, contract, variant).

Each drawn case is evaluated against every check of the contract. The first failing
check of a case is raised as an exception type of its own, so Hypothesis shrinks each
check's failure separately and reports them all. A check seen failing during the
search but not reported (another check failed first on every such case) gets a search
of its own. Verdicts are then folded per (implementation, check).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import hypothesis
from hypothesis import given
from hypothesis.errors import HypothesisException

from chatconform.conformance.contracts import Contract, Example, all_contracts, get_contract
from chatconform.conformance.discovery import Implementation
from chatconform.conformance.guard import DEFAULT_TIMEOUT, guarded_call
from chatconform.conformance.profiles import Profile, get_profile
from chatconform.conformance.registry import ConfigError, Violation, get_check

STATUSES = ("pass", "fail", "error", "skip", "xfail")


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


@dataclass
class Verdict:
    implementation: str  # the name it reports
    spec: str  # how to load it again
    contract: str
    check: str
    status: str
    message: str = ""
    failures: list[Failure] = field(default_factory=list)
    examples: int = 0


class _CheckFailed(Exception):
    failure: Failure


_FAILURE_TYPES: dict[str, type[_CheckFailed]] = {}


def _failure_type(check_id: str) -> type[_CheckFailed]:
    """One exception class per check: Hypothesis tells failures apart by type."""
    if check_id not in _FAILURE_TYPES:
        _FAILURE_TYPES[check_id] = type(f"CheckFailed[{check_id}]", (_CheckFailed,), {})
    return _FAILURE_TYPES[check_id]


def evaluate_case(impl: Implementation, contract: Contract, case: Any, variant: str | None,
                  *, timeout: float, only: frozenset[str] | None = None
                  ) -> tuple[list[Failure], dict[str, str], bool]:
    """Run one case through the implementation and every check.

    Returns (failures in check order, checks whose own code raised, whether it hung).
    """
    fn = impl.method(contract)
    original = contract.fingerprint(case)
    working = contract.copy_case(case)
    outcome = guarded_call(lambda: contract.call(fn, working, variant), timeout)
    failures: list[Failure] = []
    broken: dict[str, str] = {}
    as_json: list[Any] = []  # the case as JSON, made only when something fails

    def case_json() -> Any:
        if not as_json:
            as_json.append(contract.case_to_json(case))
        return as_json[0]

    def fail(short: str, message: str, expected: Any = None, actual: Any = None) -> None:
        failures.append(Failure(contract.check_id(short), message, case_json(), variant,
                                expected, actual))

    if outcome.timed_out:
        fail("no_crash", f"the call did not return within {timeout:g}s (hung)")
        return failures, broken, True
    if outcome.error is not None:
        fail("no_crash", f"raised {outcome.describe_error()}",
             expected="a result", actual=outcome.error_trace.strip() or outcome.describe_error())
    elif (problem := contract.output_problem(outcome.output)) is not None:
        fail("no_crash", problem)
    try:
        mutated = contract.fingerprint(working) != original
    except Exception as exc:  # noqa: BLE001 - the implementation broke the input's shape
        mutated, detail = True, f"{type(exc).__name__}: {exc}"
    else:
        detail = ""
    if mutated:
        fail("input_untouched", "the implementation changed its input" +
             (f" ({detail})" if detail else ""))
    if failures and failures[0].check.endswith(".no_crash"):
        return failures, broken, False
    example = Example(contract, case, outcome.output, variant)
    for check in contract.ordered_checks():
        if check.evaluate is None or (only is not None and check.id not in only):
            continue
        try:
            check.evaluate(example)
        except Violation as violation:
            failures.append(Failure(check.id, violation.message, case_json(), variant,
                                    violation.expected, violation.actual))
        except Exception as exc:  # noqa: BLE001 - a check must not take the run down
            broken[check.id] = f"the check itself raised {type(exc).__name__}: {exc}"
    return failures, broken, False


@dataclass
class SearchResult:
    failures: dict[str, Failure] = field(default_factory=dict)
    broken: dict[str, str] = field(default_factory=dict)
    hung: Failure | None = None
    aborted: str | None = None  # Hypothesis itself gave up (health check, bad strategy)
    examples: int = 0


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
        self.tick = tick
        self.result = SearchResult()
        self.observed: dict[str, Failure] = {}

    def test(self, case: Any) -> None:
        if self.result.hung is not None:
            return
        if self.profile.steer_to_large:
            hypothesis.target(float(self.contract.size(case)), label="size")
        self.result.examples += 1
        if self.tick:
            self.tick()
        only = frozenset({self.raise_for}) if self.raise_for else self.selected
        failures, broken, hung = evaluate_case(self.impl, self.contract, case, self.variant,
                                               timeout=self.timeout, only=only)
        for check_id, message in broken.items():
            self.result.broken.setdefault(check_id, message)
        if hung:
            failures[0].shrunk = False
            self.result.hung = failures[0]
            return
        for failure in failures:
            if self.selected is None or failure.check in self.selected:
                self.observed.setdefault(failure.check, failure)
        for failure in failures:
            if failure.check == self.raise_for:
                error = _failure_type(failure.check)(failure.message)
                error.failure = failure
                raise error

    def run(self) -> SearchResult:
        def test(case):
            self.test(case)

        # The same key in both passes replays the same cases, so the shrinking pass meets
        # the failure the exploring pass saw. Derandomized runs leave the implementation
        # out of the key: every implementation is judged on the same cases.
        owner = "" if self.profile.derandomize and self.seed is None else self.impl.spec
        key = f"chatconform|{owner}|{self.contract.name}|{self.variant}"
        test._hypothesis_internal_add_digest = key.encode()
        if self.stream is not None:
            # Both passes of a random profile draw from one stream. hypothesis.seed()
            # would also switch the example database off, which the dev profile needs.
            test._hypothesis_internal_use_seed = self.stream
        settings = self.profile.settings(seed=self.seed, scale=self.contract.examples_scale)
        wrapped = settings(given(self.contract.cases(self.variant))(test))
        if self.seed is not None:  # the user's --seed: reproducible, as Hypothesis means it
            wrapped = hypothesis.seed(self.seed)(wrapped)
        try:
            wrapped()
        except BaseException as exc:  # noqa: BLE001 - sorted out below
            if isinstance(exc, KeyboardInterrupt):
                raise
            self._collect(exc)
        return self.result

    def _collect(self, exc: BaseException) -> None:
        for leaf in _leaves(exc):
            if isinstance(leaf, _CheckFailed):
                self.result.failures.setdefault(leaf.failure.check, leaf.failure)
            elif isinstance(leaf, HypothesisException):
                self.result.aborted = f"{type(leaf).__name__}: {leaf}"
            else:
                self.result.aborted = f"the case strategy raised {type(leaf).__name__}: {leaf}"


def _leaves(exc: BaseException) -> Iterable[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from _leaves(inner)
    else:
        yield exc


def search(impl: Implementation, contract: Contract, variant: str | None, profile: Profile, *,
           seed: int | None = None, timeout: float = DEFAULT_TIMEOUT,
           selected: frozenset[str] | None = None, tick: Callable[[], None] | None = None
           ) -> SearchResult:
    """Search one (implementation, contract, variant); every distinct failure, shrunk.

    Hypothesis stops exploring soon after its first failure, so a rare bug behind a
    common one would go unseen. Instead an exploring pass evaluates every case and raises
    nothing; then each check it saw failing gets a pass of its own, on the same cases,
    that raises only that check and shrinks it.
    """
    stream = random.getrandbits(64) if seed is None and not profile.derandomize else None
    explore = _Pass(impl, contract, variant, profile, seed=seed, stream=stream, timeout=timeout,
                    selected=selected, raise_for=None, tick=tick)
    result = explore.run()
    for check_id, failure in explore.observed.items():
        if result.hung is not None or result.aborted:
            failure.shrunk = False
            result.failures[check_id] = failure
            continue
        shrink = _Pass(impl, contract, variant, profile, seed=seed, stream=stream, timeout=timeout,
                       selected=selected, raise_for=check_id, tick=tick).run()
        result.examples += shrink.examples
        if shrink.hung is not None and result.hung is None:
            result.hung = shrink.hung  # hung on a case the explore pass never met
        if check_id in shrink.failures:
            result.failures[check_id] = shrink.failures[check_id]
        else:  # not met again (a flaky implementation): report the case it was seen on
            failure.shrunk = False
            result.failures[check_id] = failure
    return result


# -- folding searches into verdicts ---------------------------------------------------------

def contract_verdicts(impl: Implementation, contract: Contract, profile: Profile, *,
                      checks: frozenset[str] | None = None, seed: int | None = None,
                      timeout: float = DEFAULT_TIMEOUT,
                      progress: Callable[..., None] | None = None) -> list[Verdict]:
    """All verdicts of one implementation for one contract (one per selected check)."""
    selected = [c for c in contract.ordered_checks() if checks is None or c.id in checks]
    reason = None
    if impl.method(contract) is None:
        reason = f"{impl.name} has no {contract.method}()"
    else:
        reason = contract.skip_reason(impl)
    if reason:
        return [Verdict(impl.name, impl.spec, contract.name, c.id, "skip", reason) for c in selected]

    chosen = frozenset(c.id for c in selected) if checks is not None else None
    results: list[tuple[str | None, SearchResult]] = []
    for variant in contract.variants(impl):
        if progress:
            progress("start", impl=impl, contract=contract, variant=variant)
        started = time.perf_counter()
        tick = (lambda: progress("example")) if progress else None
        result = search(impl, contract, variant, profile, seed=seed, timeout=timeout,
                        selected=chosen, tick=tick)
        if progress:
            progress("end", impl=impl, contract=contract, variant=variant, result=result,
                     seconds=time.perf_counter() - started)
        results.append((variant, result))

    examples = sum(r.examples for _, r in results)
    verdicts = []
    for check in selected:
        verdict = _fold(impl, contract, check.id, results)
        verdict.examples = examples
        verdicts.append(_apply_expectation(impl, verdict))
    return verdicts


def _fold(impl, contract, check_id, results) -> Verdict:
    def verdict(status, message="", failures=()):
        return Verdict(impl.name, impl.spec, contract.name, check_id, status, message, list(failures))

    failures = [r.failures[check_id] for _, r in results if check_id in r.failures]
    hung = [r.hung for _, r in results if r.hung is not None]
    if check_id.endswith(".no_crash") and hung:
        failures = failures + hung
    if failures:
        where = sorted({f.variant for f in failures if f.variant})
        suffix = f" (for {', '.join(where)})" if where else ""
        return verdict("fail", failures[0].message + suffix, failures)
    broken = [r.broken[check_id] for _, r in results if check_id in r.broken]
    if broken:
        return verdict("error", broken[0])
    aborted = [f"{v}: {r.aborted}" if v else r.aborted for v, r in results if r.aborted]
    if aborted:
        return verdict("error", f"search stopped: {aborted[0]}")
    if hung:
        return verdict("error", "not evaluated: the implementation hung on an example "
                                f"(see {contract.check_id('no_crash')})")
    return verdict("pass")


def _apply_expectation(impl: Implementation, verdict: Verdict) -> Verdict:
    """Strict expected failures: expected and failing is xfail, expected and passing is an error."""
    reason = impl.expected_failures.get(verdict.check)
    if reason is None:
        return verdict
    if verdict.status == "fail":
        verdict.status, verdict.message = "xfail", f"expected failure: {reason} ({verdict.message})"
    elif verdict.status == "pass":
        verdict.status = "error"
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


def run(impls: list[Implementation], selection: Selection, profile: str | Profile = "ci", *,
        seed: int | None = None, timeout: float = DEFAULT_TIMEOUT,
        progress: Callable[..., None] | None = None) -> list[Verdict]:
    prof = get_profile(profile) if isinstance(profile, str) else profile
    verdicts: list[Verdict] = []
    for impl in impls:
        for contract in selection.contracts:
            verdicts.extend(contract_verdicts(impl, contract, prof, checks=selection.checks,
                                              seed=seed, timeout=timeout, progress=progress))
    return verdicts


def nothing_ran(verdicts: list[Verdict]) -> bool:
    return all(v.status == "skip" for v in verdicts)


def exit_code(verdicts: list[Verdict]) -> int:
    if nothing_ran(verdicts):
        return 3
    return 1 if any(v.status in ("fail", "error") for v in verdicts) else 0
