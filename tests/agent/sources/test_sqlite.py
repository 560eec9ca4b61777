"""Layers 2 and 3 (agent/sources/sqlite.py) on real SQLite files in tmp_path."""

from __future__ import annotations

import hashlib
import re
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest

from agent.sources import sql_guard
from agent.sources.errors import (
    QueryFailed, QueryTimeout, SQLRejected, SourceError, SourceUnavailable, UnknownColumn, UnknownTable,
)
from agent.sources.sqlite import SQLiteSource
from tests.agent.sources.test_sql_guard import load_payloads, load_spider_subset
from tests.fixtures.spider_dev import spider_database

SCHEMA = """
CREATE TABLE singer (
    singer_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    country TEXT DEFAULT 'unknown',
    age INTEGER
);
CREATE TABLE concert (concert_id INTEGER PRIMARY KEY, concert_name TEXT, year INTEGER);
CREATE TABLE singer_in_concert (
    concert_id INTEGER REFERENCES concert (concert_id),
    singer_id INTEGER,
    PRIMARY KEY (concert_id, singer_id),
    FOREIGN KEY (singer_id) REFERENCES singer
);
CREATE INDEX singer_name ON singer (name);
CREATE VIEW singer_view AS SELECT name, country FROM singer;
-- AUTOINCREMENT makes SQLite create sqlite_sequence, which list_tables must hide.
CREATE TABLE launch_vehicles (
    id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, name_zh TEXT, family TEXT, payload_kg REAL
);
CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, tag TEXT);
CREATE TABLE numbers (n INTEGER);
CREATE TABLE cells (id INTEGER PRIMARY KEY, text_value TEXT, blob_value BLOB);

INSERT INTO singer VALUES (1, 'Joe Sharp', 'Netherlands', 52), (2, 'Timbaland', 'United States', 32),
    (3, 'Justin Brown', 'France', 29);
INSERT INTO concert VALUES (1, 'Auditions', 2014), (2, 'Super bootcamp', 2015);
INSERT INTO singer_in_concert VALUES (1, 1), (1, 2), (2, 3);
INSERT INTO launch_vehicles (name, name_zh, family, payload_kg) VALUES
    ('Long March 2D', '长征二号丁', 'Long March', 1300),
    ('Long March 2D', '长征二号丁', 'Long March', 1300),
    ('Long March 2C', '长征二号丙', 'Long March', 3850),
    ('Kuaizhou 1A', '快舟一号甲', 'derived from LONG MARCH 2 parts', 300),
    ('Falcon 9', NULL, 'Falcon', 22800);
INSERT INTO notes (body, tag) VALUES ('100% done', 'a'), ('100 percent', 'b'), ('snake_case', 'c'),
    ('snakeXcase', 'd'), ('back\\slash', 'e');
WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 100)
    INSERT INTO numbers SELECT n FROM c;
INSERT INTO cells VALUES
    (1, 'short', x'00ff'),
    (2, printf('%.*c', 50000, 'x'), randomblob(5000)),
    (3, printf('%.*c', 6000, 'é'), NULL),
    (4, CAST(x'41ff42' AS TEXT), NULL);
"""


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "analytics.db"
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    conn.close()
    return path


@pytest.fixture
def db_path(template_db: Path, tmp_path: Path) -> Path:
    directory = tmp_path / "db"
    directory.mkdir()
    return Path(shutil.copy(template_db, directory / "analytics.db"))


@pytest.fixture
def db(db_path: Path) -> SQLiteSource:
    return SQLiteSource(db_path, time_limit_s=0.5, max_rows=50, max_cell_bytes=10_000)


def fingerprint(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir())}


# -- introspection ----------------------------------------------------------------------

def test_list_tables_is_sorted_and_hides_sqlite_internals(db: SQLiteSource) -> None:
    assert db.list_tables() == ["cells", "concert", "launch_vehicles", "notes", "numbers",
                                "singer", "singer_in_concert", "singer_view"]


