"""One search of one (implementation, contract, variant): an exploring pass, then a
shrinking pass per check seen failing (:func:`search`).

What a search draws depends only on its own key and stream (:func:`new_stream`,
:func:`contract_stream`): derandomized runs seed it from the contract, random ones from the
run's stream and the contract, and Hypothesis' pool of "local constants" is held empty
while it runs (:func:`no_local_constants`). So a search gives the same cases whichever
process runs it, and in whatever order.
"""

from __future__ import annotations

import hashlib
import json
import random
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import hypothesis
from hypothesis import given, statistics
from hypothesis.control import current_build_context
from hypothesis.errors import HypothesisException
from hypothesis.internal.conjecture.choice import choices_key
from hypothesis.internal.conjecture.engine import ExitReason

from chatconform.contracts import get_check, get_contract
from chatconform.engine.drawn import STORE, DrawnCase, shared_stream
from chatconform.engine.evaluate import evaluate_case
from chatconform.engine.events import ExampleRan, Handler, emit
from chatconform.engine.results import Evaluation, Failure, SearchResult, SearchSettings, Unit
from chatconform.errors import ERROR, WARNING, EngineCaseError
from chatconform.frame import stop
from chatconform.frame.contract import Contract
from chatconform.frame.guard import DEFAULT_TIMEOUT
from chatconform.frame.profiles import Profile
from chatconform.runner.discovery import Implementation
from chatconform.runner.protocol import Program


class _CheckFailed(Exception):
    failure: Failure | None


_FAILURE_TYPES: dict[str, type[_CheckFailed]] = {}


def _failure_type(check_id: str) -> type[_CheckFailed]:
    """One exception class per check: Hypothesis tells failures apart by type."""
    if check_id not in _FAILURE_TYPES:
        _FAILURE_TYPES[check_id] = type(f"CheckFailed[{check_id}]", (_CheckFailed,), {})
    return _FAILURE_TYPES[check_id]


