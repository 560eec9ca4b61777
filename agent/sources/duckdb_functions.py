"""The DuckDB functions and system tables askdb lets a query use: an allow-list, not a deny-list.

DuckDB keeps adding table functions that change the instance rather than read data
(`enable_logging()`, `enable_profiling()`, `truncate_duckdb_logs()`), and `lock_configuration`
does not stop them: one user turning logging on let another read every later query's text from
`duckdb_logs`. So on DuckDB a function is run only when it is on this list, checked twice:

- by the guard (sql_guard.py, through engine_denials.node_denial) on sqlglot's tree: a function
  sqlglot does not know by name (`exp.Anonymous`) must be on the list, and a table function on
  `TABLE_FUNCTIONS`;
- by DuckDB's own parser just before the query runs (duckdb.py, `parsed_refusal` over
  `json_serialize_sql`), in the worker, so a text the two parsers read differently is judged
  as DuckDB will run it.

`duckdb_functions.txt` holds the scalar, aggregate and macro names of the pinned DuckDB minus the
ones engine_denials.py denies by name; `python -m agent.sources.engine_denials` rewrites it from the
installed DuckDB, and a test fails when the installed DuckDB has a function the file does not, so a
new one is reviewed before it can run. (This module knows no denial reasons: engine_denials.py
imports it, and passes its `function` lookup where a reason is wanted.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

LIST_FILE = Path(__file__).with_name("duckdb_functions.txt")
NOT_LISTED = "it is not one of the DuckDB functions askdb runs; use standard SQL functions"
NOT_A_READ = "only read queries (SELECT/WITH/VALUES) are allowed"

# Table functions that only compute rows (series, unnesting, JSON) or read this file's own catalogue.
TABLE_FUNCTIONS = frozenset({
    "range", "generate_series", "unnest", "json_each", "json_tree", "repeat", "repeat_row",
    "duckdb_tables", "duckdb_columns", "duckdb_views", "duckdb_constraints", "duckdb_schemas", "duckdb_types",
    "duckdb_indexes", "duckdb_functions", "duckdb_keywords", "duckdb_sequences", "duckdb_dependencies",
    "pg_timezone_names", "icu_calendar_names",
})
# System views named like the catalogue functions above: the only duckdb_* names read as tables.
CATALOG_TABLES = frozenset(name for name in TABLE_FUNCTIONS if name.startswith("duckdb_"))


def _listed() -> frozenset[str]:
    try:
        lines = LIST_FILE.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:  # fail closed: no list, no function
        return frozenset()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


FUNCTIONS = _listed()


def function_refusal(name: str) -> str | None:
    """Why a scalar, aggregate or window function of this name is refused, or None."""
    return None if name.lower() in FUNCTIONS else NOT_LISTED


def table_function_refusal(name: str) -> str | None:
    """Why a table function (`FROM name(...)`) is refused, or None."""
    return None if name.lower() in TABLE_FUNCTIONS else NOT_LISTED


def table_refusal(name: str) -> str | None:
    """Why a table or view of this name is refused: DuckDB's system views other than the catalogue's
    (`duckdb_logs`, `duckdb_settings`, `duckdb_memory`...) expose other sessions or settings."""
    key = name.lower()
    if key.startswith("duckdb_") and key not in CATALOG_TABLES:
        return "it exposes other sessions, logs or server settings"
    if key.startswith("pragma_"):
        return "PRAGMA functions are disabled; ask for the table schema instead"
    return None


def parsed_refusal(parsed: Mapping[str, Any], denied: Callable[[str], str | None] = lambda name: None) -> str | None:
    """Why DuckDB's own parse of a query (`json_serialize_sql`'s output) must not run, or None.

    Every function call, table function and table name anywhere in the tree (subqueries, CTEs,
    lambdas) is judged; the message names the first one refused, with `denied`'s reason for it when
    it has one (engine_denials' `Denials.function`).
    """
    if parsed.get("error"):
        if parsed.get("error_type") == "not implemented":  # only SELECTs serialise
            return NOT_A_READ
        return None  # a syntax error: DuckDB says it better when the query runs
    if len(parsed.get("statements") or []) != 1:
        return "only one statement is allowed"
    for kind, name in _names(parsed["statements"]):
        refusal = {"function": function_refusal, "table function": table_function_refusal,
                   "table": table_refusal}[kind](name)
        if refusal:
            return f"{kind} {name} is not allowed: {denied(name) if kind != 'table' and denied(name) else refusal}"
    return None


def _names(node: Any) -> Iterator[tuple[str, str]]:
    """(kind, name) of every function, table function and table in a serialised tree."""
    if isinstance(node, list):
        for item in node:
            yield from _names(item)
        return
    if not isinstance(node, dict):
        return
    if node.get("type") == "TABLE_FUNCTION" and isinstance(node.get("function"), dict):
        function = node["function"]
        yield "table function", str(function.get("function_name", ""))
        yield from _names(function.get("children"))
        yield from _names({k: v for k, v in node.items() if k != "function"})
        return
    if node.get("type") == "BASE_TABLE":
        yield "table", str(node.get("table_name", ""))
    if node.get("class") in ("FUNCTION", "WINDOW") and "function_name" in node:
        yield "function", str(node["function_name"])
    for value in node.values():
        if isinstance(value, (dict, list)):
            yield from _names(value)


def installed_functions(connection: Any, denied: Callable[[str], str | None]) -> set[str]:
    """The scalar, aggregate and macro names the installed DuckDB has, less those `denied` gives a
    reason for and macros that call one (pg_sleep calls sleep_ms)."""
    rows = connection.execute(
        "SELECT DISTINCT lower(function_name), coalesce(macro_definition, '') FROM duckdb_functions()"
        " WHERE function_type IN ('scalar', 'aggregate', 'macro')").fetchall()
    refused = {name for name, _ in rows if denied(name)}
    return {name for name, body in rows if name not in refused
            and not any(f"{d}(" in body.lower() for d in refused)}


def write_list(denied: Callable[[str], str | None]) -> int:
    """Rewrite duckdb_functions.txt from the installed DuckDB; the number of names written."""
    import duckdb

    names = sorted(installed_functions(duckdb.connect(), denied))
    header = ("# DuckDB functions askdb runs (agent/sources/duckdb_functions.py), from DuckDB "
              f"{duckdb.__version__}.\n# Rewritten by: python -m agent.sources.engine_denials\n")
    LIST_FILE.write_text(header + "\n".join(names) + "\n", encoding="utf-8")
    return len(names)
