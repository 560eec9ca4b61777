"""The engines the source conformance suite runs on (test_conformance.py), and sqlglot kept quiet.

A new engine joins by adding one `Engine` to `ENGINES`: the fixture that gives the sample
database's location on that engine (loaded from sample_db/aerospace.db, read through a role
that may only read), and what the source must call itself.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import pytest


@dataclass(frozen=True)
class Engine:
    location_fixture: str  # a fixture returning the sample database's location (path or URL)
    dialect: str  # sqlglot's name, DataSource.dialect
    name: str  # DataSource.engine


ENGINES = {
    "sqlite": Engine("sample_db_path", "sqlite", "SQLite"),
    "postgres": Engine("postgres_analytics_url", "postgres", "PostgreSQL"),
    "mysql": Engine("mariadb_analytics_url", "mysql", "MySQL"),
    "duckdb": Engine("duckdb_sample_path", "duckdb", "DuckDB"),
}


@pytest.fixture(autouse=True)
def _quiet_sqlglot():
    # sqlglot logs a warning each time it falls back to exp.Command (PRAGMA-like text).
    logging.getLogger("sqlglot").setLevel(logging.ERROR)


@pytest.fixture(params=sorted(ENGINES))
def engine(request) -> Engine:
    return ENGINES[request.param]


@pytest.fixture
def sample_location(request, engine: Engine):
    """The sample database on this engine, as `open_source` takes it."""
    return request.getfixturevalue(engine.location_fixture)
