"""The built-in host: a Python implementation in a process of its own, behind the ``exec:`` protocol.

A host is forked for each Python implementation (:mod:`chatconform.runner.protocol.forked`);
``python -m chatconform.runner.protocol.host SPEC`` is the same host as a program of
its own. It loads ``SPEC`` (an entry-point name, ``module:attr`` or ``file.py:attr``) in
its process and answers chatconform's hello and calls on stdio like any ``exec:`` program
(``docs/protocol.md``). The engine, the
checks and the reports stay in the parent, so nothing the implementation does to its own
process (exiting, holding the GIL, closing a file descriptor, rewiring chatconform's
functions) changes a verdict: the parent sees an exit, a missed deadline or a reply (what a reply
can forge is said in ``docs/running.md``, "Isolation").

What the host adds to a plain program: each call of a contract's own method loads the
case from the call's input, snapshots it (:meth:`~chatconform.frame.contract.Contract.freeze`),
calls the implementation on a private copy, and says in the reply whether the copy changed
(``input_changed``); a call from the parent, which sends the very objects pickled, and asks
(``"watch": true``: the engine's own call of each case) gets back the digest of its copy of
those objects pickled again after the call (``input_digest``), with the copy itself when its
bytes differ from what was sent (``input_copy``): the parent decides whether the input
changed (:func:`~chatconform.runner.protocol.program.input_change`). The host does not time
its calls: the parent measures each from its side of the pipe. A result comes
back as a data pickle (:mod:`~chatconform.runner.protocol.datapickle`) where it holds
only data classes, else as the contract's JSON (and as JSON when the parent asks for a kept
result again, ``"resend"``: a pickle it would not read, shared past its bound); one that
is not the contract's kind is an error of type ``MalformedResult`` with the contract's own
words. The protocol's stdin and stdout are moved to private file descriptors before the
implementation loads: what it prints goes to stderr, and closing or reading fd 0 and 1
cannot cut the session.

Loading fails with exit status 2 (3: a library is not installed) and the reason as the
last line of stderr, which the parent turns into its one-line error.
"""

from __future__ import annotations

import asyncio
import base64
import inspect
import json
import os
import pickle
import sys
from collections.abc import Callable
from functools import partial
from typing import Any, BinaryIO

from chatconform.frame.contract import taken_keywords
from chatconform.frame.snapshot import Frozen
from chatconform.runner.protocol import datapickle, kept
from chatconform.runner.protocol.channel import PIPE_BYTES
from chatconform.runner.protocol.host_codes import (
    DEFAULT_MEMORY_MIB,
    LOAD_ERROR,
    LOAD_FAILED,
    MEMORY_VARIABLE,
    MISSING_LIBRARY,
)
from chatconform.runner.protocol.kept import Kept, KeptMissing


def _take_stdio() -> tuple[BinaryIO, int]:
    """The protocol's own copies of stdin and stdout; fd 0 becomes /dev/null and fd 1 stderr."""
    reader = os.fdopen(os.dup(0), "rb", buffering=PIPE_BYTES)  # a long call in few reads
    writer = os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return reader, writer


def limit_memory() -> None:
    """Cap the address space, so a runaway allocation is a MemoryError or an exit here, not
    the machine's memory. 0 leaves it unlimited."""
    try:
        mib = int(os.environ.get(MEMORY_VARIABLE, DEFAULT_MEMORY_MIB))
    except ValueError:
        mib = DEFAULT_MEMORY_MIB
    if mib <= 0:
        return
    try:
        import resource

        limit = mib * 2**20
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, ValueError, OSError):
        pass  # not POSIX, or not allowed: the deadline still holds


