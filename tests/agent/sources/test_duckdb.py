"""DuckDB as a source (agent/sources/duckdb.py): the sample database copied into a .duckdb file,
opened read-only and locked; what the guard refuses by name, the locked instance refuses again;
model-written SQL runs in a worker process under hard limits (query_pool.py)."""

from __future__ import annotations

import hashlib
import resource

import duckdb
import pytest

from agent.sources.duckdb import DuckDBSource
from agent.sources.errors import QueryFailed, QueryTimeout, SQLRejected, SourceUnavailable
from agent.sources.factory import open_source
from agent.sources.query_pool import PoolLimits
from tests.agent.sources.refusals import assert_payloads_change_nothing


def _sample(path, time_limit_s: float) -> DuckDBSource:
    return DuckDBSource(path, time_limit_s=time_limit_s, max_rows=100, max_cell_bytes=64,
                        limits=PoolLimits(max_memory_mb=256, max_temp_mb=64))


@pytest.fixture
def duck(duckdb_sample_path):
    source = _sample(duckdb_sample_path, 2.0)
    yield source
    source.close()


def file_digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_factory_opens_a_duckdb_path(duckdb_sample_path):
    source = open_source(duckdb_sample_path)
    try:
        assert isinstance(source, DuckDBSource) and source.dialect == "duckdb" and source.label == "aerospace"
        assert source.execute("SELECT count(*) FROM launches").rows == [[2639]]
    finally:
        source.close()


def test_every_setting_is_locked_as_configured(duck):
    # Read on the app's own instance: no query askdb runs for a model may read the settings.
    with duck._cursor() as cursor:
        settings = dict(cursor.execute(
            "SELECT name, value FROM duckdb_settings() WHERE name IN ('access_mode', 'enable_external_access',"
            " 'autoload_known_extensions', 'autoinstall_known_extensions', 'allow_community_extensions',"
            " 'lock_configuration', 'memory_limit', 'threads', 'max_temp_directory_size')").fetchall())
    assert settings == {
        "access_mode": "read_only", "enable_external_access": "false", "autoload_known_extensions": "false",
        "autoinstall_known_extensions": "false", "allow_community_extensions": "false",
        "lock_configuration": "true", "memory_limit": "183.1 MiB", "threads": "2",  # 3/4 of 256 MB
        "max_temp_directory_size": "61.0 MiB"}


# (sql, whether the locked instance refuses it too, with the guard bypassed)
REFUSED = [
    ("SELECT * FROM read_csv('/etc/passwd')", True),
    ("SELECT * FROM read_text('/etc/passwd')", True),
    ("SELECT * FROM '/etc/passwd'", False),  # without external access not even a file: an unknown table
    ("SELECT * FROM glob('/etc/*')", True),
    ("SELECT * FROM sniff_csv('/etc/passwd')", True),
    ("SELECT * FROM query('SELECT 1')", False),
    ("SELECT getenv('HOME')", False),
    ("COPY launches TO '/tmp/askdb-evil.csv'", True),
    ("ATTACH '/tmp/askdb-evil.duckdb' AS evil", True),
    ("INSTALL httpfs", True),
    ("LOAD httpfs", True),
    ("SET memory_limit = '10GB'", True),
    ("SET enable_external_access = true", True),
    ("CREATE TABLE evil AS SELECT 1", True),
    ("CREATE TEMP TABLE evil AS SELECT 1", False),  # the temp catalog is in memory: the guard's to refuse
    ("DELETE FROM launches", True),
    ("UPDATE countries SET name = 'x'", True),
    ("SELECT 1; DELETE FROM launches", False),
    ("PRAGMA version", False),
    ("CHECKPOINT", False),
]


@pytest.mark.parametrize("sql, locked_out", REFUSED, ids=[sql for sql, _ in REFUSED])
def test_file_reads_extensions_settings_and_writes_are_refused(duck, duckdb_sample_path, sql, locked_out):
    before = file_digest(duckdb_sample_path)
    with pytest.raises(SQLRejected):
        duck.execute(sql)
    if locked_out:
        with pytest.raises(SQLRejected):
            duck._run_unchecked(sql)
    assert file_digest(duckdb_sample_path) == before


def test_every_payload_is_refused_with_or_without_the_guard(duck, duckdb_sample_path):
    assert_payloads_change_nothing(duck, lambda: file_digest(duckdb_sample_path))


@pytest.mark.parametrize("sql", [
    "SELECT count(*) FROM range(100000000) a, range(100000) b",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
])
def test_runaway_queries_stop_at_the_time_limit(duck, sql):
    with pytest.raises(QueryTimeout, match="query stopped after 2.0 s"):
        duck.execute(sql)
    assert duck.execute("SELECT count(*) FROM countries").rows == [[25]]  # the source still answers


