"""PostgreSQL as a data source (agent/sources/base.py's `DataSource`).

Layers, as for SQLite (docs/security.md): (1) the guard parses in the postgres dialect and
accepts one read query; (2) every call runs in a READ ONLY transaction that is always
rolled back, with a local ``statement_timeout``, through a server-side cursor that fetches
at most ``max_rows + 1`` rows; (3) the role: point ``ASKDB_DATABASE`` at a role that holds
SELECT grants only (README, "The analytics database on PostgreSQL").
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import ConnectionPool, PoolTimeout

from agent.sources.base import (
    COUNT_CAP, Column, ForeignKey, QueryResult, TableSchema, capped_count_sql, capped_result, clamp, contains_pattern,
    render_cell, resolve_name,
)
from agent.sources.errors import (
    QueryFailed, SQLRejected, SourceUnavailable, UnknownColumn, UnknownTable, timed_out,
)
from agent.sources.query_pool import PoolLimits
from agent.sources.sql_guard import check_sql

POOL_SIZE = 4
INDEX_TTL_S = 300

_RELATIONS = """
    SELECT c.oid, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'v', 'm', 'f', 'p') AND NOT c.relispartition
      AND n.nspname = ANY (current_schemas(false)) AND has_table_privilege(c.oid, 'SELECT')
    ORDER BY array_position(current_schemas(false), n.nspname), c.relname"""
_COLUMNS = """
    SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, d.adrelid),
           coalesce(a.attnum = ANY (i.indkey), false), t.typcategory
    FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    LEFT JOIN pg_index i ON i.indrelid = a.attrelid AND i.indisprimary
    WHERE a.attrelid = %s AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum"""
_FOREIGN_KEYS = """
    SELECT a.attname, fc.relname, fa.attname
    FROM pg_constraint k CROSS JOIN LATERAL unnest(k.conkey, k.confkey) WITH ORDINALITY AS u (col, ref, ord)
    JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.col
    JOIN pg_class fc ON fc.oid = k.confrelid
    JOIN pg_attribute fa ON fa.attrelid = k.confrelid AND fa.attnum = u.ref
    WHERE k.conrelid = %s AND k.contype = 'f' ORDER BY k.conname, u.ord"""
# Roles for which a READ ONLY transaction is no barrier: they read and write server files.
_POWERFUL_ROLE = """
    SELECT r.rolsuper OR pg_has_role(current_user, 'pg_read_server_files', 'MEMBER')
           OR pg_has_role(current_user, 'pg_write_server_files', 'MEMBER')
           OR pg_has_role(current_user, 'pg_execute_server_program', 'MEMBER')
    FROM pg_roles r WHERE r.rolname = current_user"""
# temp_file_limit is a superuser setting: a role sets it only when granted (PostgreSQL 15+:
# GRANT SET ON PARAMETER temp_file_limit TO askdb_reader); otherwise ALTER ROLE sets it (README).
_CAN_SET_TEMP_LIMIT = "SELECT has_parameter_privilege('temp_file_limit', 'SET')"


class PostgresSource:
    """A PostgreSQL database that runs guarded, bounded, read-only queries (a `DataSource`).

    Args:
        url: a libpq URL (``postgresql://user:pass@host:port/db``); only connected on first use.
        time_limit_s: ``statement_timeout`` of each query, introspection included.
        max_rows: rows returned by ``execute`` before ``truncated`` is set.
        max_cell_bytes: longest text (UTF-8 bytes) or bytea kept in a cell.
        trusted: run as any role, superusers included; only for SQL that whoever holds the URL
            typed (`python -m app store query`), never for model-written SQL (see `_check_role`).
        limits: ``max_memory_mb`` is each query's ``work_mem`` (per sort or hash), ``max_temp_mb`` its
            ``temp_file_limit`` when the role may set it; the worker count and wait are SQLite's.
    """

    dialect = "postgres"
    engine = "PostgreSQL"

    def __init__(self, url: str, *, time_limit_s: float = 10.0, max_rows: int = 1000,
                 max_cell_bytes: int = 10_000, pool_size: int = POOL_SIZE, trusted: bool = False,
                 limits: PoolLimits | None = None) -> None:
        if time_limit_s <= 0 or max_rows < 1 or max_cell_bytes < 1:
            raise ValueError("time_limit_s, max_rows and max_cell_bytes must be positive")
        try:
            params = conninfo_to_dict(url)
        except psycopg.ProgrammingError as e:
            raise SourceUnavailable(f"ASKDB_DATABASE is not a valid PostgreSQL URL: {e}") from None
        self.url = url
        self.label = str(params.get("dbname") or params.get("user") or "postgres")
        self.time_limit_s = float(time_limit_s)
        self.max_rows = max_rows
        self.max_cell_bytes = max_cell_bytes
        self.pool_size = pool_size
        self._pool: ConnectionPool | None = None
        self._pool_lock = threading.Lock()
        self.trusted = trusted
        self._role_checked = False
        self.limits = limits or PoolLimits()
        self._can_set_temp_limit: bool | None = None
        # work_mem is per sort or hash node, and a plan has several: a sixteenth of the query's budget.
        self.work_mem_mb = max(4, self.limits.max_memory_mb // 16)

    def __repr__(self) -> str:
        return f"PostgresSource({self.where()!r})"

    def where(self) -> str:
        """The URL without its password, for messages."""
        params = conninfo_to_dict(self.url)
        params.pop("password", None)
        return make_conninfo(**params)

    def cache_key(self) -> tuple[str, int, int]:
        """Key for indexes built from this database (the offline planner's): the server cannot say
        cheaply when its data changed, so an index is rebuilt every INDEX_TTL_S seconds."""
        return (self.where(), int(time.time() // INDEX_TTL_S), 0)

    def close(self) -> None:
        """Close the connection pool (opened again on next use)."""
        with self._pool_lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None

    # -- model-written SQL ------------------------------------------------------

    def execute(self, sql_text: str, *, max_rows: int | None = None) -> QueryResult:
        """Check ``sql_text`` with the guard (postgres dialect), then run it read-only with all limits.

        Raises:
            SQLRejected, QueryTimeout, QueryFailed, SourceUnavailable.
        """
        return self._run_unchecked(check_sql(sql_text, dialect="postgres"), max_rows=max_rows)

    def _run_unchecked(self, sql_text: str, *, max_rows: int | None = None) -> QueryResult:
        """Run ``sql_text`` under layers 2 and 3 only; tests call it to bypass the guard."""
        limit = self.max_rows if max_rows is None else max(0, max_rows)
        with self._transaction() as conn, self._errors():
            started = time.perf_counter()
            # A server-side cursor: rows come over in batches, so a huge result never crosses the wire
            # whole, and DECLARE accepts nothing but a query.
            with conn.cursor(name="askdb_query") as cursor:
                cursor.itersize = min(limit + 1, 200)
                cursor.execute(sql_text)
                return capped_result(sql_text, [d.name for d in cursor.description or []], cursor, limit=limit,
                                     started=started, max_cell_bytes=self.max_cell_bytes)

    # -- introspection (trusted SQL; names come from the catalog, values are bound) ----

    def list_tables(self) -> list[str]:
        """Tables and views on the search path that this role may read, sorted case-insensitively."""
        with self._transaction() as conn, self._errors():
            return sorted(self._relations(conn), key=lambda n: (n.lower(), n))

    def describe_table(self, table: str) -> TableSchema:
        """Columns, foreign keys and row count (exact up to ``COUNT_CAP``) of a table or view.

        Raises:
            UnknownTable: with the closest real names.
        """
        with self._transaction() as conn, self._errors():
            return self._describe(conn, *self._resolve_table(conn, table))

    def catalogue(self) -> list[TableSchema]:
        """Every table and view as `describe_table` gives it, in `list_tables` order, in one transaction."""
        with self._transaction() as conn, self._errors():
            relations = self._relations(conn)
            names = sorted(relations, key=lambda n: (n.lower(), n))
            return [self._describe(conn, name, relations[name]) for name in names]

    def sample_rows(self, table: str, limit: int = 5) -> QueryResult:
        """The first rows of a table or view; ``limit`` is clamped to 1..5."""
        limit = clamp(limit, 5)
        with self._transaction() as conn, self._errors():
            name, _ = self._resolve_table(conn, table)
        return self._run_unchecked(f"SELECT * FROM {sql.Identifier(name).as_string(None)} LIMIT {limit}")

    def find_values(self, table: str, column: str, term: str, limit: int = 20) -> list[Any]:
        """Distinct values of ``column`` in rows where any text column contains ``term``.

        As ``SQLiteSource.find_values``, with ILIKE (case-insensitive in every script)
        over the columns of PostgreSQL's string category; ``%``, ``_`` and ``\\`` match literally.

        Raises:
            UnknownTable, UnknownColumn: with the closest real names.
        """
        limit = clamp(limit, self.max_rows)
        with self._transaction() as conn, self._errors():
            name, oid = self._resolve_table(conn, table)
            described = conn.execute(_COLUMNS, (oid,)).fetchall()
            target = sql.Identifier(resolve_name(column, [r[0] for r in described], UnknownColumn,
                                                  f"{name} has no column named {column!r}"))
            texts = [sql.Identifier(r[0]) for r in described if r[5] == "S"]
            if not texts:
                return []
            matches = sql.SQL(" OR ").join(sql.SQL("{} ILIKE %(pattern)s ESCAPE '\\'").format(c) for c in texts)
            query = sql.SQL("SELECT {t}, count(*) AS n FROM {table} WHERE {t} IS NOT NULL AND ({m})"
                            " GROUP BY {t} ORDER BY n DESC, {t} LIMIT %(limit)s").format(
                t=target, table=sql.Identifier(name), m=matches)
            rows = conn.execute(query, {"pattern": contains_pattern(term), "limit": limit}).fetchall()
        return [render_cell(r[0], self.max_cell_bytes)[0] for r in rows]

    # -- connections ------------------------------------------------------------

    def _get_pool(self) -> ConnectionPool:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ConnectionPool(
                    self.url, min_size=1, max_size=self.pool_size, open=True, name="askdb-analytics",
                    kwargs={"connect_timeout": max(1, round(self.time_limit_s)), "application_name": "askdb"},
                    configure=_configure, check=ConnectionPool.check_connection)
            return self._pool

    @contextmanager
    def _transaction(self) -> Iterator[psycopg.Connection]:
        """A pooled connection inside a READ ONLY transaction with the time limit; always rolled back."""
        try:
            with self._get_pool().connection(timeout=min(10.0, self.time_limit_s + 1)) as conn:
                try:
                    with self._errors():
                        # Transaction-local (is_local = true): gone at the rollback, never leaks to the pool.
                        conn.execute("SELECT set_config('statement_timeout', %s, true),"
                                     " set_config('lock_timeout', %s, true), set_config('work_mem', %s, true)",
                                     (f"{round(self.time_limit_s * 1000)}",) * 2 + (f"{self.work_mem_mb}MB",))
                        if self._can_set_temp_limit is None:
                            self._can_set_temp_limit = conn.info.server_version >= 150000 and bool(
                                conn.execute(_CAN_SET_TEMP_LIMIT).fetchone()[0])
                        if self._can_set_temp_limit:
                            conn.execute("SELECT set_config('temp_file_limit', %s, true)",
                                         (f"{self.limits.max_temp_mb}MB",))
                        if not (self._role_checked or self.trusted):
                            self._check_role(conn)
                    yield conn
                finally:
                    if not conn.closed:
                        try:
                            conn.rollback()
                        except psycopg.Error:
                            pass  # a broken connection: the pool discards it
        except PoolTimeout:
            raise self._unreachable() from None

    def _check_role(self, conn: psycopg.Connection) -> None:
        """Refuse a superuser (or a member of the server-file roles): pg_read_file and lo_import
        work for them even in a READ ONLY transaction, so the guard would be the only layer."""
        row = conn.execute(_POWERFUL_ROLE).fetchone()
        if row and row[0]:
            raise SourceUnavailable(
                f"ASKDB_DATABASE connects as {conn.info.user!r}, a superuser or a member of the server-file "
                "roles, for whom model-written SQL could read server files; connect as a read-only role "
                "(README: \"The analytics database on PostgreSQL\")")
        self._role_checked = True

    def _unreachable(self) -> SourceUnavailable:
        """Why the pool has no connection: one direct attempt gives the server's own reason."""
        try:
            psycopg.connect(self.url, connect_timeout=max(1, round(self.time_limit_s))).close()
            reason = "every connection is busy; retry in a moment"
        except psycopg.Error as e:
            reason = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
        return SourceUnavailable(f"could not connect to the analytics database at {self.where()}: {reason}; "
                                   "check ASKDB_DATABASE and that the server is running")

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Translate psycopg errors into the sources' typed errors (agent/sources/errors.py), by SQLSTATE."""
        try:
            yield
        except psycopg.Error as e:
            raise self._translate(e) from None
        except UnicodeEncodeError:
            raise QueryFailed("a value contains invalid Unicode (a lone surrogate); remove it") from None

    def _translate(self, e: psycopg.Error) -> Exception:
        state = e.sqlstate or ""
        message = (e.diag.message_primary if e.diag and e.diag.message_primary else str(e)).strip()
        if isinstance(e, psycopg.errors.QueryCanceled):
            return timed_out(self.time_limit_s)
        if state == "25006":  # read_only_sql_transaction
            return SQLRejected("the analytics database is read-only; send a SELECT query")
        if state == "42501":  # insufficient_privilege: the read-only role refused it
            return SQLRejected(f"{message}: the analytics role may only read; send a SELECT query")
        if state.startswith("08") or state in ("57P01", "57P02", "57P03", "3D000", "28000", "28P01") or (
                isinstance(e, psycopg.OperationalError) and not state):
            return SourceUnavailable(f"the analytics database at {self.where()} is unavailable: {message}")
        return QueryFailed(message)

    # -- helpers ----------------------------------------------------------------

    def _relations(self, conn: psycopg.Connection) -> dict[str, int]:
        """Name -> oid of readable relations on the search path; the first schema wins, as in PostgreSQL."""
        found: dict[str, int] = {}
        for oid, name in conn.execute(_RELATIONS):
            found.setdefault(name, oid)
        return found

    def _describe(self, conn: psycopg.Connection, name: str, oid: int) -> TableSchema:
        columns = [Column(name=r[0], type=r[1], not_null=r[2], default=r[3], primary_key=r[4])
                   for r in conn.execute(_COLUMNS, (oid,))]
        foreign_keys = [ForeignKey(column=r[0], ref_table=r[1], ref_column=r[2])
                        for r in conn.execute(_FOREIGN_KEYS, (oid,))]
        (count,) = conn.execute(sql.SQL(capped_count_sql("{}")).format(sql.Identifier(name))).fetchone()
        if count > COUNT_CAP:
            (estimate,) = conn.execute("SELECT reltuples::bigint FROM pg_class WHERE oid = %s", (oid,)).fetchone()
            count = max(COUNT_CAP, estimate)
        return TableSchema(name=name, columns=columns, foreign_keys=foreign_keys, row_count=count)

    def _resolve_table(self, conn: psycopg.Connection, table: str) -> tuple[str, int]:
        relations = self._relations(conn)
        name = resolve_name(table, sorted(relations, key=lambda n: (n.lower(), n)), UnknownTable,
                            f"no table or view named {table!r}")
        return name, relations[name]


def _configure(conn: psycopg.Connection) -> None:
    # Every transaction on these connections starts READ ONLY (psycopg's BEGIN READ ONLY).
    conn.read_only = True
    conn.prepare_threshold = None  # no server-side prepared statements: safe behind pgbouncer