class _Pass:
    """One Hypothesis run over the contract's cases.

    ``raise_for`` None explores: every case is evaluated, failures are only recorded.
    ``raise_for`` a check id: that check's failures are raised, so Hypothesis shrinks them.
    """

    def __init__(self, impl: Implementation, contract: Contract, variant: str | None,
                 profile: Profile, *, seed: int | None, stream: int | None, timeout: float,
                 selected: frozenset[str] | None, raise_for: str | None,
                 tick: Callable[[dict[str, Failure]], None] | None):
        self.impl, self.contract, self.variant, self.profile = impl, contract, variant, profile
        self.seed, self.stream = seed, stream
        self.timeout, self.selected, self.raise_for = timeout, selected, raise_for
        self.raise_level = ERROR  # the level of failure the shrinking pass raises
        self.tick = tick
        self.done_when_all_seen = False
        self.result = SearchResult()
        self.observed: dict[str, Failure] = {}
        # A call in a process of its own is killed at its deadline, so the search goes on
        # after a hang; one in this process leaves its thread running, so a hang ends it.
        self.killable = isinstance(impl.obj, Program)
        self.hangs_left = HANGS_PER_PASS
        self.hung_on: dict[str, Failure] = {}  # the cases that hung, by their JSON
        self.stopped_because: str | None = None  # Hypothesis' reason, from its statistics
        self.recording: list[DrawnCase] | None = None  # the cases drawn, kept for later searches
        self.drawn: DrawnCase | None = None  # the case under evaluation, as kept
        #: The search's findings on each case it evaluated whole, by the case's choices: the
        #: (check, level) of every failure. The exploring pass starts them; each shrinking pass
        #: reads them and adds its own (one shape of case often fails several checks, whose
        #: shrinking passes then try many of the same cases).
        self.findings: dict[tuple, frozenset[tuple[str, str]]] = {}

    def test(self, case: Any) -> None:
        if self.recording is not None:
            self.drawn = DrawnCase(case)
            self.recording.append(self.drawn)
        choices = self._choices()
        stop.check()  # a stop (SIGINT, SIGTERM) ends the search here, between two examples
        if self.raise_for is not None and choices in self.findings and not _final_replay():
            # A shrinking pass draws the exploring pass's cases again before it meets the
            # failure, and after, and tries many a case another shrinking pass tried: one the
            # search judged is not judged again (a deterministic implementation answers it
            # the same). Without this failure it passes; with it, it fails as Hypothesis saw
            # it fail, and only the minimal case's last replay, whose failure is the one
            # reported, calls the implementation again.
            self.result.examples += 1
            if self.tick:
                self.tick(self.observed)
            if self._passes(self.findings[choices]):
                return
            _raise_failure(self.raise_for or "", None)
        if self.result.hung is not None or self.result.engine_error is not None:
            return  # an abandoned call may still run: calling again would pile up threads
        if not self.hangs_left:
            self._replay_hang(case)
            return  # no more deadlines to spend in this pass: the case is not evaluated
        if self.done_when_all_seen and self.selected is not None and all(map(self._settled, self.selected)):
            raise _AllSeen  # every selected check has failed: nothing left to learn without shrinking
        if self.profile.steer_to_large:
            hypothesis.target(float(self.contract.size(case)), label="size")
        if self.tick:
            self.tick(self.observed)
        try:
            # A shrinking pass judges every selected check too: what it finds spares the
            # passes after it the calls.
            evaluation = evaluate_case(self.impl, self.contract, case, self.variant,
                                       timeout=self.timeout, only=self.selected, drawn=self.drawn,
                                       case_later=True)
            if evaluation.hung:
                evaluation.complete(evaluation.failures[0])
        except EngineCaseError as exc:
            self.result.engine_error = exc
            return
        self.result.examples += 1
        if self.raise_for is None:
            for measure, found in self.contract.reached(case).items():
                self.result.reached.setdefault(measure, set()).update(found)
        self.result.unjudged += not evaluation.judged
        self.result.evaluated.update(evaluation.evaluated)
        for check_id, why in evaluation.passed_over.items():
            reasons = self.result.passed_over.setdefault(check_id, set())
            if len(reasons) < 2:  # one reason on every case is worth saying; several are not
                reasons.add(why)
        for check_id, message in evaluation.broken.items():
            self.result.broken.setdefault(check_id, message)
        if evaluation.hung:
            hang = evaluation.failures[0]
            if not self.killable:
                hang.not_shrunk(IN_PROCESS_HANG)
                self.result.hung = hang
                return
            self.hangs_left -= 1
            self.result.hangs += 1
            if not self.hangs_left:
                hang.message += (f"; the search stopped calling after {HANGS_PER_PASS} hangs (each costs a "
                                 "deadline), so this is the smallest hanging case it saw")
            self.hung_on[_case_key(self.contract, case)] = hang
        if choices is not None and not evaluation.hung:
            self.findings[choices] = frozenset((f.check, f.level) for f in evaluation.failures)
        try:
            raised = self._keep(evaluation)
        except EngineCaseError as exc:
            self.result.engine_error = exc
            return
        if raised is not None:
            _raise_failure(raised.check, raised)

    def _keep(self, evaluation: Evaluation) -> Failure | None:
        """Note the failures of ``evaluation`` an exploring pass keeps: the first of each selected
        check (an error outranks a warning: the verdict and its shrinking follow the error).
        Return the one a shrinking pass raises. Only these get their case written out as JSON:
        most failures of most cases repeat one already seen."""
        for failure in evaluation.failures:
            if failure.check == self.raise_for and failure.level == self.raise_level:
                return evaluation.complete(failure)
            if self.raise_for is None and (self.selected is None or failure.check in self.selected):
                seen = self.observed.get(failure.check)
                if seen is None or (seen.level == WARNING and failure.level == ERROR):
                    self.observed[failure.check] = evaluation.complete(failure)
        return None

    def _settled(self, check_id: str) -> bool:
        """Whether ``check_id`` failed as badly as it can for this variant: an error, or a
        warning where the check is never an error. A warning alone does not end the search
        where an error may come later and outrank it (as a shrinking run's exploring pass finds)."""
        seen = self.observed.get(check_id)
        return seen is not None and (seen.level != WARNING or get_check(check_id).level_for(self.variant) == WARNING)

    def _choices(self) -> tuple | None:
        """The choices that drew the case under evaluation: kept with a kept case, read from
        Hypothesis while it draws (and kept with the case it records)."""
        if self.drawn is not None and self.drawn.choices is not None:
            return self.drawn.choices
        try:
            data = current_build_context().data
        except HypothesisException:  # not under Hypothesis: a kept case drawn without its choices
            return None
        choices = choices_key(data.choices)
        if self.drawn is not None:
            self.drawn.choices = choices
        return choices

    def _passes(self, findings: frozenset[tuple[str, str]]) -> bool:
        """Whether findings the search made on a case hold nothing this shrinking pass raises."""
        return (self.raise_for, self.raise_level) not in findings

    def _replay_hang(self, case: Any) -> None:
        """Once a pass has spent its hangs, a case seen hanging fails again without a call (so
        Hypothesis' replay of its smallest failing case agrees); any other is not run."""
        hang = self.hung_on.get(_case_key(self.contract, case))
        if hang is not None and hang.check == self.raise_for:
            error = _failure_type(hang.check)(hang.message)
            error.failure = hang
            raise error

    def run(self) -> SearchResult:
        # Hypothesis keeps the test it runs in reference cycles of its own, freed only by a
        # full collection: holding this pass by a weak reference, they do not keep it, and
        # the cases it drew (a contract's every history), alive that long.
        return self._run(self._hypothesis_test(weakref.proxy(self)))

    @staticmethod
    def _hypothesis_test(self: _Pass) -> Callable[[Any], None]:
        """The test Hypothesis runs for a pass. Its source, as indented here, is part of the key
        Hypothesis derives a derandomized run's cases from: a change to it changes the ``ci``
        stream (a minimal case, a count of shapes reached)."""
        def test(case):
            self.test(case)
        return test

    def _run(self, test: Callable[[Any], None]) -> SearchResult:

        # The same key in both passes replays the same cases, so the shrinking pass meets
        # the failure the exploring pass saw. Derandomized runs leave the implementation
        # out of the key: every implementation is judged on the same cases. The variant
        # is left out too: every provider is judged on the same histories, so a shape
        # one provider trips on is tried on all (and a saved failure replays on all).
        owner = "" if self.profile.derandomize and self.seed is None else self.impl.spec
        key = f"chatconform|{owner}|{self.contract.name}"
        budget = self.profile.examples_for(self.contract.examples_scale)
        shared = self.raise_for is None and shared_stream(self.profile, self.stream, owner)
        if shared and (kept := STORE.get(self.contract.name, budget)) is not None:
            return self._judge_kept(kept)
        if shared and STORE.active:
            STORE.forget()  # an earlier contract's cases: not asked for again
            self.recording = []
        hooked: Any = test  # Hypothesis reads these attributes off the test function
        hooked._hypothesis_internal_add_digest = key.encode()
        if self.stream is not None:
            # Both passes of a random profile draw from one stream. hypothesis.seed()
            # would also switch the example database off, which the dev profile needs.
            hooked._hypothesis_internal_use_seed = self.stream
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
                with no_local_constants(), _STATISTICS.with_value(self._note_statistics):
                    wrapped()
        except BaseException as exc:
            stop.check()  # Hypothesis may have reported an Interrupted as a failure, or in a group
            if isinstance(exc, KeyboardInterrupt):
                raise
            self._collect(exc)
        else:
            if self.recording is not None:  # drawn to the end: later searches judge these
                STORE.keep(self.contract.name, budget, self.recording)
        stop.check()
        return self.result

    def _judge_kept(self, kept: list[DrawnCase]) -> SearchResult:
        """The exploring pass on cases another search drew: the same cases in the same order
        as Hypothesis would draw them again (see :mod:`~chatconform.engine.drawn`)."""
        try:
            for drawn in kept:
                self.drawn = drawn
                self.test(drawn.case)
        except _AllSeen:
            pass
        except BaseException as exc:
            stop.check()
            if isinstance(exc, KeyboardInterrupt):
                raise
            self._collect(exc)
        finally:
            self.drawn = None
        stop.check()
        return self.result

    def _note_statistics(self, stats: Mapping[str, Any]) -> None:
        """Hypothesis' own statistics of the run: why it stopped (a shrink cut short says so)."""
        self.stopped_because = stats.get("stopped-because")

    def _collect(self, exc: BaseException) -> None:
        for leaf in _leaves(exc):
            if isinstance(leaf, _AllSeen):
                continue
            if isinstance(leaf, _CheckFailed):
                if leaf.failure is not None:  # else not replayed: the exploring pass's case stands
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


