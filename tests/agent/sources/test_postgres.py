"""The analytics database on PostgreSQL (agent/sources/postgres.py): the sample database copied into
a real server, read through the README's read-only role, compared with the SQLite file."""

from __future__ import annotations

import json

import psycopg
import pytest

from agent.offline_planner import OfflinePlanner
from agent.sources.errors import (
    QueryFailed, QueryTimeout, SQLRejected, SourceUnavailable, UnknownColumn, UnknownTable,
)
from agent.sources.factory import open_source
from agent.sources.postgres import PostgresSource
from agent.sources.sqlite import SQLiteSource
from agent.vocabulary.domain import DomainVocabulary
from tests.agent.sources.test_sql_guard import load_payloads


@pytest.fixture
def pg(postgres_analytics_url):
    database = PostgresSource(postgres_analytics_url, time_limit_s=2.0, max_rows=100, max_cell_bytes=64)
    yield database
    database.close()


@pytest.fixture
def lite(sample_db_path):
    return SQLiteSource(sample_db_path, time_limit_s=2.0, max_rows=100, max_cell_bytes=64)


def fingerprint(owner_url: str) -> dict[str, int]:
    """Row count and a hash of every row of every table, as the owner sees them."""
    with psycopg.connect(owner_url) as conn:
        tables = [r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
        return {t: conn.execute(f'SELECT count(*), coalesce(sum(hashtext(t::text)), 0) FROM "{t}" t').fetchone()
                for t in tables}


# -- the same answers as SQLite ---------------------------------------------------

QUERIES = [
    "SELECT count(*) FROM launches",
    "SELECT outcome, count(*) AS n FROM launches GROUP BY outcome ORDER BY n DESC",
    "SELECT v.name, count(*) AS n FROM launch_vehicles v JOIN launches l ON l.vehicle_id = v.id"
    " GROUP BY v.name ORDER BY n DESC, v.name LIMIT 5",
    "SELECT orbit, round(avg(mass_kg)::numeric, 3) FROM payloads WHERE mass_kg IS NOT NULL GROUP BY orbit ORDER BY orbit",
    "SELECT sum(units_built), max(max_speed_kmh), min(engines) FROM aircraft",
    "SELECT name, name_zh FROM countries WHERE code IN ('CHN', 'USA') ORDER BY code",
    "SELECT count(*) FROM launches WHERE launch_date BETWEEN '2020-01-01' AND '2020-12-31'",
    "SELECT substr(launch_date, 1, 4) AS y, count(*) FROM launches GROUP BY y ORDER BY y DESC LIMIT 3",
    "SELECT s.name FROM launch_sites s WHERE s.country_id = (SELECT id FROM countries WHERE code = 'CHN') ORDER BY 1",
    "WITH t AS (SELECT vehicle_id, count(*) AS n FROM launches GROUP BY vehicle_id) SELECT max(n) FROM t",
    "SELECT name FROM manufacturers EXCEPT SELECT m.name FROM manufacturers m JOIN launch_vehicles v"
    " ON v.manufacturer_id = m.id ORDER BY 1",
    "SELECT 1.5 AS x, NULL AS y, 'a' || 'b' AS z",
]


@pytest.mark.parametrize("sql", QUERIES)
def test_results_match_sqlite_on_the_sample(pg, lite, sql):
    sqlite_sql = sql.replace("::numeric", "")
    mine, theirs = pg.execute(sql), lite.execute(sqlite_sql)
    assert mine.columns == theirs.columns or len(mine.columns) == len(theirs.columns)
    assert mine.rows == theirs.rows
    assert (mine.row_count, mine.truncated) == (theirs.row_count, theirs.truncated)


def test_introspection_matches_sqlite(pg, lite):
    assert pg.list_tables() == lite.list_tables()
    for table in lite.list_tables():
        a, b = pg.describe_table(table), lite.describe_table(table)
        assert [c.name for c in a.columns] == [c.name for c in b.columns]
        assert [c.primary_key for c in a.columns] == [c.primary_key for c in b.columns]
        assert a.row_count == b.row_count
        assert sorted((f.column, f.ref_table) for f in a.foreign_keys) == sorted(
            (f.column, f.ref_table) for f in b.foreign_keys)
    assert pg.describe_table("LAUNCHES").name == "launches"  # case-insensitive, as SQLite
    assert pg.sample_rows("countries", 2).rows == lite.sample_rows("countries", 2).rows
    assert pg.find_values("launch_vehicles", "name_zh", "Long March 2D") == ["长征二号丁"]
    assert pg.find_values("launch_vehicles", "name_zh", "long march 2d") == ["长征二号丁"]


def test_unknown_names_suggest_close_ones_and_hostile_names_stay_names(pg):
    with pytest.raises(UnknownTable, match="did you mean launches"):
        pg.describe_table("launchs")
    with pytest.raises(UnknownColumn, match="did you mean name"):
        pg.find_values("countries", "nam", "x")
    for hostile in ('launches"; DROP TABLE launches; --', "launches; SELECT 1", "pg_authid"):
        with pytest.raises(UnknownTable):
            pg.sample_rows(hostile)


def test_find_values_matches_wildcards_literally(pg):
    assert pg.find_values("countries", "name", "%") == []
    assert pg.find_values("countries", "name", "_") == []
    assert pg.find_values("countries", "name", "'; DROP TABLE countries; --") == []


# -- the guard's hold-out style tests on PostgreSQL -------------------------------

def test_every_payload_is_refused_with_or_without_the_guard(pg, postgres_sample_owner_url):
    """Through the guard, every write, DDL and stacked payload is SQLRejected; with the guard bypassed,
    the READ ONLY transaction, the server-side cursor and the role refuse them all, and no row changes."""
    before = fingerprint(postgres_sample_owner_url)
    for payload in load_payloads():
        with pytest.raises((SQLRejected, QueryFailed)):
            pg.execute(payload)
        try:
            pg._run_unchecked(payload)
        except (SQLRejected, QueryFailed, QueryTimeout):
            continue
        raise AssertionError(f"ran without the guard: {payload}")
    assert fingerprint(postgres_sample_owner_url) == before


@pytest.mark.parametrize("sql", [
    "DELETE FROM launches",
    "UPDATE countries SET name = 'x'",
    "INSERT INTO countries (id, code, name, name_zh) VALUES (999, 'XXX', 'x', 'x')",
    "CREATE TABLE evil (a int)",
    "DROP TABLE launches",
    "TRUNCATE launches",
    "SELECT 1; DELETE FROM launches",
    "WITH d AS (DELETE FROM launches RETURNING *) SELECT count(*) FROM d",
    "SELECT pg_read_file('/etc/passwd')",
    "SELECT * FROM pg_ls_dir('.')",
    "SELECT lo_import('/etc/passwd')",
    "SELECT lo_export(1, '/tmp/askdb-evil')",
    "COPY launches TO PROGRAM 'touch /tmp/askdb-evil'",
    "COPY launches TO '/tmp/askdb-evil'",
    "SELECT * INTO evil FROM launches",
    "SELECT * FROM launches FOR UPDATE",
    "SELECT nextval('x')",
])
def test_postgres_payloads_are_refused_by_every_layer(pg, postgres_sample_owner_url, sql):
    before = fingerprint(postgres_sample_owner_url)
    with pytest.raises(SQLRejected):
        pg.execute(sql)
    with pytest.raises((SQLRejected, QueryFailed)):
        pg._run_unchecked(sql)
    assert fingerprint(postgres_sample_owner_url) == before


def test_the_read_only_transaction_alone_refuses_writes(postgres_server, postgres_sample_owner_url):
    """A role that may write (no superuser): the READ ONLY transaction still refuses. (Plain
    INSERT/UPDATE/DELETE never get that far: DECLARE ... CURSOR accepts only a query.)"""
    with psycopg.connect(postgres_sample_owner_url, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS askdb_writer")
        conn.execute("CREATE ROLE askdb_writer LOGIN")
        conn.execute("GRANT ALL ON ALL TABLES IN SCHEMA public TO askdb_writer")
        conn.execute("GRANT CREATE ON SCHEMA public TO askdb_writer")
        conn.execute("CREATE SEQUENCE IF NOT EXISTS askdb_seq")
        conn.execute("GRANT ALL ON SEQUENCE askdb_seq TO askdb_writer")
    before = fingerprint(postgres_sample_owner_url)
    writer = PostgresSource(postgres_server.url("askdb_sample", user="askdb_writer"), time_limit_s=2)
    try:
        for sql in ("SELECT 1 FROM countries FOR UPDATE", "SELECT nextval('askdb_seq')"):
            with pytest.raises(SQLRejected, match="read-only"):
                writer._run_unchecked(sql)
        # PostgreSQL lets lo_create run in a READ ONLY transaction; the rollback every query ends with undoes it.
        writer._run_unchecked("SELECT lo_create(0)")
        with psycopg.connect(postgres_sample_owner_url) as conn:
            assert conn.execute("SELECT count(*) FROM pg_largeobject_metadata").fetchone() == (0,)
    finally:
        writer.close()
        with psycopg.connect(postgres_sample_owner_url, autocommit=True) as conn:
            conn.execute("REVOKE ALL ON ALL TABLES IN SCHEMA public FROM askdb_writer")
            conn.execute("REVOKE CREATE ON SCHEMA public FROM askdb_writer")
            conn.execute("DROP SEQUENCE askdb_seq")
            conn.execute("DROP ROLE askdb_writer")
    assert fingerprint(postgres_sample_owner_url) == before


def test_a_superuser_is_refused(postgres_sample_owner_url):
    owner = PostgresSource(postgres_sample_owner_url)
    try:
        with pytest.raises(SourceUnavailable, match="superuser.*read-only role"):
            owner.list_tables()
    finally:
        owner.close()


@pytest.mark.parametrize("sql", [
    "SELECT count(*) FROM generate_series(1, 100000) a, generate_series(1, 100000) b",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
])
def test_runaway_queries_stop_at_the_time_limit(pg, sql):
    with pytest.raises(QueryTimeout, match="query stopped after 2.0 s"):
        pg.execute(sql)


def test_pg_sleep_is_rejected_and_without_the_guard_stops_at_the_time_limit(pg):
    with pytest.raises(SQLRejected, match="only waits"):
        pg.execute("SELECT pg_sleep(30)")
    with pytest.raises(QueryTimeout):
        pg._run_unchecked("SELECT pg_sleep(30)")


def test_settings_changed_without_the_guard_do_not_outlive_the_query(pg):
    pg._run_unchecked("SELECT set_config('statement_timeout', '0', false)")
    for _ in range(pg.pool_size + 1):  # every pooled connection
        assert pg._run_unchecked("SELECT current_setting('statement_timeout')").rows == [["2s"]]


def test_each_query_runs_with_a_bounded_work_mem(pg):
    """Issue 18, item 2 on PostgreSQL: a sort or hash gets a sixteenth of ASKDB_SQL_MAX_MEMORY_MB."""
    assert pg._run_unchecked("SELECT current_setting('work_mem')").rows == [["64MB"]]


def test_row_cap_sets_truncated_and_cell_cap_counts(pg):
    result = pg.execute("SELECT id FROM launches ORDER BY id")
    assert (result.row_count, result.truncated) == (100, True)
    assert pg.execute("SELECT id FROM launches ORDER BY id", max_rows=3).rows == [[1], [2], [3]]
    wide = pg.execute("SELECT repeat('é', 100) AS t, decode(repeat('ab', 100), 'hex') AS b")
    assert wide.truncated_cells == 2
    assert wide.rows[0][0].endswith("…[200 bytes]") and wide.rows[0][1] == "<blob 100 bytes>"


def test_postgres_types_come_back_json_safe(pg):
    row = pg.execute("SELECT 7::numeric, 2.5::numeric, DATE '2020-01-02', TIMESTAMP '2020-01-02 03:04:05',"
                     " '{\"a\": [1]}'::jsonb, ARRAY[1, 2], gen_random_uuid() IS NOT NULL, interval '1 day'").rows[0]
    assert row[:6] == [7, 2.5, "2020-01-02", "2020-01-02 03:04:05", '{"a": [1]}', "[1, 2]"]
    json.dumps(row)


def test_unreachable_server_and_bad_urls_are_unavailable(postgres_server):
    gone = open_source("postgresql://askdb_reader@127.0.0.1:1/askdb_sample", time_limit_s=1)
    try:
        with pytest.raises(SourceUnavailable, match="could not connect.*127.0.0.1"):
            gone.list_tables()
    finally:
        gone.close()
    missing = PostgresSource(postgres_server.url("no_such_db", user="askdb_reader"), time_limit_s=1)
    try:
        with pytest.raises(SourceUnavailable, match="no_such_db"):
            missing.execute("SELECT 1")
    finally:
        missing.close()


# -- the offline planner on PostgreSQL ---------------------------------------------

PLANNER_QUESTIONS = ["sample-01", "sample-02", "sample-03", "sample-04", "sample-05", "sample-06", "sample-10"]


def test_the_offline_planner_answers_the_same_on_postgres(pg, sample_db_path):
    """A handful of the documented planner questions: the planner writes PostgreSQL SQL
    (transpiled from its SQLite plan) whose rows are the SQLite plan's rows."""
    from bench.planner_questions import QUESTIONS

    lite = SQLiteSource(sample_db_path, max_cell_bytes=pg.max_cell_bytes)
    questions = {q["id"]: q["question"] for q in QUESTIONS}
    words = DomainVocabulary.beside(sample_db_path)
    for qid in PLANNER_QUESTIONS:
        on_pg = OfflinePlanner(pg, vocabulary=words).plan(questions[qid])
        on_lite = OfflinePlanner(lite, vocabulary=words).plan(questions[qid])
        mine, theirs = pg.execute(on_pg.sql, max_rows=1000), lite.execute(on_lite.sql, max_rows=1000)
        assert mine.row_count > 0 and sorted(map(repr, mine.rows)) == sorted(map(repr, theirs.rows)), qid
    year = OfflinePlanner(pg).plan("How many launches were there in 2020?").sql
    assert "strftime" not in year
