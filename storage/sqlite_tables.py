"""The base of the sidecar stores (episodes, memory items, examples) that share the store file.

Each is handed the conversation store's connection and lock, so their transactions never
interleave with its own; `open` gives one its own connection (tools, benchmarks, tests).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from storage.schema import migrate

TablesT = TypeVar("TablesT", bound="SQLiteTables")


class Transactions:
    """Short transactions on an autocommit connection (`self.conn`) under a lock (`self.lock`)."""

    conn: sqlite3.Connection
    lock: threading.RLock  # public: the sidecar stores on this connection share it

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """A short write transaction; IMMEDIATE so two processes never deadlock upgrading."""
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def _read(self, sql: str, params: tuple | list | dict = ()) -> list[sqlite3.Row]:
        with self.lock:
            cursor = self.conn.execute(sql, params)
            cursor.row_factory = sqlite3.Row
            return cursor.fetchall()


class SQLiteTables(Transactions):
    """A sidecar store on a shared connection and lock, migrated on first use."""

    def __init__(self, conn: sqlite3.Connection, *, lock: threading.RLock | None = None):
        """Args:
        conn: an autocommit connection (`storage.conversations.connect`).
        lock: the lock of another store sharing `conn`, so transactions never interleave.
        """
        self.conn = conn
        self.lock = lock or threading.RLock()
        with self.lock:
            migrate(conn)

    @classmethod
    @contextmanager
    def open(cls: type[TablesT], path: str | Path) -> Iterator[TablesT]:
        from storage.conversations import connect

        conn = connect(path)
        try:
            yield cls(conn)
        finally:
            conn.close()
