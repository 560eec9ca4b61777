"""What every PostgreSQL store shares: the connection pool, short transactions, vectors as real[].

`PostgresConversationStore` owns a pool; the sidecar stores (episodes, memory items, examples)
are handed it (`store.episodes()`), as the SQLite ones share the conversation store's
connection (storage/sqlite_tables.py), or open their own (`PostgresEpisodeStore.open(url)`).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np
import psycopg
from psycopg import postgres
from psycopg.abc import Buffer
from psycopg.adapt import Loader
from psycopg.pq import Format
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from storage.errors import StoreUnavailable
from storage.postgres.schema import migrate

TablesT = TypeVar("TablesT", bound="PostgresTables")

POOL_SIZE = 10
# ISO 8601 in UTC with microseconds and a Z, as the SQLite stores write their timestamps.
_ISO = """to_char({} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')"""


def iso(column: str) -> str:
    """SQL for a timestamptz column (a name from this package, never user input) as SQLite's text."""
    return _ISO.format(column)


# JSONB cannot hold U+0000 (SQLite's JSON can): an escaped NUL becomes U+FFFD, unless its
# backslash is itself escaped (an even run of backslashes before "u0000" is literal text).
_JSON_NUL = re.compile(r"(?<!\\)((?:\\\\)*)\\u0000")


def jsonb_text(text: str) -> str:
    """JSON text that PostgreSQL's jsonb accepts: escaped NULs replaced by U+FFFD."""
    return _JSON_NUL.sub(r"\1\\ufffd", text) if "\\u0000" in text else text


def json_param(value: Any) -> str:
    """A value as JSON text for a `%s::jsonb` parameter."""
    return jsonb_text(json.dumps(value, ensure_ascii=False))


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


def to_real_array(embedding: bytes | None) -> list[float] | None:
    """float32 little-endian bytes (what the stores take and return) as values for a real[] column."""
    return None if embedding is None else np.frombuffer(embedding, dtype="<f4").tolist()


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


class PostgresTransactions:
    """Short transactions and reads on a pool of autocommit connections (`self.pool`)."""

    pool: ConnectionPool

    def _open_transaction(self) -> threading.local:
        # Per store and thread: the connection of this thread's enclosing `transaction()`, if any.
        return self.__dict__.setdefault("_transaction_local", threading.local())

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection]:
        current = getattr(self._open_transaction(), "conn", None)
        if current is not None:  # inside `transaction()`: read and write on its connection
            yield current
            return
        try:
            with self.pool.connection() as conn:
                yield conn
        except (PoolTimeout, psycopg.OperationalError) as exc:
            raise StoreUnavailable(f"the PostgreSQL store is unavailable: {exc}") from None

    @contextmanager
    def _write(self) -> Iterator[psycopg.Connection]:
        """One short transaction; committed at the end, rolled back on any error. Inside
        `transaction()` it joins that one, so what belongs together commits together."""
        local = self._open_transaction()
        if getattr(local, "conn", None) is not None:
            yield local.conn
            return
        with self._connection() as conn, conn.transaction():
            local.conn = conn
            try:
                yield conn
            finally:
                local.conn = None

    def transaction(self):
        """One write transaction around several calls of this store (and of the leases and archive
        built on it); all or nothing."""
        return self._write()

    def _read(self, sql: str, params: tuple | list | dict = ()) -> list[dict[str, Any]]:
        with self._connection() as conn, conn.cursor(row_factory=dict_row) as cursor:
            return cursor.execute(sql, params).fetchall()

    def _read_vectors(self, sql: str, params: tuple | list | dict = ()) -> list[dict[str, Any]]:
        """`_read` with every real[] column as float32 little-endian bytes (what the stores return)."""
        with self._connection() as conn, conn.cursor(row_factory=dict_row, binary=True) as cursor:
            cursor.adapters.register_loader(postgres.types["float4"].array_oid, _VectorBytes)
            return cursor.execute(sql, params).fetchall()


class PostgresTables(PostgresTransactions):
    """A sidecar store on a shared pool, migrated on first use (as `storage.sqlite_tables.SQLiteTables`)."""

    def __init__(self, pool: ConnectionPool):
        """Args:
        pool: the conversation store's pool (`PostgresConversationStore.pool`) or one from `open_pool`.
        """
        self.pool = pool
        with self._connection() as conn:
            migrate(conn)

    @classmethod
    @contextmanager
    def open(cls: type[TablesT], url: str) -> Iterator[TablesT]:
        """The store with its own pool of connections to `url`, closed at the end."""
        pool = open_pool(url)
        try:
            yield cls(pool)
        finally:
            pool.close()
