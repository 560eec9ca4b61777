"""Which backend a store setting names, and the database handle that opens it."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

from storage.errors import UnsupportedStore
from storage.sql import Database
from storage.sqlite_backend import SQLiteDatabase

_URL_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def is_postgres_url(location: object) -> bool:
    """Whether a store setting names a PostgreSQL server rather than a SQLite file."""
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))


def check_store_location(location: str | Path) -> str | Path:
    """`location` if it names a store askdb can keep: a SQLite file path or a PostgreSQL URL.

    Raises:
        UnsupportedStore: a URL of any other scheme (it would have been taken as a file path).
    """
    scheme = _URL_SCHEME.match(location) if isinstance(location, str) else None
    if scheme is not None and not is_postgres_url(location):
        raise UnsupportedStore(f"ASKDB_STORE is a {scheme.group(1)}:// URL; the conversation store is a SQLite "
                               "file path or a postgresql:// URL (MySQL, MariaDB and DuckDB can be the analytics "
                               "database, ASKDB_DATABASE, not the store)")
    return location


def open_database(location: str | Path, *, checked: bool = False, timeout_s: float = 30.0) -> Database:
    """The store at a SQLite path or a ``postgresql://`` URL, on a connection (pool) of its own that
    `close()` closes; `checked`: a damaged SQLite file is refused (`connect_checked`).

    Raises:
        StoreCorrupt: `checked` and the SQLite file fails its quick_check.
        StoreUnavailable: no PostgreSQL connection within `timeout_s`.
        UnsupportedStore: a URL of another scheme.
    """
    if is_postgres_url(check_store_location(location)):
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
