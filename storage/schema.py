"""The store's schema: numbered SQL migrations per backend (`storage/migrations/` for SQLite,
`storage/postgres/migrations/` for PostgreSQL, numbered alike), applied by one runner.

Never edit a migration that has shipped; add the next file to both folders. Each runs in one
transaction together with its record in `schema_migrations` (PostgreSQL's DDL is transactional
too), so a crash leaves the old schema or the new one. Applied numbers are recorded, so one
added later with a lower number, from a parallel branch, still runs.
"""

from __future__ import annotations

from pathlib import Path

from storage.sql import Database

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
PG_MIGRATIONS_DIR = Path(__file__).parent / "postgres" / "migrations"
# Any fixed number: held only by migrating processes, for the length of one migration.
MIGRATION_LOCK = 0x61736B6462  # "askdb"


def migrations(directory: Path = MIGRATIONS_DIR) -> list[tuple[int, str]]:
    """(number, script) of every `NNNN_name.sql` in `directory`, in order."""
    files = sorted(directory.glob("[0-9][0-9][0-9][0-9]_*.sql"))
    numbers = [int(path.name[:4]) for path in files]
    if len(set(numbers)) != len(numbers):
        raise RuntimeError(f"two migrations share a number in {directory}")
    return [(number, path.read_text()) for number, path in zip(numbers, files)]


def migrate(db: Database) -> int:
    """Apply every migration of `db`'s backend not yet recorded, in order; return the schema version."""
    dialect = db.dialect
    numbered = migrations(dialect.migrations_dir)
    if not _pending(db, [number for number, _ in numbered]):
        return db.schema_version()  # one read, where every store opened on a handle would write
    for number, script in numbered:
        with db.write() as tx:
            dialect.lock(tx, MIGRATION_LOCK)
            tx.execute(dialect.migrations_table)
            # Another process may have applied it while we waited for the lock.
            if tx.row("SELECT 1 AS applied FROM schema_migrations WHERE number = ?", (number,)):
                continue
            for statement in dialect.migration_statements(script):
                tx.execute(statement)
            tx.execute(f"INSERT INTO schema_migrations (number, applied_at) VALUES (?, {dialect.now})", (number,))
            dialect.after_migration(tx, number)
    return db.schema_version()


def _pending(db: Database, numbers: list[int]) -> bool:
    try:
        applied = {row["number"] for row in db.rows("SELECT number FROM schema_migrations")}
    except db.dialect.driver_errors:  # no such table yet
        return True
    return not applied.issuperset(numbers)
