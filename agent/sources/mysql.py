"""MySQL and MariaDB as a data source, through PyMySQL.

Layers (docs/security.md): (1) the guard parses in the mysql dialect and accepts one read
query, without variables or the system schemas; (2) every call runs in a ``START TRANSACTION
READ ONLY`` that is always rolled back, in a session that is read-only too, stopped by the
server at the time limit (``max_statement_time`` on MariaDB, ``max_execution_time`` on MySQL)
and capped at ``max_rows + 1`` rows (``sql_select_limit``); (3) the user: a read-only
transaction still lets DDL through (it commits first) and ``LOAD_FILE``/``INTO OUTFILE``
read and write server files, so the source refuses to run for a user holding any privilege
beyond SELECT and SHOW VIEW, itself or through any role granted to it, however deeply nested
(README: "Your own data"). A role whose grants the user may not read (MySQL 8 shows another
account's grants only with SELECT on the mysql schema) is refused too: askdb cannot vouch for it.
"""

from __future__ import annotations

import re
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pymysql
import pymysql.cursors

from agent.sources.base import (
    COUNT_CAP, Column, ForeignKey, QueryResult, TableSchema, capped_count_sql, capped_result, clamp, contains_pattern,
    render_cell, resolve_name,
)
from agent.sources.errors import (
    QueryBusy, QueryFailed, SQLRejected, SourceUnavailable, UnknownColumn, UnknownTable, timed_out,
)
from agent.sources.sql_guard import check_sql

DEFAULT_PORT = 3306
# Query parameters a URL may carry, as PyMySQL's connect() names them.
URL_OPTIONS = ("unix_socket", "ssl_ca")
POOL_SIZE = 4
INDEX_TTL_S = 300
# Privileges that neither write nor reach outside the granted tables.
READ_PRIVILEGES = frozenset({"USAGE", "SELECT", "SHOW VIEW"})
_NO_SELECT_LIMIT = 18446744073709551615  # sql_select_limit's default: no limit
_TABLES = "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()"
_COLUMNS = """
    SELECT column_name, column_type, is_nullable = 'NO', column_default, column_key = 'PRI', data_type
    FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = %s ORDER BY ordinal_position"""
_FOREIGN_KEYS = """
    SELECT column_name, referenced_table_name, referenced_column_name FROM information_schema.key_column_usage
    WHERE table_schema = DATABASE() AND table_name = %s AND referenced_table_name IS NOT NULL
    ORDER BY constraint_name, ordinal_position"""
_TEXT_TYPES = frozenset({"char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set"})
# Server error numbers (https://mariadb.com/kb/en/mariadb-error-codes/).
_TIMEOUT_CODES = {1969, 3024, 1317}  # max_statement_time, max_execution_time, interrupted
_UNKNOWN_VARIABLE = 1193  # a server without the setting
# A read-only transaction; access denied to a database, a table, a column, a privilege (FILE, SUPER),
# or a server file (LOAD DATA INFILE reports 1045).
_READ_ONLY_CODES = {1792, 1044, 1045, 1142, 1143, 1227}
_LOST_CODES = {2006, 2013}  # the server went away mid-call


def connect_args(url: str) -> dict[str, Any]:
    """PyMySQL's connect() arguments for ``mysql://user:password@host:port/database?unix_socket=...``
    (``mariadb://`` too); user, password and database are percent-decoded.

    Raises:
        ValueError: not such a URL, a bad port, or an unknown option (the message says which).
    """
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("mysql", "mariadb"):
        raise ValueError(f"not a mysql:// or mariadb:// URL: {parts.scheme or 'no scheme'}")
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError:
        raise ValueError("the port is not a number from 0 to 65535") from None
    args: dict[str, Any] = {
        "host": parts.hostname or "127.0.0.1", "port": port,
        "user": urllib.parse.unquote(parts.username or ""), "password": urllib.parse.unquote(parts.password or ""),
        "database": urllib.parse.unquote(parts.path.lstrip("/")) or None, "charset": "utf8mb4",
    }
    for name, values in urllib.parse.parse_qs(parts.query, keep_blank_values=True).items():
        if name not in URL_OPTIONS:
            raise ValueError(f"unknown option {name!r} in the URL; known: {', '.join(URL_OPTIONS)}")
        args[name] = values[-1]
    return args


