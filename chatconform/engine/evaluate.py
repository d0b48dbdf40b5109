"""Evaluating one case: the implementation called once, then every (selected) check.

The one place a case meets the implementation. A Python implementation in a process of its
own (the default: :mod:`chatconform.runner.protocol.host`) is an object here whose
methods send the case over the ``exec:`` protocol, so the call, its deadline and its
crashes happen there; what it did to its input comes back with the reply
(:meth:`~chatconform.runner.protocol.Program.input_change`). Judging one drawn case
for many implementations means calling this once per implementation.
"""

from __future__ import annotations

from typing import Any

from chatconform.engine.drawn import DrawnCase
from chatconform.engine.results import Evaluation, Failure
from chatconform.errors import (
    ERROR,
    WARNING,
    EngineCaseError,
    MalformedResult,
    NotApplicable,
    ProgramHung,
    UnsendableCase,
    UnsendableContent,
    Violation,
)
from chatconform.frame.contract import Contract, Example, Refusal
from chatconform.frame.guard import call_deadline, guarded_call, slow_limit
from chatconform.reference import ReferenceImplementation
from chatconform.runner.discovery import Implementation
from chatconform.runner.protocol import Program

#: The key of a kept case's JSON form in ``DrawnCase.shared``.
_AS_JSON = ("case as JSON",)
_REFUSABLE = ("why an implementation may refuse the case",)


def transport_allowance(deadline: float) -> float:
    """The time added to a program's deadline for moving the case and the result through
    the pipe: a program is killed this much later, and the time its process measured for
    the implementation itself decides whether the call hung (``Program.watch_input``). The
    deadline already grows with the input (:func:`~chatconform.frame.guard.call_deadline`)."""
    return 1.0 + deadline / 10


def is_bundled_reference(obj: Any) -> bool:
    """Whether ``obj`` is the bundled reference as shipped: its answers are the oracle's. A
    subclass, or an instance with a method of its own, is an implementation like any other."""
    return type(obj) is ReferenceImplementation and not vars(obj)


def _example(impl: Implementation, contract: Contract, case: Any, output: Any, variant: str | None,
             drawn: DrawnCase | None) -> Example:
    """An example that shares what the drawn case keeps (if it is kept)."""
    return Example(contract, case, output, variant, impl=impl,
                   shared=drawn.shared if drawn is not None else None,
                   variant_shared=drawn.for_variant(variant) if drawn is not None else None)


def _refusal(impl: Implementation, contract: Contract, case: Any, variant: str | None,
             drawn: DrawnCase | None, error: BaseException) -> Refusal | None:
    """Why an implementation may refuse the case it raised on: the reference declines it too
    (its answer, kept for every implementation judged on the case and for the checks), or the
    contract's own reason (``Contract.refusable``), asked once per case and variant however
    many implementations raise on it."""
    example = _example(impl, contract, case, None, variant, drawn)
    if is_bundled_reference(impl.obj) and isinstance(error, UnsendableContent):
        example.keep_reference(declined=error)  # its refusal is the reference's own answer
    try:
        declined = example.declined()
    except Exception as exc:
        raise EngineCaseError("compute the reference's answer", exc, case) from exc
    if declined is not None:
        return Refusal(f"the reference declines it too: {declined}")
    refusal: Refusal | None = example.variant_once(_REFUSABLE, lambda: contract.refusable(case, variant))
    return refusal


def evaluate_case(impl: Implementation, contract: Contract, case: Any, variant: str | None,
                  *, timeout: float, only: frozenset[str] | None = None,
                  drawn: DrawnCase | None = None, case_later: bool = False) -> Evaluation:
    """Run one case through the implementation and every (selected) check.

    Checks that judge the output are evaluated only when the call returned a well-formed
    result; where it raised, hung or returned something malformed they were not evaluated
    on this case (``<contract>.no_crash`` says why). Raises :class:`EngineCaseError` when
    the engine cannot handle the case itself. ``drawn``: the case as a run keeps it for every
    implementation, with what was derived from it already (its frozen copy, the reference's
    answer), which this evaluation adds to. ``case_later``: the failures' case is left None,
    to be written as JSON by :meth:`Evaluation.complete` for the failures the caller keeps
    (a search keeps one per check, and writing a long history out for each failure of each
    case was a tenth of a worker's time).
    """
    result = _evaluate(impl, contract, case, variant, timeout=timeout, only=only, drawn=drawn)
    if not case_later:
        for failure in result.failures:
            result.complete(failure)
    return result