class _Host:
    def __init__(self, impl: Any, writer: int):
        from chatconform.contracts import get_contract

        self.impl, self.writer, self.contract = impl, writer, get_contract
        self.kept = Kept()

    def send(self, message: dict) -> None:
        data = memoryview(json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
        while data:
            data = data[os.write(self.writer, data):]

    def hello_reply(self, hello: dict) -> dict:
        impl = self.impl
        offered = hello.get("contracts", {})
        more_offered = hello.get("more_methods", {})
        contracts = [name for name in impl.contracts() if name in offered]
        more = [m for name in contracts for m in more_offered.get(name, ())
                if callable(getattr(impl.obj, m, None))]
        reply: dict[str, Any] = {"protocol": hello.get("protocol"), "name": impl.name, "version": impl.version,
                                 "language": "python", "contracts": contracts,
                                 "expected_failures": dict(impl.expected_failures)}
        if more:
            reply["more_methods"] = more
        providers = impl.options.get("providers")
        if providers:
            reply["providers"] = sorted(providers)
        if impl.options.get("models"):
            reply["models"] = dict(impl.options["models"])
        if impl.options.get("lifecycle") is False:
            reply["method_by_method"] = True
        return reply

    def answer(self, call: dict) -> dict:
        """The reply to one call: its result (and what became of the input), or the error."""
        contract = self.contract(call["contract"])
        wire = {method.name: method for method in contract.wire()}[call["method"]]
        changed: str | None = None
        returned: dict[str, str] = {}  # the input as it is after the call, for the parent to judge
        account: Callable[[], dict[str, str]] | None = None  # that, where the call raised
        if call.get("fresh"):
            self.kept.clear()
        if "resend" in call:  # a result the run would not read as a data pickle, as JSON
            try:
                return self._json_reply(call["id"], wire, self.kept.get(call["resend"]))
            except KeptMissing as exc:
                return {"id": call["id"], "error": {"type": "KeptMissing", "message": str(exc)}}
        try:
            if "arguments" in call:  # the parent's own objects (the built-in host's calls)
                blob = base64.b64decode(call["arguments"])
                own = call["method"] == contract.method
                frozen = Frozen.from_pickle(blob) if own and call.get("watch") else None
                try:
                    args, kwargs = frozen.copy() if frozen is not None else self.kept.loads(blob)
                except KeptMissing as exc:  # the run's error, not the implementation's
                    return {"id": call["id"], "error": {"type": "KeptMissing", "message": str(exc)}}
                kwargs = kept.named(kwargs)
                if frozen is not None:
                    account = partial(_returned_input, blob, (args, kwargs))
                method = getattr(self.impl.obj, call["method"])
                passed = kwargs
                if own and contract.optional_keywords:  # the parent's proxy could not tell which it takes
                    takes = taken_keywords(method, contract.optional_keywords)
                    passed = {k: v for k, v in kwargs.items() if k in takes or k not in contract.optional_keywords}
                output = _settled(method(*args, **passed))
                problem = contract.output_problem(output, args) if own else None
                if problem is not None:
                    return {"id": call["id"], "error": {"type": "MalformedResult", "message": problem}}
                if frozen is not None:
                    returned = _returned_input(blob, (args, kwargs))
            elif call["method"] == contract.method:
                case = contract.case_from_json(call["input"])
                frozen = contract.freeze(case)
                working = frozen.copy()
                account = partial(_changed_reply, frozen, working)
                output = _settled(contract.call(self.impl.method(contract), working, call.get("provider")))
                problem = contract.output_problem(output, case)
                if problem is not None:
                    return {"id": call["id"], "error": {"type": "MalformedResult", "message": problem}}
                changed = _changed(frozen, working)
            else:
                args, kwargs = wire.receive(call["input"]) if wire.receive else ((call["input"],), {})
                output = _settled(getattr(self.impl.obj, call["method"])(*args, **kwargs))
        except BaseException as exc:
            # An input edited before the raise is as lost to the caller as one edited before a result.
            return {"id": call["id"], "error": _error(exc), **(account() if account is not None else {})}
        reply: dict[str, Any] = {"id": call["id"], **returned}
        pickled = datapickle.dumps(output)
        if pickled is not None:  # the objects as they are, where they are data
            reply["pickled"] = pickled
            if "keep" in call:  # the checks may give them back (protocol.kept)
                self.kept.keep(call["keep"], output)
        else:
            answered = self._json_reply(call["id"], wire, output)
            if "error" in answered:
                return answered
            reply["result"] = answered["result"]
        if changed is not None:
            reply["input_changed"] = changed
        return reply

    @staticmethod
    def _json_reply(number: int, wire: Any, output: Any) -> dict[str, Any]:
        """The reply carrying ``output`` as the contract's JSON, or the error saying it cannot."""
        try:
            result = wire.result_json(output)
            json.dumps(result)  # fails here, as the implementation's, not in send
        except Exception as exc:
            why = f"the result cannot be sent as JSON ({type(exc).__name__}: {exc})"
            return {"id": number, "error": {"type": "MalformedResult", "message": why}}
        return {"id": number, "result": result}


def _returned_input(blob: bytes, working: Any) -> dict[str, str]:
    """What the parent judges the input by: the digest of the copy pickled again after the
    call, and the copy itself where its bytes differ from ``blob``, the bytes sent."""
    try:
        after = pickle.dumps(working, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # something that does not pickle was put into the input
        return {"input_changed": f"the implementation changed its input ({type(exc).__name__}: {exc})"}
    returned = {"input_digest": kept.digest(after)}
    if after != blob:
        returned["input_copy"] = base64.b64encode(after).decode("ascii")
    return returned


def _changed(frozen: Frozen, working: Any) -> str | None:
    """How the implementation changed its input, or None."""
    try:
        return "the implementation changed its input" if frozen.changed(working) else None
    except Exception as exc:
        return f"the implementation changed its input ({type(exc).__name__}: {exc})"


def _changed_reply(frozen: Frozen, working: Any) -> dict[str, str]:
    changed = _changed(frozen, working)
    return {} if changed is None else {"input_changed": changed}


def _settled(value: Any) -> Any:
    """A coroutine's result (an ``async def`` method), or the value."""
    return asyncio.run(value) if inspect.iscoroutine(value) else value


def _error(exc: BaseException) -> dict[str, Any]:
    from chatconform.frame.guard import implementation_frames

    error: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc),
                             "traceback": implementation_frames(exc)}
    if isinstance(exc, ValueError):
        error["invalid_input"] = True
    return error


