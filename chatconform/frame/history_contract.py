"""The base of every contract whose input holds histories, and the checks they share.

Contracts whose input holds histories (payload, compaction, persist, sanitize, repair,
trim, serde) derive from :class:`HistoryContract`: their case is a dataclass whose history
fields are copied, fingerprinted, sized and written to JSON here, and its other fields are
plain JSON values. :class:`HistoryTransformContract` is the base of the contracts whose
method takes one history and returns one. The history vocabulary itself (JSON, items,
pairing) is :mod:`chatconform.history`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, ClassVar

from chatconform.errors import NotApplicable, Violation
from chatconform.frame.contract import Contract, Example
from chatconform.frame.wire import (
    HISTORY_SCHEMA,
    WireMethod,
    history_reply,
    history_result,
    history_result_schema,
    object_schema,
)
from chatconform.history import (
    History,
    Item,
    and_more,
    describe_at,
    first_difference,
    fresh_lists,
    history_from_json,
    history_problem,
    history_to_json,
    item_label,
    list_difference,
    message_text,
    tool_pairing_problems,
    walk_parts,
)

# -- contracts over histories -------------------------------------------------------------------

class HistoryContract(Contract):
    """A contract whose case is a dataclass (:attr:`case_type`) holding histories.

    Fields named in :attr:`history_fields` are histories; every other field is a plain
    JSON value. Copying and fingerprinting are the base's (:class:`~chatconform.frame.snapshot.Frozen`).
    """

    case_type: ClassVar[type]
    history_fields: ClassVar[tuple[str, ...]] = ("history",)
    #: The fields besides the histories that a call of the method carries over the
    #: ``exec:`` protocol, each with its JSON Schema (a field left out of a call travels
    #: as its default, so it is left out of the input too).
    wire_fields: ClassVar[dict[str, Any]] = {}
    #: What the method returns, for the protocol's call-reply schema (a history by default).
    result_description: ClassVar[str] = "the result: a history, in the same JSON as the input history"

    def floor(self, case: Any, variant: str | None) -> None:
        """One bare pass: every part of every message of ``case.history`` looked at once
        (a contract whose case holds its history elsewhere, or needs more, overrides it)."""
        walk_parts(case.history)

    def case_to_json(self, case: Any) -> dict[str, Any]:
        """The case as JSON; a field left at its default is omitted (it loads back the same)."""
        out: dict[str, Any] = {}
        for spec in dataclasses.fields(case):
            value = getattr(case, spec.name)
            if spec.name in self.history_fields:
                out[spec.name] = history_to_json(value)
            elif spec.default is dataclasses.MISSING or value != spec.default:
                out[spec.name] = value
        return out

    def case_from_json(self, data: Any) -> Any:
        fields = {f.name: f for f in dataclasses.fields(self.case_type)}
        shape = "{" + ", ".join(f'"{name}": ...' for name in fields) + "}"
        if not isinstance(data, dict):
            raise ValueError(f"a {self.name} case is a JSON object {shape}")
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise ValueError(f"unknown key(s) {', '.join(unknown)} in a {self.name} case {shape}")
        values: dict[str, Any] = {}
        for name, spec in fields.items():
            required = spec.default is dataclasses.MISSING and spec.default_factory is dataclasses.MISSING
            if name not in data:
                if required:
                    raise ValueError(f"a {self.name} case needs {name!r}: {shape}")
                continue
            values[name] = history_from_json(data[name], name) if name in self.history_fields else data[name]
        return self.case_type(**values)

    def size(self, case: Any) -> int:
        return sum(len(getattr(case, name)) for name in self.history_fields)

    # -- the wire format ---------------------------------------------------------------------
    def wire(self) -> tuple[WireMethod, ...]:
        """The method takes the case's fields (``provider`` apart) and returns a history."""
        return (WireMethod(self.method, self.wire_arguments, history_result, self.wire_input(),
                           history_result_schema(self.result_description), reply=history_reply),)

    def wire_arguments(self, args: tuple, kwargs: dict) -> tuple[Any, str | None]:
        """A call's arguments as the case's JSON, and the provider it names."""
        fields = dict(kwargs)
        provider = fields.pop("provider", None)
        return self.case_to_json(self.case_type(*args, **fields)), provider

    def wire_input(self) -> dict[str, Any]:
        """The input's schema: the histories and :attr:`wire_fields`; a field is required
        unless it has a default."""
        carried = {spec.name: spec for spec in dataclasses.fields(self.case_type)
                   if spec.name in self.history_fields or spec.name in self.wire_fields}
        properties = {name: HISTORY_SCHEMA if name in self.history_fields else self.wire_fields[name]
                      for name in carried}
        required = [name for name, spec in carried.items()
                    if spec.default is dataclasses.MISSING and spec.default_factory is dataclasses.MISSING]
        return object_schema(properties, required)


