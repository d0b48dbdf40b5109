"""The bundled adapters: real third-party code as implementations, each behind its extra.

An adapter module does not import its third-party library when it loads: loading one to
list it reads its name, version and methods only. A missing library is found without
importing it (:func:`missing_modules`, at the module's top: a
:class:`~chatconform.errors.MissingDependency` naming the extra). The library is a
:class:`Library`, imported at the first attribute read of it, and the chat model or client
an adapter builds is a :class:`Once`: both happen in the adapter's ``warm_up()``, which a
run calls when it loads the adapter (in the adapter's own process, before its hello), or
else in the first call that needs them.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from collections.abc import Callable, Iterable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from chatconform.errors import ConfigError
from chatconform.lazy import pai

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

T = TypeVar("T")


def open_parameters() -> dict:
    """The parameters each declared tool takes: open to anything. The agent that made the
    calls declared the tools; the history keeps their names only, and any arguments must pass.
    A fresh dict each time: a library may edit the schema it is given."""
    return {"type": "object", "additionalProperties": True}


def called_tools(history: Sequence[ModelMessage]) -> list[str]:
    """The names of the tools ``history`` calls, once each, in the order first called: what
    each adapter declares, as the agent that made the calls had them."""
    return list(dict.fromkeys(part.tool_name for message in history if isinstance(message, pai.ModelResponse)
                              for part in message.parts if isinstance(part, pai.ToolCallPart)))


def missing_modules(modules: Iterable[str]) -> list[str]:
    """The modules of ``modules`` that cannot be imported here (found without importing them)."""
    missing = []
    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:  # its parent package (such as ``google``) is missing
            found = False
        if not found:
            missing.append(module)
    return missing


class Library:
    """The module ``name``, imported for the adapter ``adapter`` at the first attribute read
    of it (``Library("langchain_core.messages", ...).HumanMessage``), not when the adapter's
    module loads. Each attribute is read from the module once, then kept here.

    A library that is installed but fails to import (a broken or half-upgraded install) is
    a :class:`~chatconform.errors.ConfigError` in one line: the adapter, the module, what
    the import raised, and the extra to reinstall.
    """

    def __init__(self, name: str, *, adapter: str, extra: str) -> None:
        self._name, self._adapter, self._extra = name, adapter, extra
        self._module: ModuleType | None = None

    def module(self) -> ModuleType:
        """The module itself, imported on the first call."""
        if self._module is None:
            try:
                self._module = importlib.import_module(self._name)
            except Exception as exc:
                raise ConfigError(f"the {self._adapter} adapter could not import {self._name} "
                                  f"({type(exc).__name__}: {exc}); reinstall its extra: "
                                  f"pip install --force-reinstall 'chatconform[{self._extra}]'") from exc
        return self._module

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):  # copy, pickle and inspect ask for these: not the library's
            raise AttributeError(attr)
        value = getattr(self.module(), attr)
        setattr(self, attr, value)
        return value


class Once(Generic[T]):
    """``build()`` called on the first :meth:`get` only, under a lock (so threads that race
    get the one result), then that result: a client or a class made from a
    :class:`Library`, built when a call first needs it."""

    def __init__(self, build: Callable[[], T]) -> None:
        self._build, self._lock = build, threading.Lock()
        self._built: list[T] = []

    def get(self) -> T:
        with self._lock:
            if not self._built:
                self._built.append(self._build())
            return self._built[0]


class LazyModel:
    """An adapter's one chat model or client (:meth:`build`), built once: by :meth:`warm_up`,
    which imports the further :attr:`libraries` its calls read too, or else by the first
    call that reads :attr:`model`."""

    #: Modules the calls read besides those the build imports, imported by :meth:`warm_up`.
    libraries: tuple[Library, ...] = ()

    def __init__(self) -> None:
        self._built = Once(self.build)

    def build(self) -> Any:
        raise NotImplementedError

    def warm_up(self) -> None:
        """Build the model and import the libraries before a run's first call."""
        self._built.get()
        for library in self.libraries:
            library.module()

    @property
    def model(self) -> Any:
        """The model, built on first use."""
        return self._built.get()