def test_a_memory_bomb_stops_at_the_memory_limit_or_the_time_limit(duck):
    with pytest.raises((QueryFailed, QueryTimeout), match="more than 256 MB of memory|query stopped"):
        duck.execute("SELECT list(repeat('x', 1000000)) FROM range(10000)")


def max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_one_huge_value_fails_in_its_worker_not_in_the_app(duckdb_sample_path):
    """repeat('a', 1.5e9) is one value memory_limit does not bound: in the app's process it reached
    2.9 GB and ran 6.9 s against a 2 s limit. In a worker it meets the address-space limit at once."""
    source = DuckDBSource(duckdb_sample_path, time_limit_s=2.0)  # the default limits: 1024 MB
    before = max_rss_mb()
    try:
        with pytest.raises(QueryFailed, match="more than 1024 MB of memory"):
            source.execute("SELECT length(repeat('a', 1500000000))")
        assert max_rss_mb() - before < 100
        assert source.execute("SELECT count(*) FROM countries").rows == [[25]]  # a fresh worker answers
    finally:
        source.close()


def test_one_slow_function_is_killed_at_the_deadline(duck):
    """levenshtein over two 100k strings is one call DuckDB's interrupt waits for (35 s in process
    against a 1 s interrupt): the worker is killed GRACE_S after the limit and replaced."""
    with pytest.raises(QueryTimeout, match="query stopped after 2.0 s"):
        duck.execute("SELECT levenshtein(repeat('a', 100000), repeat('b', 100000))")
    assert duck.execute("SELECT count(*) FROM countries").rows == [[25]]


def test_workers_zero_runs_in_process(duckdb_sample_path):
    local = DuckDBSource(duckdb_sample_path, limits=PoolLimits(workers=0))
    try:
        assert local.execute("SELECT count(*) FROM countries").rows == [[25]]
        assert local._db is not None  # the instance is this process's
    finally:
        local.close()


def test_a_huge_result_is_streamed_and_capped(duck):
    result = duck.execute("SELECT * FROM range(10000000000)")
    assert (result.row_count, result.truncated) == (100, True)


def test_a_missing_or_foreign_file_is_unavailable(tmp_path, sample_db_path):
    with pytest.raises(SourceUnavailable, match="does not exist"):
        DuckDBSource(tmp_path / "none.duckdb").list_tables()
    foreign = tmp_path / "sqlite.duckdb"
    foreign.write_bytes(sample_db_path.read_bytes())
    with pytest.raises(SourceUnavailable, match="cannot open"):
        DuckDBSource(foreign).list_tables()


def test_a_file_another_process_writes_is_unavailable_not_corrupted(tmp_path, duckdb_sample_path):
    path = tmp_path / "busy.duckdb"
    path.write_bytes(duckdb_sample_path.read_bytes())
    writer = duckdb.connect(str(path))
    try:
        source = DuckDBSource(path)
        # DuckDB lets one process write or several read; inside one process both share the instance's lock.
        try:
            assert source.list_tables()
        except SourceUnavailable as e:
            assert "cannot open" in str(e)
        finally:
            source.close()
    finally:
        writer.close()


def test_a_file_replaced_by_a_new_one_is_read_again(tmp_path, duckdb_sample_path):
    path = tmp_path / "live.duckdb"
    path.write_bytes(duckdb_sample_path.read_bytes())
    source = DuckDBSource(path)
    try:
        assert "countries" in source.list_tables()
        fresh = tmp_path / "fresh.duckdb"
        with duckdb.connect(str(fresh)) as writer:
            writer.execute("CREATE TABLE sales AS SELECT 1 AS amount")
        fresh.replace(path)  # how a file is refreshed while askdb reads it
        assert source.list_tables() == ["sales"]
        assert source.execute("SELECT amount FROM sales").rows == [[1]]
    finally:
        source.close()


# Issue 39, items 1 and 3: these passed the guard, and `lock_configuration` stops none of them; logging
# on the shared instance let one user read another's queries, and a file or stdout logger aborted the
# process at its next query.
INSTANCE_CHANGES = [
    "SELECT * FROM enable_logging()",
    "SELECT * FROM enable_logging(storage='file', storage_path='/tmp/askdb-duck-log')",
    "SELECT * FROM enable_logging(storage='stdout')",
    "SELECT * FROM enable_profiling()",
    "SELECT * FROM disable_logging()",
    "SELECT * FROM truncate_duckdb_logs()",
    "SELECT write_log('x')",
    "SELECT sleep_ms(10)",
    "SELECT pg_sleep(1)",
    "SELECT message FROM duckdb_logs",
    "SELECT * FROM duckdb_logs_parsed('QueryLog')",
    "SELECT * FROM duckdb_memory()",
    "SELECT current_setting('threads')",
    "SELECT * FROM system.main.duckdb_settings()",
    "WITH x AS (SELECT * FROM enable_logging()) SELECT * FROM x",
    "SELECT name FROM countries WHERE name IN (SELECT CAST(write_log('x') AS VARCHAR))",
    "SELECT list_transform([1, 2], x -> sleep_ms(x))",
]


