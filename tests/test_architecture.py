"""The layer order of docs/architecture.md holds: no module imports a module of a higher
layer, and the package's import graph (function-local imports, and modules named in strings
for importlib, included) has no cycle."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "chatconform"
DOC = ROOT / "docs" / "architecture.md"


def _layers() -> list[list[str]]:
    """The layers as docs/architecture.md lists them, lowest first: each a list of module
    prefixes, read from the numbered lines of its "Layers" section."""
    text = DOC.read_text()
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    layers = []
    for line in section.splitlines():
        match = re.match(r"^\d+\. (.*)$", line.strip())
        if match:
            layers.append(re.findall(r"`(chatconform[\w.]*)`", match.group(1)))
    assert layers and all(layers), "docs/architecture.md lists no layers"
    return layers


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The chatconform modules ``name`` imports, anywhere in its code (not under TYPE_CHECKING),
    and those it names in a string (``importlib.import_module("chatconform.x")``, a spec
    ``"chatconform.x:Attr"``)."""
    tree = ast.parse(path.read_text())
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for n in ast.walk(node))
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[:len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            # ``from package import submodule`` imports the submodule
            targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in modules else module for a in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            # A module named in a string, for importlib or a command line ("pkg.mod", or a
            # spec "pkg.mod:attr"): an import all the same, which a loop may hide behind.
            named = node.value.partition(":")[0]
            if "." not in named or named not in modules:  # "chatconform" alone is a name, not an import
                continue
            targets = [named]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target.startswith("chatconform") and target != name:
                found.add(target)
    return found


def _layer_of(name: str, layers: list[list[str]]) -> int:
    """The layer of module ``name``: the longest listed prefix that names it. An entry that is
    the prefix of another entry (``chatconform``, ``chatconform.conformance``) names only
    itself, the package's ``__init__``."""
    listed = [prefix for prefixes in layers for prefix in prefixes]
    best, best_len = -1, -1
    for index, prefixes in enumerate(layers):
        for prefix in prefixes:
            parent_only = any(other.startswith(prefix + ".") for other in listed)
            covers = name == prefix or (not parent_only and name.startswith(prefix + "."))
            if covers and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    return best


def test_every_module_has_a_layer():
    layers = _layers()
    assert [name for name in sorted(_modules()) if _layer_of(name, layers) < 0] == []


def test_no_module_imports_a_higher_layer():
    layers, modules = _layers(), _modules()
    upward = []
    for name, path in sorted(modules.items()):
        mine = _layer_of(name, layers)
        for target in sorted(_imports(name, path, modules)):
            if _layer_of(target, layers) > mine:
                upward.append(f"{name} (layer {mine + 1}) imports {target} (layer {_layer_of(target, layers) + 1})")
    assert upward == []


def test_the_import_graph_has_no_cycle():
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    # A package's __init__ that only re-exports its own submodules is imported by them
    # only for those names; the edge a submodule has to its own package is not a cycle.
    for name in graph:
        graph[name] = {t for t in graph[name] if not name.startswith(t + ".")}
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                cycles.append(" -> ".join([*stack[stack.index(target):], target]))
            elif target not in state:
                visit(target)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert cycles == []


#: What the reference, the strategies and the adapters may import besides their own package:
#: the leaves, the dialects and the providers.
LEAVES = ("chatconform.errors", "chatconform.version", "chatconform.lazy", "chatconform.history",
          "chatconform.dialects", "chatconform.providers")


def test_the_reference_strategies_and_adapters_import_only_the_leaves_and_their_own_package():
    modules = _modules()
    reaching = []
    for name, path in sorted(modules.items()):
        package = next((p for p in ("chatconform.reference", "chatconform.strategies", "chatconform.adapters")
                        if name == p or name.startswith(p + ".")), None)
        if package is None:
            continue
        for target in sorted(_imports(name, path, modules)):
            allowed = (package, *LEAVES)
            if not any(target == a or target.startswith(a + ".") for a in allowed):
                reaching.append(f"{name} imports {target}")
    assert reaching == []
