"""The store's schema: numbered SQL migrations in `storage/migrations/`, applied past
`PRAGMA user_version`.

Never edit a migration that has shipped; add the next file. Each runs in one
transaction together with the version bump, so a crash leaves the old schema or
the new one.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from storage.clock import utc_now

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


def migrations() -> list[tuple[int, str]]:
    """(number, script) of every `migrations/NNNN_name.sql`, in order; the number becomes user_version."""
    files = sorted(MIGRATIONS_DIR.glob("[0-9][0-9][0-9][0-9]_*.sql"))
    numbers = [int(path.name[:4]) for path in files]
    if len(set(numbers)) != len(numbers):
        raise RuntimeError(f"two migrations share a number in {MIGRATIONS_DIR}")
    return [(number, path.read_text()) for number, path in zip(numbers, files)]


def schema_version(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA user_version").fetchone()[0]


def migrate(conn: sqlite3.Connection) -> int:
    """Apply every migration not yet recorded, in order; return the schema version.

    Applied migrations are recorded in `schema_migrations` (so one added later with a
    lower number, from a parallel branch, still runs); `PRAGMA user_version` holds the
    highest. The connection must be in autocommit mode (`isolation_level=None`).
    """
    conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (number INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
    for number, script in migrations():
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have applied it while we waited for the lock.
            if conn.execute("SELECT 1 FROM schema_migrations WHERE number = ?", (number,)).fetchone():
                conn.execute("COMMIT")
                continue
            for statement in _statements(script):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations (number, applied_at) VALUES (?, ?)", (number, utc_now()))
            conn.execute(f"PRAGMA user_version = {max(number, schema_version(conn))}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return schema_version(conn)


def _statements(script: str) -> list[str]:
    """Split a migration into statements (executescript would commit on its own)."""
    statements, buffer = [], ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements
