"""The layers of docs/architecture.md, checked: imports point down only, and no module imports
another that imports it back, not even inside a function (a cycle hidden in a late import is
still a cycle). `TYPE_CHECKING` imports do not run and are not counted."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Each package and the packages it may import (its own included).
MAY_IMPORT = {
    "storage": {"storage"},
    "agent": {"agent", "storage"},
    "app": {"app", "agent", "storage", "sample_db"},  # the eval harness loads databases as sample_db does
    "bench": {"bench", "app", "agent", "storage", "sample_db"},
    "sample_db": {"sample_db", "agent", "storage"},
}


def _modules() -> dict[str, Path]:
    found = {}
    for package in MAY_IMPORT:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _imports(path: Path) -> set[str]:
    """The modules of ours `path` imports, at the top or in a function."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                for alias in child.names:
                    name = f"{child.module}.{alias.name}"
                    found.add(name if name in MODULES else child.module)
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {name for name in found if name.split(".")[0] in (*MAY_IMPORT, "tests")}


GRAPH = {module: _imports(path) for module, path in MODULES.items()}


def test_imports_point_down_only():
    upward = sorted(f"{module} -> {target}" for module, targets in GRAPH.items() for target in targets
                    if target.split(".")[0] not in MAY_IMPORT[module.split(".")[0]])
    assert upward == []


def test_no_module_imports_one_that_imports_it_back():
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in GRAPH[module]:
            if target not in GRAPH:
                continue
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(GRAPH):
        if module not in index:
            visit(module)
    assert cycles == []
