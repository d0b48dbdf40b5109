"""Hostile implementations of the thread contract: each attacks the process it runs in.

Loaded by file spec (``tests/frontends/hostile.py:Name``) by test_hostile_implementations.
"""

import os
import re
import signal
import threading
import time

from chatconform.reference.thread import extract_thread


class _Thread:
    version = "1"

    def extract_thread(self, rows):
        return self.attack(rows)


class ExitZero(_Thread):
    name = "exit-zero"

    def attack(self, rows):
        os._exit(0)


class ExitOne(_Thread):
    name = "exit-one"

    def attack(self, rows):
        os._exit(1)


class KillSelf(_Thread):
    name = "kill-self"

    def attack(self, rows):
        os.kill(os.getpid(), signal.SIGKILL)


class HoldTheGil(_Thread):
    """A catastrophic regex backtrack: C code that never releases the GIL."""

    name = "hold-the-gil"

    def attack(self, rows):
        re.match(r"(a+)+$", "a" * 64 + "b")
        return extract_thread(rows)


class _Forever(list):
    def __iter__(self):
        while True:
            time.sleep(1)


class HangWhenIterated(_Thread):
    name = "hang-when-iterated"

    def attack(self, rows):
        return _Forever(extract_thread(rows))


class _SlowRow:
    parent_message_id = None

    @property
    def id(self):
        while True:
            time.sleep(1)


class HangWhenRead(_Thread):
    name = "hang-when-read"

    def attack(self, rows):
        return [_SlowRow() for _ in rows] or [_SlowRow()]


class _BadRow:
    parent_message_id = None

    @property
    def id(self):
        raise RuntimeError("no id today")


class RaiseWhenRead(_Thread):
    name = "raise-when-read"

    def attack(self, rows):
        return [_BadRow() for _ in rows] or [_BadRow()]


class CloseStdio(_Thread):
    """Closes fd 0 and 1, where a program's protocol would run, then answers wrongly."""

    name = "close-stdio"

    def attack(self, rows):
        for fd in (0, 1):
            try:
                os.close(fd)
            except OSError:
                pass
        return rows[1:]


class RewireTheEngine(_Thread):
    """Blanks every check and makes evaluate_case report nothing, in its own process, then
    returns an empty thread (wrong for any row)."""

    name = "rewire-the-engine"

    def attack(self, rows):
        from chatconform.contracts import all_checks
        from chatconform.engine import evaluate, results

        for check in all_checks():
            object.__setattr__(check, "evaluate", None)
        evaluate.evaluate_case = lambda *args, **kwargs: results.Evaluation()
        return []


class ChangeFolder(_Thread):
    """Moves to another folder and answers correctly."""

    name = "change-folder"

    def attack(self, rows):
        os.chdir(os.environ.get("HOSTILE_FOLDER", "/"))
        return extract_thread(rows)


class MutateLater(_Thread):
    """Answers correctly, and empties its input 2 ms later from a thread it leaves running."""

    name = "mutate-later"

    def attack(self, rows):
        def later():
            time.sleep(0.002)
            rows.clear()

        threading.Thread(target=later, daemon=True).start()
        return extract_thread(rows)


class AllocateTooMuch(_Thread):
    """Asks for 8 GiB at once."""

    name = "allocate-too-much"

    def attack(self, rows):
        return [bytearray(8 * 2**30)]


# -- forging the facts a verdict is made of, from its own process -----------------------------------

class EditAndRewireTheDetector(_Thread):
    """Empties its input, and replaces the host's change detector with one that sees nothing."""

    name = "edit-and-rewire-the-detector"

    def attack(self, rows):
        from chatconform.runner.protocol import host

        host._changed = lambda frozen, working: None
        answer = extract_thread(rows)
        rows.clear()
        return answer


class SleepAndRewireTheClock(_Thread):
    """Sleeps a second a call, and stops the clock of its own process first."""

    name = "sleep-and-rewire-the-clock"

    def attack(self, rows):
        time.sleep(1.0)
        time.perf_counter = lambda: 0.0
        time.monotonic = lambda: 0.0
        return extract_thread(rows)


# -- replies that cost more to read than they weigh -------------------------------------------------

def _reduce_pickle(call, args) -> str:
    """A pickle (base64) whose loading calls ``call(*args)``."""
    import base64
    import pickle

    class Call:
        def __reduce__(self):
            return call, args

    return base64.b64encode(pickle.dumps(Call(), protocol=5)).decode()


def _raw_pickle(data: bytes) -> str:
    import base64

    return base64.b64encode(data).decode()


def _send_instead(pickled: str):
    """Every result of this process goes back as ``pickled`` (its host's result writer rewired)."""
    from types import SimpleNamespace

    from chatconform.runner.protocol import host

    host.datapickle = SimpleNamespace(dumps=lambda output: pickled)


