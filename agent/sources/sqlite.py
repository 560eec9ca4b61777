"""SQLite as a data source: layers 2 and 3 of the SQL guard on a read-only file.

Every call opens its own connection (see ``SQLiteSource._connect``): the file
by URI in ``mode=ro``, ``PRAGMA query_only``, extension loading never enabled,
ATTACH and huge values refused by SQLite limits, a wall-clock deadline through the
progress handler, and, for model-written SQL, an authorizer that allows reads
only; model-written SQL runs in a worker process under hard limits (query_pool.py).
docs/security.md describes the layers and the tests that pin them.
"""

from __future__ import annotations

import sqlite3
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agent.sources.base import (
    Column, FileSource, ForeignKey, QueryResult, TableSchema, capped_result, clamp, contains_pattern,
    quote_identifier, render_cell, resolve_name, row_limit,
)
from agent.sources.errors import (
    QueryFailed, SQLRejected, SourceUnavailable, UnknownColumn, UnknownTable, timed_out,
)
from agent.sources.query_pool import PoolLimits, run_isolated
from agent.sources.engine_denials import DENIALS
from agent.sources.sql_guard import MAX_SQL_CHARS, check_sql

# Large enough for any real analytics cell, small enough that randomblob(1e9),
# zeroblob(1e9) or printf('%.*c', 1e9, 'x') fail at once instead of allocating.
MAX_VALUE_BYTES = 20_000_000
# SQLite's own limits, far above any real analytics query, so most bombs fail when prepared
# (Connection.setlimit; SQLite's defaults in comments).
SQLITE_LIMITS = {
    sqlite3.SQLITE_LIMIT_EXPR_DEPTH: 300,  # 1000
    sqlite3.SQLITE_LIMIT_COMPOUND_SELECT: 100,  # 500
    sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH: 1000,  # 50,000: a long pattern is slow on every row
    sqlite3.SQLITE_LIMIT_FUNCTION_ARG: 64,  # 127
    sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER: 100,  # 32,766: only introspection binds values
    sqlite3.SQLITE_LIMIT_TRIGGER_DEPTH: 1,  # nothing here writes
}
# SQLite VM steps between deadline checks: Datasette's sqlite_timelimit uses 1000,
# a check costs far less than the steps it covers.
PROGRESS_STEPS = 1000
# A writer rebuilding the file holds its lock briefly; waiting longer than this
# only ties up a worker thread, so callers get "locked, retry" instead.
MAX_BUSY_WAIT_S = 1.0
_DENIALS = DENIALS["sqlite"]  # the guard's names, denied again as SQLite prepares the statement
_ALLOWED_ACTIONS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION,
                    sqlite3.SQLITE_RECURSIVE}
_ACTION_LABELS = {
    sqlite3.SQLITE_PRAGMA: "PRAGMA", sqlite3.SQLITE_ATTACH: "ATTACH",
    sqlite3.SQLITE_DETACH: "DETACH", sqlite3.SQLITE_TRANSACTION: "transaction control",
    sqlite3.SQLITE_SAVEPOINT: "SAVEPOINT", sqlite3.SQLITE_INSERT: "INSERT",
    sqlite3.SQLITE_UPDATE: "UPDATE", sqlite3.SQLITE_DELETE: "DELETE",
    sqlite3.SQLITE_ANALYZE: "ANALYZE", sqlite3.SQLITE_REINDEX: "REINDEX",
}


