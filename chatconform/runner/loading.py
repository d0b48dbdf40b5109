"""Loading an implementation in this process: the entry-point group, ``module:attr`` or a
file without installing, and the object made an :class:`Implementation`.

An implementation is any object with some contract methods (found by presence) and a
``name`` and ``version``; optional ``expected_failures``, and the settings its contracts
read (``providers`` for ``to_payload``; each contract declares and validates its own).
An optional ``warm_up()`` is called once when it is loaded to be run, never when it is only
listed (``chatconform list``): where it imports its libraries and builds its clients, so
that listing stays fast and a run's first call is not charged with them (a ConfigError it
raises is the load's error, as one its module raises when imported is).
Each contract method must take the calls its contract's ``signature`` describes (an
``async def`` or any callable does; ``*args``/``**kwargs`` take every call): one that
cannot is refused when it loads, not failed as ``no_crash`` at its first call.
The target may be a class (instantiated), an instance, or a zero-argument factory.

Where it runs (here, or in a process of its own) is :mod:`chatconform.runner.discovery`'s
choice; the built-in host, in that process, loads it with :func:`load_here`.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
import os
import sys
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

from chatconform.contracts import all_contracts, get_check
from chatconform.errors import ConfigError
from chatconform.frame.contract import Contract

GROUP = "chatconform.implementations"
#: The bundled reference: chatconform's own code, which defines the expected behaviour. It
#: runs in the searching process; isolation guards the run against the code under test.
REFERENCE_TARGET = "chatconform.reference:ReferenceImplementation"


@dataclass
class Implementation:
    name: str
    version: str
    spec: str  # how to load it again: an entry-point name or module:attr
    obj: Any
    options: dict[str, Any] = field(default_factory=dict)  # settings the contracts read
    expected_failures: dict[str, str] = field(default_factory=dict)
    #: What a run narrowed a set-valued option to (``run --provider``), by option name.
    selected: dict[str, frozenset[str]] = field(default_factory=dict)
    #: What that narrowing left out of the implementation's own set, by option name: an
    #: expected failure may fail only there, so one that held is undecided, not an unexpected pass.
    left_out: dict[str, frozenset[str]] = field(default_factory=dict)
    #: The object it was made from when it was given as one rather than by a spec (a worker
    #: process loads it again from its class or factory: :mod:`chatconform.engine.parallel`).
    target: Any = None
    #: Whether it runs in a process of its own behind the built-in host (a worker process
    #: loads it the same way).
    hosted: bool = False
    #: The spec as a report's header records it (:func:`relative_spec`), where :attr:`spec`
    #: holds a file's absolute path, to load it again from anywhere; None: :attr:`spec`.
    shown_spec: str | None = None

    def select(self, option: str, allowed: set[str] | frozenset[str]) -> None:
        """Narrow the set-valued ``option`` (e.g. ``providers``) to ``allowed`` for this run."""
        self.selected[option] = frozenset(allowed)
        if isinstance(self.options.get(option), frozenset):
            before = self.options[option]
            self.options[option] = before & self.selected[option]
            if before - self.options[option]:
                self.left_out[option] = before - self.options[option]

    def method(self, contract: Contract):
        return contract.bind(self)

    def contracts(self) -> list[str]:
        return [name for name, c in all_contracts().items() if self.method(c) is not None]


def registered() -> dict[str, Any]:
    """Entry points of the group, by name."""
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def registered_order() -> list[str]:
    """Registered names as runs list them: the reference first, then the rest by name."""
    return sorted(registered(), key=lambda name: (name != "reference", name))


def load_here(spec: str, *, entry_value: str | None = None, warm: bool = True) -> Implementation:
    """``spec`` (an entry-point name, ``module:attr`` or ``path/to/file.py:attr``) imported and
    made an :class:`Implementation` in this process; ``entry_value``: an entry-point name's
    ``module:attr``, as the process that named it resolved it. ``warm``: call its ``warm_up()``."""
    if ":" in spec:
        target = _resolve_attr(absolute_spec(spec))
    else:
        eps = registered() if entry_value is None else {spec: EntryPoint(spec, entry_value, GROUP)}
        if spec not in eps:
            known = ", ".join(sorted(eps)) or "none installed"
            raise ConfigError(f"no implementation named {spec!r} (registered: {known}); "
                              "give an entry-point name or module:attr")
        try:
            target = eps[spec].load()
        except ConfigError as exc:  # the module says what is wrong (say, what to install)
            raise type(exc)(f"implementation {spec!r}: {exc}") from None
        except Exception as exc:
            raise ConfigError(f"implementation {spec!r} ({eps[spec].value}) failed to import: "
                              f"{type(exc).__name__}: {exc}") from None
    impl = wrap(target, absolute_spec(spec) if ":" in spec else spec)
    if warm:
        warm_up(impl)
    return impl


def entry_value(spec: str) -> str | None:
    """The ``module:attr`` of an entry-point name (None for a ``module:attr`` spec)."""
    if ":" in spec:
        return None
    eps = registered()
    if spec not in eps:
        load_here(spec)  # the error of an unknown name, said here
    return eps[spec].value


def warm_up(impl: Implementation) -> None:
    """Call the implementation's ``warm_up()`` (or await it), if it has one (see the module
    docstring): a ConfigError it raises names the implementation, any other exception is one too."""
    fn = getattr(impl.obj, "warm_up", None)
    if not callable(fn):
        return
    try:
        result = fn()
        if inspect.iscoroutine(result):
            asyncio.run(result)
    except ConfigError as exc:  # its own words (say, a library that fails to import)
        raise type(exc)(f"{impl.spec}: {exc}") from None
    except Exception as exc:
        raise ConfigError(f"{impl.spec}: warm_up() raised {type(exc).__name__}: {exc}") from None


def absolute_spec(spec: str, base: str | Path | None = None) -> str:
    """``spec`` with a relative ``file.py`` path made absolute (against ``base``, else the
    working directory); any other spec unchanged."""
    module, sep, attr = spec.rpartition(":")
    if not sep or not module.endswith(".py"):
        return spec
    path = Path(module).expanduser()
    if not path.is_absolute():
        path = Path(base or os.getcwd()) / path
    return f"{os.path.normpath(path)}:{attr}"


#: What marks a project's root folder. A report, a saved failure and a regression test name a
#: file implementation by its path from there, so each reads the same from any folder or
#: machine that holds the project; :func:`find_spec_file` looks for it there again.
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def project_root(folder: Path) -> Path | None:
    """The nearest folder at or above ``folder`` holding one of :data:`PROJECT_MARKERS`."""
    for candidate in (folder, *folder.parents):
        if any((candidate / marker).exists() for marker in PROJECT_MARKERS):
            return candidate
    return None


def relative_spec(spec: str, base: str | Path | None = None) -> str:
    """``spec`` as a report, a saved failure and a regression test record it: a ``file.py`` path
    from the root of the project holding the file (:func:`project_root`), else from ``base``
    (the working directory by default) when the file is inside it, so none holds a machine's
    folders; a file in neither, and any other spec, unchanged."""
    module, sep, attr = spec.rpartition(":")
    if not sep or not module.endswith(".py"):
        return spec
    given = Path(os.path.normpath(Path(module).expanduser()))
    path = given if given.is_absolute() else Path(os.path.normpath(Path(base or os.getcwd()) / given))
    for folder in (project_root(path.parent), Path(base or os.getcwd())):
        if folder is not None and path.is_relative_to(folder):
            return f"{path.relative_to(folder).as_posix()}:{attr}"
    return spec


def find_spec_file(spec: str, near: Path | None) -> str:
    """``spec`` with a relative ``file.py`` path found where :func:`relative_spec` wrote it from:
    the root of the project holding ``near`` (a regression test's own file), else the working
    directory. A ConfigError naming both places when the file is in neither."""
    module, sep, _ = spec.rpartition(":")
    if not sep or not module.endswith(".py") or Path(module).expanduser().is_absolute():
        return absolute_spec(spec)
    root = project_root(near.parent) if near is not None else None
    places = [folder for folder in (root, Path.cwd()) if folder is not None]
    for folder in places:
        if (folder / module).is_file():
            return absolute_spec(spec, folder)
    where = " or ".join(f"{folder}" + (" (the project root of " + str(near) + ")" if folder == root else
                                       " (the working folder)") for folder in places)
    raise ConfigError(f"{spec}: no file {module} under {where}")


def _contract_methods() -> list[str]:
    return [c.method for c in all_contracts().values() if not c.composes]


def _has_contract_method(obj: Any) -> bool:
    return any(callable(getattr(obj, m, None)) for m in _contract_methods())


def wrap(target: Any, spec: str | None = None) -> Implementation:
    """Turn a class, instance or factory into an :class:`Implementation`."""
    obj = _instantiate(target, spec)
    label = spec or _describe(obj)
    if not _has_contract_method(obj):
        raise ConfigError(f"{label} ({type(obj).__name__}) has none of the contract methods: "
                          f"{', '.join(_contract_methods())}")
    name, version = _identity(obj, label)
    _check_calls(obj, label)
    expected = dict(getattr(obj, "expected_failures", None) or {})
    for check_id in expected:
        try:
            get_check(check_id)
        except ConfigError as exc:
            raise ConfigError(f"{label}: expected_failures names {exc}") from None
    options: dict[str, Any] = {}
    for contract in all_contracts().values():
        options.update(contract.read_options(obj, label))
    return Implementation(
        name=name,
        version=version,
        spec=label,
        obj=obj,
        options=options,
        expected_failures=expected,
        target=target if spec is None else None,
    )


def _identity(obj: Any, label: str) -> tuple[str, str]:
    """The ``name`` and ``version`` reports show, which every implementation declares (a
    name not empty, as the ``exec:`` protocol's hello-reply has it)."""
    name, version = getattr(obj, "name", None), getattr(obj, "version", None)
    missing = [attr for attr, absent in (("name", name is None or name == ""), ("version", version is None)) if absent]
    if missing:
        raise ConfigError(f"{label} ({type(obj).__name__}) has no {' and no '.join(missing)}: an implementation "
                          "declares both, as reports show them (name = \"my-app\", version = \"1.4.0\")")
    return str(name), str(version)


def _check_calls(obj: Any, label: str) -> None:
    """A ConfigError, in one line, for a contract method that cannot take the calls the engine
    makes (``trim(self, history, n)``), naming the contract's signature and the one found; a
    method taking ``*args``/``**kwargs`` (a program's) takes every call."""
    for contract in all_contracts().values():
        if not callable(getattr(obj, contract.method, None)):
            continue
        for call in contract.calls():
            fn = getattr(obj, call.method, None)
            mismatch = call.mismatch(fn) if callable(fn) else None
            if mismatch is not None:
                found, why = mismatch
                raise ConfigError(f"{label}: {found} does not match the {contract.name} contract's "
                                  f"{call.text}: {why}")


def portable_spec(impl: Implementation) -> str:
    """A spec a worker process can load the implementation from.

    An implementation named by a spec is loaded from that spec. One given as an object
    (``run_conformance(MyImpl, jobs=2)``) is named by its module and qualified name when
    that module can be imported by name, or else by its file (a class in a test module
    or a script); an instance, or a class defined inside a function, cannot be sent.
    """
    if impl.target is None:
        return impl.spec
    target = impl.target
    name, module_name = getattr(target, "__qualname__", None), getattr(target, "__module__", None)
    if (not (inspect.isclass(target) or inspect.isfunction(target)) or not name or "<locals>" in name
            or not isinstance(module_name, str)):
        raise ConfigError(
            f"{impl.spec}: cannot send {type(target).__name__} {impl.name!r} to worker processes; give a class "
            "or zero-argument factory defined at a module's top level, or a spec ('module:attr', "
            "'file.py:attr'), or run with jobs=1")
    module = sys.modules.get(module_name)
    if module_name != "__main__":
        try:
            findable = importlib.util.find_spec(module_name) is not None
        except (ImportError, ValueError):
            findable = False
        if findable:
            return f"{module_name}:{name}"
    path = getattr(module, "__file__", None)
    if path and Path(path).suffix == ".py":
        return f"{Path(path).resolve()}:{name}"
    raise ConfigError(f"{impl.spec}: cannot send {impl.name!r} to worker processes: its module "
                      f"{module_name!r} cannot be imported there; give a spec, or run with jobs=1")


def _instantiate(target: Any, spec: str | None) -> Any:
    if inspect.isclass(target):
        try:
            return target()
        except Exception as exc:
            raise ConfigError(f"{spec}: could not instantiate {target.__name__}(): "
                              f"{type(exc).__name__}: {exc}") from None
    if _has_contract_method(target):
        return target
    if callable(target):
        try:
            return target()
        except Exception as exc:
            raise ConfigError(f"{spec}: the factory raised {type(exc).__name__}: {exc}") from None
    return target


def _resolve_attr(spec: str) -> Any:
    module_name, _, attr = spec.rpartition(":")
    if not module_name or not attr:
        raise ConfigError(f"{spec!r} is not module:attr")
    if module_name.endswith(".py"):
        module = _import_file(Path(module_name), spec)
    else:
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())  # like `python -m`: the current folder is importable
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:
            raise ConfigError(f"{spec}: cannot import module {module_name!r}: "
                              f"{type(exc).__name__}: {exc}") from None
    target: Any = module
    for part in attr.split("."):
        if not hasattr(target, part):
            public = sorted(n for n in vars(module) if not n.startswith("_"))[:12]
            raise ConfigError(f"{spec}: module {module_name!r} has no attribute {attr!r} "
                              f"(it has: {', '.join(public)})")
        target = getattr(target, part)
    return target


def _import_file(path: Path, spec: str) -> Any:
    if not path.is_file():
        raise ConfigError(f"{spec}: no such file {path}")
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # as for a script: its sibling modules are importable
    name = f"chatconform_user_{path.stem}"
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:  # not a Python source file
        raise ConfigError(f"{spec}: {path} is not a Python module")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:
        raise ConfigError(f"{spec}: importing {path} raised {type(exc).__name__}: {exc}") from None
    return module


def _describe(obj: Any) -> str:
    kind = obj if inspect.isclass(obj) or inspect.ismodule(obj) else type(obj)
    return f"{kind.__module__}:{kind.__qualname__}" if not inspect.ismodule(kind) else kind.__name__
