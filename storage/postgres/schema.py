"""The PostgreSQL store's schema: numbered SQL files in `storage/postgres/migrations/`, numbered as
the SQLite ones (storage/schema.py), recorded in `schema_migrations`.

Each migration runs in one transaction with its record (PostgreSQL's DDL is transactional),
under an advisory lock, so app servers starting together apply each exactly once.
"""

from __future__ import annotations

from pathlib import Path

import psycopg

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
# Any fixed number: held only by migrating servers, for the length of one migration.
MIGRATION_LOCK = 0x61736B6462  # "askdb"


def migrations() -> list[tuple[int, str]]:
    """(number, script) of every `migrations/NNNN_name.sql`, in order."""
    files = sorted(MIGRATIONS_DIR.glob("[0-9][0-9][0-9][0-9]_*.sql"))
    numbers = [int(path.name[:4]) for path in files]
    if len(set(numbers)) != len(numbers):
        raise RuntimeError(f"two migrations share a number in {MIGRATIONS_DIR}")
    return [(number, path.read_text()) for number, path in zip(numbers, files)]


def schema_version(conn: psycopg.Connection) -> int:
    row = conn.execute("SELECT coalesce(max(number), 0) FROM schema_migrations").fetchone()
    return row[0]


def migrate(conn: psycopg.Connection) -> int:
    """Apply every migration not yet recorded, in order; return the schema version.

    The connection must be in autocommit mode: each migration opens its own transaction.
    """
    for number, script in migrations():
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations"
                         " (number integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
            # Another server may have applied it while we waited for the lock.
            if conn.execute("SELECT 1 FROM schema_migrations WHERE number = %s", (number,)).fetchone():
                continue
            conn.execute(script)  # no parameters: psycopg sends the whole script at once
            conn.execute("INSERT INTO schema_migrations (number) VALUES (%s)", (number,))
    return schema_version(conn)