class SQLiteSource(FileSource):
    """A read-only SQLite analytics file that runs guarded, bounded queries (a `DataSource`).

    Args:
        path: The SQLite file. It is only checked when first used, so an app can
            start before the file exists and report it per request.
        time_limit_s: Wall-clock limit for each query, introspection included.
        max_rows: Rows returned by ``execute`` before ``truncated`` is set.
        max_cell_bytes: Longest text (UTF-8 bytes) or blob kept in a cell.
        limits: The worker processes model-written SQL runs in (query_pool.py);
            ``workers=0`` runs it in this process, with the progress-handler deadline only.
        trusted: only for files whose views we wrote ourselves (the conversation store's JSON1 views):
            they may call functions the untrusted schema may not (``PRAGMA trusted_schema``).
    """

    dialect = "sqlite"  # sqlglot's name, for the guard and for SQL written elsewhere (the planner)
    engine = "SQLite"  # what the model and the error messages call it

    def __init__(self, path: str | Path, *, time_limit_s: float = 10.0, max_rows: int = 1000,
                 max_cell_bytes: int = 10_000, trusted: bool = False,
                 limits: PoolLimits | None = None) -> None:
        super().__init__(path, time_limit_s=time_limit_s, max_rows=max_rows, max_cell_bytes=max_cell_bytes)
        self.trusted = trusted
        self.limits = limits or PoolLimits()

    def close(self) -> None:
        """Nothing to release: every call opens and closes its own connection, and the worker pool
        is shared by every source with the same limits (closed at exit)."""

    # -- model-written SQL ------------------------------------------------------

    def execute(self, sql: str, *, max_rows: int | None = None) -> QueryResult:
        """Check ``sql`` with the guard, then run it read-only with all limits.

        Raises:
            SQLRejected: the guard or the authorizer refused the statement.
            QueryTimeout, QueryFailed, SourceUnavailable.
        """
        return self._run_unchecked(check_sql(sql), max_rows=max_rows)

    def _run_unchecked(self, sql: str, *, max_rows: int | None = None) -> QueryResult:
        """Run ``sql`` under layers 2 and 3 only, in a worker process (query_pool.py); tests call it to
        bypass the guard.

        Raises:
            QueryBusy: no worker became free in time (nothing ran).
            QueryTimeout: the worker was killed at the deadline.
        """
        return run_isolated(self, sql, limit=row_limit(max_rows, self.max_rows))

    def worker_arguments(self) -> dict[str, Any]:
        """How a worker process builds this source (`run_isolated`)."""
        return {**super().worker_arguments(), "trusted": self.trusted}

    def run_here(self, sql: str, *, max_rows: int | None = None) -> QueryResult:
        """Run ``sql`` under layers 2 and 3 in this process (what a worker does)."""
        limit = row_limit(max_rows, self.max_rows)
        denied: list[str] = []
        with self._connect(authorizer=denied) as conn:
            started = time.perf_counter()
            with self._errors(denied):
                cursor = conn.execute(sql)
                if cursor.description is None:
                    raise SQLRejected("the statement is not a query (it has no result columns); "
                                      "send one SELECT statement")
                return capped_result(sql, [d[0] for d in cursor.description], cursor, limit=limit, started=started,
                                     max_cell_bytes=self.max_cell_bytes)

    # -- introspection (trusted SQL; names come from the schema) -----------------

    def list_tables(self) -> list[str]:
        """Names of user tables and views, sorted case-insensitively."""
        with self._connect() as conn, self._errors():
            return self._table_names(conn)

    def describe_table(self, table: str) -> TableSchema:
        """Columns, foreign keys and row count of a table or view.

        Raises:
            UnknownTable: with the closest real names.
        """
        with self._connect() as conn, self._errors():
            return self._describe(conn, self._resolve_table(conn, table))

    def catalogue(self) -> list[TableSchema]:
        """Every table and view as `describe_table` gives it, in `list_tables` order, read in one
        connection: for the sample's nine tables 1.5 ms p50 against 13-17 ms with one connection per
        table (200 runs each, load average 8)."""
        with self._connect() as conn, self._errors():
            return [self._describe(conn, name) for name in self._table_names(conn)]

    def sample_rows(self, table: str, limit: int = 5) -> QueryResult:
        """The first rows of a table or view; ``limit`` is clamped to 1..5."""
        limit = clamp(limit, 5)
        with self._connect() as conn, self._errors():
            name = self._resolve_table(conn, table)
        return self._run_unchecked(f"SELECT * FROM {quote_identifier(name)} LIMIT {limit}")

    def find_values(self, table: str, column: str, term: str, limit: int = 20) -> list[Any]:
        """Distinct values of ``column`` in rows where any text cell contains ``term``.

        Every text value of the row is searched, not only ``column``: so
        ``find_values("launch_vehicles", "name_zh", "Long March 2D")`` returns
        '长征二号丁' when that row's ``name`` is 'Long March 2D'. Matching is
        SQLite's LIKE '%term%' (case-insensitive for ASCII only), with ``%``,
        ``_`` and ``\\`` in ``term`` matched literally. NULLs are skipped; values
        come most frequent first, at most ``limit`` (clamped to 1..max_rows).

        Raises:
            UnknownTable, UnknownColumn: with the closest real names.
        """
        limit = clamp(limit, self.max_rows)
        with self._connect() as conn, self._errors():
            name = self._resolve_table(conn, table)
            names = [r[0] for r in conn.execute(
                "SELECT name FROM pragma_table_info(?) ORDER BY cid", (name,))]
            target = quote_identifier(resolve_name(
                column, names, UnknownColumn, f"{name} has no column named {column!r}"))
            # typeof() rather than declared types: SQLite columns hold any type.
            matches = " OR ".join(
                f"(typeof({c}) = 'text' AND {c} LIKE :pattern ESCAPE '\\')"
                for c in map(quote_identifier, names))
            sql = (f"SELECT {target}, count(*) AS n FROM {quote_identifier(name)}"
                   f" WHERE {target} IS NOT NULL AND ({matches})"
                   f" GROUP BY {target} ORDER BY n DESC, {target} LIMIT :limit")
            rows = conn.execute(sql, {"pattern": contains_pattern(term), "limit": limit}).fetchall()
        return [render_cell(r[0], self.max_cell_bytes)[0] for r in rows]

    # -- connections ------------------------------------------------------------

    @contextmanager
    def _connect(self, *, authorizer: list[str] | None = None) -> Iterator[sqlite3.Connection]:
        """Open a fresh read-only connection with limits and a deadline.

        One connection per call, not per thread: the web app calls from a pool
        of threads, a per-call connection needs no locking, never carries an
        authorizer or statement cache from one use into the next, and opening
        costs about 0.15 ms (measured on the Spider files, limits and checks included).

        Args:
            authorizer: when given, install the read-only authorizer for
                model-written SQL and append a description of each denial here.
        """
        if not self.path.is_file():
            raise SourceUnavailable(
                f"analytics database not found at {self.path.name}; set ASKDB_DATABASE or --db")
        uri = f"file:{urllib.parse.quote(str(self.path.resolve()))}?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True, isolation_level=None,
                                   timeout=min(MAX_BUSY_WAIT_S, self.time_limit_s))
        except sqlite3.Error as e:
            raise SourceUnavailable(
                f"could not open the analytics database {self.path.name}; check the file") from None
        try:
            # Invalid UTF-8 in a text cell becomes U+FFFD instead of failing the query.
            conn.text_factory = lambda b: b.decode("utf-8", "replace")
            conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
            conn.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, MAX_SQL_CHARS)
            conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
            for category, value in SQLITE_LIMITS.items():
                conn.setlimit(category, value)
            with self._errors():
                conn.execute("PRAGMA query_only = 1")
                # The file may come from elsewhere: its views and triggers must
                # not call functions with side effects.
                conn.execute(f"PRAGMA trusted_schema = {int(self.trusted)}")
                # Cheap read of page 1: a non-database or corrupt file fails here.
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            if authorizer is not None:
                conn.set_authorizer(_read_only_authorizer(authorizer))
            deadline = time.monotonic() + self.time_limit_s
            conn.set_progress_handler(lambda: time.monotonic() > deadline, PROGRESS_STEPS)
            yield conn
        finally:
            conn.close()

    @contextmanager
    def _errors(self, denied: list[str] | None = None) -> Iterator[None]:
        """Translate sqlite3 errors into the sources' typed errors (agent/sources/errors.py)."""
        try:
            yield
        except sqlite3.Error as e:
            raise self._translate(e, denied or []) from None
        except UnicodeEncodeError:
            # A lone surrogate from a JSON "\ud800" escape cannot be bound.
            raise QueryFailed("a value contains invalid Unicode (a lone surrogate); "
                              "remove it") from None

    def _translate(self, e: sqlite3.Error, denied: list[str]) -> Exception:
        # Decide on SQLite's result code (Python 3.11+), never on message words:
        # "malformed JSON" or "no such column: locked" are the query's fault.
        code = getattr(e, "sqlite_errorname", None) or "SQLITE_ERROR"
        primary = code.split("_")[1]  # SQLITE_BUSY_SNAPSHOT -> BUSY
        message = str(e)
        if primary == "INTERRUPT":
            return timed_out(self.time_limit_s)
        if primary in ("BUSY", "LOCKED"):
            return SourceUnavailable(
                f"the analytics database {self.path.name} is locked by another process "
                "(probably being rebuilt); retry in a moment")
        if primary in ("NOTADB", "CORRUPT"):
            return SourceUnavailable(
                f"{self.path.name} is not a database or is corrupt (not a valid SQLite file); "
                "rebuild it or point ASKDB_DATABASE / --db at another file")
        # The analytics file is never written: a failed write is a temporary file past RLIMIT_FSIZE
        # in a worker (EFBIG), or a full disk.
        if primary == "FULL" or code in ("SQLITE_IOERR_WRITE", "SQLITE_IOERR_SHORT_WRITE", "SQLITE_IOERR_TRUNCATE"):
            return QueryFailed("the query ran out of temporary disk space (ASKDB_SQL_MAX_TEMP_MB); "
                               "add filters or LIMIT, or group less")
        if primary in ("CANTOPEN", "IOERR"):
            return SourceUnavailable(f"could not read the analytics database {self.path.name}; "
                                       "check the file and directory permissions")
        if denied or primary == "AUTH":
            return SQLRejected(denied[0] if denied else "the statement is not allowed on the "
                               "read-only analytics database; send a SELECT query")
        if primary == "READONLY":
            return SQLRejected("the analytics database is read-only; send a SELECT query")
        if isinstance(e, sqlite3.ProgrammingError) and "one statement" in message:
            return SQLRejected("only one statement is allowed")
        return QueryFailed(message + _function_hint(message))

    # -- helpers ----------------------------------------------------------------

    def _table_names(self, conn: sqlite3.Connection) -> list[str]:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"
                            " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'").fetchall()
        return sorted((r[0] for r in rows), key=lambda n: (n.lower(), n))

    def _describe(self, conn: sqlite3.Connection, name: str) -> TableSchema:
        columns = [
            Column(name=r[0], type=r[1] or "", not_null=bool(r[2]), default=r[3], primary_key=bool(r[4]))
            for r in conn.execute(
                'SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?) ORDER BY cid', (name,))
        ]
        foreign_keys = [
            ForeignKey(column=r[0], ref_table=r[1], ref_column=r[2])
            for r in conn.execute(
                'SELECT "from", "table", "to" FROM pragma_foreign_key_list(?) ORDER BY id, seq', (name,))
        ]
        (row_count,) = conn.execute(f"SELECT count(*) FROM {quote_identifier(name)}").fetchone()
        return TableSchema(name=name, columns=columns, foreign_keys=foreign_keys, row_count=row_count)

    def _resolve_table(self, conn: sqlite3.Connection, table: str) -> str:
        return resolve_name(table, self._table_names(conn), UnknownTable, f"no table or view named {table!r}")


