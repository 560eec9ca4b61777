"""Open the data source a setting names: a SQLite path, a ``.duckdb`` path, or a ``postgresql://``,
``mysql://`` or ``mariadb://`` URL.

The one place that maps a location to an engine; an engine's module is imported only when a
location names it, so SQLite users need no PostgreSQL driver.
"""

from __future__ import annotations

from pathlib import Path

from agent.sources.base import DataSource
from agent.sources.query_pool import PoolLimits
from agent.sources.sqlite import SQLiteSource
from storage.backends import is_postgres_url


def is_mysql_url(location: object) -> bool:
    """Whether a database setting names a MySQL or MariaDB server."""
    return isinstance(location, str) and location.startswith(("mysql://", "mariadb://"))


def is_duckdb_path(location: object) -> bool:
    """Whether a database setting names a DuckDB file (by its extension: .duckdb or .ddb)."""
    return isinstance(location, (str, Path)) and Path(location).suffix.lower() in (".duckdb", ".ddb")


def open_source(location: str | Path, *, time_limit_s: float = 10.0, max_rows: int = 1000,
                max_cell_bytes: int = 10_000, limits: PoolLimits | None = None,
                trusted: bool = False) -> DataSource:
    """The data source at ``location``; nothing is connected until first use.

    Args:
        location: a SQLite or DuckDB file path, or a ``postgresql://``, ``mysql://`` or ``mariadb://`` URL.
        time_limit_s, max_rows, max_cell_bytes: every query's limits (`DataSource`).
        limits: a SQLite query's worker process bounds; on PostgreSQL, ``max_memory_mb`` becomes
            the query's ``work_mem`` budget and ``max_temp_mb`` its ``temp_file_limit`` where the
            role may set it.
        trusted: the SQL comes from whoever holds the location (`store query`), not from the model:
            SQLite trusts the file's views, PostgreSQL and MySQL accept any role; DuckDB stays locked.
    """
    if is_postgres_url(location):
        from agent.sources.postgres import PostgresSource

        return PostgresSource(str(location), time_limit_s=time_limit_s, max_rows=max_rows,
                              max_cell_bytes=max_cell_bytes, limits=limits, trusted=trusted)
    if is_mysql_url(location):
        from agent.sources.mysql import MySQLSource

        return MySQLSource(str(location), time_limit_s=time_limit_s, max_rows=max_rows,
                           max_cell_bytes=max_cell_bytes, trusted=trusted,
                           max_temp_mb=limits.max_temp_mb if limits else None)
    if is_duckdb_path(location):
        from agent.sources.duckdb import DuckDBSource

        return DuckDBSource(location, time_limit_s=time_limit_s, max_rows=max_rows, max_cell_bytes=max_cell_bytes,
                            limits=limits)
    return SQLiteSource(location, time_limit_s=time_limit_s, max_rows=max_rows, max_cell_bytes=max_cell_bytes,
                        limits=limits, trusted=trusted)
