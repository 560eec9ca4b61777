"""The layers of docs/architecture.md, checked: imports point down only, the families inside
agent/ import only what their rule allows, and no module imports another that imports it back, not
even inside a function (a cycle hidden in a late import is still a cycle). `TYPE_CHECKING` imports
do not run and are not counted."""

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

#: The families inside agent/ and what each may import (itself included). The turn (agent/'s own
#: modules, agent/strategies/, agent/memory/) puts them together and has no rule of its own.
AGENT_FAMILIES = {
    # The engines, the SQL guard and schema search: nothing of the agent, only the store's errors
    # and text helpers.
    "agent.sources": {"agent.sources", "storage"},
    # Trust checks read the question, the SQL and the rows: no model client, no tool, no memory.
    "agent.checks": {"agent.checks", "agent.planner", "agent.sources", "agent.notes", "agent.vocabulary", "storage"},
    # A model turns messages into a reply: no check, tool, planner or database.
    "agent.models": {"agent.models", "agent.memory", "storage"},
    # The tools run on the database: no model client.
    "agent.tools": {"agent.tools", "agent.checks", "agent.memory", "agent.sources", "agent.state", "agent.vocabulary",
                    "storage"},
    # The planner's parts read words and a schema index: no model client, tool, check or database. Their
    # sentences to the analyst come from the catalogue (agent/notes.py, agent/prompts/notes.toml), as
    # the checks' do.
    "agent.planner": {"agent.planner", "agent.memory", "agent.notes", "agent.vocabulary", "storage"},
    # The words questions are read by (numbers, back-references, ranking words), shared by the planner
    # and the checks, and a source's own words read from its file: nothing of the agent, only the
    # store's error root and text helpers.
    "agent.vocabulary": {"agent.vocabulary", "storage"},
}
#: Known exceptions to AGENT_FAMILIES, each with its reason.
FAMILY_EXCEPTIONS = {
    # Schema search ranks by embeddings when it is handed an embedder, and falls back to words
    # when that fails: it catches the embedder's error.
    ("agent.sources.schema_search", "agent.memory.embeddings"),
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



def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_each_family_of_agent_imports_only_what_its_rule_allows():
    strays = sorted(f"{module} -> {target}" for module, targets in GRAPH.items() for target in targets
                    for family, allowed in AGENT_FAMILIES.items()
                    if _in(module, family) and not any(_in(target, ok) for ok in allowed)
                    and (module, target) not in FAMILY_EXCEPTIONS)
    assert strays == []


def test_only_the_turn_imports_the_loop():
    """The families are parts the turn is built from: none of them reaches back into it."""
    upward = sorted(f"{module} -> {target}" for module, targets in GRAPH.items() for target in targets
                    if any(_in(module, family) for family in (*AGENT_FAMILIES, "agent.memory", "agent.strategies"))
                    and target in {"agent.loop", "agent.turn_recorder", "agent.analyst_sql"})
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
