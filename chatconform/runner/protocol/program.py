"""A program behind ``exec:'COMMAND ARGS'``, as an implementation object.

The program is started once, greets chatconform (:func:`hello` and its ``hello-reply``:
name, version, contracts, providers, expected failures), and then answers one ``call``
line with one ``call-reply`` line. :class:`Program` has one method per contract the
program declared, and the further methods a contract's checks call that it declared too
(``load`` for ``serde``); each turns its arguments into the call's JSON (the case's JSON,
as saved failures use it), sends the call, and turns the result back into what the
contract's checks read, as the contract's wire format says
(:meth:`~chatconform.frame.contract.Contract.wire`).

Whatever breaks the protocol (an exit, a line that is not JSON or not a reply, the wrong
id, output out of turn, no answer in time, a line too long) raises :class:`ProtocolError`
inside the call, so the engine reports ``<contract>.no_crash`` with the program's last
lines of stderr; the program is stopped and started again for the next call.
"""

from __future__ import annotations

import base64
import itertools
import json
import pickle
import shlex
import threading
import time
import weakref
from collections.abc import Callable
from functools import cache
from typing import Any

from chatconform.contracts import get_contract
from chatconform.errors import (
    ConfigError,
    MalformedResult,
    MissingDependency,
    ProgramError,
    ProgramHung,
    ProtocolError,
    RejectedInput,
    UnsendableCase,
)
from chatconform.frame import collector
from chatconform.frame.calls import ImplementationProcess
from chatconform.frame.contract import Contract
from chatconform.frame.guard import DEFAULT_TIMEOUT, time_left
from chatconform.frame.snapshot import snapshot
from chatconform.frame.wire import WireMethod
from chatconform.runner.protocol import datapickle, kept, messages
from chatconform.runner.protocol.channel import Channel, Fault, exit_text
from chatconform.runner.protocol.forked import HostProcess
from chatconform.runner.protocol.host_codes import LOAD_ERROR, MISSING_LIBRARY

PREFIX = "exec:"
PROTOCOL_VERSION = 1
#: The longest line a program may write; a longer one is a flood.
MAX_LINE_BYTES = 64 * 2**20
#: How long a program has to start and answer the first hello: importing a large library
#: (langchain-google-genai, openai-agents) takes over 15 s on a loaded two-core machine.
START_TIMEOUT = 60.0


# -- what travels for each contract ---------------------------------------------------------

@cache
def _wire(name: str) -> dict[str, WireMethod]:
    """How each method of contract ``name`` travels (:meth:`Contract.wire`): its own method
    first, then the further methods its checks call on the same implementation."""
    return {method.name: method for method in get_contract(name).wire()}


def hello() -> dict:
    """The first line of every session."""
    from chatconform.providers import PROVIDER_IDS
    from chatconform.version import __version__

    wires = messages.carried()
    return {"type": "hello", "protocol": PROTOCOL_VERSION, "chatconform": __version__,
            "contracts": {name: wire[0].name for name, wire in wires.items()},
            "more_methods": {name: [m.name for m in wire[1:]] for name, wire in wires.items() if len(wire) > 1},
            "providers": list(PROVIDER_IDS)}


# -- one program, started on demand -------------------------------------------------------------