class ReplyAllocatingGigabytes(_Thread):
    """A 60-byte reply whose loading would call ``bytearray(3 GiB)``."""

    name = "reply-allocating-gigabytes"

    def attack(self, rows):
        _send_instead(_reduce_pickle(bytearray, (3 * 2**30,)))
        return extract_thread(rows)


class ReplyExpandingARange(_Thread):
    """A reply whose loading would walk a billion numbers: ``deque(range(10**9), 0)``."""

    name = "reply-expanding-a-range"

    def attack(self, rows):
        import collections

        _send_instead(_reduce_pickle(collections.deque, (range(10**9), 0)))
        return extract_thread(rows)


class ReplyStoringAtAFarMemoIndex(_Thread):
    """A 10-byte reply whose one memo store, at index 10**9, would make the unpickler
    allocate a table of 16 GB."""

    name = "reply-storing-at-a-far-memo-index"

    def attack(self, rows):
        import struct

        _send_instead(_raw_pickle(b"\x80\x05N" + b"r" + struct.pack("<I", 10**9) + b"."))
        return extract_thread(rows)


class ReplyNestedAMillionDeep(_Thread):
    """A reply of a list nested a million deep (two bytes a level)."""

    name = "reply-nested-a-million-deep"

    def attack(self, rows):
        depth = 10**6
        _send_instead(_raw_pickle(b"\x80\x05" + b"]" * depth + b"a" * (depth - 1) + b"."))
        return extract_thread(rows)


class ReplyHashingSharedTuples(_Thread):
    """A 400-byte reply of a frozenset holding t_100, where t_k = (t_k-1, t_k-1): loading it
    would hash 2**100 tuples, in C, holding the run's GIL."""

    name = "reply-hashing-shared-tuples"

    def attack(self, rows):
        body = b"))\x86\x94" + b"".join(b"h" + bytes([level]) + b"\x86\x94" for level in range(100))
        _send_instead(_raw_pickle(b"\x80\x05(" + body + b"\x91."))
        return extract_thread(rows)


class ReplySharingAList(_Thread):
    """A 200 kB reply of 100,000 references to one list of 1,000 items: 10**8 objects to any
    walk of it (a check comparing it, printing it, or writing it as JSON)."""

    name = "reply-sharing-a-list"

    def attack(self, rows):
        import pickle

        _send_instead(_raw_pickle(pickle.dumps([[0] * 1000] * 100_000, protocol=5)))
        return extract_thread(rows)


class ReplyRewiringAClass(_Thread):
    """A reply whose loading would set ``ModelRequest.__eq__`` to ``slice`` in the run's own
    process (BUILD's slot state applied to the class): every request equal to anything."""

    name = "reply-rewiring-a-class"

    def attack(self, rows):
        global_ = b"\x8c\x14pydantic_ai.messages\x8c\x0cModelRequest\x93"
        _send_instead(_raw_pickle(b"\x80\x05" + global_ + b"N}\x8c\x06__eq__\x8c\x08builtins\x8c\x05slice\x93s\x86b."))
        return extract_thread(rows)


class JsonNestedAMillionDeep(_Thread):
    """A reply line of JSON nested a million deep."""

    name = "json-nested-a-million-deep"

    def attack(self, rows):
        from chatconform.runner.protocol import host

        def send(self, message):
            deep = "[" * 10**6 + "]" * 10**6
            line = f'{{"id": {message.get("id", 0)}, "result": {deep}}}\n'
            data = memoryview(line.encode())
            while data:
                data = data[os.write(self.writer, data):]

        host._Host.send = send
        return extract_thread(rows)


class HostileName(_Thread):
    """A name holding what each output format must not take raw: terminal escapes (an OSC
    that retitles the window, a screen clear), NUL and VT (no XML 1.0 character), a newline,
    a pipe and a backtick (a markdown table's row and cell ends); it answers wrongly."""

    name = "evil\x1b]0;pwned\x07\x1b[2J|name`\nsecond line\x00\x0b\x9b"

    def attack(self, rows):
        return rows[1:]


# -- processes that leave the process group ----------------------------------------------------------

class LeaveTheGroup(_Thread):
    """Each call starts two processes outside its process group, noting their pids in the file
    ``HOSTILE_PIDS`` names: a ``sleep`` in a session of its own, and a daemon (forked twice,
    in a new session, its parent gone); then answers correctly."""

    name = "leave-the-group"

    def attack(self, rows):
        from tests.processes import leave_the_group

        leave_the_group(os.environ["HOSTILE_PIDS"])
        return extract_thread(rows)
