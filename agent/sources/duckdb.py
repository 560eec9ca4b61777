"""DuckDB as a data source: a .duckdb file opened read-only, then locked.

Layers (docs/security.md): (1) the guard parses in the duckdb dialect and accepts one read
query, denying the file readers (``read_csv``, ``glob``...) by name; (2) the file is opened
with ``access_mode = READ_ONLY``, so DuckDB refuses every write; (3) the instance's
configuration, set when it opens and then locked (``lock_configuration``): no external access
(no file, URL or database other than this one: ``read_csv('/etc/passwd')`` is a permission
error), no extension installed or loaded, community ones refused, memory, threads and the
temporary directory capped. DuckDB has no statement timeout: a timer interrupts the
connection at the deadline. (4) Model-written SQL runs in a worker process (query_pool.py), as
SQLite's does: DuckDB's interrupt waits for the running function and its memory_limit does not
bound one huge value, so the worker's address-space limit and a kill at the deadline do.
"""

from __future__ import annotations

import atexit
import json
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from agent.sources.base import (
    COUNT_CAP, Column, FileSource, ForeignKey, QueryResult, TableSchema, capped_count_sql, capped_result, clamp,
    contains_pattern, quote_identifier, render_cell, resolve_name, row_limit,
)
from agent.sources.duckdb_functions import parsed_refusal
from agent.sources.engine_denials import DENIALS
from agent.sources.errors import (
    QueryFailed, SQLRejected, SourceUnavailable, UnknownColumn, UnknownTable, out_of_memory, timed_out,
)
from agent.sources.query_pool import PoolLimits, run_isolated
from agent.sources.scratch import scratch_directory
from agent.sources.sql_guard import check_sql

# DuckDB runs one query on all cores by default; askdb serves several users on a few.
THREADS = 2
FETCH_ROWS = 200
_TABLES = """
    SELECT table_name FROM information_schema.tables
    WHERE table_catalog = current_database() AND table_schema = current_schema()"""
_COLUMNS = """
    SELECT column_name, data_type, is_nullable = 'NO', column_default FROM information_schema.columns
    WHERE table_catalog = current_database() AND table_schema = current_schema() AND table_name = ?
    ORDER BY ordinal_position"""
_KEYS = """
    SELECT constraint_type, constraint_column_names, referenced_table, referenced_column_names
    FROM duckdb_constraints()
    WHERE database_name = current_database() AND schema_name = current_schema() AND table_name = ?
      AND constraint_type IN ('PRIMARY KEY', 'FOREIGN KEY')"""
_TEXT_TYPES = ("VARCHAR",)