class Session:
    """The running program of one ``exec:`` spec: calls one at a time, restarts after a fault."""

    def __init__(self, spec: str, argv: list[str], launch: Callable[[], Any] | None = None):
        """``launch``: starts the process another way than running ``argv`` (the built-in host)."""
        self.spec, self.argv, self.launch = spec, argv, launch
        self.declared: dict | None = None  # the first hello-reply
        #: How the program last ended (its exit status, None if unknown) and its last stderr lines.
        self.ended: tuple[int | None, list[str]] = (None, [])
        self._channel: Channel | None = None
        self._ids = itertools.count(1)
        self._answered = 0  # the id of the last call answered
        self._answered_here = 0  # calls answered since the program last started
        #: What the last call took as this process saw it: from its last byte sent to the
        #: reply's line read (the program's own clock is never asked).
        self.seconds: float | None = None
        self._lock = threading.Lock()

    def open(self) -> dict:
        """Start the program and exchange hellos: its hello-reply. OSError when it cannot
        start, ProtocolError when the hello fails."""
        deadline = time.monotonic() + START_TIMEOUT
        with self._lock:
            self._channel = channel = self._new_channel()
            self._answered_here = 0
            try:
                self.declared = self._greet(channel, deadline)
            except Fault as fault:
                raise self._broken(fault, deadline, restarting=False) from None
        return self.declared

    def call(self, request: dict) -> dict:
        """Send ``request`` (a call without its type and id) and return the program's reply."""
        left = time_left()
        budget = DEFAULT_TIMEOUT if left is None else max(left, 0.0)
        # Stop a silent program a little before the guard gives the call up, so the
        # failure says what happened and shows its stderr.
        hard = time.monotonic() + budget
        deadline = hard - min(1.0, budget * 0.2)
        if not self._lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
            raise ProtocolError("the program was still busy with an earlier call that was given up")
        try:
            number = next(self._ids)
            try:
                channel = self._channel if self._channel is not None else self._restart(deadline)
                self._quiet(channel, f"after answering call {self._answered}, before call {number}")
                channel.send({"type": "call", "id": number, **request}, deadline)
                sent = time.perf_counter()
                line = channel.receive(deadline, MAX_LINE_BYTES)
                self.seconds = time.perf_counter() - sent
                reply = _parse(line, f"call {number}")
                _conform(reply, "call-reply", f"call {number}")
                if isinstance(reply["id"], int) and reply["id"] < number:
                    # A second answer to an earlier call, come after the check for stray output.
                    raise Fault("out-of-turn", f"wrote to stdout out of turn (an answer to call {reply['id']}, "
                                               f"read when call {number} was asked)")
                if reply["id"] != number:
                    raise Fault("wrong-id", f"answered call {reply['id']} when call {number} was asked")
                self._quiet(channel, f"after answering call {number}")
            except Fault as fault:
                raise self._broken(fault, hard) from None
            self._answered = number
            self._answered_here += 1
            return reply
        finally:
            self._lock.release()

    @property
    def live(self) -> bool:
        """Whether the program is running (else the next call starts it)."""
        return self._channel is not None

    @property
    def warm(self) -> bool:
        """Whether the program is running and has answered a call since it started: its next
        call carries no start-up (a process to start, a library imported on first use)."""
        return self._channel is not None and self._answered_here > 0

    def close(self) -> None:
        with self._lock:
            channel, self._channel = self._channel, None
        if channel is not None:
            channel.close(goodbye={"type": "stop"})

    # -- steps -----------------------------------------------------------------------------
    def _new_channel(self) -> Channel:
        return Channel(self.argv, process=self.launch() if self.launch is not None else None)

    def _greet(self, channel: Channel, deadline: float) -> dict:
        channel.send(hello(), deadline)
        line = channel.receive(deadline, MAX_LINE_BYTES)
        reply = _parse(line, "the hello")
        if isinstance(reply, dict) and reply.get("protocol") != PROTOCOL_VERSION:
            raise Fault("version", f"answered the hello with protocol version {reply.get('protocol')!r}; "
                                   f"this chatconform speaks version {PROTOCOL_VERSION}")
        _conform(reply, "hello-reply", "the hello")
        return reply

    def _restart(self, deadline: float) -> Channel:
        self._answered_here = 0
        try:
            self._channel = channel = self._new_channel()
        except OSError as exc:
            raise Fault("start", f"could not be started again: {exc.strerror or exc}") from None
        declared = self._greet(channel, deadline)
        if declared != self.declared:
            raise Fault("changed", "declared something else when it was started again: "
                                   f"{_quote(json.dumps(declared).encode())}")
        return channel

    def _quiet(self, channel: Channel, when: str) -> None:
        stray, closed = channel.stray()
        if stray:
            raise Fault("out-of-turn", f"wrote to stdout out of turn ({when}): {_quote(stray)}")
        if closed:
            raise Fault("exited", f"closed its stdout ({when})")

    def _broken(self, fault: Fault, hard: float, *, restarting: bool = True) -> ProtocolError:
        """Stop the program after ``fault``; the error to raise, with its stderr's last lines."""
        channel, self._channel = self._channel, None
        what = f"the program {fault}"
        if fault.kind == "hung" and self.launch is not None:  # the built-in host: a Python call that ran on
            what = "the implementation gave no answer in time (its process was stopped)"
        elif fault.kind == "hung":
            what = "the program gave no answer in time (it was stopped; a program must flush stdout after each line)"
        tail: list[str] = []
        if channel is not None:
            spare = max(0.0, hard - time.monotonic()) / 3
            status = channel.exit_status(min(0.5, spare)) if fault.kind == "exited" else None
            if status is not None:
                what += f"; it exited with {exit_text(status)}"
            channel.kill()
            tail = channel.stderr.lines(wait=min(0.5, spare))
            self.ended = (status, channel.stderr.lines(count=4, width=4000))
            channel.close(grace=min(0.5, spare))
        if restarting:
            what += "; it is started again for the next call"
        if channel is not None:
            what += "; stderr: " + (" | ".join(tail) if tail else "(empty)")
        return (ProgramHung if fault.kind == "hung" else ProtocolError)(what)


