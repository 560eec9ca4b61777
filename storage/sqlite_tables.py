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

from storage.errors import StoreUnavailable
from storage.schema import migrate

TablesT = TypeVar("TablesT", bound="SQLiteTables")


class Transactions:
    """Short transactions on an autocommit connection (`self.conn`) under a lock (`self.lock`)."""

    conn: sqlite3.Connection
    lock: threading.RLock  # public: the sidecar stores on this connection share it

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """A short write transaction; IMMEDIATE so two processes never deadlock upgrading. Inside
        `transaction()` it joins that one, so what belongs together commits together.

        Raises:
            StoreUnavailable: the disk is full or the file cannot be written; the transaction
                was rolled back, so what was saved before is intact.
        """
        with self.lock, _disk_faults():
            if self.conn.in_transaction:
                # Only a holder of the lock opens a transaction on this connection, and the lock is
                # ours now: the open one is this thread's own (an enclosing `transaction()`).
                yield self.conn
                return
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                if self.conn.in_transaction:  # SQLite may have rolled back already (a full disk)
                    self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def transaction(self):
        """One write transaction around several store calls (the conversation store and the stores
        sharing its connection: leases, archive, sidecars); all or nothing.

        Raises:
            StoreUnavailable: as `_write`.
        """
        return self._write()

    def _read(self, sql: str, params: tuple | list | dict = ()) -> list[sqlite3.Row]:
        with self.lock:
            cursor = self.conn.execute(sql, params)
            cursor.row_factory = sqlite3.Row
            return cursor.fetchall()


# SQLite's result codes for a store that cannot be written, and what to tell the user.
_DISK_FAULTS = {
    "FULL": "the store's disk is full",
    "READONLY": "the store is read-only",
    "IOERR": "the store's disk failed to write",
    "CANTOPEN": "the store's file cannot be opened",
    "CORRUPT": "the store's file is corrupt",
    "NOTADB": "the store's file is not a database",
}


@contextmanager
def _disk_faults() -> Iterator[None]:
    try:
        yield
    except sqlite3.DatabaseError as exc:
        code = (getattr(exc, "sqlite_errorname", None) or "").split("_")
        reason = _DISK_FAULTS.get(code[1] if len(code) > 1 else "")
        if reason is None:
            raise
        raise StoreUnavailable(f"{reason}; nothing was lost, but nothing new can be saved until an operator "
                               "fixes it (free space, permissions); retry then") from None


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