def check_fixed_point(ex: Example) -> None:
    """Violation unless the implementation returns its own result unchanged."""
    again = applied_again(ex)
    if again != ex.output:
        first = first_difference(ex.output, again)
        how = list_difference(ex.output, again, "message", show=message_text)
        raise Violation(f"a second pass changes the result: {how}",
                        expected=describe_at(ex.output, first), actual=describe_at(again, first))


def applied_again(ex: Example) -> History:
    """The implementation's method applied to its own result (a copy), for idempotence.

    The result of a valid input is a valid input: raising on it, hanging, or returning
    something malformed is a violation. NotApplicable where the example carries no
    implementation to call.
    """
    contract = ex.contract
    if not isinstance(contract, HistoryContract):
        raise NotApplicable(f"{contract.name}'s case is not made of histories")
    own = ex.impl.method(contract) if ex.impl is not None else None
    if own is None:
        raise NotApplicable("no implementation to apply a second time")
    outcome = ex.calls.call(lambda case: contract.call(own, case, ex.variant),
                             contract.case_type(fresh_lists(ex.output)), size=len(ex.output))
    if outcome.timed_out:
        raise Violation("hung when given its own result", expected="a result", actual="no answer")
    if outcome.error is not None:
        raise Violation(f"raised when given its own result: {outcome.describe_error()}",
                        expected="a result", actual=outcome.describe_error())
    problem = history_problem(outcome.output)
    if problem is not None:
        raise Violation(f"given its own result, {problem}")
    return outcome.output


@dataclasses.dataclass
class HistoryCase:
    """A case that is one history."""

    history: History


class HistoryTransformContract(HistoryContract):
    """A contract whose method takes one history and returns one (``sanitize``, ``repair``).

    A subclass names its reference function (:meth:`transform`), the strategy of its
    histories (:meth:`histories`, built once) and how a large history is grown from a seed
    (:meth:`expand`, for ``chatconform bench``).
    """

    case_type = HistoryCase

    def transform(self, history: History) -> History:
        raise NotImplementedError

    def histories(self):  # -> SearchStrategy[History]
        raise NotImplementedError

    def expand(self, seed: int, size: int) -> History:
        raise NotImplementedError

    def cases(self, variant):
        if "_cases" not in vars(self):
            self._cases = self.histories().map(HistoryCase)
        return self._cases

    def call(self, fn, case, variant):
        return fn(case.history)

    def reference(self, case, variant):
        return self.transform(case.history)

    def output_problem(self, output, case):
        return history_problem(output)

    def large_case(self, size: int, seed: int, variant: str | None) -> HistoryCase:
        """About ``size`` messages grown by :meth:`expand` (linear time, no Hypothesis draws)."""
        import random

        return HistoryCase(self.expand(random.Random(seed).getrandbits(32), size))


def check_same_items(expected: Sequence[Item], actual: Sequence[Item]) -> None:
    """A Violation at the first item where ``actual`` (a result's items) differs from
    ``expected`` (the reference result's): the ``matches_reference`` of history contracts."""
    if list(expected) == list(actual):
        return
    first = first_difference(expected, actual)
    raise Violation(f"the result differs from the reference: {list_difference(expected, actual, show=item_label)}",
                    expected=[item_label(i) for i in expected[first:first + 3]],
                    actual=[item_label(i) for i in actual[first:first + 3]])


def register_pairs_intact(contract: Contract, rationale: str) -> None:
    """Register ``<contract>.pairs_intact`` on a contract that shortens ``case.history``:
    where every call of the input pairs up, every call of the result must too."""

    @contract.check("pairs_intact", title="every tool call of the result is answered once and every result "
                                          "has its call", rationale=rationale)
    def pairs_intact(ex: Any) -> None:
        if tool_pairing_problems(ex.case.history):
            raise NotApplicable("the input's own tool calls do not pair up")
        problems = tool_pairing_problems(ex.output)
        if problems:
            raise Violation(problems[0] + and_more(problems, "pairing problem"),
                            expected="no pairing problems", actual=problems[:5])
