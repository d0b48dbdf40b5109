"""Inputs the command line and the pytest plugin check before anything runs: argparse
types for option values (input files are read by :mod:`chatconform.inputs`)."""

from __future__ import annotations

import argparse
import math
import os


def _whole_number(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least {least}, got {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be at least {least}, got {value}")
    return value


def positive_int(text: str) -> int:
    """A whole number of at least 1 (``--examples``)."""
    return _whole_number(text, 1)


def non_negative_int(text: str) -> int:
    """A whole number of at least 0 (``--memory-limit``, where 0 means no cap)."""
    return _whole_number(text, 0)


def port(text: str) -> int:
    """A TCP port, 0 (any free one) to 65535 (``serve --port``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 0 to 65535, got {value}")
    return value


def cpus() -> int:
    """The CPUs this process may run on (its affinity, where the system tells it)."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def jobs(text: str) -> int:
    """``--jobs``: a number of worker processes, or ``auto`` for one per CPU."""
    if text == "auto":
        return cpus()
    try:
        return positive_int(text)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{exc} (or auto)") from None


#: The environment variable that sets ``--jobs`` when the command line does not.
JOBS_VARIABLE = "CHATCONFORM_JOBS"


def default_jobs(in_process: bool) -> int:
    """``--jobs`` when not given: :data:`JOBS_VARIABLE` if set, else one worker per CPU (a
    run's searches are independent, and most of their time is spent in the implementations'
    own processes, so a second core nearly halves a large run); 1 with ``--in-process``, whose
    point is a debugger's breakpoints in this process."""
    text = os.environ.get(JOBS_VARIABLE, "").strip()
    if text:
        try:
            return jobs(text)
        except argparse.ArgumentTypeError as exc:
            from chatconform.errors import ConfigError

            raise ConfigError(f"{JOBS_VARIABLE}={text!r}: {exc}") from None
    return 1 if in_process else cpus()


def shard(text: str) -> tuple[int, int]:
    """``--shard I/N``: the I-th of N shards, 1 <= I <= N."""
    index, slash, count = text.partition("/")
    try:
        if not slash:
            raise ValueError
        value = int(index), int(count)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected I/N, such as 1/4, got {text!r}") from None
    if value[1] < 1 or not 1 <= value[0] <= value[1]:
        raise argparse.ArgumentTypeError(f"expected I/N with 1 <= I <= N, got {text!r}")
    return value


def size_list(text: str) -> list[int]:
    """Comma-separated sizes, each a whole number of at least 1 (``bench --sizes``);
    ``1e5`` and ``100_000`` are read too."""
    sizes = []
    for item in text.split(","):
        item = item.strip().replace("_", "")
        try:
            value = float(item) if "e" in item.lower() else int(item)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected sizes such as 1000,10000,100000, got {text!r}") from None
        if value != int(value) or value < 1:
            raise argparse.ArgumentTypeError(f"each size must be a whole number of at least 1, got {item!r}")
        sizes.append(int(value))
    return sizes


def positive_seconds(text: str) -> float:
    """A positive, finite number of seconds (``--timeout``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive, finite number of seconds, got {text}")
    return value
