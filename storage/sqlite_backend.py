"""The store on one SQLite file: its dialect, its transactions under one lock, FTS5 search.

A `SQLiteDatabase` wraps one autocommit connection and a lock; every store on the file shares
both (`store.db`), so their transactions never interleave. Writes are BEGIN IMMEDIATE, so two
processes never deadlock upgrading a read lock.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from storage.clock import utc_now
from storage.errors import StoreCorrupt, StoreUnavailable
from storage.schema import MIGRATIONS_DIR
from storage.sql import (
    ConstraintViolation, Database, Dialect, ForeignKeyViolation, Params, Row, TermsDocument, TextIndex, Transaction, UniqueViolation,
    identifier,
)


def scope_token(kind: str, value: str) -> str:
    """The FTS5 `scope` column's token for a value (kind 'u': a user, 't': a thread; migration 6)."""
    return f"{kind}{value.encode().hex()}x"


def fts_query(terms: Iterable[tuple[str, bool]]) -> str:
    """An FTS5 query matching any of `terms` ((term, also as a prefix) pairs), each quoted, so no
    term is read as syntax."""
    return " OR ".join('"' + term.replace('"', '""') + '"' + ("*" if prefix else "") for term, prefix in terms)


class SQLiteDialect(Dialect):
    name = "sqlite"
    now = "askdb_now()"  # the transaction's time, in `storage.clock`'s format (`SQLiteDatabase`)
    epoch_now = "((julianday('now') - 2440587.5) * 86400.0)"
    like = "LIKE"  # SQLite's LIKE ignores case (ASCII)
    for_update = ""  # BEGIN IMMEDIATE already holds the file's one write lock
    insertion_order = "rowid"
    json_in = "?"
    vector_in = "?"
    driver_errors = (sqlite3.Error,)
    migrations_dir = MIGRATIONS_DIR
    migrations_table = "CREATE TABLE IF NOT EXISTS schema_migrations (number INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"

    def json_param(self, text: str) -> str:
        return text

    def vector_param(self, embedding: bytes | None) -> Any:
        return embedding

    def json_out(self, column: str) -> str:
        return identifier(column)

    def json_bytes(self, column: str) -> str:
        return f"length(CAST({identifier(column)} AS BLOB))"

    def json_text(self, column: str, key: str) -> str:
        return f"json_extract({identifier(column)}, '$.{identifier(key)}')"

    def json_set_text(self, column: str, key: str) -> str:
        return f"json_set({identifier(column)}, '$.{identifier(key)}', ?)"

    def json_array_length(self, column: str, key: str) -> str:
        return f"json_array_length({identifier(column)}, '$.{identifier(key)}')"

    def json_elements(self, column: str, key: str | None = None) -> str:
        path = f", '$.{identifier(key)}'" if key else ""
        return f"json_each({identifier(column)}{path}) AS item"

    def element_text(self, field: str) -> str:
        return f"CASE WHEN item.type = 'object' THEN json_extract(item.value, '$.{identifier(field)}') END"

    def element_value(self) -> str:
        return "item.value"

    def last_element_text(self, column: str, key: str, field: str) -> str:
        return f"json_extract({identifier(column)}, '$.{identifier(key)}[#-1].{identifier(field)}')"

    def timestamp(self, column: str) -> str:
        return identifier(column)  # written as text in that format already

    def in_list(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        return f"{identifier(column)} IN ({', '.join('?' * len(values))})", list(values)

    def unindexed(self, column: str) -> str:
        return "+" + identifier(column)

    def lock(self, tx: Transaction, name: int, key: str = "") -> None:
        pass

    def migration_statements(self, script: str) -> list[str]:
        """A migration as statements (executescript would commit on its own)."""
        statements, buffer = [], ""
        for line in script.splitlines(keepends=True):
            buffer += line
            if sqlite3.complete_statement(buffer):
                statements.append(buffer.strip())
                buffer = ""
        if buffer.strip():
            statements.append(buffer.strip())
        return statements

    def after_migration(self, tx: Transaction, number: int) -> None:
        # PRAGMA takes no parameters; the number is an int from our own migration file names.
        tx.execute(f"PRAGMA user_version = {max(int(number), self.schema_version(tx))}")

    def schema_version(self, tx: Transaction) -> int:
        return tx.value("PRAGMA user_version")

    # -- full-text search: a `<table>_fts` FTS5 table whose rowid is the row's key ----

    def terms_document(self, index: TextIndex, texts: Sequence[str]) -> TermsDocument:
        return TermsDocument("", "", "", "", [])

    def write_text_index(self, tx: Transaction, index: TextIndex, key: int, texts: Sequence[str],
                         scope: Mapping[str, str]) -> None:
        table = identifier(index.table) + "_fts"
        columns = [identifier(c) for c in index.columns]
        values = [*texts]
        if index.scope_tokens:
            columns.append("scope")
            values.append(" ".join(scope_token(kind, scope[column]) for column, kind in index.scope_tokens))
        tx.execute(f"DELETE FROM {table} WHERE rowid = ?", (key,))
        tx.execute(f"INSERT INTO {table} (rowid, {', '.join(columns)}) VALUES (?{', ?' * len(values)})",
                   (key, *values))

    def _matching(self, index: TextIndex, terms: Sequence[tuple[str, bool]],
                  scope: Mapping[str, str]) -> tuple[str, list[Any]]:
        """FROM ... WHERE of the rows within `scope` matching `terms`, with the parameters: a scope
        column kept as a token is matched in the index (the narrowest given implies the broader:
        a thread's episodes are its owner's); any other is a join to the table."""
        table, tokens = identifier(index.table), dict(index.scope_tokens)
        expression = fts_query(terms)
        narrowest = next((c for c, _ in reversed(index.scope_tokens) if c in scope), None)
        if narrowest is not None:
            expression = (f'scope : "{scope_token(tokens[narrowest], scope[narrowest])}"'
                          f" AND {{{' '.join(identifier(c) for c in index.columns)}}} : ({expression})")
        joined = [c for c in scope if c not in tokens]
        if not joined:
            return f"FROM {table}_fts f WHERE {table}_fts MATCH ?", [expression]
        conditions = "".join(f" AND e.{identifier(c)} = ?" for c in joined)
        return (f"FROM {table}_fts f JOIN {table} e ON e.{identifier(index.key)} = f.rowid"
                f" WHERE {table}_fts MATCH ?{conditions}", [expression, *(scope[c] for c in joined)])

    def count_matches(self, tx: Transaction, index: TextIndex, terms: Sequence[tuple[str, bool]],
                      scope: Mapping[str, str], cap: int) -> int:
        matching, params = self._matching(index, terms, scope)
        return tx.value(f"SELECT count(*) AS n FROM (SELECT 1 {matching} LIMIT ?)", (*params, cap))

    def text_search(self, tx: Transaction, index: TextIndex, terms: Sequence[tuple[str, bool]],
                    scope: Mapping[str, str], limit: int) -> list[tuple[int, float]]:
        matching, params = self._matching(index, terms, scope)
        weights = [*index.weights, *([0.0] if index.scope_tokens else [])]
        rows = tx.rows(f"SELECT f.rowid AS key, bm25({identifier(index.table)}_fts{', ?' * len(weights)}) AS score"
                       f" {matching} ORDER BY score LIMIT ?", (*weights, *params, max(1, limit)))
        return [(r["key"], r["score"]) for r in rows]


SQLITE = SQLiteDialect()


class SQLiteTransaction(Transaction):
    dialect = SQLITE

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def execute(self, sql: str, params: Params = ()) -> sqlite3.Cursor:
        try:
            return self.conn.execute(sql, params)
        except sqlite3.IntegrityError as exc:
            message = str(exc)
            if message.startswith("FOREIGN KEY"):
                raise ForeignKeyViolation(message) from exc
            if message.startswith("UNIQUE"):
                raise UniqueViolation(message) from exc
            raise ConstraintViolation(message) from exc

    def execute_many(self, sql: str, rows: Iterable[Params]) -> None:
        self.conn.executemany(sql, rows)

    def rows(self, sql: str, params: Params = (), *, vectors: bool = False) -> list[Row]:
        cursor = self.execute(sql, params)
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


class SQLiteDatabase(Database):
    """One store file: an autocommit connection (`connect`) and the lock every store on it shares."""

    dialect = SQLITE

    def __init__(self, conn: sqlite3.Connection, *, owns_connection: bool = False):
        self.conn, self.lock, self._owns = conn, threading.RLock(), owns_connection
        self.location = str(conn.execute("PRAGMA database_list").fetchone()[2])
        self._now: str | None = None  # the write transaction's time, for askdb_now()
        conn.create_function("askdb_now", 0, lambda: self._now or utc_now())

    @classmethod
    def open(cls, path: str | Path, *, checked: bool = False) -> SQLiteDatabase:
        """The file at `path` (created if needed) on its own connection, closed by `close()`;
        `checked`: refuse a damaged file (`connect_checked`)."""
        return cls((connect_checked if checked else connect)(path), owns_connection=True)

    @contextmanager
    def write(self) -> Iterator[SQLiteTransaction]:
        with self.lock, _disk_faults():
            if self.conn.in_transaction:
                # Only a holder of the lock opens a transaction on this connection, and the lock is
                # ours now: the open one is this thread's own (an enclosing write), which this joins.
                yield SQLiteTransaction(self.conn)
                return
            self.conn.execute("BEGIN IMMEDIATE")
            self._now = utc_now()
            try:
                yield SQLiteTransaction(self.conn)
            except BaseException:
                if self.conn.in_transaction:  # SQLite may have rolled back already (a full disk)
                    self.conn.execute("ROLLBACK")
                raise
            finally:
                self._now = None
            try:
                self.conn.execute("COMMIT")
            except BaseException:
                # A failed COMMIT (a deferred constraint, a full disk) can leave the transaction open;
                # the next write would then join it and never reach the disk.
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise

    @contextmanager
    def read(self) -> Iterator[SQLiteTransaction]:
        with self.lock:
            yield SQLiteTransaction(self.conn)

    def backup(self, destination: str | Path) -> None:
        """Copy the whole store to `destination` with SQLite's online backup (safe while serving)."""
        destination = Path(destination)
        destination.parent.mkdir(parents=True, exist_ok=True)
        target = sqlite3.connect(destination)
        try:
            with self.lock:
                self.conn.backup(target)
        finally:
            target.close()

    def close(self) -> None:
        # Under the lock: closing while another thread is inside the connection can crash SQLite.
        if self._owns:
            with self.lock:
                self.conn.close()


def connect(path: str | Path) -> sqlite3.Connection:
    """Open (creating if needed) a store file with the settings every connection needs."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30.0)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA busy_timeout=30000")
    except BaseException:  # a read-only file: not left open until the collector finds it
        conn.close()
        raise
    return conn


def _writable(path: Path) -> bool:
    """The store file (or, before it exists, its folder) may be written by this process."""
    target = path if path.exists() else path.parent
    return os.access(target, os.W_OK) and (not path.exists() or os.access(path.parent, os.W_OK))


def connect_checked(path: str | Path) -> sqlite3.Connection:
    """`connect`, then SQLite's quick_check (issue 18): a corrupt or truncated store is refused, never
    served and written to. quick_check reads every page once; it skips the index cross-checks.

    Raises:
        StoreCorrupt: with how to recover from a backup.
    """
    conn = None
    try:
        conn = connect(path)
        problems = [row[0] for row in conn.execute("PRAGMA quick_check(3)")]
    except sqlite3.DatabaseError as exc:
        if conn is not None:
            conn.close()
        code = getattr(exc, "sqlite_errorname", "") or ""
        if code.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN")) or not _writable(Path(path)):
            # Not damage: a read-only mount or a file this user may not write. Saying "damaged" once
            # invited an operator to overwrite a good store with a backup.
            raise StoreUnavailable(
                f"the store {Path(path).name} cannot be written ({exc}): it is on a read-only file system or "
                "this user may not write it or its folder. askdb keeps conversations there; mount it "
                "read-write or set ASKDB_STORE to a writable place. The file itself was not changed.") from None
        problems = [str(exc)]
    if problems == ["ok"]:
        return conn
    if conn is not None:
        conn.close()
    raise StoreCorrupt(f"the store {path} is damaged ({'; '.join(problems)}), so it is not served; stop the app "
                       f"and put a backup in its place (one made by `python -m app store backup BACKUP`: "
                       f"cp BACKUP {path}), or move the file aside to start with an empty store")