def granted_privileges(grants: list[str]) -> tuple[set[str], list[str]]:
    """The privileges and the role names in `SHOW GRANTS` lines (column lists dropped)."""
    privileges: set[str] = set()
    roles: list[str] = []
    for line in grants:
        if match := re.match(r"GRANT (.+?) ON .+ TO ", line):
            listed = re.sub(r"\([^)]*\)", "", match.group(1))
            privileges.update(p.strip().upper() for p in listed.split(","))
        elif match := re.match(r"GRANT (.+?) TO ", line):
            roles.extend(r.strip() for r in match.group(1).split(","))
    return privileges, roles


def _bound_temp_space(cursor, max_temp_mb: int | None) -> None:
    """Cap the temporary disk this MariaDB session may use, where the server has the setting (11.5 and
    later); on older servers a spilling sort or DISTINCT is bounded by the time limit only (a
    COUNT(DISTINCT ...) over seq_1_to_500000000 wrote 2.24 GB of temp in 10 s on 10.11)."""
    if max_temp_mb is None:
        return
    try:
        cursor.execute("SET SESSION max_tmp_session_space_usage = %s", (max_temp_mb << 20,))
    except pymysql.MySQLError as e:
        if e.args[0] != _UNKNOWN_VARIABLE:
            raise


def quote(name: str) -> str:
    """A backquoted identifier, for SQL sent without arguments."""
    return "`" + name.replace("`", "``") + "`"


def quote_in_format(name: str) -> str:
    """A backquoted identifier inside SQL sent with arguments: PyMySQL %-formats that text, so a
    ``%`` in the name is doubled (``sales%`` would otherwise break or shift the arguments)."""
    return quote(name).replace("%", "%%")


