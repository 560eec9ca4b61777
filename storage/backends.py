"""Which backend a store setting names, and the database handle that opens it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from storage.sql import Database
from storage.sqlite_backend import SQLiteDatabase


def is_postgres_url(location: object) -> bool:
    """Whether a store setting names a PostgreSQL server rather than a SQLite file."""
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))


def open_database(location: str | Path, *, checked: bool = False, timeout_s: float = 30.0) -> Database:
    """The store at a SQLite path or a ``postgresql://`` URL, on a connection (pool) of its own that
    `close()` closes; `checked`: a damaged SQLite file is refused (`connect_checked`).

    Raises:
        StoreCorrupt: `checked` and the SQLite file fails its quick_check.
        StoreUnavailable: no PostgreSQL connection within `timeout_s`.
    """
    if is_postgres_url(location):
        # psycopg's pool loads only when a URL is opened.
        from storage.postgres.backend import PostgresDatabase

        return PostgresDatabase.open(str(location), timeout_s=timeout_s)
    return SQLiteDatabase.open(location, checked=checked)


def as_database(source: Database | sqlite3.Connection | Any) -> Database:
    """A store's handle from what it was given: a `Database`, an open SQLite connection
    (`storage.sqlite_backend.connect`) or a psycopg pool; the caller keeps closing what it opened."""
    if isinstance(source, Database):
        return source
    if isinstance(source, sqlite3.Connection):
        return SQLiteDatabase(source)
    from storage.postgres.backend import PostgresDatabase

    return PostgresDatabase(source)