def test_describe_table_reports_columns_keys_and_row_count(db: SQLiteSource) -> None:
    schema = db.describe_table("SINGER_IN_CONCERT")  # SQLite names are case-insensitive
    assert schema.name == "singer_in_concert"
    assert [(c.name, c.type, c.primary_key) for c in schema.columns] == [
        ("concert_id", "INTEGER", True), ("singer_id", "INTEGER", True)]
    assert {(f.column, f.ref_table, f.ref_column) for f in schema.foreign_keys} == {
        ("concert_id", "concert", "concert_id"), ("singer_id", "singer", None)}
    assert schema.row_count == 3
    singer = db.describe_table("singer")
    name, country = singer.columns[1], singer.columns[2]
    assert (name.not_null, name.default) == (True, None)
    assert (country.not_null, country.default) == (False, "'unknown'")


def test_describe_view(db: SQLiteSource) -> None:
    schema = db.describe_table("singer_view")
    assert [c.name for c in schema.columns] == ["name", "country"]
    assert (schema.foreign_keys, schema.row_count) == ([], 3)


def test_unknown_table_suggests_close_names(db: SQLiteSource) -> None:
    with pytest.raises(UnknownTable, match=r"no table or view named 'singers'; did you mean singer"):
        db.describe_table("singers")
    with pytest.raises(UnknownTable, match="available: cells, concert"):
        db.sample_rows("zzz")


def test_sample_rows_clamps_the_limit(db: SQLiteSource) -> None:
    assert db.sample_rows("numbers", 50).row_count == 5
    result = db.sample_rows("Numbers", 0)
    assert (result.rows, result.sql) == ([[1]], 'SELECT * FROM "numbers" LIMIT 1')


def test_find_values_matches_any_text_column_of_the_row(db: SQLiteSource) -> None:
    assert db.find_values("launch_vehicles", "name_zh", "Long March 2D") == ["长征二号丁"]
    # Case-insensitive, most frequent first; the Kuaizhou row matches through `family`.
    assert db.find_values("launch_vehicles", "name_zh", "long march 2") == [
        "长征二号丁", "快舟一号甲", "长征二号丙"]
    assert db.find_values("launch_vehicles", "name_zh", "long march 2", limit=1) == ["长征二号丁"]
    assert db.find_values("launch_vehicles", "name_zh", "falcon") == []  # NULLs skipped
    assert db.find_values("launch_vehicles", "payload_kg", "kuaizhou") == [300.0]


@pytest.mark.parametrize(("term", "expected"), [
    ("100%", ["100% done"]), ("_case", ["snake_case"]), ("%", ["100% done"]),
    ("\\", ["back\\slash"]), ("'; DROP TABLE notes; --", []),
])
def test_find_values_treats_like_wildcards_literally(db: SQLiteSource, term: str,
                                                     expected: list[str]) -> None:
    assert db.find_values("notes", "body", term) == expected


def test_find_values_unknown_column_suggests_close_names(db: SQLiteSource) -> None:
    expected = "launch_vehicles has no column named 'name_cn'; did you mean name, name_zh"
    with pytest.raises(UnknownColumn, match=expected):
        db.find_values("launch_vehicles", "name_cn", "x")


# -- execute: results, caps, rendering --------------------------------------------------

def test_execute_returns_typed_result(db: SQLiteSource) -> None:
    result = db.execute("SELECT name, age FROM singer WHERE age > 30 ORDER BY age;  -- note")
    assert result.sql == "SELECT name, age FROM singer WHERE age > 30 ORDER BY age"
    assert (result.columns, result.rows) == (["name", "age"], [["Timbaland", 32], ["Joe Sharp", 52]])
    assert (result.row_count, result.truncated, result.truncated_cells) == (2, False, 0)
    assert result.duration_ms >= 0


def test_row_cap_sets_truncated(db: SQLiteSource) -> None:
    capped = db.execute("SELECT n FROM numbers ORDER BY n")
    assert (capped.row_count, capped.truncated, capped.rows[-1]) == (50, True, [50])
    exact = db.execute("SELECT n FROM numbers WHERE n <= 50")
    assert (exact.row_count, exact.truncated) == (50, False)
    override = db.execute("SELECT n FROM numbers", max_rows=3)
    assert (override.rows, override.truncated) == ([[1], [2], [3]], True)