class MySQLSource:
    """A MySQL or MariaDB database that runs guarded, bounded, read-only queries (a `DataSource`).

    Args:
        url: ``mysql://user:password@host:port/database`` (or ``mariadb://``); connected on first use.
        time_limit_s: the server's limit of each statement, introspection included.
        max_rows: rows returned by ``execute`` before ``truncated`` is set.
        max_cell_bytes: longest text (UTF-8 bytes) or blob kept in a cell.
        pool_size: connections kept open; a call waits for one at most its time limit.
        trusted: run as any user, whatever its privileges; only for SQL whoever holds the URL typed.
        max_temp_mb: temporary disk one session may use (MariaDB 11.5 and later:
            ``max_tmp_session_space_usage``); an older server bounds a sort or DISTINCT's spill by the time
            limit only (docs/security.md). None: the server's own setting.
    """

    dialect = "mysql"
    engine = "MySQL"

    def __init__(self, url: str, *, time_limit_s: float = 10.0, max_rows: int = 1000,
                 max_cell_bytes: int = 10_000, pool_size: int = POOL_SIZE, trusted: bool = False,
                 max_temp_mb: int | None = 512) -> None:
        if time_limit_s <= 0 or max_rows < 1 or max_cell_bytes < 1:
            raise ValueError("time_limit_s, max_rows and max_cell_bytes must be positive")
        try:
            self._args = connect_args(url)
        except ValueError as e:
            raise SourceUnavailable(f"ASKDB_DATABASE is not a valid MySQL URL: {e}") from None
        self.label = self._args["database"] or self._args["user"] or "mysql"
        self.time_limit_s = float(time_limit_s)
        self.max_rows = max_rows
        self.max_cell_bytes = max_cell_bytes
        self.trusted = trusted
        self.max_temp_mb = max_temp_mb
        self._idle: list[pymysql.connections.Connection] = []
        self._slots = threading.BoundedSemaphore(pool_size)
        self._lock = threading.Lock()
        self._user_checked = False

    def __repr__(self) -> str:
        return f"MySQLSource({self.where()!r})"

    def where(self) -> str:
        """The URL without its password, for messages."""
        a = self._args
        return f"mysql://{urllib.parse.quote(a['user'])}@{a['host']}:{a['port']}/{a['database'] or ''}"

    def cache_key(self) -> tuple[str, int, int]:
        """The server cannot say cheaply when its data changed: indexes are rebuilt every INDEX_TTL_S seconds."""
        return (self.where(), int(time.time() // INDEX_TTL_S), 0)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            _discard(conn)

    # -- model-written SQL ------------------------------------------------------

    def execute(self, sql: str, *, max_rows: int | None = None) -> QueryResult:
        """Check ``sql`` with the guard (mysql dialect), then run it read-only with all limits.

        Raises:
            SQLRejected, QueryTimeout, QueryBusy, QueryFailed, SourceUnavailable.
        """
        return self._run_unchecked(check_sql(sql, dialect=self.dialect), max_rows=max_rows)

    def _run_unchecked(self, sql: str, *, max_rows: int | None = None) -> QueryResult:
        """Run ``sql`` under layers 2 and 3 only; tests call it to bypass the guard."""
        limit = self.max_rows if max_rows is None else max(0, max_rows)
        with self._transaction(select_limit=limit + 1) as conn:
            # Unbuffered: rows come over as they are read, so a huge result never crosses the wire whole.
            cursor = conn.cursor(pymysql.cursors.SSCursor)
            started = time.perf_counter()
            cursor.execute(sql)  # no arguments: PyMySQL sends the text as it is
            if cursor.description is None:
                raise SQLRejected("the statement is not a query (it has no result columns); send one SELECT")
            columns = [d[0] for d in cursor.description]
            result = capped_result(sql, columns, cursor, limit=limit, started=started,
                                   max_cell_bytes=self.max_cell_bytes)
            if result.truncated:
                _drop_unread(cursor, conn)
            return result

    # -- introspection (trusted SQL; names come from the catalog, values are bound) ----

    def list_tables(self) -> list[str]:
        """Tables and views of the URL's database that this user may read, sorted case-insensitively."""
        with self._transaction() as conn:
            return self._table_names(conn)

    def describe_table(self, table: str) -> TableSchema:
        """Columns, foreign keys and row count (exact up to ``COUNT_CAP``) of a table or view.

        Raises:
            UnknownTable: with the closest real names.
        """
        with self._transaction() as conn:
            return self._describe(conn, self._resolve_table(conn, table))

    def catalogue(self) -> list[TableSchema]:
        """Every table and view as `describe_table` gives it, in `list_tables` order, in one transaction."""
        with self._transaction() as conn:
            return [self._describe(conn, name) for name in self._table_names(conn)]

    def sample_rows(self, table: str, limit: int = 5) -> QueryResult:
        """The first rows of a table or view; ``limit`` is clamped to 1..5."""
        limit = clamp(limit, 5)
        with self._transaction() as conn:
            name = self._resolve_table(conn, table)
        return self._run_unchecked(f"SELECT * FROM {quote(name)} LIMIT {limit}")

    def find_values(self, table: str, column: str, term: str, limit: int = 20) -> list[Any]:
        """Distinct values of ``column`` in rows where any text column contains ``term`` (LIKE in the
        columns' collation, case-insensitive by default; ``%``, ``_`` and ``|`` match themselves).

        Raises:
            UnknownTable, UnknownColumn: with the closest real names.
        """
        limit = clamp(limit, self.max_rows)
        with self._transaction() as conn:
            name = self._resolve_table(conn, table)
            described = _rows(conn, _COLUMNS, (name,))
            target = quote_in_format(resolve_name(column, [r[0] for r in described], UnknownColumn,
                                                  f"{name} has no column named {column!r}"))
            texts = [quote_in_format(r[0]) for r in described if r[5] in _TEXT_TYPES]
            if not texts:
                return []
            matches = " OR ".join(f"{c} LIKE %(pattern)s ESCAPE '|'" for c in texts)
            rows = _rows(conn, f"SELECT {target}, count(*) AS n FROM {quote_in_format(name)} WHERE {target} IS NOT NULL"
                               f" AND ({matches}) GROUP BY {target} ORDER BY n DESC, {target} LIMIT %(limit)s",
                         {"pattern": contains_pattern(term, "|"), "limit": limit})
        return [render_cell(r[0], self.max_cell_bytes)[0] for r in rows]

    # -- connections ------------------------------------------------------------

    @contextmanager
    def _transaction(self, *, select_limit: int = _NO_SELECT_LIMIT) -> Iterator[pymysql.connections.Connection]:
        """A pooled connection inside a READ ONLY transaction, always rolled back; errors translated."""
        if not self._slots.acquire(timeout=min(10.0, self.time_limit_s + 1)):
            raise QueryBusy("every connection to the analytics database is busy; retry in a moment")
        conn = None
        try:
            with self._errors():
                conn = self._checkout()
                with conn.cursor() as cursor:
                    cursor.execute("SET SESSION sql_select_limit = %s", (select_limit,))
                    cursor.execute("START TRANSACTION READ ONLY")
                yield conn
        except BaseException:
            _discard(conn)  # it may hold unread rows or a broken session: never reused
            raise
        finally:
            self._checkin(conn)
            self._slots.release()

    def _checkout(self) -> pymysql.connections.Connection:
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        if conn is not None:
            try:
                conn.ping(reconnect=False)
                return conn
            except pymysql.MySQLError:
                _discard(conn)
        return self._connect()

    def _checkin(self, conn: pymysql.connections.Connection | None) -> None:
        if conn is None or not conn.open:
            return
        try:
            conn.rollback()
        except pymysql.MySQLError:
            _discard(conn)
            return
        with self._lock:
            self._idle.append(conn)

    def _connect(self) -> pymysql.connections.Connection:
        """A new connection, its session read-only and stopped by the server at the time limit; closed
        again when any of that fails."""
        timeout = max(1, round(self.time_limit_s))
        try:
            conn = pymysql.connect(**self._args, autocommit=True, connect_timeout=timeout,
                                   read_timeout=timeout + 10, write_timeout=timeout + 10)
        except pymysql.MySQLError as e:  # down, refused, unknown user or database: nothing ran yet
            raise SourceUnavailable(f"could not connect to the analytics database at {self.where()}: "
                                    f"{_reason(e)}; check ASKDB_DATABASE and that the server is running") from None
        try:
            with conn.cursor() as cursor:
                if "mariadb" in conn.get_server_info().lower():
                    cursor.execute("SET SESSION max_statement_time = %s", (self.time_limit_s,))
                    _bound_temp_space(cursor, self.max_temp_mb)
                else:
                    cursor.execute("SET SESSION max_execution_time = %s", (round(self.time_limit_s * 1000),))
                cursor.execute("SET SESSION TRANSACTION READ ONLY")
            if not (self._user_checked or self.trusted):
                self._check_user(conn)
        except pymysql.MySQLError as e:
            _discard(conn)
            raise SourceUnavailable(f"could not set up a read-only session on {self.where()}: {_reason(e)}") from None
        except BaseException:
            _discard(conn)
            raise
        return conn

    def _check_user(self, conn: pymysql.connections.Connection) -> None:
        """Refuse a user holding any privilege beyond READ_PRIVILEGES, itself or through its roles
        (roles granted to roles included), or holding a role whose grants it may not read."""
        with conn.cursor() as cursor:
            cursor.execute("SHOW GRANTS")
            privileges, roles = granted_privileges([r[0] for r in cursor.fetchall()])
            seen: set[str] = set()
            while roles:
                role = roles.pop()
                if role in seen:  # roles may be granted to each other in a cycle
                    continue
                seen.add(role)
                try:
                    cursor.execute(f"SHOW GRANTS FOR {role}")  # the role's name as SHOW GRANTS quoted it
                except pymysql.MySQLError as e:
                    raise SourceUnavailable(
                        f"ASKDB_DATABASE connects as {self._args['user']!r}, who holds the role {role} whose "
                        f"privileges it may not read ({_reason(e)}); askdb cannot check that the role only reads: "
                        "connect as a user granted SELECT directly, or without roles (README: \"Your own data\")"
                    ) from None
                granted, nested = granted_privileges([r[0] for r in cursor.fetchall()])
                privileges |= granted
                roles.extend(nested)
        extra = sorted(privileges - READ_PRIVILEGES)
        if extra:
            raise SourceUnavailable(
                f"ASKDB_DATABASE connects as {self._args['user']!r}, who holds {', '.join(extra)}: with any "
                "privilege beyond SELECT and SHOW VIEW, model-written SQL could write or read server files; "
                "connect as a read-only user (README: \"Your own data\")")
        self._user_checked = True

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Translate PyMySQL errors into the source errors, by the server's error number."""
        try:
            yield
        except pymysql.MySQLError as e:
            raise self._translate(e) from None

    def _translate(self, e: pymysql.MySQLError) -> Exception:
        code = e.args[0] if e.args and isinstance(e.args[0], int) else 0
        message = _reason(e)
        if code in _TIMEOUT_CODES:
            return timed_out(self.time_limit_s)
        if code in _READ_ONLY_CODES:
            return SQLRejected(f"{message}: the analytics user may only read; send a SELECT query")
        if code in _LOST_CODES or isinstance(e, pymysql.err.InterfaceError):
            return SourceUnavailable(f"the analytics database at {self.where()} is unavailable: {message}")
        return QueryFailed(message)

    # -- helpers ----------------------------------------------------------------

    def _describe(self, conn: pymysql.connections.Connection, name: str) -> TableSchema:
        columns = [Column(name=r[0], type=r[1], not_null=bool(r[2]), default=r[3], primary_key=bool(r[4]))
                   for r in _rows(conn, _COLUMNS, (name,))]
        foreign_keys = [ForeignKey(column=r[0], ref_table=r[1], ref_column=r[2])
                        for r in _rows(conn, _FOREIGN_KEYS, (name,))]
        ((count,),) = _rows(conn, capped_count_sql(quote(name)))  # no arguments: the name is not %-formatted
        return TableSchema(name=name, columns=columns, foreign_keys=foreign_keys, row_count=min(count, COUNT_CAP))

    def _table_names(self, conn: pymysql.connections.Connection) -> list[str]:
        return sorted((r[0] for r in _rows(conn, _TABLES)), key=lambda n: (n.lower(), n))

    def _resolve_table(self, conn: pymysql.connections.Connection, table: str) -> str:
        return resolve_name(table, self._table_names(conn), UnknownTable, f"no table or view named {table!r}")


def _reason(e: pymysql.MySQLError) -> str:
    """The server's message of a PyMySQL error (its args are the error number and the message)."""
    return str(e.args[1]) if len(e.args) > 1 else str(e)


def _rows(conn: pymysql.connections.Connection, sql: str, args: Any = None) -> list[tuple]:
    with conn.cursor() as cursor:
        cursor.execute(sql, args)
        return list(cursor.fetchall())


def _discard(conn: pymysql.connections.Connection | None) -> None:
    """Close a connection without reading what the server still sends (COM_QUIT, then the socket)."""
    if conn is not None and conn.open:
        conn.close()  # PyMySQL sends COM_QUIT and closes the socket, ignoring a failed send


def _drop_unread(cursor: pymysql.cursors.SSCursor, conn: pymysql.connections.Connection) -> None:
    """Close a connection whose result still has unread rows: reading them all first (what closing the
    cursor does) would bring the whole result over the wire. PyMySQL 1.2 finishes an unbuffered result
    while ``unbuffered_active`` is set, in close() and when it is collected; cleared, both let it go."""
    _discard(conn)
    if cursor._result is not None:
        cursor._result.unbuffered_active = False
