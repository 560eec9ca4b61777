"""The store on a PostgreSQL server, for several app servers: its dialect, a pool of autocommit
connections handing out short transactions, tsvector search, vectors as real[].

The stores write SQL with `?` placeholders; `PostgresTransaction` turns them into psycopg's
`%s` (a literal `%` doubled first). JSON columns are JSONB, timestamps timestamptz read back in
the stores' text format, embeddings real[] read straight into float32 bytes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from psycopg import postgres
from psycopg.abc import Buffer
from psycopg.adapt import Loader
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.pq import Format
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from storage.errors import BackupFailed, StoreConflict, StoreError, StoreTimeout, StoreUnavailable
from storage.postgres.text_search import (
    QUERY_SQL, SCORE_SQL, document_params, document_sql, query_text, score_params, weights,
)
from storage.schema import PG_MIGRATIONS_DIR
from storage.sql import (
    ConstraintViolation, Database, Dialect, ForeignKeyViolation, Params, Row, TermsDocument, TextIndex, Transaction, UniqueViolation,
    identifier,
)

POOL_SIZE = 10
# JSONB cannot hold U+0000 (SQLite's JSON can): an escaped NUL becomes U+FFFD, unless its
# backslash is itself escaped (an even run of backslashes before "u0000" is literal text).
_JSON_NUL = re.compile(r"(?<!\\)((?:\\\\)*)\\u0000")


def jsonb_text(text: str) -> str:
    """JSON text that PostgreSQL's jsonb accepts: escaped NULs replaced by U+FFFD."""
    return _JSON_NUL.sub(r"\1\\ufffd", text) if "\\u0000" in text else text


def json_param(value: Any) -> str:
    """A value as JSON text for a jsonb parameter."""
    return jsonb_text(json.dumps(value, ensure_ascii=False))


@lru_cache(maxsize=512)
def _psycopg_sql(sql: str) -> str:
    return sql.replace("%", "%%").replace("?", "%s")


