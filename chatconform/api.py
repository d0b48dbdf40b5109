"""The one-call API: ``run_conformance(MyImpl)`` from any test suite or script."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from chatconform import engine
from chatconform.frame.guard import DEFAULT_TIMEOUT
from chatconform.frame.profiles import get_profile
from chatconform.runner import discovery


def run_conformance(
    implementation: Any,
    *,
    contracts: Iterable[str] | None = None,
    checks: Iterable[str] | None = None,
    profile: str = "ci",
    seed: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    examples: int | None = None,
    shrink: bool = True,
    shrink_expected: bool = False,
    jobs: int = 1,
    in_process: bool = False,
) -> list[engine.Verdict]:
    """Run the selected contracts against one implementation; return its verdicts.

    ``implementation`` is an entry-point name, ``module:attr``, or the object itself
    (class, instance or zero-argument factory). ``examples`` replaces the profile's
    example budget: that many examples per search. ``shrink=False`` reports failures
    unshrunk, and stops searching once every selected check has failed; an expected failure
    is only reached, not shrunk, unless ``shrink_expected``. ``jobs`` > 1 runs the
    searches in that many worker processes, with the same verdicts; each loads the
    implementation again, so an object must be a class or factory defined at a module's top
    level (an instance cannot be sent), and a script that calls this needs the usual
    ``if __name__ == "__main__":`` guard.

    The implementation runs in a process of its own, so its crash or hang is a verdict
    (an instance, which exists only in this process, runs here); ``in_process=True`` runs it
    here, for a debugger's breakpoints, at the cost of that protection.
    """
    impl = discovery.load(implementation, in_process=in_process) if isinstance(implementation, str) else \
        discovery.load_object(implementation, in_process=in_process)
    selection = engine.select(contracts, checks)
    return engine.run([impl], selection, get_profile(profile, examples=examples), seed=seed, timeout=timeout,
                      shrink=shrink, shrink_expected=shrink_expected, jobs=jobs).verdicts