#: Where Hypothesis hands each run's statistics (its pytest plugin's hook); typed there as
#: holding None, so it is read here as Any.
_STATISTICS: Any = statistics.collector

#: Hangs one pass of a search spends deadlines on before it stops calling the implementation.
HANGS_PER_PASS = 2


def _case_key(contract: Contract, case: Any) -> str:
    return json.dumps(contract.case_to_json(case), sort_keys=True, default=repr)


def _raise_failure(check_id: str, failure: Failure | None) -> None:
    """Raise ``check_id``'s failure for Hypothesis (None: one met before, on this very case,
    whose case Hypothesis replays before reporting). Both raise here: Hypothesis tells
    failures apart by type and by where they were raised."""
    error = _failure_type(check_id)(failure.message if failure is not None else "failed as before")
    error.failure = failure
    raise error


def _final_replay() -> bool:
    """Whether Hypothesis is replaying the minimal case to report it (or runs no test)."""
    try:
        return bool(current_build_context().is_final)
    except HypothesisException:
        return True


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
           selected: frozenset[str] | None = None, tick: Callable[[dict[str, Failure], bool], None] | None = None,
           shrink: bool = True, shrink_expected: bool = True, stream: int | None = None) -> SearchResult:
    """Search one (implementation, contract, variant); every distinct failure, shrunk.

    Hypothesis stops exploring soon after its first failure, so a rare bug behind a
    common one would go unseen. Instead an exploring pass evaluates every case and raises
    nothing; then each check it saw failing gets a pass of its own, on the same cases,
    that raises only that check and shrinks it. ``shrink=False`` skips those passes and
    reports each failure on the case it was first seen on (enough to know *whether* a
    check fails, as the project's own tests of its fakes ask). ``tick`` is called before
    each case with the failures seen so far (by check id: the exploring pass's) and whether
    the case is a shrinking pass's.
    """
    if stream is None:
        stream = new_stream(profile, seed)

    def ticks(shrinking: bool) -> Callable[[dict[str, Failure]], None] | None:
        if tick is None:
            return None
        # While shrinking, the failures seen so far are the exploring pass's.
        return lambda seen: tick(explore.observed if shrinking else seen, shrinking)

    explore = _Pass(impl, contract, variant, profile, seed=seed, stream=stream, timeout=timeout,
                    selected=selected, raise_for=None, tick=ticks(False))
    explore.done_when_all_seen = not shrink
    result = explore.run()
    for check_id, failure in explore.observed.items():
        why_not = _why_not_shrunk(result, shrink, get_check(check_id).shrinks)
        if why_not is None and not shrink_expected and check_id in impl.expected_failures:
            why_not = EXPECTED_NOT_SHRUNK
        if why_not is not None:
            if failure.shrink_note is None:
                failure.not_shrunk(why_not)
            result.failures[check_id] = failure
            continue
        shrinker = _Pass(impl, contract, variant, profile, seed=seed, stream=stream, timeout=timeout,
                         selected=selected, raise_for=check_id, tick=ticks(True))
        shrinker.raise_level = failure.level
        shrinker.findings = explore.findings
        shrunk = shrinker.run()
        result.replayed += shrunk.examples
        if shrunk.hung is not None and result.hung is None:
            result.hung = shrunk.hung  # hung on a case the explore pass never met
        if check_id in shrunk.failures:
            result.failures[check_id] = shrunk.failures[check_id]
            cut_short = _shrink_cut_short(shrinker.stopped_because)
            if cut_short is not None:
                result.failures[check_id].shrink_note = cut_short
        else:
            failure.not_shrunk(FLAKY)
            result.failures[check_id] = failure
    return result