class DuckDBSource(FileSource):
    """A read-only DuckDB file that runs guarded, bounded queries (a `DataSource`).

    Args:
        path: the .duckdb file; only opened on first use.
        time_limit_s: every call's wall-clock limit; the connection is interrupted then.
        max_rows: rows returned by ``execute`` before ``truncated`` is set.
        max_cell_bytes: longest text (UTF-8 bytes) or blob kept in a cell.
        limits: the worker processes model-written SQL runs in (query_pool.py; ``workers=0`` runs it
            in this process, bounded by the timer and memory_limit only); the instance's
            ``memory_limit`` is ``limits.engine_memory_mb``, ``max_temp_mb`` what it may spill to its
            temporary directory (``max_temp_directory_size``).
    """

    dialect = "duckdb"
    engine = "DuckDB"

    def __init__(self, path: str | Path, *, time_limit_s: float = 10.0, max_rows: int = 1000,
                 max_cell_bytes: int = 10_000, limits: PoolLimits | None = None) -> None:
        super().__init__(path, time_limit_s=time_limit_s, max_rows=max_rows, max_cell_bytes=max_cell_bytes)
        self.limits = limits or PoolLimits()
        self._db: duckdb.DuckDBPyConnection | None = None
        self._version: tuple[int, int, int] | None = None  # the file's inode, mtime and size when opened
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    # -- model-written SQL ------------------------------------------------------

    def execute(self, sql: str, *, max_rows: int | None = None) -> QueryResult:
        """Check ``sql`` with the guard (duckdb dialect), then run it on the locked instance.

        Raises:
            SQLRejected, QueryTimeout, QueryFailed, SourceUnavailable.
        """
        return self._run_unchecked(check_sql(sql, dialect=self.dialect), max_rows=max_rows)

    def _run_unchecked(self, sql: str, *, max_rows: int | None = None) -> QueryResult:
        """Run ``sql`` under layers 2 to 4 only, in a worker process; tests call it to bypass the guard.

        Raises:
            QueryBusy: no worker became free in time (nothing ran).
            QueryTimeout: interrupted, or the worker killed, at the deadline.
        """
        return run_isolated(self, sql, limit=row_limit(max_rows, self.max_rows))

    def run_here(self, sql: str, *, max_rows: int | None = None) -> QueryResult:
        """Run ``sql`` under layers 2 and 3 in this process (what a worker does)."""
        limit = row_limit(max_rows, self.max_rows)
        with self._cursor() as cursor:
            started = time.perf_counter()
            _check_as_duckdb_parses(cursor, sql)
            cursor.execute(sql)
            if cursor.description is None:
                raise SQLRejected("the statement is not a query (it has no result columns); send one SELECT")
            columns = [d[0] for d in cursor.description]
            return capped_result(sql, columns, _batches(cursor), limit=limit, started=started,
                                 max_cell_bytes=self.max_cell_bytes)

    # -- introspection (trusted SQL; names come from the catalog, values are bound) ----

    def list_tables(self) -> list[str]:
        """Tables and views of the file's main schema, sorted case-insensitively."""
        with self._cursor() as cursor:
            return self._table_names(cursor)

    def describe_table(self, table: str) -> TableSchema:
        """Columns, keys and row count (exact up to ``COUNT_CAP``) of a table or view.

        Raises:
            UnknownTable: with the closest real names.
        """
        with self._cursor() as cursor:
            return self._describe(cursor, self._resolve_table(cursor, table))

    def catalogue(self) -> list[TableSchema]:
        """Every table and view as `describe_table` gives it, in `list_tables` order, on one connection."""
        with self._cursor() as cursor:
            return [self._describe(cursor, name) for name in self._table_names(cursor)]

    def sample_rows(self, table: str, limit: int = 5) -> QueryResult:
        """The first rows of a table or view; ``limit`` is clamped to 1..5."""
        limit = clamp(limit, 5)
        with self._cursor() as cursor:
            name = self._resolve_table(cursor, table)
        return self._run_unchecked(f"SELECT * FROM {quote_identifier(name)} LIMIT {limit}")

    def find_values(self, table: str, column: str, term: str, limit: int = 20) -> list[Any]:
        """Distinct values of ``column`` in rows where any VARCHAR column contains ``term``
        (ILIKE, ``%``, ``_`` and ``\\`` matching themselves), most frequent first.

        Raises:
            UnknownTable, UnknownColumn: with the closest real names.
        """
        limit = clamp(limit, self.max_rows)
        with self._cursor() as cursor:
            name = self._resolve_table(cursor, table)
            described = cursor.execute(_COLUMNS, [name]).fetchall()
            target = quote_identifier(resolve_name(column, [r[0] for r in described], UnknownColumn,
                                                   f"{name} has no column named {column!r}"))
            texts = [quote_identifier(r[0]) for r in described if r[1] in _TEXT_TYPES]
            if not texts:
                return []
            matches = " OR ".join(f"{c} ILIKE $pattern ESCAPE '\\'" for c in texts)
            rows = cursor.execute(
                f"SELECT {target}, count(*) AS n FROM {quote_identifier(name)} WHERE {target} IS NOT NULL"
                f" AND ({matches}) GROUP BY {target} ORDER BY n DESC, {target} LIMIT $limit",
                {"pattern": contains_pattern(term), "limit": limit}).fetchall()
        return [render_cell(r[0], self.max_cell_bytes)[0] for r in rows]

    # -- the instance -----------------------------------------------------------

    def _instance(self) -> duckdb.DuckDBPyConnection:
        """The file opened read-only with every setting below, which it can then no longer change.

        A file replaced since (a new file moved into place: DuckDB lets no one write while askdb
        reads) is opened again; calls still running on the old instance finish on it.
        """
        try:
            stat = self.path.stat()
        except OSError:
            raise SourceUnavailable(f"the DuckDB file {self.path} does not exist; check ASKDB_DATABASE") from None
        version = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        with self._lock:
            if self._db is not None and self._version != version:
                self._db = None  # closed once its last cursor is gone
            if self._db is None:
                config = {
                    "access_mode": "READ_ONLY", "enable_external_access": False,
                    "autoinstall_known_extensions": False, "autoload_known_extensions": False,
                    "allow_community_extensions": False, "allow_unsigned_extensions": False,
                    "memory_limit": f"{self.limits.engine_memory_mb}MB", "threads": THREADS,
                    "temp_directory": _spill_directory(), "max_temp_directory_size": f"{self.limits.max_temp_mb}MB",
                    "lock_configuration": True,
                }
                try:
                    self._db = duckdb.connect(str(self.path), read_only=True, config=config)
                except duckdb.Error as e:
                    raise SourceUnavailable(f"cannot open the DuckDB file {self.path}: {_first_line(e)}") from None
                self._version = version
            return self._db

    @contextmanager
    def _cursor(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection of its own to the instance, interrupted at the time limit; errors translated."""
        cursor = self._instance().cursor()
        timer = threading.Timer(self.time_limit_s, cursor.interrupt)
        timer.daemon = True
        timer.start()
        try:
            yield cursor
        except duckdb.InterruptException:
            raise timed_out(self.time_limit_s) from None
        except duckdb.Error as e:
            raise _translate(e, self.limits) from None
        finally:
            timer.cancel()
            cursor.close()

    def _describe(self, cursor: duckdb.DuckDBPyConnection, name: str) -> TableSchema:
        keys = cursor.execute(_KEYS, [name]).fetchall()
        primary = {c for kind, names, _, _ in keys if kind == "PRIMARY KEY" for c in names}
        columns = [Column(name=r[0], type=r[1], not_null=bool(r[2]), default=r[3], primary_key=r[0] in primary)
                   for r in cursor.execute(_COLUMNS, [name]).fetchall()]
        foreign_keys = [ForeignKey(column=column, ref_table=ref_table, ref_column=ref_column)
                        for kind, names, ref_table, ref_names in keys if kind == "FOREIGN KEY"
                        for column, ref_column in zip(names, ref_names)]
        (count,) = cursor.execute(capped_count_sql(quote_identifier(name))).fetchone()
        return TableSchema(name=name, columns=columns, foreign_keys=foreign_keys, row_count=min(count, COUNT_CAP))

    def _table_names(self, cursor: duckdb.DuckDBPyConnection) -> list[str]:
        return sorted((r[0] for r in cursor.execute(_TABLES).fetchall()), key=lambda n: (n.lower(), n))

    def _resolve_table(self, cursor: duckdb.DuckDBPyConnection, table: str) -> str:
        return resolve_name(table, self._table_names(cursor), UnknownTable, f"no table or view named {table!r}")


def _check_as_duckdb_parses(cursor: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Layer 3 before the query runs: DuckDB's own parse of it names only listed functions and tables
    (duckdb_functions.py), whatever the guard's parser made of the text. The locked configuration does
    not stop `enable_logging()`, so this is what keeps the shared instance from recording other users'
    queries when the guard is bypassed or misreads a query.

    Raises:
        SQLRejected: with the first name refused.
    """
    (tree,) = cursor.execute("SELECT json_serialize_sql($sql)", {"sql": sql}).fetchone()
    if refusal := parsed_refusal(json.loads(tree), DENIALS["duckdb"].function):
        raise SQLRejected(refusal)


def _batches(cursor: duckdb.DuckDBPyConnection) -> Iterator[tuple]:
    """The result's rows as DuckDB streams them, a batch at a time: a huge result is never whole."""
    while batch := cursor.fetchmany(FETCH_ROWS):
        yield from batch


def _spill_directory() -> str:
    """This process's directory for DuckDB's temporary files, made on first use and removed at exit
    (in a worker, inside its private TMPDIR). One per process, not per source: DuckDB refuses to
    open a file twice in a process with different settings. A process stopped by a signal runs no
    exit handler, so the empty directories of processes gone are swept when the next one is made."""
    global _spill
    with _spill_lock:
        if _spill is None:
            _spill = scratch_directory(_SPILL_PREFIX)
            atexit.register(shutil.rmtree, _spill, ignore_errors=True)
        return _spill


_SPILL_PREFIX = "askdb-duckdb-"


_spill: str | None = None
_spill_lock = threading.Lock()


def _translate(e: duckdb.Error, limits: PoolLimits) -> Exception:
    message = _first_line(e)
    if isinstance(e, duckdb.PermissionException):
        return SQLRejected(f"{message}: the analytics database reaches no files, URLs or extensions; "
                           "query its tables")
    # DuckDB gives no error codes: a write to the read-only file and a change of the locked
    # configuration share this class, told apart from other bad input by their words.
    if isinstance(e, duckdb.InvalidInputException) and ("read-only" in message or "locked" in message):
        return SQLRejected(f"{message}: the analytics database is read-only and its settings fixed; "
                           "send a SELECT query")
    if isinstance(e, duckdb.OutOfMemoryException):
        return out_of_memory(limits.max_memory_mb)
    if isinstance(e, duckdb.IOException):
        return SourceUnavailable(f"the DuckDB file cannot be read: {message}")
    return QueryFailed(message)


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0]