class PostgresDialect(Dialect):
    name = "postgresql"
    now = "now()"  # the transaction's start: one reading for every timestamp a transaction writes
    epoch_now = "extract(epoch FROM clock_timestamp())"  # the server's clock, which every app server shares
    like = "ILIKE"  # SQLite's LIKE ignores case too
    for_update = " FOR UPDATE"
    insertion_order = "seq"
    json_in = "CAST(? AS jsonb)"
    vector_in = "CAST(? AS real[])"
    driver_errors = (psycopg.Error,)
    migrations_dir = PG_MIGRATIONS_DIR
    migrations_table = ("CREATE TABLE IF NOT EXISTS schema_migrations"
                        " (number integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")

    def json_param(self, text: str) -> str:
        return jsonb_text(text)

    def vector_param(self, embedding: bytes | None) -> list[float] | None:
        return None if embedding is None else np.frombuffer(embedding, dtype="<f4").tolist()

    def json_out(self, column: str) -> str:
        return f"{identifier(column)}::text"

    def json_bytes(self, column: str) -> str:
        return f"octet_length({identifier(column)}::text)"

    def json_text(self, column: str, key: str) -> str:
        return f"{identifier(column)} ->> '{identifier(key)}'"

    def json_set_text(self, column: str, key: str) -> str:
        return f"jsonb_set({identifier(column)}, '{{{identifier(key)}}}', to_jsonb(CAST(? AS text)))"

    def _array(self, column: str, key: str | None) -> str:
        value = f"{identifier(column)} -> '{identifier(key)}'" if key else identifier(column)
        return f"CASE jsonb_typeof({value}) WHEN 'array' THEN {value} ELSE '[]' END"

    def json_array_length(self, column: str, key: str) -> str:
        return f"jsonb_array_length({self._array(column, key)})"

    def json_elements(self, column: str, key: str | None = None) -> str:
        return f"jsonb_array_elements({self._array(column, key)}) AS item (value)"

    def element_text(self, field: str) -> str:
        return f"item.value ->> '{identifier(field)}'"

    def element_value(self) -> str:
        return "item.value #>> '{}'"

    def last_element_text(self, column: str, key: str, field: str) -> str:
        return f"({self._array(column, key)}) -> -1 ->> '{identifier(field)}'"

    def timestamp(self, column: str) -> str:
        return f"""to_char({identifier(column)} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')"""

    def in_list(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        return f"{identifier(column)} = ANY(?)", [list(values)]

    def unindexed(self, column: str) -> str:
        return identifier(column)

    def lock(self, tx: Transaction, name: int, key: str = "") -> None:
        if key:
            tx.execute("SELECT pg_advisory_xact_lock(?, hashtext(?))", (name, key))
        else:
            tx.execute("SELECT pg_advisory_xact_lock(?)", (name,))

    def migration_statements(self, script: str) -> list[str]:
        return [script]  # sent whole: psycopg runs a script without parameters at once

    def after_migration(self, tx: Transaction, number: int) -> None:
        pass

    def schema_version(self, tx: Transaction) -> int:
        return tx.value("SELECT coalesce(max(number), 0) AS n FROM schema_migrations")

    # -- full-text search: the row's own `terms` tsvector (storage/postgres/text_search.py) --

    def terms_document(self, index: TextIndex, texts: Sequence[str]) -> TermsDocument:
        document = document_sql(len(index.columns))
        return TermsDocument(", terms", f", {document}", f", terms = {document}", ", terms = excluded.terms",
                             document_params(texts, weights(index.weights)))

    def write_text_index(self, tx: Transaction, index: TextIndex, key: int, texts: Sequence[str],
                         scope: Mapping[str, str]) -> None:
        pass  # written with the row (`terms_document`)

    @staticmethod
    def _scope(scope: Mapping[str, str]) -> str:
        return "".join(f"{identifier(column)} = ? AND " for column in scope)

    def count_matches(self, tx: Transaction, index: TextIndex, terms: Sequence[tuple[str, bool]],
                      scope: Mapping[str, str], cap: int) -> int:
        with tx.conn.transaction():
            # A capped count looks cheap as a scan of the table that stops at the cap; for a word
            # rarer than ANALYZE's sample suggests it reads every row instead. Which plan wins
            # depends on that random sample: at 100k episodes the counts of one recall took
            # 39 ms p50 after one ANALYZE and 320 ms after another. Bitmap scans only (the GIN
            # index, or the scope's btree when that is narrower) keep every count bounded.
            tx.execute("SET LOCAL enable_seqscan = off")
            tx.execute("SET LOCAL enable_indexscan = off")
            return tx.value(f"SELECT count(*) AS n FROM (SELECT 1 FROM {identifier(index.table)}, {QUERY_SQL}"
                            f" WHERE {self._scope(scope)}terms @@ q LIMIT ?) m",
                            (query_text(terms), *scope.values(), cap))

    def text_search(self, tx: Transaction, index: TextIndex, terms: Sequence[tuple[str, bool]],
                    scope: Mapping[str, str], limit: int) -> list[tuple[int, float]]:
        key = identifier(index.key)
        rows = tx.rows(f"SELECT {key} AS key, {SCORE_SQL} AS score FROM {identifier(index.table)}, {QUERY_SQL}"
                       f" WHERE {self._scope(scope)}terms @@ q ORDER BY score, {key} LIMIT ?",
                       (*score_params(weights(index.weights)), query_text(terms), *scope.values(), max(1, limit)))
        return [(r["key"], r["score"]) for r in rows]


POSTGRES = PostgresDialect()


class _VectorBytes(Loader):
    """A real[] read in binary straight into float32 little-endian bytes, the bytes that were stored.

    PostgreSQL's binary array is a header (dimensions, a null flag, the element type, then a
    length and lower bound per dimension) and each element as a length and a big-endian float.
    numpy reads that in one go: 100k 384-float vectors (a vector cache's first load) took 5.0 s,
    against 14.7 s through Python floats (text format), on the busy 2-core test machine.
    """

    format = Format.BINARY

    def load(self, data: Buffer) -> bytes:
        dimensions = int.from_bytes(data[:4], "big")
        if dimensions == 0:  # '{}'
            return b""
        values = np.frombuffer(data, dtype=[("length", ">i4"), ("value", ">f4")], offset=12 + 8 * dimensions)
        return values["value"].astype("<f4").tobytes()


class PostgresTransaction(Transaction):
    dialect = POSTGRES

    def __init__(self, conn: psycopg.Connection):
        self.conn = conn

    def execute(self, sql: str, params: Params = ()) -> psycopg.Cursor:
        with _constraints():
            # Without parameters psycopg sends the text as it is (a migration script at once).
            return self.conn.execute(_psycopg_sql(sql), params) if params else self.conn.execute(sql)

    def execute_many(self, sql: str, rows: Iterable[Params]) -> None:
        with self.conn.cursor() as cursor:
            cursor.executemany(_psycopg_sql(sql), rows)

    def rows(self, sql: str, params: Params = (), *, vectors: bool = False) -> list[Row]:
        with self.conn.cursor(row_factory=dict_row, binary=vectors) as cursor:
            if vectors:
                cursor.adapters.register_loader(postgres.types["float4"].array_oid, _VectorBytes)
            with _constraints():
                return cursor.execute(_psycopg_sql(sql), params).fetchall()


@contextmanager
def _constraints() -> Iterator[None]:
    try:
        yield
    except psycopg.errors.UniqueViolation as exc:
        raise UniqueViolation(str(exc)) from exc
    except psycopg.errors.ForeignKeyViolation as exc:
        raise ForeignKeyViolation(str(exc)) from exc
    except psycopg.errors.IntegrityError as exc:
        raise ConstraintViolation(str(exc)) from exc


def store_error(exc: psycopg.OperationalError) -> StoreError:
    """What an operational error of the server means to the store's callers, its reason kept: a deadlock or
    a serialization failure is a conflict to try again, a statement stopped by a time limit a timeout, and
    anything else (a connection lost, the server shutting down) the store being unavailable."""
    state = exc.sqlstate or ""
    reason = (str(exc).splitlines() or [type(exc).__name__])[0] + (f" (SQLSTATE {state})" if state else "")
    if state.startswith("40"):  # transaction rollback: 40001 serialization_failure, 40P01 deadlock_detected
        return StoreConflict(f"the store rolled the write back: it met a concurrent one ({reason}); nothing was "
                             "written, try again")
    if state in ("57014", "55P03"):  # query_canceled (statement_timeout), lock_not_available (lock_timeout)
        return StoreTimeout(f"the store stopped a statement before it finished ({reason}); nothing was written. "
                            "Check the statement_timeout and lock_timeout of the store's role, and whether a long "
                            "transaction holds the store's rows")
    return StoreUnavailable(f"the PostgreSQL store is unavailable: {reason}")


def open_pool(url: str, *, size: int = POOL_SIZE, timeout_s: float = 30.0) -> ConnectionPool:
    """An open pool of autocommit connections to `url`; the caller closes it.

    Raises:
        StoreUnavailable: no connection within `timeout_s`.
    """
    pool = ConnectionPool(url, min_size=1, max_size=size, open=False, name="askdb-store",
                          kwargs={"autocommit": True, "application_name": "askdb-store"},
                          check=ConnectionPool.check_connection, timeout=timeout_s)
    try:
        pool.open(wait=True, timeout=timeout_s)
    except PoolTimeout:
        pool.close()
        raise StoreUnavailable(f"could not connect to the PostgreSQL store within {timeout_s:.0f} s; "
                               "check ASKDB_STORE and that the server is running") from None
    return pool


class PostgresDatabase(Database):
    """A PostgreSQL store: a pool of autocommit connections shared by every store on it."""

    dialect = POSTGRES

    def __init__(self, pool: ConnectionPool, *, owns_pool: bool = False):
        self.pool, self._owns = pool, owns_pool
        self.location = pool.conninfo
        self._open = threading.local()  # per thread: the connection of its enclosing write, if any

    @classmethod
    def open(cls, url: str, *, pool_size: int = POOL_SIZE, timeout_s: float = 30.0) -> PostgresDatabase:
        """A pool of connections to `url`, closed by `close()`.

        Raises:
            StoreUnavailable: no connection within `timeout_s`.
        """
        return cls(open_pool(url, size=pool_size, timeout_s=timeout_s), owns_pool=True)

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection]:
        current = getattr(self._open, "conn", None)
        if current is not None:  # inside a write: read and write on its connection
            yield current
            return
        try:
            with self.pool.connection() as conn:
                yield conn
        except PoolTimeout as exc:
            raise StoreUnavailable(f"the PostgreSQL store is unavailable: {exc}") from None
        except psycopg.OperationalError as exc:  # from the connection, or from a statement of the block
            raise store_error(exc) from exc

    @contextmanager
    def write(self) -> Iterator[PostgresTransaction]:
        if getattr(self._open, "conn", None) is not None:  # joins this thread's enclosing write
            yield PostgresTransaction(self._open.conn)
            return
        with self._connection() as conn, conn.transaction():
            self._open.conn = conn
            try:
                yield PostgresTransaction(conn)
            finally:
                self._open.conn = None

    @contextmanager
    def read(self) -> Iterator[PostgresTransaction]:
        with self._connection() as conn:
            yield PostgresTransaction(conn)

    def backup(self, destination: str | Path) -> None:
        """Dump the store's database to `destination` with pg_dump (custom format, for pg_restore):
        one consistent snapshot in one transaction, which blocks no turn.

        Raises:
            BackupFailed: pg_dump is not on PATH, or failed (with its message).
        """
        pg_dump = shutil.which("pg_dump")
        if pg_dump is None:
            raise BackupFailed("the store is on PostgreSQL and pg_dump is not on PATH; install PostgreSQL's client "
                               "tools (the server's major version or newer), or run pg_dump where they are")
        params = conninfo_to_dict(self.pool.conninfo)
        # The password travels in the environment: other users of the machine can read a command line.
        env = {**os.environ, **({"PGPASSWORD": str(params.pop("password"))} if "password" in params else {})}
        destination = Path(destination)
        destination.parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([pg_dump, "--format=custom", f"--file={destination}",
                               f"--dbname={make_conninfo(**params)}"], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise BackupFailed(f"pg_dump failed: {done.stderr.strip()}")

    def close(self) -> None:
        if self._owns:
            self.pool.close()