#: Why a failure's case is the one it was first seen on, by cause.
IN_PROCESS_HANG = ("the call hung in the run's own process, where its thread cannot be stopped, so the "
                   "search ended there; run it isolated (without --in-process) and the hang's case shrinks")
FLAKY = ("not met again when its cases were replayed to shrink it: the implementation answered the same "
         "input differently (state kept between calls, time, or randomness)")
NOT_ASKED = "shrinking was not asked for (shrink=False)"
EXPECTED_NOT_SHRUNK = ("an expected failure, reached: a gate needs only to know it still fails, so its case is "
                       "not shrunk (--shrink-expected shrinks it)")
NOT_SHRINKABLE = "this check's failures depend on the machine's speed, so they are not shrunk"


def _why_not_shrunk(result: SearchResult, shrink: bool, shrinkable: bool) -> str | None:
    if not shrink:
        return NOT_ASKED
    if result.hung is not None:
        return f"the search ended at a hang ({result.hung.message})"
    if result.aborted:
        return f"the search was stopped: {result.aborted}"
    if result.engine_error is not None:
        return f"the search was stopped: {result.engine_error}"
    return None if shrinkable else NOT_SHRINKABLE


def _shrink_cut_short(stopped_because: str | None) -> str | None:
    """Hypothesis ends a shrink after 500 improvements or five minutes and reports the smallest
    case it had (engine.MAX_SHRINKS, MAX_SHRINKING_SECONDS); say so, since the case may not be
    minimal."""
    if stopped_because in _SHRINK_LIMITS:
        return (f"shrinking stopped early ({stopped_because}, Hypothesis' own limit): "
                "this is the smallest case it had reached, and may not be minimal")
    return None


_SHRINK_LIMITS = frozenset(reason.value for reason in (ExitReason.max_shrinks, ExitReason.very_slow_shrinking))


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


def checks_of(contract: Contract, checks: frozenset[str] | None) -> frozenset[str] | None:
    """The selected check ids of ``contract`` (None: all of them)."""
    if checks is None:
        return None
    return frozenset(c.id for c in contract.ordered_checks() if c.id in checks)


def search_unit(impl: Implementation, unit: Unit, settings: SearchSettings,
                handlers: Sequence[Handler] = ()) -> SearchResult:
    """Search one unit of a run, telling ``handlers`` of each case it runs (:class:`ExampleRan`).

    The same in this process and in a worker process, which forwards the events.
    """
    contract = get_contract(unit.contract)

    def tick(seen: dict[str, Failure], shrinking: bool) -> None:
        emit(handlers, ExampleRan(impl.name, unit.contract, unit.variant, {c: f.level for c, f in seen.items()},
                                  shrinking))

    return search(impl, contract, unit.variant, settings.profile, seed=settings.seed, timeout=settings.timeout,
                  selected=checks_of(contract, settings.checks), tick=tick if handlers else None,
                  shrink=settings.shrink, shrink_expected=settings.shrink_expected, stream=unit.stream)