def test_cell_cap_cuts_visibly_and_counts(db: SQLiteSource) -> None:
    rows = {r[0]: r[1:] for r in db.execute("SELECT id, text_value, blob_value FROM cells").rows}
    assert rows[1] == ["short", "x'00ff'"]
    long_text, big_blob = rows[2]
    assert long_text == "x" * 10_000 + "…[50000 bytes]"
    assert big_blob == "<blob 5000 bytes>"  # its hex form would pass the cap
    multibyte = rows[3][0]
    assert multibyte.endswith("…[12000 bytes]") and set(multibyte[:-14]) == {"é"}
    assert rows[4][0] == "A\ufffdB"  # invalid UTF-8 is replaced, not an error
    assert db.execute("SELECT text_value, blob_value FROM cells").truncated_cells == 3


def test_json_table_functions_work_under_the_authorizer(db: SQLiteSource) -> None:
    # Eponymous virtual tables report an UPDATE of sqlite_master while preparing.
    result = db.execute("SELECT key, value FROM json_each('[10, 20]')")
    assert result.rows == [[0, 10], [1, 20]]


def test_sqlite_errors_become_query_failed_with_sqlite_message(db: SQLiteSource) -> None:
    with pytest.raises(QueryFailed, match="no such column: locked"):
        db.execute("SELECT locked FROM singer")
    with pytest.raises(QueryFailed, match="malformed JSON"):
        db.execute("SELECT json('{')")


def test_lone_surrogates_are_a_typed_error(db: SQLiteSource) -> None:
    # JSON tool arguments can carry "\ud800", which SQLite cannot be sent.
    with pytest.raises(QueryFailed, match="lone surrogate"):
        db.find_values("notes", "body", "\ud800")


def test_execute_applies_the_guard(db: SQLiteSource) -> None:
    with pytest.raises(SQLRejected, match="found DROP"):
        db.execute("DROP TABLE singer")
    assert SQLRejected is sql_guard.SQLRejected


def test_concurrent_calls_from_threads(db: SQLiteSource) -> None:
    results: list[int] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(20):
                results.append(db.execute("SELECT count(*) FROM numbers").rows[0][0])
        except BaseException as e:  # noqa: BLE001 - reported by the assert below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and results == [100] * 160


# -- bombs ------------------------------------------------------------------------------

@pytest.mark.parametrize("sql", [
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
    "SELECT count(*) FROM numbers a, numbers b, numbers c, numbers d, numbers e",
])
def test_runaway_queries_stop_at_the_time_limit(db: SQLiteSource, sql: str) -> None:
    with pytest.raises(QueryTimeout, match=r"query stopped after 0\.5 s; add filters or LIMIT"):
        db.execute(sql)


@pytest.mark.parametrize("sql", [
    "SELECT randomblob(1000000000)",
    "SELECT zeroblob(1000000000)",
    "SELECT printf('%.*c', 1000000000, 'x')",
    "SELECT 1 WHERE 1337 = LIKE('ABCDEFG', UPPER(HEX(RANDOMBLOB(1000000000 / 2))))",
    "SELECT zeroblob(10000000), printf('%.*c', 10000000, 'x')",
])
def test_huge_values_fail_cleanly(db: SQLiteSource, sql: str) -> None:
    try:
        result = db.execute(sql)
    except QueryTimeout as e:  # printf('%.*c', 1e9) spends 8 s in one VM step: its worker is killed
        assert "stopped after 0.5 s" in str(e)
    except QueryFailed as e:
        assert "too big" in str(e)
    else:  # SQLite's printf() returns NULL past the length limit
        assert all(cell is None for cell in result.rows[0]) or result.truncated_cells > 0


# -- unavailable databases --------------------------------------------------------------

def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SourceUnavailable, match="not found at .*; set ASKDB_DATABASE or --db"):
        SQLiteSource(tmp_path / "nope.db").list_tables()


def test_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello, I am not a database\n" * 100)
    with pytest.raises(SourceUnavailable, match="not a database or is corrupt"):
        SQLiteSource(path).execute("SELECT 1")


def test_corrupt_database(db_path: Path) -> None:
    data = bytearray(db_path.read_bytes())
    data[4096:] = b"\xff" * (len(data) - 4096)  # everything after the first page
    db_path.write_bytes(bytes(data))
    with pytest.raises(SourceUnavailable, match="corrupt"):
        SQLiteSource(db_path).execute("SELECT * FROM singer")


