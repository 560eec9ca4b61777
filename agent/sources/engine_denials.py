"""What the guard refuses by name on each engine (sql_guard.py applies it; SQLite's authorizer too).

One shape for every engine, `Denials`: functions and tables by exact name or by prefix, and whole
schemas, each mapped to the reason the model reads. Each engine's own layers stop most of these
too (SQLite's authorizer, a PostgreSQL role, a MySQL user without the FILE privilege reads NULL
from LOAD_FILE, DuckDB's locked configuration refuses every file and extension); naming them here
tells the model why at once and keeps a misconfigured server closed. What is not a name (MySQL's
variables, DuckDB's file names in FROM) is `node_denial`'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from sqlglot import exp

from agent.sources import duckdb_functions

_OUTSIDE = "it reaches outside the database"
_INTERNALS = "it exposes database internals"
_NATIVE = "it loads native code into the database process"
_WAITS = "it only waits or burns time; ask for data instead"
_LOCKS = "it takes locks other sessions wait on"
_SERVER = "it changes the server, its settings or other sessions"
_HIDDEN_SQL = "it runs SQL text the guard cannot check; write the query itself"
_OTHERS = "it exposes other sessions, credentials or server settings"
_PRAGMA = "PRAGMA functions are disabled; ask for the table schema instead"


@dataclass(frozen=True)
class Denials:
    """What one engine's guard refuses by name; keys are lowercase, values the reason."""

    functions: Mapping[str, str]
    function_prefixes: Mapping[str, str] = field(default_factory=dict)
    tables: Mapping[str, str] = field(default_factory=dict)
    table_prefixes: Mapping[str, str] = field(default_factory=dict)
    schemas: Mapping[str, str] = field(default_factory=dict)

    def function(self, name: str) -> str | None:
        """Why a function of this name is refused, or None."""
        return _lookup(name, self.functions, self.function_prefixes)

    def table(self, name: str, schema: str = "") -> str | None:
        """Why a table (or view) of this name, in this schema, is refused, or None."""
        return self.schemas.get(schema.lower()) or _lookup(name, self.tables, self.table_prefixes)


def _lookup(name: str, exact: Mapping[str, str], prefixes: Mapping[str, str]) -> str | None:
    # lower() may fold more than an engine does (SQLite folds ASCII only), which can only over-reject.
    key = name.lower()
    if key in exact:
        return exact[key]
    return next((why for prefix, why in prefixes.items() if key.startswith(prefix)), None)


# SQLite: functions and table-valued functions (eponymous virtual tables, read as tables too).
# Most are only compiled into the sqlite3 shell or optional extensions; they are listed so that a
# build which has them stays closed.
SQLITE_DENIED_NAMES: Mapping[str, str] = MappingProxyType({
    "load_extension": _NATIVE, "readfile": _OUTSIDE, "writefile": _OUTSIDE, "edit": _OUTSIDE, "fsdir": _OUTSIDE,
    "lines": _OUTSIDE, "zipfile": _OUTSIDE, "zipfile_cds": _OUTSIDE, "sqlar_compress": _OUTSIDE,
    "sqlar_uncompress": _OUTSIDE, "fts3_tokenizer": "it exposes memory addresses", "sqlite_dbpage": _INTERNALS,
    "sqlite_dbdata": _INTERNALS, "sqlite_dbptr": _INTERNALS, "sqlite_stmt": _INTERNALS,
    # dbstat is read-only but scans every page of the file and answers no analytics question.
    "dbstat": _INTERNALS,
})
_SQLITE_PREFIXES = {"pragma_": _PRAGMA}

