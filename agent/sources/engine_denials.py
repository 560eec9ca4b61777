"""What the guard denies by name on MySQL/MariaDB and DuckDB (sql_guard.py applies it).

As for PostgreSQL, each engine's own layers stop these too (a user without the FILE privilege
reads NULL from LOAD_FILE; DuckDB's locked configuration refuses every file and extension);
naming them here tells the model why at once and keeps a misconfigured server closed.
"""

from __future__ import annotations

import re

from sqlglot import exp

_OUTSIDE = "it reaches outside the database"
_WAITS = "it only waits or burns time; ask for data instead"
_LOCKS = "it takes locks other sessions wait on"
_SERVER = "it changes the server, its settings or other sessions"
_HIDDEN_SQL = "it runs SQL text the guard cannot check; write the query itself"
_OTHERS = "it exposes other sessions, credentials or server settings"
_NATIVE = "it loads native code into the database process"

MYSQL_DENIED_NAMES: dict[str, str] = {
    "load_file": _OUTSIDE, "sys_exec": _OUTSIDE, "sys_eval": _OUTSIDE, "load_extension": _NATIVE,
    "sleep": _WAITS, "benchmark": _WAITS, "master_pos_wait": _WAITS, "source_pos_wait": _WAITS,
    "master_gtid_wait": _WAITS, "wait_for_executed_gtid_set": _WAITS, "wait_until_sql_thread_after_gtids": _WAITS,
    "get_lock": _LOCKS, "release_lock": _LOCKS, "release_all_locks": _LOCKS, "is_free_lock": _LOCKS,
    "is_used_lock": _LOCKS, "nextval": _SERVER, "setval": _SERVER, "lastval": _SERVER,
}
MYSQL_DENIED_TABLES: dict[str, str] = {"processlist": _OTHERS}
# Whole schemas of server internals: users and their password hashes, other sessions' statements.
MYSQL_DENIED_SCHEMAS = frozenset({"mysql", "performance_schema", "sys"})

DUCKDB_DENIED_NAMES: dict[str, str] = {
    "load_extension": _NATIVE, "glob": _OUTSIDE, "sniff_csv": _OUTSIDE, "parquet_scan": _OUTSIDE,
    "iceberg_scan": _OUTSIDE, "delta_scan": _OUTSIDE, "arrow_scan": _OUTSIDE, "pandas_scan": _OUTSIDE,
    "query": _HIDDEN_SQL, "query_table": _HIDDEN_SQL, "json_execute_serialized_sql": _HIDDEN_SQL,
    "getenv": _OTHERS, "getvariable": _OTHERS, "duckdb_secrets": _OTHERS, "which_secret": _OTHERS,
    "duckdb_settings": _OTHERS, "current_setting": _OTHERS, "duckdb_databases": _OTHERS,
    "duckdb_temporary_files": _OTHERS, "duckdb_extensions": _OTHERS,
    "checkpoint": _SERVER, "force_checkpoint": _SERVER,
}
DUCKDB_DENIED_PREFIXES: dict[str, str] = {
    "read_": _OUTSIDE, "parquet_": _OUTSIDE, "sqlite_": _OUTSIDE, "postgres_": _OUTSIDE, "mysql_": _OUTSIDE,
    "pragma_": "PRAGMA functions are disabled; ask for the table schema instead",
}
# A table name DuckDB would read as a file or URL (a "replacement scan": FROM 'data.csv').
_FILE_LIKE = re.compile(r"[/\\:]|\.(csv|tsv|txt|json|jsonl|ndjson|parquet|xlsx|gz|zst|db|duckdb)$", re.IGNORECASE)

DENIALS: dict[str, tuple[dict[str, str], dict[str, str], dict[str, str]]] = {
    "mysql": (MYSQL_DENIED_NAMES, {}, MYSQL_DENIED_TABLES),
    "duckdb": (DUCKDB_DENIED_NAMES, DUCKDB_DENIED_PREFIXES, {}),
}


def node_denial(node: exp.Expression, dialect: str) -> str | None:
    """Why the guard refuses a node on this engine beyond names: MySQL's variables and system
    schemas, DuckDB's file names in FROM. None when allowed."""
    if dialect == "mysql":
        if isinstance(node, (exp.Parameter, exp.SessionParameter)):
            return ("variables (@name, @@name) are not allowed: they keep state between queries or expose "
                    "server settings; write the value into the query")
        if isinstance(node, exp.Table) and node.db.lower() in MYSQL_DENIED_SCHEMAS:
            return f"table {node.db}.{node.name} is not allowed: {_OTHERS}"
    if dialect == "duckdb" and isinstance(node, exp.Table):
        if _FILE_LIKE.search(node.name):
            return f"table {node.name} is not allowed: it names a file; query the tables listed in the schema"
        if node.name.lower().startswith("pragma_"):  # FROM pragma_database_list: the file's path
            return f"table {node.name} is not allowed: {DUCKDB_DENIED_PREFIXES['pragma_']}"
    return None
