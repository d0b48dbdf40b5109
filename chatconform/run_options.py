"""The options of a run, defined once for both front ends that start one.

``chatconform run`` adds each entry of :data:`RUN_OPTIONS` as ``--NAME`` and the pytest
plugin as ``--chatconform-NAME``, from the same name, type, default, choices and help, so
the two cannot drift apart (``tests/frontends/test_run_options.py``). The choices come from
where the values are defined: the profiles from ``chatconform.frame.profiles``, the
providers from ``chatconform.providers``. An entry with ``command_line_only`` set is offered
by ``chatconform run`` alone, saying which of pytest's own options does its work there.

Reading this module imports neither Hypothesis nor pydantic-ai: every pytest session of
anyone who installed chatconform loads the plugin, and ``--help`` should stay quick.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from chatconform.frame.argtypes import jobs, non_negative_int, positive_int, positive_seconds, shard
from chatconform.frame.guard import DEFAULT_TIMEOUT
from chatconform.frame.profiles import PROFILES
from chatconform.providers import PROVIDER_IDS

#: The prefix of the pytest plugin's options: ``--profile`` is ``--chatconform-profile`` there.
PYTEST_PREFIX = "chatconform-"

#: The memory cap of each implementation's process when ``--memory-limit`` is not given, in
#: MiB; the host's own default (``chatconform.runner.protocol.host_codes``), which the layers
#: below the front ends keep, and a test holds equal.
DEFAULT_MEMORY_MIB = 4096

IMPL_METAVAR = "NAME|module:attr|file.py:attr|exec:CMD"


@dataclass(frozen=True)
class RunOption:
    """One option of a run: its name (``--NAME``; ``dest`` is the name with ``_`` for ``-``),
    how its text is read (``type``), its default, its choices, its help. ``repeat``: given
    any number of times, a list; ``flag``: takes no value, False unless given."""

    name: str
    help: str
    type: Callable[[str], Any] | None = None
    default: Any = None
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    repeat: bool = False
    flag: bool = False
    #: A one-letter spelling on the command line (``-j``).
    short: str | None = None
    #: Why pytest has no ``--chatconform-NAME``: which of its own options does the work.
    command_line_only: str | None = None

    @property
    def dest(self) -> str:
        return self.name.replace("-", "_")

    def arguments(self) -> dict[str, Any]:
        """The keyword arguments of ``argparse``'s ``add_argument``, which pytest's
        ``addoption`` takes as they are."""
        if self.flag:
            return {"action": "store_true", "default": False, "help": self.help}
        arguments: dict[str, Any] = {"default": [] if self.repeat else self.default, "help": self.help}
        if self.repeat:
            arguments["action"] = "append"
        for key in ("type", "metavar", "choices"):
            if getattr(self, key) is not None:
                arguments[key] = getattr(self, key)
        return arguments


def _profiles_help() -> str:
    return "; ".join(f"{name}: {profile.description}" for name, profile in PROFILES.items()) + " (default: ci)"


RUN_OPTIONS: tuple[RunOption, ...] = (
    RunOption("impl", "implementation to check (repeatable; default: every registered one); exec:'COMMAND ARGS' "
                      "runs a program in any language (docs/protocol.md)", metavar=IMPL_METAVAR, repeat=True),
    RunOption("contract", "contract to run, such as thread or payload (repeatable; default: all); "
                          "`chatconform list` names them with their checks", metavar="NAME", repeat=True),
    RunOption("check", "only this check, such as thread.reaches_root (repeatable)", metavar="ID", repeat=True),
    RunOption("provider", "run the payload-bound checks only for this provider (repeatable): "
                          + ", ".join(PROVIDER_IDS), metavar="ID", choices=PROVIDER_IDS, repeat=True),
    RunOption("profile", _profiles_help(), default="ci", choices=tuple(PROFILES)),
    RunOption("seed", "random but repeatable cases from this seed", type=int, metavar="N"),
    RunOption("examples", "examples per search instead of the profile's (a quick look, not a gate)",
              type=positive_int, metavar="N"),
    RunOption("timeout", f"the deadline of a call on a small input (default {DEFAULT_TIMEOUT:g}), "
                         "times (1 + items/1000)^2 for a larger one", type=positive_seconds, metavar="SECONDS"),
    RunOption("jobs", "run the searches in N worker processes (auto: one per CPU; the default, or "
                      "$CHATCONFORM_JOBS; 1 with --in-process); the verdicts and the report are those of a "
                      "serial run", type=jobs, metavar="N", short="-j",
              command_line_only="pytest-xdist's -n spreads the items over workers"),
    RunOption("shard", "run only the I-th of N equal shares of the searches (a CI matrix); summary and diff "
                       "merge the N reports", type=shard, metavar="I/N",
              command_line_only="pytest selects its own items (-k, --deselect)"),
    RunOption("report", "write a JSON-lines report (checked and locked at the start, written atomically at "
                        "the end)", metavar="FILE.jsonl",
              command_line_only="pytest reports each item itself"),
    RunOption("junit-xml", "also write a JUnit XML file, one test case per (implementation, check), for CI "
                           "test reports (checked and locked at the start, written atomically at the end)",
              metavar="FILE.xml", command_line_only="pytest's own --junitxml"),
    RunOption("in-process", "load Python implementations in the run's own process, for a debugger's "
                            "breakpoints (default: each runs in a process of its own, so a crash, hang or exit "
                            "is a verdict and cannot stop the run or fake a pass)", flag=True),
    RunOption("memory-limit", f"the address space each implementation's process may map, in MiB (default "
                              f"{DEFAULT_MEMORY_MIB}; 0: no cap): past it, an allocation fails there, as a "
                              "no_crash verdict", type=non_negative_int, metavar="MIB"),
    RunOption("strict", "fail on warning-level findings too (portability hazards, advice; default: they pass "
                        "with a warning)", flag=True),
    RunOption("shrink-expected", "shrink expected failures to minimal cases too (default: a gate run only "
                                 "reaches them, and reports the case each was first seen on)", flag=True),
    RunOption("verbose", "print every counterexample in full (default: the smallest per check)", flag=True,
              short="-v", command_line_only="pytest prints each failing item's smallest case"),
)


def add_to_command(parser: Any) -> None:
    """Add every run option to ``parser`` (an ``argparse`` parser) as ``--NAME``."""
    for option in RUN_OPTIONS:
        spellings = [f"--{option.name}", *([option.short] if option.short else [])]
        parser.add_argument(*spellings, **option.arguments())


def add_to_pytest(group: Any) -> None:
    """Add the run options pytest offers to ``group`` (a pytest option group) as ``--chatconform-NAME``."""
    for option in RUN_OPTIONS:
        if option.command_line_only is None:
            group.addoption(f"--{PYTEST_PREFIX}{option.name}", **option.arguments())


def set_memory_limit(mib: int | None) -> None:
    """Have every implementation process started from now on cap its memory at ``mib`` MiB
    (0: no cap); None leaves the host's default. The host reads the cap from its environment."""
    if mib is not None:
        from chatconform.runner.protocol.host_codes import MEMORY_VARIABLE

        os.environ[MEMORY_VARIABLE] = str(mib)


def narrow_providers(impls: Iterable[Any], providers: list[str]) -> None:
    """Narrow each loaded implementation's ``providers`` to ``providers``; none given: all it declares."""
    for impl in impls if providers else ():
        impl.select("providers", set(providers))