# PostgreSQL: functions that read or write server files, run SQL text this parser never sees,
# change settings or other sessions, take locks, or only wait; catalogs of other users' queries,
# credentials or server configuration. The READ ONLY transaction and a read-only role stop the
# writes among them.
POSTGRES_DENIED_NAMES: Mapping[str, str] = MappingProxyType({
    # Not a PostgreSQL function; denied so that every engine refuses the same extension-load corpus.
    "load_extension": _NATIVE,
    "pg_stat_file": _OUTSIDE, "loread": _OUTSIDE, "lowrite": _OUTSIDE, "ts_stat": _HIDDEN_SQL,
    **dict.fromkeys((
        "set_config", "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile",
        "pg_promote", "pg_switch_wal", "pg_create_restore_point", "pg_start_backup", "pg_stop_backup",
        "pg_log_backend_memory_contexts", "pg_notify", "nextval", "setval", "pg_import_system_collations",
        "pg_create_physical_replication_slot", "pg_create_logical_replication_slot", "pg_drop_replication_slot",
        "pg_copy_physical_replication_slot", "pg_copy_logical_replication_slot"), _SERVER),
})
POSTGRES_DENIED_PREFIXES: Mapping[str, str] = MappingProxyType({
    "pg_read_": _OUTSIDE, "pg_ls_": _OUTSIDE, "pg_file_": _OUTSIDE, "lo_": _OUTSIDE, "dblink": _OUTSIDE,
    **dict.fromkeys(("query_to_xml", "cursor_to_xml", "table_to_xml", "schema_to_xml", "database_to_xml"),
                    _HIDDEN_SQL),
    "pg_advisory": _LOCKS, "pg_try_advisory": _LOCKS, "pg_sleep": _WAITS,
    "pg_replication_": _SERVER, "pg_logical_": _SERVER, "pg_wal_": _SERVER, "pg_backup_": _SERVER,
    # The functions behind the pg_stat_* views: pg_stat_get_activity(NULL) lists the other pooled sessions
    # and their queries although the view is denied.
    "pg_stat_get_": _OTHERS,
})
POSTGRES_DENIED_TABLES: Mapping[str, str] = MappingProxyType(dict.fromkeys((
    "pg_authid", "pg_shadow", "pg_user_mapping", "pg_user_mappings", "pg_hba_file_rules", "pg_ident_file_mappings",
    "pg_file_settings", "pg_settings", "pg_stat_activity", "pg_stat_statements", "pg_largeobject",
    "pg_largeobject_metadata"), _OTHERS))

# MySQL/MariaDB: server files, waits, locks, sequences; other sessions; whole schemas of server
# internals (users and their password hashes, other sessions' statements).
MYSQL_DENIED_NAMES: Mapping[str, str] = MappingProxyType({
    "load_file": _OUTSIDE, "sys_exec": _OUTSIDE, "sys_eval": _OUTSIDE, "load_extension": _NATIVE,
    **dict.fromkeys(("sleep", "benchmark", "master_pos_wait", "source_pos_wait", "master_gtid_wait",
                     "wait_for_executed_gtid_set", "wait_until_sql_thread_after_gtids"), _WAITS),
    **dict.fromkeys(("get_lock", "release_lock", "release_all_locks", "is_free_lock", "is_used_lock"), _LOCKS),
    "nextval": _SERVER, "setval": _SERVER, "lastval": _SERVER,
})
MYSQL_DENIED_SCHEMAS: Mapping[str, str] = MappingProxyType(dict.fromkeys(("mysql", "performance_schema", "sys"),
                                                                         _OTHERS))
# information_schema's other sessions and server variables: GLOBAL_VARIABLES gave DATADIR, SOCKET,
# LOG_ERROR, PID_FILE and HOSTNAME although @@datadir is refused.
MYSQL_DENIED_TABLES: Mapping[str, str] = MappingProxyType(dict.fromkeys((
    "processlist", "global_variables", "session_variables", "global_status", "session_status",
    "system_variables", "user_variables", "user_statistics", "client_statistics", "thread_pool_queues",
    "thread_pool_stats", "thread_pool_groups", "thread_pool_waits"), _OTHERS))