def _parse(line: bytes, label: str) -> Any:
    try:
        return json.loads(line)
    except RecursionError:
        raise Fault("not-json", f"answered {label} with JSON nested too deeply to read") from None
    except ValueError:
        raise Fault("not-json", f"answered {label} with a line that is not JSON: {_quote(line)} "
                                "(logs belong on stderr)") from None


def _conform(reply: Any, schema: str, label: str) -> None:
    try:
        problem = messages.problem(reply, schema)
    except RecursionError:
        problem = "$: nested too deeply to check"
    if problem is not None:
        raise Fault("invalid", f"answered {label} with a reply that breaks the protocol ({schema}): {problem}")


def _quote(data: bytes, limit: int = 160) -> str:
    text = data.decode("utf-8", "replace")
    return repr(text if len(text) <= limit else text[:limit] + " …")


# -- the implementation object ----------------------------------------------------------------

class Program(ImplementationProcess):
    """An implementation answered by a program: name, version and settings from its
    hello-reply; one method per contract it declared (added by :func:`start`)."""

    def __init__(self, session: Session, declared: dict):
        self._session = session
        self.name = declared["name"]
        self.version = declared["version"]
        self.language = declared.get("language")
        self.providers = declared.get("providers")  # None: not declared (the contract's default)
        self.models = declared.get("models")
        self.lifecycle = False if declared.get("method_by_method") else None  # None: the lifecycle runs
        self.expected_failures = dict(declared.get("expected_failures") or {})
        self._input_change: str | None = None
        self._watch = False
        self._deadline: float | None = None
        self._shared: dict | None = None  # see watch_input
        self._took: float | None = None  # what the last own call took, as this process measured it
        self._sent = kept.Sent()  # what the built-in host keeps of this case's results
        self._closer = weakref.finalize(self, session.close)  # also at exit

    def close(self) -> None:
        """Stop the program (it is stopped anyway when this object goes, or at exit)."""
        self._closer()

    def release(self) -> None:
        """Stop the program's process for now; the next call starts it again. A run whose
        worker processes load their own copies need not keep this one idle meanwhile."""
        self._session.close()

    @property
    def warm(self) -> bool:
        """See :attr:`Session.warm`."""
        return self._session.warm

    @property
    def hosted(self) -> bool:
        """Whether this is a Python implementation behind the built-in host."""
        return self._session.launch is not None

    def watch_input(self, timeout: float | None = None, shared: dict | None = None) -> None:
        """Ask the next call of a contract's own method to report what became of its input
        (the engine's call of each case; the checks' further calls are not watched, which
        spares the snapshot of a long history each time), and to count as hung when it
        took more than ``timeout`` seconds, as this process measures it (from the call's
        last byte sent to its reply read). ``shared``: where that call's arguments, pickled, are kept for the calls
        of other programs on the same objects (a case judged for several implementations is
        pickled once). What an earlier call reported is forgotten: a composed call (the
        lifecycle's) that makes no call of a contract's own method reports nothing."""
        self._watch, self._deadline, self._shared = True, timeout, shared
        self._input_change = None

    def took(self) -> float | None:
        """The seconds the last call of a contract's own method took, measured in this
        process (see :attr:`Session.seconds`), or None: it was not answered."""
        return self._took

    def input_change(self) -> str | None:
        """How the last call of a contract's own method changed its input, or None. For a
        watched call of the built-in host this process decides it (:func:`input_change`);
        a program in another language says it (the reply's ``input_changed``)."""
        return self._input_change

    def _pickled(self, args: tuple, kwargs: dict, shared: dict | None = None) -> str | None:
        """A call's arguments for the built-in host (the results it kept named by key), or
        None where they do not pickle. ``shared``: arguments pickled before for a call that
        named no kept result, by the identity of each argument (held there, so no other
        object takes its id), or the value of a plain one (a provider's name)."""
        key = None
        if shared is not None:
            key = (_SENT_AS, tuple(map(_identity, args)),
                   tuple((name, _identity(value)) for name, value in kwargs.items()))
            if key in shared:
                return shared[key][1]
        try:
            text = base64.b64encode(self._sent.dumps((args, kwargs))).decode("ascii")
        except Exception:
            return None
        if key is not None and shared is not None:
            shared[key] = ((args, kwargs), text)
        return text

    def _call(self, name: str, method: str, args: tuple, kwargs: dict) -> Any:
        contract, wire = get_contract(name), _wire(name)[method]
        own = method == contract.method
        watch, self._watch = self._watch, self._watch and not own
        shared = self._shared if own and watch else None
        if own:
            self._shared = None
        deadline = self._deadline if own and watch else None
        fresh = self.hosted and ((own and watch) or not self._session.live or self._sent.full())
        if fresh:  # a new case, or a new host: nothing is kept
            self._sent.clear()
        pickled = self._pickled(args, kwargs, shared if fresh else None) if self.hosted else None
        keep: str | None = None
        if pickled is not None:
            # The built-in host gets the very objects an in-process call would (this side's
            # data, so unpickling it there is safe); what comes back is read as data only.
            keep = self._sent.prefix()
            request: dict[str, Any] = {"contract": name, "method": method, "arguments": pickled, "keep": keep}
            if own and watch:
                request["watch"] = True
            if fresh:
                request["fresh"] = True
        else:
            try:
                data, provider = wire.encode(args, kwargs)
            except Exception as exc:
                if not self.hosted:  # a program's own refusal of what it cannot take
                    raise
                raise UnsendableCase(f"{type(exc).__name__}: {exc}") from exc
            request = {"contract": name, "method": method, "input": data}
            if provider is not None:
                request["provider"] = provider
        if own:
            self._input_change = None
        if own:
            self._took = None
        reply = self._session.call(request)
        took = self._session.seconds
        if own:
            self._took = took
        if deadline is not None and took is not None and took > deadline:
            raise ProgramHung(f"the implementation took {took:.1f}s")
        if "error" in reply:
            if reply["error"].get("type") == "KeptMissing":  # the host and this side out of step
                self._sent.clear()
                raise UnsendableCase(reply["error"]["message"])
            if reply["error"].get("type") == "MalformedResult":  # the host's word for a result of the wrong kind
                raise MalformedResult(reply["error"]["message"])
            error = RejectedInput if reply["error"].get("invalid_input") else ProgramError
            raise error(_error_text(reply["error"]))
        if own:
            self._input_change = (input_change(pickled, reply) if pickled is not None and "watch" in request
                                  else reply.get("input_changed"))
        kind = name if own else f"{name}.{method}"
        if "pickled" in reply:
            try:
                result = datapickle.loads(reply["pickled"])
            except datapickle.Shared as exc:
                if keep is None:
                    raise MalformedResult(f"not a {kind} result: {exc}") from None
                # What a pickler writes of a value that shares much or holds itself: the
                # same result as JSON, which holds each object as many times as it is met.
                again = self._session.call({"contract": name, "method": method, "resend": keep})
                if "result" not in again:
                    why = _error_text(again["error"]) if "error" in again else "sent again not as JSON"
                    raise MalformedResult(f"not a {kind} result: {exc}; {why}") from None
                result = self._decoded(wire, again, kind)
            except ValueError as exc:
                raise MalformedResult(f"not a {kind} result: {exc}") from None
            if keep is not None:
                self._sent.remember(keep, result)
            return result
        return self._decoded(wire, reply, kind)

    @staticmethod
    def _decoded(wire: WireMethod, reply: dict, kind: str) -> Any:
        """The result of a reply carrying JSON, as the contract's checks read it."""
        # The result's schema: the contract's own method's, or "<contract>.<method>".
        problem = messages.problem(reply["result"], "call-reply", kind)
        if problem is not None:
            raise MalformedResult(f"not a {kind} result: {problem}")
        try:
            return wire.decode(reply["result"])
        except ValueError as exc:
            raise MalformedResult(f"not a {kind} result: {exc}") from None


