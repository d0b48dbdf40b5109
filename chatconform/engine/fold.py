"""Folding searches into verdicts, one per (implementation, check), and a run's exit code.

A check passes only where it was evaluated; one evaluated on no case at all is
``not_evaluated``, never a pass. Expected failures are strict: expected and failing is
``xfail``, expected and passing is an error. A shard folds its own searches
(``partial``); :func:`chatconform.outputs.report.merge` folds every shard's again.
"""

from __future__ import annotations

from typing import Any

from chatconform.contracts import get_contract
from chatconform.engine.plan import nothing_ran_in
from chatconform.engine.results import RunOutcome, SearchResult, Selection, Unit, Verdict
from chatconform.errors import ERROR
from chatconform.frame.contract import Contract
from chatconform.frame.profiles import Profile
from chatconform.frame.status import Status


def skip_verdicts(impl: Any, contract: Contract, checks: frozenset[str] | None, reason: str) -> list[Verdict]:
    return [Verdict(impl.name, impl.spec, contract.name, c.id, Status.SKIP, reason)
            for c in contract.ordered_checks() if checks is None or c.id in checks]


def _narrowed(impl: Any, contract: Contract) -> str | None:
    """What a run's narrowing (``--provider``) left out of the options ``contract`` reads, said
    for a verdict (None: nothing the contract reads was left out)."""
    left_out = getattr(impl, "left_out", {})
    parts = [f"{', '.join(sorted(left_out[o.name]))}" for o in contract.options if left_out.get(o.name)]
    return "; ".join(parts) or None


def fold_contract(impl: Any, contract: Contract, checks: frozenset[str] | None,
                  results: list[tuple[str | None, SearchResult]], *, partial: bool = False,
                  cut_short: int | None = None, cut_off: str | None = None,
                  narrowed: str | None = None) -> list[Verdict]:
    """The verdicts of one (implementation, contract) from its searches, one per selected check.

    ``impl`` needs ``name``, ``spec`` and ``expected_failures``. ``partial``: the searches are
    some of the contract's variants only (one shard's): a check evaluated on none of them, or
    an expected failure that held on all of them, is undecided here (``skip``, saying so),
    as the other shards' searches may decide it. ``cut_short``: the profile's budget a search,
    when ``--examples`` asked for fewer: those two are undecided in such a quick look too.
    ``cut_off``: the run was stopped before the contract's other searches, which nothing will
    fold in later: only a failure stands, anything else is a ``skip`` with this message.
    ``narrowed``: what the run left out of what the implementation declares (the providers
    ``--provider`` did not name): an expected failure that held is undecided (``skip``), as
    it may fail only there.
    """
    selected = [c for c in contract.ordered_checks() if checks is None or c.id in checks]
    examples = sum(r.examples for _, r in results)
    verdicts = []
    for check in selected:
        verdict = _fold(impl, contract, check.id, results)
        verdict.examples = examples
        verdict.evaluated = sum(r.evaluated[check.id] for _, r in results)
        if verdict.status == Status.PASS and not verdict.evaluated:
            verdict.status, verdict.message = Status.NOT_EVALUATED, _why_not_evaluated(contract, results, check.id)
            cannot = contract.inapplicable(impl).get(check.id) if verdict.message.startswith(NO_CASE_APPLIES) else None
            if cannot is not None:
                verdict.status, verdict.message = Status.SKIP, cannot
        if partial:
            searched = ", ".join(str(v) for v, _ in results)
            _undecided(verdict, impl, f"undecided in this shard ({searched})", "an expected failure that held here",
                       "the merged report decides", any_gap=True)
        if narrowed:
            _undecided(verdict, impl, f"undecided without {narrowed} (left out by --provider)",
                       "an expected failure that held for the providers run", "run every provider to decide",
                       any_gap=False)
        if cut_off and verdict.status in (Status.PASS, Status.NOT_EVALUATED):
            verdict.status, verdict.message = Status.SKIP, cut_off
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
    if verdict.status == Status.NOT_EVALUATED and (any_gap or verdict.message.startswith(NO_CASE_APPLIES)):
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


