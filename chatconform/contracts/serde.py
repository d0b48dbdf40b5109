"""The ``serde`` contract: ``dump(history) -> bytes | str`` and ``load(data) -> history``.

How an application stores a history and reads it back. The contract's method is
``dump``; its checks reach ``load`` on the same implementation (through
:attr:`~chatconform.frame.contract.Example.impl`), each call into it guarded with
the per-call timeout, so an implementation needs both: one with ``dump`` and no ``load``
is skipped with the reason. ``serde.no_crash`` and ``serde.input_untouched`` judge
``dump``; a ``load`` that raises or hangs on a valid dump fails ``serde.round_trip``.

The stored form is judged as pydantic-ai's own JSON (``ModelMessagesTypeAdapter``): the
form pydantic-ai documents, that any pydantic-ai process can read. Each case also names
one way the stored data goes bad (:mod:`chatconform.strategies.malformed`), applied to
the reference's dump of the history; ``load`` must refuse it with a validation error: a
:class:`ValueError` (pydantic's ``ValidationError``, ``json.JSONDecodeError`` and
``UnicodeDecodeError`` are ones). Any other exception is a crash, not a clear error, and
a history returned is data silently lost or invented.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from chatconform.errors import NotApplicable, Violation
from chatconform.frame.contract import Case, Example
from chatconform.frame.history_contract import HistoryContract
from chatconform.frame.lifecycle import Conversation, LifecycleStep
from chatconform.frame.wire import (
    WireMethod,
    as_is,
    history_reply,
    history_result,
    history_result_schema,
    object_schema,
)
from chatconform.history import (
    first_difference,
    history_problem,
    history_to_json,
    list_difference,
    message_text,
    walk_parts,
)
from chatconform.lazy import pai
from chatconform.reference.serde import dump
from chatconform.reference.serde import load as reference_load
from chatconform.strategies import expand_history, malform, serde_cases
from chatconform.strategies.lifecycles import Step
from chatconform.strategies.malformed import MALFORMATIONS

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

#: What the stored form may be.
_STORED = (bytes, bytearray, str)


@dataclass
class SerdeCase(Case):
    history: list[ModelMessage]
    #: How the reference's dump of ``history`` is corrupted for ``serde.rejects_malformed``.
    malformation: str = "truncate"
    #: Where (any non-negative int, taken modulo the places there are).
    at: int = 0

    def __post_init__(self) -> None:
        if self.malformation not in MALFORMATIONS:
            raise ValueError(f"malformation={self.malformation!r} must be one of {', '.join(MALFORMATIONS)}")
        if isinstance(self.at, bool) or not isinstance(self.at, int) or self.at < 0:
            raise ValueError(f"at={self.at!r} must be a non-negative int")


def _restart(conversation: Conversation, step: Step) -> Any:
    """A restart: the store goes through ``dump`` and ``load``."""
    data = conversation.call("dump", conversation.history)
    loaded = conversation.call("load", data)
    return conversation.record(loaded, conversation.history, reloaded=loaded)


class SerdeContract(HistoryContract):
    name = "serde"
    method = "dump"
    signature = "dump(history) -> bytes | str; load(data) -> history"
    crash_rationale = ("json.dumps over a history's fields raises 'Object of type datetime is not JSON "
                       "serializable' (https://github.com/microsoft/autogen/issues/6635): the run's history is "
                       "never stored")
    mutation_rationale = ("a store that strips image bytes out of the live messages before saving them changes "
                          "the history the agent goes on with (https://github.com/griptape-ai/griptape-nodes-engine"
                          "/pull/5092, where review flagged the in-place mutation)")
    listing_order = 50
    #: Every case is dumped once and loaded three or four times: half the profile's budget.
    examples_scale = 0.5
    case_type = SerdeCase
    reference_module = "chatconform.reference.serde"
    guard_tests = ("tests/contracts/test_serde.py",)
    lifecycle_steps = (LifecycleStep("restart", "a restart: the store goes through dump and load", order=20,
                                     methods=("dump", "load"), play=_restart),)

    def cases(self, variant):
        return serde_cases().map(lambda c: SerdeCase(*c))

    def call(self, fn, case, variant):
        return fn(case.history)

    def reference(self, case, variant):
        return dump(case.history)

    def output_problem(self, output, case):
        if not isinstance(output, _STORED):
            return f"returned {type(output).__name__}, expected the stored form (bytes or str)"
        return None

    def wire(self):
        """``dump`` gets the case's history alone and returns the stored text; ``load``, which
        the checks call, gets that text back and returns a history."""
        (own,) = super().wire()
        dump = replace(own, decode=as_is, reply=_stored_text, result={
            "description": "The result of dump: the stored form, as text (pydantic-ai's message JSON is what "
                           "the serde checks read).",
            "type": "string"})
        load = WireMethod("load", _stored, history_result, {
            "description": "The stored form to read back: what dump wrote, pydantic-ai's own JSON of a history, "
                           "or a malformed copy of it, to be refused.",
            **object_schema({"data": {"type": "string"}}, ["data"])},
            history_result_schema("The result of load: the history read back, in the same JSON as an input "
                                  "history."), reply=history_reply, receive=lambda data: ((data["data"],), {}))
        return dump, load

    def skip_reason(self, impl):
        if not callable(getattr(impl.obj, "load", None)):
            return (f"{impl.name} has dump() but no load(): serde judges what dump() writes by loading it "
                    f"back, so it needs both")
        return None

    # -- the benchmark hook ------------------------------------------------------------------
    def large_case(self, size: int, seed: int, variant: str | None) -> SerdeCase:
        """About ``size`` messages from ``expand_history`` (dumped, then loaded back)."""
        return SerdeCase(expand_history(seed, size), "truncate", seed)


CONTRACT = SerdeContract()


def _stored(args: tuple, kwargs: dict) -> tuple[Any, None]:
    """``load(data)`` over the protocol: the stored form travels as text. Bytes that are not
    UTF-8 cannot, and raise UnicodeDecodeError (a ValueError) here, as every JSON reader
    refuses them."""
    (data,) = args
    if isinstance(data, (bytes, bytearray, memoryview)):
        data = bytes(data).decode("utf-8")
    if not isinstance(data, str):
        raise TypeError(f"load() takes the stored form (bytes or str), not {type(data).__name__}")
    return {"data": data}, None


def _stored_text(output: Any) -> str:
    """What ``dump`` returned, as the text the protocol carries (bytes must be UTF-8)."""
    return bytes(output).decode("utf-8") if isinstance(output, (bytes, bytearray, memoryview)) else output


# -- calling load ------------------------------------------------------------------------------

def _load(ex: Example, data: Any):
    """The implementation's ``load(data)``, with the run's deadline: a :class:`~chatconform.frame.calls.Called`.

    Loading what ``dump()`` wrote is done once per example (``round_trip`` and
    ``matches_reference`` both read it, and the reference's dump is often the same data).
    """
    load = getattr(ex.impl.obj, "load", None) if ex.impl is not None else None
    caller = ex.calls
    if not callable(load):
        raise NotApplicable("no load() to read the data back with")
    if data is ex.output or data == ex.output:
        return ex.once("loaded", lambda: caller.call(load, ex.output, size=len(ex.case.history)))
    return caller.call(load, data, size=len(ex.case.history))


def _short(value: Any, limit: int = 400) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[:limit] + " …"


def _difference(history: list[ModelMessage], loaded: Any) -> tuple[str, Any, Any] | None:
    """How ``loaded`` differs from ``history``: (what, expected, actual), or None if equal."""
    problem = history_problem(loaded)
    if problem is not None:
        return problem.replace("returned", "gave"), "a history", type(loaded).__name__
    if loaded == history:
        return None
    what = list_difference(history, loaded, "message", show=message_text)
    if len(loaded) != len(history):
        return what, len(history), len(loaded)
    index = first_difference(history, loaded)
    actual: list[Any] | str
    try:
        expected, actual = history_to_json([history[index]]), history_to_json([loaded[index]])
    except Exception:
        expected, actual = history_to_json([history[index]]), repr(loaded[index])
    return what, _short(expected), _short(actual)


def _reference_dump(ex: Example) -> bytes | str:
    """The reference's dump of the case, as the type the implementation's dump returns."""
    return ex.reference.decode("utf-8") if isinstance(ex.output, str) else ex.reference


def _expect_history(ex: Example, outcome, source: str, label: str) -> None:
    """A Violation unless ``load()`` returned the case's history from ``source``."""
    if outcome.timed_out:
        raise Violation(f"load() did not return within {outcome.deadline:g}s on {source}",
                        expected="the history", actual="hung")
    if outcome.error is not None:
        raise Violation(f"load() raised {outcome.describe_error()} on {source}",
                        expected="the history", actual=outcome.describe_error())
    difference = _difference(ex.case.history, outcome.output)
    if difference is not None:
        what, expected, actual = difference
        raise Violation(f"{label}: {what}", expected=expected, actual=actual)


# -- round_trip --------------------------------------------------------------------------------

@CONTRACT.check(
    "round_trip",
    title="load(dump(history)) equals the history",
    rationale="a store that drops image bytes before saving (https://github.com/griptape-ai/griptape-nodes-engine"
              "/pull/5092) or a dump that loses a part type (pydantic-ai PR "
              "https://github.com/pydantic/pydantic-ai/pull/5814: BinaryContent tool returns came back as dicts) "
              "continues the conversation from a different history",
)
def round_trip(ex: Example) -> None:
    _expect_history(ex, _load(ex, ex.output), "what dump() wrote", "load(dump(history))")


# -- schema_valid ------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _validator():
    import jsonschema_rs

    return jsonschema_rs.validator_for(pai.ModelMessagesTypeAdapter.json_schema(), validate_formats=False)


def _parsed(data: Any) -> Any:
    """The stored data as JSON, or a Violation saying why it is not."""
    try:
        text = bytes(data).decode("utf-8") if isinstance(data, (bytes, bytearray)) else data
    except UnicodeDecodeError as exc:
        raise Violation(f"the stored data is not UTF-8 ({exc})", expected="UTF-8 JSON") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise Violation(f"the stored data is not JSON ({exc})", expected="JSON", actual=_short(text, 200)) from None


@CONTRACT.check(
    "schema_valid",
    title="what dump() writes is valid against ModelMessagesTypeAdapter.json_schema()",
    rationale="a history stored in another shape (wrapped in a container model, as pydantic-ai's storage docs "
              "show: https://github.com/pydantic/pydantic-ai/issues/8367) is unreadable to every other "
              "pydantic-ai process, which loads with ModelMessagesTypeAdapter",
)
def schema_valid(ex: Example) -> None:
    instance = _parsed(ex.output)
    error = next(iter(_validator().iter_errors(instance)), None)
    if error is not None:
        path = "$" + "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in error.instance_path)
        message = error.message if len(error.message) <= 300 else f"{error.message[:100]} … {error.message[-150:]}"
        raise Violation(f"{path}: {message}", expected="pydantic-ai's message JSON",
                        actual=_short(error.instance, 200))


# -- rejects_malformed -------------------------------------------------------------------------

def _size(history: Any) -> str:
    if history_problem(history) is not None:
        return f"a {type(history).__name__}"
    return f"{len(history)} messages with {walk_parts(history)} parts"


@CONTRACT.check(
    "rejects_malformed",
    title="truncated, wrong-typed and unknown-part data make load() raise a validation error",
    rationale="loaders that skip what they cannot read (https://github.com/gitbutlerapp/gitbutler/pull/10831 "
              "skips chat messages that fail to deserialize; https://github.com/rmyndharis/OpenWA/pull/1586 "
              "dropped every message of a type it did not know, with nothing logged) return a shorter history "
              "that is then stored again as the truth",
)
def rejects_malformed(ex: Example) -> None:
    bad = malform(_reference_dump(ex), ex.case.malformation, ex.case.at)
    outcome = _load(ex, bad)
    what = {"truncate": "truncated data", "wrong_type": "a message whose parts are an object",
            "unknown_part": "a part of an unknown part_kind"}[ex.case.malformation]
    if outcome.timed_out:
        raise Violation(f"load() did not return within {outcome.deadline:g}s on {what}",
                        expected="a validation error", actual="hung")
    if outcome.error is not None:
        if isinstance(outcome.error, ValueError):
            return
        raise Violation(f"load() raised {outcome.describe_error()} on {what}: not a validation error",
                        expected="a ValueError (pydantic ValidationError, JSONDecodeError)",
                        actual=type(outcome.error).__name__)
    raise Violation(f"load() returned {_size(outcome.output)} for {what} instead of raising "
                    f"(the valid data holds {_size(ex.case.history)})",
                    expected="a validation error", actual=_short(bad, 300))


# -- matches_reference -------------------------------------------------------------------------

@CONTRACT.check(
    "matches_reference",
    title="pydantic-ai reads what dump() writes, and load() reads what pydantic-ai writes",
    rationale="the stored history is the contract between processes and releases: what one writes with "
              "ModelMessagesTypeAdapter the other must read back as the same history "
              "(https://ai.pydantic.dev/message-history/)",
)
def matches_reference(ex: Example) -> None:
    same = ex.output == _reference_dump(ex)  # then pydantic-ai reads it back: the reference round-trips
    try:
        theirs = ex.case.history if same else reference_load(ex.output)
    except ValueError as exc:
        raise Violation("pydantic-ai cannot load what dump() wrote", expected="the history",
                        actual=_short(str(exc), 300)) from None
    difference = _difference(ex.case.history, theirs)
    if difference is not None:
        what, expected, actual = difference
        raise Violation(f"pydantic-ai loads what dump() wrote: {what}", expected=expected, actual=actual)
    _expect_history(ex, _load(ex, _reference_dump(ex)), "pydantic-ai's dump of the history",
                    "load() of pydantic-ai's dump")
