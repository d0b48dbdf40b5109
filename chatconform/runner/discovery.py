"""Finding implementations and choosing where each runs.

An implementation is loaded (:mod:`chatconform.runner.loading`: entry points, ``module:attr``,
files) in a process of its own by default (:func:`chatconform.runner.protocol.start_host`):
the object here answers its calls over the ``exec:`` protocol, so a crash, a hang or a
tampered interpreter there is a verdict, never the run's end. ``in_process=True`` imports it
here instead, for debugging; ``exec:COMMAND`` starts a program in any language.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from chatconform.errors import ConfigError, MissingDependency
from chatconform.runner import loading
from chatconform.runner.loading import (
    GROUP,
    REFERENCE_TARGET,
    Implementation,
    absolute_spec,
    load_here,
    portable_spec,
    registered,
    registered_order,
    relative_spec,
    warm_up,
    wrap,
)

__all__ = ["GROUP", "REFERENCE_TARGET", "Implementation", "absolute_spec", "hosted", "load", "load_all",
           "load_installed", "load_object", "portable_spec", "registered", "registered_order", "relative_spec",
           "warm_up", "wrap"]


def load_installed(note: Callable[[str], None], *, in_process: bool = False) -> list[Implementation]:
    """Every registered implementation that loads; ``note`` gets one line per one that does not
    (an adapter whose extra is not installed), so a default run goes on without it."""
    return load_all(registered_order(), in_process=in_process, missing=note)


def load_all(specs: Sequence[str], *, in_process: bool = False,
             missing: Callable[[str], None] | None = None) -> list[Implementation]:
    """:func:`load` each of ``specs``, in their order; the first error, in that order, is raised.

    Implementations that run in processes of their own start side by side, one per CPU at a
    time (so none drifts toward its start-up deadline): each process imports its library and
    warms up while the next one starts (the eight bundled adapters took about 7 s one after
    another on two cores). ``in_process`` loads them one after another on this thread, as a
    debugger expects. ``missing``: one whose library is not installed is left
    out, with one line to ``missing``, instead of raising.
    """
    if in_process or len(specs) < 2:
        outcomes: list[Any] = []
        for spec in specs:
            try:
                outcomes.append(load(spec, in_process=in_process))
            except MissingDependency as exc:
                if missing is None:
                    raise
                outcomes.append(exc)
    else:
        pool = ThreadPoolExecutor(max_workers=min(len(specs), os.cpu_count() or 1),
                                  thread_name_prefix="chatconform-load")
        try:
            outcomes = [future.result() for future in [pool.submit(_outcome, spec) for spec in specs]]
        finally:  # on a stop, what has not started does not start
            pool.shutdown(wait=False, cancel_futures=True)
    loaded = []
    for outcome in outcomes:
        if isinstance(outcome, MissingDependency) and missing is not None:
            missing(f"skipped {outcome}")
        elif isinstance(outcome, BaseException):
            raise outcome
        else:
            loaded.append(outcome)
    return loaded


def _outcome(spec: str) -> Implementation | Exception:
    """:func:`load`'s implementation, or the exception it raised (raised later, in order)."""
    try:
        return load(spec)
    except Exception as exc:
        return exc


def load(spec: str, *, in_process: bool = False, entry_value: str | None = None,
         warm: bool = True) -> Implementation:
    """Load ``spec``: an entry-point name, ``module:attr``, ``path/to/file.py:attr``, or
    ``exec:COMMAND`` (a program in any language, :mod:`chatconform.runner.protocol`).

    A Python implementation runs in a process of its own unless ``in_process`` (or it is
    the bundled reference, :data:`REFERENCE_TARGET`). A file
    spec is kept with the file's absolute path, so the spec a failure records (and the
    regression test it prints) loads the same file from any working directory. An
    entry-point name is resolved here (``entry_value``: its ``module:attr``, as this process
    resolved it for the one that loads it). A report records the spec as given, relative
    (:attr:`Implementation.shown_spec`). ``warm``: call its ``warm_up()`` (False: only to
    read what it declares, as listing does; a hosted one warms up in its own process).
    """
    if spec.startswith("exec:"):
        from chatconform.runner.protocol import start

        impl = wrap(start(spec), spec)
    elif in_process:
        impl = load_here(spec, entry_value=entry_value, warm=warm)
    else:
        entry = loading.entry_value(spec)
        impl = load_here(spec, warm=warm) if REFERENCE_TARGET in (absolute_spec(spec), entry) else hosted(spec)
    impl.shown_spec = relative_spec(spec)
    return impl


def hosted(spec: str) -> Implementation:
    """``spec`` in a process of its own behind the built-in host, whatever it is (the bundled
    reference too, which :func:`load` keeps in this process)."""
    from chatconform.runner.protocol import start_host

    impl = wrap(start_host(absolute_spec(spec), loading.entry_value(spec)), absolute_spec(spec))
    impl.hosted = True
    return impl


def load_object(target: Any, *, in_process: bool = False) -> Implementation:
    """An implementation given as an object (class, instance or factory). It runs in a
    process of its own when it can be loaded there by a spec (:func:`portable_spec`: a class
    or factory at a module's top level); an instance, or a class made inside a function,
    exists in this process alone and runs here, as ``in_process`` asks for any."""
    impl = wrap(target)
    try:
        spec = portable_spec(impl) if not in_process else None
    except ConfigError:
        spec = None
    if spec is None:
        warm_up(impl)
        return impl
    return load(spec)