@pytest.mark.parametrize("workers", [0, 2], ids=["in-process", "in-a-worker"])
def test_logging_profiling_and_waits_are_refused_by_the_guard_and_by_duckdbs_parse(duckdb_sample_path, workers):
    source = DuckDBSource(duckdb_sample_path, time_limit_s=2.0, limits=PoolLimits(workers=workers))
    try:
        for sql in INSTANCE_CHANGES:
            with pytest.raises(SQLRejected, match="is not allowed"):
                source.execute(sql)
            with pytest.raises(SQLRejected, match="is not allowed"):
                source._run_unchecked(sql)  # the guard bypassed: DuckDB's own parse is judged
        assert source.execute("SELECT count(*) FROM countries").rows == [[25]]  # nothing aborted
        if workers == 0:
            with source._cursor() as cursor:
                assert cursor.execute("SELECT current_setting('enable_logging')").fetchone() == (False,)
    finally:
        source.close()


@pytest.fixture
def roomy_duck(duckdb_sample_path):
    """The sample with room to run: DuckDB's catalogue views took over 2 s on a machine busy with a benchmark."""
    source = _sample(duckdb_sample_path, 60.0)
    yield source
    source.close()


def test_listed_table_functions_and_catalogue_views_still_run(roomy_duck):
    duck = roomy_duck
    assert duck.execute("SELECT count(*) FROM range(5)").rows == [[5]]
    assert duck.execute("SELECT count(*) FROM generate_series(1, 3)").rows == [[3]]
    assert duck.execute("SELECT count(*) FROM unnest([1, 2])").rows == [[2]]
    assert duck.execute("SELECT count(*) > 0 FROM duckdb_tables()").rows == [[True]]
    assert duck.execute("SELECT count(*) > 0 FROM duckdb_columns").rows == [[True]]
    assert duck.execute("SELECT list_transform([1, 2], x -> x + 1)").rows == [["[2, 3]"]]


def test_a_function_duckdb_does_not_have_on_the_list_is_refused(duck):
    with pytest.raises(SQLRejected, match="not one of the DuckDB functions askdb runs"):
        duck.execute("SELECT made_up_function(1)")


def test_the_function_list_matches_the_installed_duckdb():
    """A DuckDB upgrade that adds a function fails here until the list is rewritten (and reviewed):
    python -m agent.sources.engine_denials."""
    from agent.sources.duckdb_functions import FUNCTIONS, installed_functions
    from agent.sources.engine_denials import DENIALS

    connection = duckdb.connect()
    try:
        assert installed_functions(connection, DENIALS["duckdb"].function) == set(FUNCTIONS)
    finally:
        connection.close()


def test_spill_directories_of_processes_gone_are_swept(tmp_path, monkeypatch):
    """A process stopped by a signal leaves its empty spill directory; the next one made sweeps it."""
    import os
    import tempfile

    from agent.sources import scratch

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = tmp_path / "askdb-duckdb-999999999-abc"  # no such process
    mine = tmp_path / f"askdb-duckdb-{os.getpid()}-abc"
    kept = tmp_path / "askdb-duckdb-999999998-abc"  # a process gone, but its directory holds a file
    for path in (gone, mine, kept):
        path.mkdir()
    (kept / "spill.tmp").write_text("x")
    scratch.sweep("askdb-duckdb-")
    assert not gone.exists() and mine.exists() and kept.exists()


def test_a_query_directory_holding_only_empty_spill_directories_is_swept(tmp_path, monkeypatch):
    """A server stopped by a signal leaves askdb-sql-<pid>-… with its workers' empty askdb-duckdb-… inside: both go
    (69 of them had gathered in a session's temporary folder); one whose spill directory holds a file stays."""
    import tempfile

    from agent.sources import scratch

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = tmp_path / "askdb-sql-999999999-abc"
    (gone / "askdb-duckdb-999999990-def").mkdir(parents=True)
    kept = tmp_path / "askdb-sql-999999998-abc"
    (kept / "askdb-duckdb-999999991-def").mkdir(parents=True)
    (kept / "askdb-duckdb-999999991-def" / "spill.tmp").write_text("x")
    scratch.sweep("askdb-sql-")
    assert not gone.exists() and (kept / "askdb-duckdb-999999991-def" / "spill.tmp").exists()