def _why_not_evaluated(contract: Contract, results, check_id: str) -> str:
    crash = contract.check_id("no_crash")
    if any(r.hung is not None or r.hangs for _, r in results) and not any(r.examples - r.unjudged
                                                                         for _, r in results):
        return f"not evaluated: the implementation hung before returning any result (see {crash})"
    if any(r.unjudged for _, r in results) and not any(r.examples - r.unjudged for _, r in results):
        return (f"not evaluated: the implementation raised or returned a malformed result on every "
                f"case (see {crash})")
    reasons = set().union(*(r.passed_over.get(check_id, set()) for _, r in results))
    if len(reasons) == 1:  # the one reason every case gave
        return f"{NO_CASE_APPLIES} ({reasons.pop()})"
    return NO_CASE_APPLIES


def _apply_expectation(impl: Any, verdict: Verdict) -> Verdict:
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


def fold_units(impls: list[Any], selection: Selection, units: list[Unit], planned: list[Unit],
               results: dict[Unit, SearchResult], profile: Profile | None = None, *,
               interrupted: str | None = None) -> list[Verdict]:
    """The verdicts of ``units`` (of the run ``planned``, searched under ``profile``), in plan order.

    ``interrupted``: the signal that stopped the run, so that some units have no result; their
    checks are ``skip``, saying so (a contract with some of its searches done keeps its failures).
    """
    verdicts: list[Verdict] = []
    for index, name in dict.fromkeys((u.impl, u.contract) for u in units):
        contract = get_contract(name)
        mine = [u for u in units if (u.impl, u.contract) == (index, name)]
        whole = [u for u in planned if (u.impl, u.contract) == (index, name)]
        if mine[0].skip is not None:
            verdicts.extend(skip_verdicts(impls[index], contract, selection.checks, mine[0].skip))
            continue
        done = [u for u in mine if u in results] if interrupted else mine
        cut_off = None
        if len(done) < len(mine):
            if not done:
                verdicts.extend(skip_verdicts(impls[index], contract, selection.checks,
                                              f"not run: the run was interrupted by {interrupted} first"))
                continue
            cut_off = (f"undecided: the run was interrupted by {interrupted} before the rest of its searches "
                       f"(done: {', '.join(str(u.variant) for u in done)})")
        verdicts.extend(fold_contract(impls[index], contract, selection.checks,
                                      [(u.variant, results[u]) for u in done], partial=len(mine) < len(whole),
                                      cut_short=profile.cut_short(contract.examples_scale) if profile else None,
                                      cut_off=cut_off, narrowed=_narrowed(impls[index], contract)))
    return verdicts


def nothing_ran(verdicts: list[Verdict]) -> bool:
    """Whether every verdict is a skip (or there is none): nothing was searched."""
    return all(v.status == Status.SKIP for v in verdicts)


def exit_code(verdicts: list[Verdict], *, strict: bool = False) -> int:
    """0 all held, 1 something failed (warnings too when ``strict``), 3 nothing ran."""
    if nothing_ran(verdicts):
        return 3
    return 1 if any(Status(v.status).fails(strict=strict) for v in verdicts) else 0


def run_exit_code(outcome: RunOutcome, *, strict: bool = False) -> int:
    """:func:`exit_code`, except that a shard with nothing to search while the run has work
    (in other shards) is done, and green: 0."""
    return 0 if shard_idle(outcome) else exit_code(outcome.verdicts, strict=strict)


def shard_idle(outcome: RunOutcome) -> bool:
    """Whether a shard searched nothing although its run has searches (in other shards)."""
    return outcome.shard is not None and nothing_ran(outcome.verdicts) and not nothing_ran_in(outcome.planned)
