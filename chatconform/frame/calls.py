"""The one way into an implementation: every call the engine, a contract's checks and the
lifecycle player make goes through a :class:`Caller`.

A caller knows the implementation object and the run's ``--timeout``, and makes each call
the same way wherever it is made from: with the deadline of its input's size
(:func:`~chatconform.frame.guard.call_deadline`), on a private copy of its input that is
compared afterwards (:class:`~chatconform.frame.snapshot.Frozen`) or, for an implementation
in a process of its own (:class:`ImplementationProcess`), with that process asked to watch
its input and to keep the deadline itself, and with the result checked. A call made while
another call of a caller runs on the same thread (the lifecycle player's calls, inside the
engine's call of a whole program) keeps that call's timeout and never outlives what it has
left.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from chatconform.errors import EngineCaseError, ProgramHung
from chatconform.frame.guard import DEFAULT_TIMEOUT, CallOutcome, call_deadline, guarded_call, time_left
from chatconform.frame.snapshot import Frozen
from chatconform.reference import ReferenceImplementation

#: What a call inside another may take at least, in seconds, however little the outer has left.
_NESTED_FLOOR = 0.1


class ImplementationProcess(ABC):
    """An implementation answered in a process of its own (``chatconform.runner.protocol.Program``):
    its process keeps the deadline, and says what became of a watched call's input."""

    @abstractmethod
    def watch_input(self, timeout: float | None = None, shared: dict | None = None) -> None:
        """Ask the next call of a contract's own method to report what became of its input,
        and to count as hung past ``timeout`` seconds of the implementation's own time."""

    @abstractmethod
    def input_change(self) -> str | None:
        """What the last watched call did to its input, or None."""

    @abstractmethod
    def took(self) -> float | None:
        """The seconds the last call of a contract's own method took in its process, or None."""

    @property
    @abstractmethod
    def warm(self) -> bool:
        """Whether its process answered a call already (the first one carries its start-up)."""

    @property
    @abstractmethod
    def hosted(self) -> bool:
        """Whether it is a Python implementation behind the built-in host (its calls travel
        pickled through a pipe)."""


def is_bundled_reference(obj: Any) -> bool:
    """Whether ``obj`` is the bundled reference as shipped: its answers are the oracle's. A
    subclass, or an instance with a method of its own, is an implementation like any other."""
    return type(obj) is ReferenceImplementation and not vars(obj)


def transport_allowance(deadline: float) -> float:
    """The time added to a hosted implementation's deadline for moving the input and the result
    through the pipe: its process is stopped this much later, and the time it measured for
    the implementation itself decides whether the call hung (``watch_input``)."""
    return 1.0 + deadline / 10


@dataclass
class Called(CallOutcome):
    """One call's outcome (:class:`~chatconform.frame.guard.CallOutcome`), with how it was judged."""

    #: The call's deadline for its input's size, and what it was allowed (twice that for the
    #: first call of a process, which carries the start-up).
    deadline: float = 0.0
    allowed: float = 0.0
    cold: bool = False
    #: Seconds the implementation took: as its process measured it where it did, else here.
    took: float = 0.0
    #: Why the result is not the kind of result asked for (the ``check`` given), or None.
    problem: str | None = None
    _watched: Any = field(default=None, repr=False)  # the process, or (frozen, working)

    @property
    def hung(self) -> bool:
        return self.timed_out or isinstance(self.error, ProgramHung)

    def input_change(self) -> str | None:
        """What the call did to its input (a watched call), or None: nothing, or not watched."""
        watched = self._watched
        if isinstance(watched, ImplementationProcess):
            return watched.input_change()
        if watched is None:
            return None
        frozen, working = watched
        try:
            changed = frozen.changed(working)
        except Exception as exc:
            return f"the implementation changed its input ({type(exc).__name__}: {exc})"
        return "the implementation changed its input" if changed else None


_RUNNING = threading.local()  # the caller whose call runs on this thread


def running() -> Caller | None:
    """The caller whose call runs on this thread, or None."""
    caller: Caller | None = getattr(_RUNNING, "caller", None)
    return caller


class Caller:
    """How a run calls one implementation object (see the module docstring).

    ``timeout``: the run's ``--timeout``; None takes the timeout of the caller whose call
    runs on this thread (a call inside a call), else the default.
    """

    def __init__(self, obj: Any, timeout: float | None = None) -> None:
        self.obj = obj
        if timeout is None:
            outer = running()
            timeout = outer.timeout if outer is not None else DEFAULT_TIMEOUT
        self.timeout: float = timeout
        self.process = obj if isinstance(obj, ImplementationProcess) else None
        #: The bundled reference is the suite's own code: it is lent its input (compared
        #: after as a copy would be) and called on this thread, with no thread of its own.
        self.bundled = is_bundled_reference(obj)

    def call(self, invoke: Callable[[Any], Any], given: Any, *, size: int, watch: bool = False,
             freeze: Callable[[Any], Frozen] = Frozen, shared: dict | None = None,
             check: Callable[[Any], str | None] | None = None) -> Called:
        """``invoke(working)``: the implementation called on ``working``, which is ``given`` or,
        where ``watch`` asks for its input to be judged, a private copy of it (``freeze`` makes
        the snapshot the copy comes from; a process of its own watches its own copy).
        ``size``: the input's items, which its deadline grows with. ``shared``: where a process
        keeps the input pickled for the calls of other implementations on the same input.
        ``check(output)``: why a result that returned is not the kind asked for, or None.

        Raises :class:`EngineCaseError` where the input cannot be copied; whatever the
        implementation does (raise, hang, return anything) is in the :class:`Called`.
        """
        process = self.process
        outer = running()
        deadline = call_deadline(self.timeout, size)
        cold = process is not None and not process.warm
        allowed = deadline * 2 if cold else deadline
        limit = allowed + (transport_allowance(deadline) if process is not None and process.hosted else 0.0)
        left = time_left() if outer is not None else None
        if left is not None:  # within the call that runs it, which is given up at its own deadline
            allowed, limit = min(allowed, max(_NESTED_FLOOR, left)), min(limit, max(_NESTED_FLOOR, left))
        called = Called(deadline=deadline, allowed=allowed, cold=cold)
        working = given
        if watch and process is None:
            try:
                frozen = freeze(given)
                working = frozen.lent() if self.bundled else frozen.copy()
            except Exception as exc:
                raise EngineCaseError("copy or fingerprint", exc, given) from exc
            called._watched = (frozen, working)
        if process is not None and watch:
            process.watch_input(allowed, shared=shared)
            called._watched = process

        def run() -> Any:
            _RUNNING.caller = self
            try:
                return invoke(working)
            finally:
                _RUNNING.caller = outer

        # A process keeps the deadline (its waits end at time_left, and on a stop), the
        # bundled reference is ours, and a call inside a call is abandoned with it: no thread
        # is started for any of them.
        guarded_call(run, limit, enforced=process is not None or self.bundled or outer is not None, outcome=called)
        measured = process.took() if process is not None and watch else None
        called.took = called.seconds if measured is None else measured
        if check is not None and called.error is None and not called.timed_out:
            called.problem = check(called.output)
        return called

    def guarded(self, fn: Callable[[], Any], *, size: int) -> Called:
        """``fn``, the suite's own code driven by what the implementation returned (a real
        Agent's next run on a stored history), on a thread of its own within the run's deadline
        for an input of ``size`` items."""
        deadline = call_deadline(self.timeout, size)
        called = Called(deadline=deadline, allowed=deadline)
        guarded_call(fn, deadline, outcome=called)
        called.took = called.seconds
        return called