def _evaluate(impl: Implementation, contract: Contract, case: Any, variant: str | None,
              *, timeout: float, only: frozenset[str] | None, drawn: DrawnCase | None) -> Evaluation:
    def wanted(check_id: str) -> bool:
        return only is None or check_id in only

    # A program gets the case serialized: it cannot touch this copy, and says what it did to
    # its own (Program.input_change). One in this process gets a private copy, compared after.
    # The bundled reference is the suite's own code, which the checks call on the case itself
    # for every oracle answer (Example.reference): it is lent the case, compared after as a
    # copy would be, and called on this thread, with no deadline of its own.
    program = impl.obj if isinstance(impl.obj, Program) else None
    bundled = is_bundled_reference(impl.obj)
    try:
        frozen = None
        if program is None:
            frozen = drawn.frozen if drawn is not None and drawn.frozen is not None else contract.freeze(case)
            if drawn is not None:
                drawn.frozen = frozen
        working = (frozen.lent() if bundled else frozen.copy()) if frozen is not None else case
    except Exception as exc:
        raise EngineCaseError("copy or fingerprint", exc, case) from exc
    try:
        size = contract.size(case)
    except Exception as exc:
        raise EngineCaseError("measure", exc, case) from exc
    fn = impl.method(contract)
    deadline = call_deadline(timeout, size)
    limit = deadline
    # The first call of a program's process (after it started, or started again after a
    # hang) also carries its start-up: the process to start again, and a library imported on
    # first use (an SDK a model class loads when first built). It gets its deadline twice
    # over, and is judged slow against that doubled time.
    cold = program is not None and not program.warm
    allowed = deadline
    if program is not None:
        allowed = deadline * 2 if cold else deadline
        # A case judged for several implementations on one provider is pickled once for all.
        program.watch_input(allowed, shared=drawn.for_variant(variant) if drawn is not None else None)
        limit = allowed
        if program.hosted:
            limit += transport_allowance(deadline)
    # A program's process keeps the deadline (its waits end at time_left, and on a stop): no
    # thread is started for its call, nor for the bundled reference's.
    outcome = guarded_call(lambda: contract.call(fn, working, variant), limit,
                           enforced=program is not None or bundled)
    if isinstance(outcome.error, UnsendableCase):
        raise EngineCaseError("send", outcome.error, case)  # to the implementation's process
    result = Evaluation()
    as_json: list[Any] = []  # the case as JSON, made only when something fails

    def case_json() -> Any:
        if not as_json:
            kept = drawn.shared if drawn is not None else {}
            if _AS_JSON not in kept:  # made once for every implementation that fails on it
                try:
                    kept[_AS_JSON] = contract.case_to_json(case)
                except Exception as exc:
                    raise EngineCaseError("write as JSON", exc, case) from exc
            as_json.append(kept[_AS_JSON])
        return as_json[0]

    result.case_json = case_json

    def fail(check_id: str, message: str, expected: Any = None, actual: Any = None,
             level: str = ERROR, why: str | None = None) -> None:
        result.failures.append(Failure(check_id, message, None, variant, expected, actual, level=level, why=why))

    crash, untouched = contract.check_id("no_crash"), contract.check_id("input_untouched")
    result.evaluated.add(crash)
    if outcome.timed_out or isinstance(outcome.error, ProgramHung):
        result.hung, result.judged = True, False
        stopped = f": {outcome.error}" if outcome.error is not None else ""
        grown = f", the deadline for an input of {size} items" if deadline > timeout else ""
        first = f"; the first call of its process, it was given {allowed:g}s to start and answer" if cold else ""
        fail(crash, f"the call did not return within {deadline:g}s (hung{grown}){stopped}{first}")
        return result
    slow = contract.check_id("slow")
    if wanted(slow):
        result.evaluated.add(slow)
        took = program.took() if program is not None else None
        took = outcome.seconds if took is None else took
        if took > slow_limit(allowed):
            fail(slow, f"took {took:.1f}s on an input of {size} items: slow, past {slow_limit(allowed):g}s "
                       f"(a fifth of its {allowed:g}s deadline); `chatconform bench` shows how its time grows",
                 level=WARNING)
    problem = None
    if isinstance(outcome.error, MalformedResult):  # a result the program could not send, or sent wrong
        problem = str(outcome.error)
        fail(crash, problem)
    elif outcome.error is not None:
        problem = f"raised {outcome.describe_error()}"
        refusable = _refusal(impl, contract, case, variant, drawn, outcome.error)
        if refusable is not None:  # a refusal of what the provider cannot take, not a crash
            why = f"the implementation refused the case ({problem}), which it may: {refusable.why}"
            for check in contract.ordered_checks():
                if check.evaluate is not None and wanted(check.id):
                    result.passed_over.setdefault(check.id, why)
            if refusable.warns:
                fail(crash, f"{problem}: a refusal, not a crash: {refusable.why}", level=WARNING)
        else:
            fail(crash, problem, expected="a result",
                 actual=outcome.error_trace.strip() or outcome.describe_error())
    elif (problem := contract.output_problem(outcome.output, case)) is not None:
        fail(crash, problem)
    result.judged = problem is None
    if wanted(untouched):
        result.evaluated.add(untouched)
        recorded = contract.input_change(outcome.output) if outcome.error is None else None
        if recorded is not None:  # a call that makes several calls says which one changed its input
            fail(untouched, recorded)
        elif program is not None or frozen is None:
            reported = program.input_change() if program is not None else None
            if reported is not None:
                fail(untouched, reported)
        else:
            try:
                mutated, detail = frozen.changed(working), ""
            except Exception as exc:
                mutated, detail = True, f" ({type(exc).__name__}: {exc})"
            if mutated:
                fail(untouched, "the implementation changed its input" + detail)
    if not result.judged:
        return result
    example = _example(impl, contract, case, outcome.output, variant, drawn)
    if bundled:
        # The bundled reference is the reference: its answer is the one its checks compare with.
        example.keep_reference(outcome.output)
    for check in contract.ordered_checks():
        if check.evaluate is None or not wanted(check.id):
            continue
        try:
            check.evaluate(example)
        except NotApplicable as why:
            result.passed_over.setdefault(check.id, str(why))
            continue
        except Violation as violation:
            fail(check.id, violation.message, violation.expected, violation.actual,
                 violation.level or check.level_for(variant), violation.why)
        except Exception as exc:
            result.broken[check.id] = f"the check itself raised {type(exc).__name__}: {exc}"
        result.evaluated.add(check.id)
    return result
