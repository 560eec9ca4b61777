"""The source conformance suite: every engine behind `DataSource` (agent/sources/base.py) on the
sample database, the same assertions for each. Engines are listed in conftest.py's `ENGINES`;
what only one engine does (SQLite's authorizer, PostgreSQL's roles) is tested beside it
(test_sqlite.py, test_postgres.py)."""

from __future__ import annotations

import json
import sqlite3
from urllib.parse import urlsplit

import pytest

from agent.tools.lookup_words import ranking_or_computation
from agent.sources.base import DataSource
from agent.sources.errors import QueryTimeout, SourceError, SQLRejected, UnknownColumn, UnknownTable
from agent.sources.factory import open_source

# 2639^4 rows: minutes on any engine, so the 1 s limit always stops it; arithmetic every SQL has.
SLOW_QUERY = ("SELECT count(*) FROM launches a, launches b, launches c, launches d"
              " WHERE a.id + b.id + c.id + d.id = -1")
REFUSED = {
    "delete": "DELETE FROM launches",
    "update": "UPDATE countries SET name = 'x'",
    "insert": "INSERT INTO countries (id, code, name) VALUES (999, 'XX', 'x')",
    "drop": "DROP TABLE launches",
    "create as": "CREATE TABLE copied AS SELECT * FROM countries",
    "select into": "SELECT * INTO copied FROM countries",
    "writing cte": "WITH d AS (DELETE FROM launches RETURNING *) SELECT * FROM d",
    "attach": "ATTACH DATABASE '/tmp/askdb-attach.db' AS other",
    "copy": "COPY countries TO '/tmp/askdb-copy.csv'",
    "load_extension()": "SELECT load_extension('/tmp/askdb-ext')",
    "load": "LOAD 'auto_explain'",
    "create extension": "CREATE EXTENSION IF NOT EXISTS dblink",
    "install": "INSTALL httpfs",
    "two queries": "SELECT 1; SELECT 2",
    "query then write": "SELECT 1; DROP TABLE launches",
}


@pytest.fixture
def source(sample_location):
    opened = open_source(sample_location, time_limit_s=10.0, max_rows=50, max_cell_bytes=1000)
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def expected(sample_db_path) -> dict[str, tuple[list[str], int]]:
    """table -> (columns, row count), read from the SQLite file every engine is loaded from."""
    conn = sqlite3.connect(f"file:{sample_db_path}?mode=ro", uri=True)
    try:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"
                                            " AND name NOT LIKE 'sqlite%'")]
        return {name: ([r[1] for r in conn.execute("SELECT * FROM pragma_table_info(?)", (name,))],
                       conn.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]) for name in names}
    finally:
        conn.close()


def test_has_every_member_of_the_protocol(source):
    members = [name for name in vars(DataSource) if not name.startswith("_")] + list(DataSource.__annotations__)
    assert [name for name in members if not hasattr(source, name)] == []


def test_names_itself(source, engine, sample_location):
    assert (source.dialect, source.engine) == (engine.dialect, engine.name)
    assert source.label and source.where()
    password = urlsplit(str(sample_location)).password if "://" in str(sample_location) else None
    if password:
        assert password not in source.label and password not in source.where() and password not in repr(source)


def test_cache_key_is_stable_while_nothing_changes(source, sample_location):
    key = source.cache_key()
    assert hash(key) == hash(source.cache_key()) and key == source.cache_key()
    other = open_source(sample_location)
    try:
        assert other.cache_key() == key
    finally:
        other.close()


def test_catalogue_lists_the_sample_tables_with_their_columns(source, expected):
    tables = source.list_tables()
    assert tables == sorted(tables, key=lambda n: (n.lower(), n))
    assert set(expected) <= set(tables)
    for name, (columns, row_count) in expected.items():
        schema = source.describe_table(name)
        assert (schema.name, [c.name for c in schema.columns], schema.row_count) == (name, columns, row_count)
    assert [c.name for c in source.describe_table("LAUNCHES").columns] == expected["launches"][0]
    assert source.catalogue() == [source.describe_table(name) for name in tables]  # one read, the same schemas
    assert [(fk.column, fk.ref_table) for fk in source.describe_table("launches").foreign_keys if
            fk.column == "vehicle_id"] == [("vehicle_id", "launch_vehicles")]


def test_unknown_names_suggest_close_ones(source):
    with pytest.raises(UnknownTable, match="launches"):
        source.describe_table("launchs")
    with pytest.raises(UnknownColumn, match="name_zh"):
        source.find_values("launch_vehicles", "name_z", "Long March")


def test_execute_returns_rows_within_the_row_cap(source, expected):
    result = source.execute("SELECT name FROM countries ORDER BY id")
    assert result.columns == ["name"] and result.row_count == len(result.rows) == expected["countries"][1]
    assert not result.truncated
    capped = source.execute("SELECT id, mission_name FROM launches ORDER BY id")
    assert (capped.row_count, capped.truncated) == (50, True)  # the source's max_rows
    assert [r[0] for r in capped.rows] == list(range(1, 51))
    fewer = source.execute("SELECT id FROM launches", max_rows=3)
    assert (fewer.row_count, fewer.truncated) == (3, True)
    json.dumps(source.execute("SELECT * FROM launch_vehicles").model_dump())  # every cell JSON-safe


def test_sample_rows_and_find_values(source):
    assert 1 <= source.sample_rows("countries", limit=99).row_count <= 5
    assert "长征二号丁" in source.find_values("launch_vehicles", "name_zh", "Long March 2D")
    assert source.find_values("launch_vehicles", "name", "%") == []  # a literal %, not a wildcard


def test_a_ranking_or_computation_word_is_computed_on_the_column(source):
    # A 1.5B model looked up "lowest" and "average" as values (issue 16): find_values computes them instead.
    values, note = ranking_or_computation(source, "AIRCRAFT", "Max_Speed_Kmh", "highest")
    assert [float(v) for v in values] == [2650.0, 2600.0, 2500.0] and "ORDER BY max_speed_kmh DESC LIMIT 1" in note
    values, note = ranking_or_computation(source, "aircraft", "max_speed_kmh", "平均")
    assert len(values) == 1 and 1000 < float(values[0]) < 1200 and "AVG(max_speed_kmh)" in note
    assert ranking_or_computation(source, "aircraft", "model", "Boeing") is None
    values, note = ranking_or_computation(source, "aircraft", "model", "average")  # text: nothing computed
    assert values == [] and "ORDER BY, AVG or SUM over the column that measures it" in note


@pytest.mark.parametrize("sql", REFUSED.values(), ids=REFUSED.keys())
def test_guard_refuses_with_sql_rejected(source, expected, sql):
    with pytest.raises(SQLRejected) as refused:
        source.execute(sql)
    assert isinstance(refused.value, SourceError) and refused.value.reason
    assert source.describe_table("launches").row_count == expected["launches"][1]
    assert "copied" not in source.list_tables()


def test_a_query_past_the_time_limit_raises_query_timeout(sample_location):
    slow = open_source(sample_location, time_limit_s=1.0)
    try:
        with pytest.raises(QueryTimeout):
            slow.execute(SLOW_QUERY)
        assert slow.execute("SELECT 1").rows == [[1]]  # still usable afterwards
    finally:
        slow.close()


def test_close_is_idempotent(sample_location):
    unused = open_source(sample_location)
    unused.close()
    unused.close()
    used = open_source(sample_location)
    assert used.execute("SELECT 1").rows == [[1]]
    used.close()
    used.close()