# DuckDB: file readers, SQL text the guard cannot see, the environment and settings, checkpoints,
# logging and profiling (they record every later query, other users' included, and the instance is
# shared), waits. Named so the model reads why; beyond these, DuckDB runs only the functions on
# duckdb_functions.py's allow-list.
DUCKDB_DENIED_NAMES: Mapping[str, str] = MappingProxyType({
    "load_extension": _NATIVE,
    **dict.fromkeys(("glob", "sniff_csv", "parquet_scan", "iceberg_scan", "delta_scan", "arrow_scan",
                     "pandas_scan"), _OUTSIDE),
    **dict.fromkeys(("query", "query_table", "json_execute_serialized_sql"), _HIDDEN_SQL),
    **dict.fromkeys(("getenv", "getvariable", "duckdb_secrets", "which_secret", "duckdb_settings",
                     "current_setting", "duckdb_databases", "duckdb_temporary_files", "duckdb_extensions",
                     "duckdb_logs", "duckdb_logs_parsed", "duckdb_log_contexts", "duckdb_memory",
                     "duckdb_prepared_statements", "duckdb_variables", "duckdb_profiling_settings",
                     "duckdb_external_file_cache", "duckdb_connection_count", "duckdb_approx_database_count",
                     "current_connection_id", "current_query_id", "current_transaction_id", "txid_current"),
                    _OTHERS),
    **dict.fromkeys(("enable_logging", "disable_logging", "truncate_duckdb_logs", "write_log",
                     "parse_duckdb_log_message", "enable_profiling", "disable_profiling", "checkpoint",
                     "force_checkpoint"), _SERVER),
    **dict.fromkeys(("sleep_ms", "pg_sleep"), _WAITS),
})
DUCKDB_DENIED_PREFIXES: Mapping[str, str] = MappingProxyType({
    **dict.fromkeys(("read_", "parquet_", "sqlite_", "postgres_", "mysql_"), _OUTSIDE), "pragma_": _PRAGMA,
})

DENIALS: Mapping[str, Denials] = MappingProxyType({
    "sqlite": Denials(SQLITE_DENIED_NAMES, _SQLITE_PREFIXES, SQLITE_DENIED_NAMES, _SQLITE_PREFIXES),
    "postgres": Denials(POSTGRES_DENIED_NAMES, POSTGRES_DENIED_PREFIXES, POSTGRES_DENIED_TABLES),
    "mysql": Denials(MYSQL_DENIED_NAMES, tables=MYSQL_DENIED_TABLES, schemas=MYSQL_DENIED_SCHEMAS),
    # FROM pragma_database_list names the file's path.
    "duckdb": Denials(DUCKDB_DENIED_NAMES, DUCKDB_DENIED_PREFIXES, table_prefixes={"pragma_": _PRAGMA}),
})

# A table name DuckDB would read as a file or URL (a "replacement scan": FROM 'data.csv').
_FILE_LIKE = re.compile(r"[/\\:]|\.(csv|tsv|txt|json|jsonl|ndjson|parquet|xlsx|gz|zst|db|duckdb)$", re.IGNORECASE)


def denials_for(dialect: str) -> Denials:
    """The engine's denials; a dialect without its own list gets SQLite's."""
    return DENIALS.get(dialect) or DENIALS["sqlite"]


def node_denial(node: exp.Expression, dialect: str) -> str | None:
    """Why the guard refuses a node on this engine beyond names: MySQL's variables, DuckDB's file
    names in FROM. None when allowed."""
    if dialect == "mysql" and isinstance(node, (exp.Parameter, exp.SessionParameter)):
        return ("variables (@name, @@name) are not allowed: they keep state between queries or expose "
                "server settings; write the value into the query")
    if dialect == "duckdb":
        return _duckdb_denial(node)
    return None


def _duckdb_denial(node: exp.Expression) -> str | None:
    """DuckDB runs only listed functions (duckdb_functions.py): a table function, or a function
    sqlglot does not know by name, must be on the list; a file name in FROM is refused."""
    if isinstance(node, exp.Table):
        if isinstance(node.this, exp.Func):
            name = node.this.name if isinstance(node.this, exp.Anonymous) else None
            if name is not None and (reason := duckdb_functions.table_function_refusal(name)):
                return f"table function {name} is not allowed: {reason}"
            return None
        if _FILE_LIKE.search(node.name):
            return f"table {node.name} is not allowed: it names a file; query the tables listed in the schema"
        if reason := duckdb_functions.table_refusal(node.name):
            return f"table {node.name} is not allowed: {reason}"
        return None
    if isinstance(node, exp.Anonymous) and not isinstance(node.parent, exp.Table):
        if reason := duckdb_functions.function_refusal(node.name):
            return f"function {node.name} is not allowed: {reason}"
    return None


if __name__ == "__main__":
    # Rewrite DuckDB's allow-list from the installed DuckDB, less the names denied above.
    count = duckdb_functions.write_list(DENIALS["duckdb"].function)
    print(f"{count} names written to {duckdb_functions.LIST_FILE}")