def _read_only_authorizer(denied: list[str]):
    """SQLite authorizer for model-written SQL: reads and plain functions only."""

    def authorize(action: int, arg1: str | None, arg2: str | None, _db: str | None,
                  _source: str | None) -> int:
        if action == sqlite3.SQLITE_READ and arg1 and (reason := _DENIALS.table(arg1)):
            denied.append(f"table {arg1} is not allowed: {reason}")
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_FUNCTION and arg2 and (reason := _DENIALS.function(arg2)):
            denied.append(f"function {arg2} is not allowed: {reason}")
            return sqlite3.SQLITE_DENY
        if action in _ALLOWED_ACTIONS:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_UPDATE and arg1 in ("sqlite_master", "sqlite_temp_master"):
            # Preparing a statement that uses an eponymous virtual table (json_each,
            # json_tree) reports an UPDATE of the schema table from SQLite's internal
            # CREATE TABLE parse, which is never run. IGNORE lets it prepare while
            # leaving any real update of those columns a no-op; the read-only file,
            # query_only and the guard refuse the write itself.
            return sqlite3.SQLITE_IGNORE
        label = _ACTION_LABELS.get(action, "this statement")
        detail = f" {arg1}" if action == sqlite3.SQLITE_PRAGMA and arg1 else ""
        denied.append(f"{label}{detail} is not allowed: the analytics database is read-only; "
                      "send a SELECT query")
        return sqlite3.SQLITE_DENY

    return authorize


#: What SQLite offers instead of the functions models bring from other dialects: a small model that
#: writes YEAR(launch_date) = 2019 and reads only "no such function" may never write SQL again (issue 16).
_MISSING_FUNCTIONS = {
    "year": "strftime('%Y', column) = 'YYYY', or column LIKE 'YYYY%' for ISO date text",
    "month": "strftime('%m', column) = 'MM'",
    "day": "strftime('%d', column)",
    "date_format": "strftime(format, column)",
    "to_char": "strftime(format, column)",
    "now": "date('now') or datetime('now')",
    "curdate": "date('now')",
    "getdate": "datetime('now')",
    "datediff": "julianday(a) - julianday(b)",
    "len": "length(text)",
    "nvl": "ifnull(value, other)",
}


def _function_hint(message: str) -> str:
    """"; SQLite: use ..." for a function SQLite lacks that it has another way to do, else ""."""
    name = message.removeprefix("no such function: ").strip().lower() if message.startswith("no such function: ") else ""
    return f"; SQLite has no {name.upper()}(): use {_MISSING_FUNCTIONS[name]}" if name in _MISSING_FUNCTIONS else ""