def input_change(sent: str, reply: dict) -> str | None:
    """How a watched call of the built-in host changed its input, decided here from the bytes
    this process sent (``sent``, base64) and what the host sent back: the digest of its copy
    pickled again after the call (``input_digest``), and the copy where its bytes differ
    (``input_copy``). Equal digests: untouched. Else the copy is compared with the input: as
    bytes with an untouched copy's pickle (a copy may share equal strings differently), then
    by value (:func:`~chatconform.frame.snapshot.snapshot`) once read back as data only."""
    if "input_digest" not in reply:
        return reply.get("input_changed") or "its process gave no account of the input after the call"
    data = base64.b64decode(sent)
    if reply["input_digest"] == kept.digest(data):
        return None
    copy = reply.get("input_copy")
    if copy is None:
        return "the implementation changed its input"
    try:
        returned = base64.b64decode(copy, validate=True)
    except ValueError:
        return "the implementation changed its input (its copy came back as no base64)"
    if kept.digest(returned) != reply["input_digest"]:
        return "the implementation changed its input (its copy came back unlike its digest)"
    with collector.paused():
        args, kwargs = pickle.loads(data)  # this process's own bytes
        if returned == pickle.dumps((args, kept.named(kwargs)), protocol=pickle.HIGHEST_PROTOCOL):
            return None
        try:
            after = datapickle.loads(copy)
        except ValueError as exc:
            return f"the implementation changed its input (it now holds what is not data: {exc})"
    return None if snapshot((args, kwargs)) == snapshot(after) else "the implementation changed its input"


