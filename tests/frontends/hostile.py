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
