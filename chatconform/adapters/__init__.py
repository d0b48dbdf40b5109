"""The bundled adapters: real third-party code as implementations, each behind its extra."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Sequence

from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart


def open_parameters() -> dict:
    """The parameters each declared tool takes: open to anything. The agent that made the
    calls declared the tools; the history keeps their names only, and any arguments must pass.
    A fresh dict each time: a library may edit the schema it is given."""
    return {"type": "object", "additionalProperties": True}


def called_tools(history: Sequence[ModelMessage]) -> list[str]:
    """The names of the tools ``history`` calls, once each, in the order first called: what
    each adapter declares, as the agent that made the calls had them."""
    return list(dict.fromkeys(part.tool_name for message in history if isinstance(message, ModelResponse)
                              for part in message.parts if isinstance(part, ToolCallPart)))


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
