"""Evaluating one case: the implementation called once, then every (selected) check.

The one place a case meets the implementation, through its :class:`~chatconform.frame.calls.Caller`
(the checks' own calls into it go through the same caller, with the run's timeout). A Python
implementation in a process of its own (the default: :mod:`chatconform.runner.protocol.host`)
is an object here whose methods send the case over the ``exec:`` protocol, so the call, its
deadline and its crashes happen there; what it did to its input comes back with the reply.
Judging one drawn case for many implementations means calling this once per implementation.
"""

from __future__ import annotations

from typing import Any

from chatconform.engine.drawn import DrawnCase
from chatconform.engine.results import Evaluation, Failure
from chatconform.errors import (
    ERROR,
    WARNING,
    DriverError,
    EngineCaseError,
    MalformedResult,
    NotApplicable,
    UnsendableCase,
    UnsendableContent,
    Violation,
)
from chatconform.frame.calls import Caller, is_bundled_reference
from chatconform.frame.contract import Contract, Example, Refusal
from chatconform.frame.guard import slow_limit
from chatconform.frame.snapshot import Frozen
from chatconform.runner.discovery import Implementation

#: Exceptions that are a program's bug whatever it was given: never a refusal of content.
BUG_TYPES: tuple[type[BaseException], ...] = (LookupError, AttributeError, TypeError, NameError, AssertionError,
                                              ArithmeticError, RecursionError)

#: The key of a kept case's JSON form in ``DrawnCase.shared``.
_AS_JSON = ("case as JSON",)
_REFUSABLE = ("why an implementation may refuse the case",)


def _frozen(contract: Contract, case: Any, drawn: DrawnCase | None) -> Frozen:
    """The case frozen (``Contract.freeze``), once for every implementation judged on it."""
    if drawn is None:
        return contract.freeze(case)
    if drawn.frozen is None:
        drawn.frozen = contract.freeze(case)
    frozen: Frozen = drawn.frozen
    return frozen


def _example(impl: Implementation, contract: Contract, case: Any, output: Any, variant: str | None,
             drawn: DrawnCase | None, caller: Caller | None = None) -> Example:
    """An example that shares what the drawn case keeps (if it is kept)."""
    return Example(contract, case, output, variant, impl=impl, caller=caller,
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
    # its own (ImplementationProcess.input_change). One in this process gets a private copy,
    # compared after; the bundled reference is lent the case itself (see Caller).
    try:
        size = contract.size(case)
    except Exception as exc:
        raise EngineCaseError("measure", exc, case) from exc
    fn = impl.method(contract)
    caller = Caller(impl.obj, timeout)
    # A case judged for several implementations is frozen once for all in this process, and
    # pickled once for all on one provider for those in processes of their own.
    called = caller.call(lambda working: contract.call(fn, working, variant), case, size=size, watch=True,
                         freeze=lambda _: _frozen(contract, case, drawn),
                         shared=drawn.for_variant(variant) if drawn is not None else None,
                         check=lambda output: contract.output_problem(output, case))
    if isinstance(called.error, UnsendableCase):
        raise EngineCaseError("send", called.error, case)  # to the implementation's process
    if isinstance(called.error, DriverError):  # the agent runs a program plays are ours
        raise EngineCaseError("play the agent runs of", called.error, case)
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
    deadline, allowed = called.deadline, called.allowed
    if called.hung:
        result.hung, result.judged = True, False
        stopped = f": {called.error}" if called.error is not None else ""
        grown = f", the deadline for an input of {size} items" if deadline > timeout else ""
        first = (f"; the first call of its process, it was given {allowed:g}s to start and answer"
                 if called.cold else "")
        fail(crash, f"the call did not return within {deadline:g}s (hung{grown}){stopped}{first}")
        return result
    slow = contract.check_id("slow")
    if wanted(slow):
        result.evaluated.add(slow)
        took = called.took
        if took > slow_limit(allowed):
            fail(slow, f"took {took:.1f}s on an input of {size} items: slow, past {slow_limit(allowed):g}s "
                       f"(a fifth of its {allowed:g}s deadline); `chatconform bench` shows how its time grows",
                 level=WARNING)
    problem = None
    if isinstance(called.error, MalformedResult):  # a result the program could not send, or sent wrong
        problem = str(called.error)
        fail(crash, problem)
    elif called.error is not None:
        problem = f"raised {called.describe_error()}"
        refusable = _refusal(impl, contract, case, variant, drawn, called.error)
        if refusable is not None and isinstance(called.error, BUG_TYPES):
            # The case holds content the provider cannot take, but a KeyError is not how a
            # mapper refuses it: the refusal excuses only the exception that refuses the value.
            fail(crash, f"{problem}: a crash, not a refusal (a refusal raises ValueError, NotImplementedError "
                        f"or the library's own error; a {type(called.error).__name__} is a bug whatever the case "
                        f"holds), on a case the implementation may refuse: {refusable.why}",
                 expected="a result, or a refusal of the content the provider cannot take",
                 actual=called.error_trace.strip() or called.describe_error())
        elif refusable is not None:  # a refusal of what the provider cannot take, not a crash
            why = f"the implementation refused the case ({problem}), which it may: {refusable.why}"
            for check in contract.ordered_checks():
                if check.evaluate is not None and wanted(check.id):
                    result.passed_over.setdefault(check.id, why)
            if refusable.warns:
                fail(crash, f"{problem}: a refusal, not a crash: {refusable.why}", level=WARNING)
        else:
            fail(crash, problem, expected="a result",
                 actual=called.error_trace.strip() or called.describe_error())
    elif (problem := called.problem) is not None:
        fail(crash, problem)
    result.judged = problem is None
    if wanted(untouched):
        result.evaluated.add(untouched)
        recorded = contract.input_change(called.output) if called.error is None else None
        # A call that makes several calls says which one changed its input.
        changed = recorded if recorded is not None else called.input_change()
        if changed is not None:
            fail(untouched, changed)
    if not result.judged:
        return result
    example = _example(impl, contract, case, called.output, variant, drawn, caller)
    if caller.bundled:
        # The bundled reference is the reference: its answer is the one its checks compare with.
        example.keep_reference(called.output)
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