#: The key of a call's pickled arguments in a ``shared`` dict (see :meth:`Program.watch_input`).
_SENT_AS = "arguments as sent to a host"


def _identity(value: Any) -> Any:
    """What tells ``value`` apart in a key of pickled arguments: a plain value by itself (equal
    ones pickle alike), any other object by its id."""
    kind = type(value)
    return (kind.__name__, value) if kind in (str, int, float, bool, type(None)) else ("id", id(value))


def _error_text(error: dict) -> str:
    text = f"{error.get('type') or 'error'}: {error['message']}"
    trace = [line.strip() for line in error.get("traceback", "").splitlines() if line.strip()]
    return text + (f" (traceback: {' | '.join(trace[-3:])})" if trace else "")


def _method(contract: Contract, name: str) -> Callable:
    def method(self: Program, *args: Any, **kwargs: Any) -> Any:
        return self._call(contract.name, name, args, kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"{name}() of {contract.signature}, answered by the program"
    return method


@cache
def _program_type(contracts: tuple[str, ...], more: tuple[str, ...] = ()) -> type:
    """A :class:`Program` subclass with the methods of ``contracts``, and of ``more`` (further
    methods of those contracts, such as ``load``)."""
    methods = {}
    for name in contracts:
        contract = get_contract(name)
        for method in _wire(name):
            if method == contract.method or method in more:
                methods[method] = _method(contract, method)
    return type("Program", (Program,), methods)


def command(spec: str) -> list[str]:
    """The argv of an ``exec:`` spec; ConfigError for an empty or unparsable command."""
    try:
        argv = shlex.split(spec[len(PREFIX):])
    except ValueError as exc:
        raise ConfigError(f"{spec}: cannot read the command ({exc})") from None
    if not argv:
        raise ConfigError(f"{spec}: no command after {PREFIX} (such as {PREFIX}'node impl.js')")
    return argv


def start(spec: str) -> Program:
    """Start the program of ``spec`` and read what it declares; ConfigError, in one line,
    when it cannot start, fails the hello or declares a contract it cannot be checked on."""
    argv = command(spec)
    session = Session(spec, argv)
    try:
        declared = session.open()
    except OSError as exc:
        raise ConfigError(f"{spec}: cannot start {argv[0]!r}: {exc.strerror or exc}") from None
    except ProtocolError as exc:
        raise ConfigError(f"{spec}: the hello failed: {exc}") from None
    return _program(spec, session, declared)


def start_host(spec: str, entry: str | None = None) -> Program:
    """Load the Python implementation ``spec`` in a process of its own, behind the built-in
    host (:mod:`chatconform.runner.protocol.host`). The errors of loading it are the
    ones loading it here would give: ConfigError (MissingDependency for a missing library).
    ``entry``: the ``module:attr`` of an entry-point name, as this process resolved it."""
    session = Session(spec, ["chatconform-host", spec], lambda: HostProcess(spec, entry))
    try:
        declared = session.open()
    except (OSError, ProtocolError) as exc:
        status, tail = session.ended
        said = next((line[len(LOAD_ERROR):] for line in reversed(tail) if line.startswith(LOAD_ERROR)), None)
        if said is not None:
            raise (MissingDependency if status == MISSING_LIBRARY else ConfigError)(said) from None
        raise ConfigError(f"{spec}: the process that runs it did not start: {exc}") from None
    return _program(spec, session, declared)


def _program(spec: str, session: Session, declared: dict) -> Program:
    """The implementation object of a session that said hello, once what it declares is checked."""
    greeting = hello()
    offered = greeting["contracts"]
    unknown = [name for name in declared["contracts"] if name not in offered]
    if unknown:
        session.close()
        raise ConfigError(f"{spec}: declares contract(s) {', '.join(unknown)}, which chatconform cannot "
                          f"check over this protocol (it offers: {', '.join(offered)})")
    more = declared.get("more_methods", [])
    owners = {method: name for name, methods in greeting["more_methods"].items() for method in methods}
    stray = [m for m in more if owners.get(m) not in declared["contracts"]]
    if stray:
        session.close()
        offers = ", ".join(f"{m} (of {owners[m]})" for m in owners) or "none"
        raise ConfigError(f"{spec}: declares more method(s) {', '.join(stray)} without a declared contract "
                          f"they belong to (more methods offered: {offers})")
    return _program_type(tuple(declared["contracts"]), tuple(more))(session, declared)