def test_locked_database(db_path: Path) -> None:
    writer = sqlite3.connect(db_path, isolation_level=None)
    writer.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(SourceUnavailable, match="locked by another process.*retry"):
            SQLiteSource(db_path, time_limit_s=0.2).list_tables()
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_path_needing_uri_quoting(template_db: Path, tmp_path: Path) -> None:
    directory = tmp_path / "a dir?with#odd%chars"
    directory.mkdir()
    path = Path(shutil.copy(template_db, directory / "x y.db"))
    assert SQLiteSource(path).execute("SELECT count(*) FROM singer").rows == [[3]]


# -- defence in depth: layers 2 and 3 without the guard ---------------------------------

def redirect_paths(sql: str, scratch: Path) -> str:
    """Point every quoted absolute path of a payload into the scratch directory."""

    def move(match: re.Match[str]) -> str:
        return f"'{match.group(1) or ''}{scratch / Path(match.group(2)).name}'"

    return re.sub(r"'(file:)?(/[^']*)'", move, sql)


@pytest.mark.parametrize("payload", load_payloads())
def test_payload_is_refused_without_the_guard(db: SQLiteSource, db_path: Path,
                                              tmp_path: Path, payload: str) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    before = fingerprint(db_path.parent)
    with pytest.raises((SQLRejected, SourceError)):
        db._run_unchecked(redirect_paths(payload, scratch))
    assert fingerprint(db_path.parent) == before  # same files, same bytes
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize(("sql", "reason"), [
    ("PRAGMA writable_schema=1", "PRAGMA writable_schema is not allowed"),
    ("PRAGMA query_only=0", "PRAGMA query_only is not allowed"),
    ("SELECT * FROM pragma_table_info('singer')", "pragma_table_info is not allowed"),
    ("ATTACH ':memory:' AS m", "ATTACH is not allowed"),
    ("SELECT load_extension('x')", "function load_extension is not allowed"),
    ("SELECT fts3_tokenizer('simple')", "function fts3_tokenizer is not allowed"),
    ("SELECT * FROM dbstat", "table dbstat is not allowed"),
    ("BEGIN", "transaction control is not allowed"),
    ("DELETE FROM singer", "DELETE is not allowed"),
    ("INSERT INTO singer (singer_id, name) VALUES (1, 'x') ON CONFLICT (singer_id) DO UPDATE SET name = 'y'",
     "INSERT is not allowed"),
    ("SELECT 1; DROP TABLE singer", "only one statement is allowed"),
    ("-- nothing", "not a query"),
])
def test_authorizer_refusals_explain_themselves(db: SQLiteSource, sql: str, reason: str) -> None:
    with pytest.raises(SQLRejected, match=re.escape(reason)):
        db._run_unchecked(sql)


def test_read_only_connection_refuses_writes_without_the_authorizer(db: SQLiteSource) -> None:
    with db._connect() as conn, pytest.raises(sqlite3.OperationalError, match="readonly"):
        conn.execute("DELETE FROM singer")


# -- real schemas: Spider dev databases -------------------------------------------------

SPIDER_SAMPLE = [(sql, db_id) for sql, db_id in load_spider_subset()
                 if db_id in {"concert_singer", "world_1", "car_1", "dog_kennels", "flight_2",
                              "student_transcripts_tracking"}][::5]


@pytest.mark.parametrize(("sql", "db_id"), SPIDER_SAMPLE)
def test_execute_matches_plain_sqlite_on_spider(sql: str, db_id: str) -> None:
    path = spider_database(db_id)
    if path is None:  # running needs the file; tests/data/spider keeps four databases, ../shared all nineteen
        pytest.skip(f"Spider's {db_id} database is neither in tests/data/spider nor in ../shared/datasets")
    result = SQLiteSource(path, max_rows=10_000).execute(sql)
    plain = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        expected = [list(row) for row in plain.execute(sql).fetchall()]
    finally:
        plain.close()
    assert (result.rows, result.truncated, result.truncated_cells) == (expected, False, 0)