def warm() -> None:
    """Load what every host needs before the fork server forks it (the contract catalog
    and its checks, the protocol's schemas, and pydantic-ai's message model, which every
    host of a history contract loads to read the histories it is sent), so a host starts in
    milliseconds, and its hosts share those modules' memory with the server rather than each
    importing its own copy. None of it starts a thread: forking stays safe."""
    from chatconform.contracts import all_contracts
    from chatconform.lazy import pai
    from chatconform.runner.protocol import messages

    all_contracts()
    for name in messages.MESSAGES:
        messages.schema(name)
    pai.ModelMessagesTypeAdapter  # noqa: B018 - the first read imports pydantic-ai


def serve(spec: str, entry: str | None = None) -> int:
    """Load ``spec`` (an entry-point name with ``entry``, its ``module:attr``) and answer the
    protocol on stdio until the parent stops it or goes."""
    reader, writer = _take_stdio()
    limit_memory()
    from chatconform.errors import ConfigError, MissingDependency

    try:
        impl = load(spec, entry)
    except MissingDependency as exc:
        print(LOAD_ERROR + str(exc), file=sys.stderr, flush=True)
        return MISSING_LIBRARY
    except ConfigError as exc:
        print(LOAD_ERROR + str(exc), file=sys.stderr, flush=True)
        return LOAD_FAILED
    return _answer_calls(impl, reader, writer)


def load(spec: str, entry: str | None = None) -> Any:
    """The implementation of ``spec``, loaded and warmed up in this process (the errors of
    :func:`chatconform.runner.loading.load_here`)."""
    from chatconform.runner.loading import load_here

    return load_here(spec, entry_value=entry)


def serve_loaded(impl: Any) -> int:
    """:func:`serve` for an implementation this process holds already: a host forked from a
    process that loaded it (:mod:`chatconform.runner.protocol.forked`)."""
    reader, writer = _take_stdio()
    limit_memory()
    return _answer_calls(impl, reader, writer)


def _answer_calls(impl: Any, reader: BinaryIO, writer: int) -> int:
    host = _Host(impl, writer)
    for line in reader:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "hello":
            host.send(host.hello_reply(message))
        elif kind == "call":
            host.send(host.answer(message))
        elif kind == "stop":
            break
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(LOAD_ERROR + "usage: python -m chatconform.runner.protocol.host SPEC", file=sys.stderr)
        return LOAD_FAILED
    return serve(args[0])


if __name__ == "__main__":
    sys.exit(main())
