"""Copying a SQLite file into DuckDB (sample_db/to_duckdb.py): the sample database exactly, and a
file as loose as Spider's, whose rows break keys DuckDB checks on insert."""

from __future__ import annotations

import logging

import duckdb

from sample_db.to_duckdb import copy_database
from tests.fixtures.sample_db import sorted_rows, sqlite_table_rows


def test_the_sample_database_is_copied_exactly(sample_db_path, tmp_path):
    target = tmp_path / "aerospace.duckdb"
    copy_database(sample_db_path, target)
    with duckdb.connect(str(target), read_only=True) as duck:
        for table, rows in sqlite_table_rows(sample_db_path).items():
            assert sorted_rows(duck.execute(f'SELECT * FROM "{table}"').fetchall()) == rows, table
        assert duck.execute("SELECT name_zh FROM countries WHERE code = 'CHN'").fetchall() == [("中国",)]
        keys = duck.execute("SELECT count(*) FROM duckdb_constraints() WHERE constraint_type = 'FOREIGN KEY'")
        assert keys.fetchone()[0] > 10


def test_a_loose_file_is_copied_whole_and_keys_its_rows_break_are_left_out(loose_db, tmp_path, caplog):
    target = tmp_path / "loose.duckdb"
    caplog.set_level(logging.WARNING)
    assert copy_database(loose_db, target) == ["Stadium", "concert", "people"]
    expected = sqlite_table_rows(loose_db, as_text=True)
    with duckdb.connect(str(target), read_only=True) as duck:
        for table in expected:
            copied = duck.execute(f'SELECT * FROM "{table}"').fetchall()
            assert sorted_rows(copied, as_text=True) == expected[table], table
        types = dict(duck.execute("SELECT table_name || '.' || column_name, data_type"
                                  " FROM information_schema.columns").fetchall())
        assert types["Stadium.Opened"] == "VARCHAR" and types["Stadium.Capacity"] == "DOUBLE"
    left_out = " ".join(r.getMessage() for r in caplog.records)
    assert "keys of concert" in left_out  # a NULL in its primary key
    assert "foreign key concert(Owner) -> people" in left_out  # people comes later and has no key
    assert copy_database(loose_db, target, replace=True) == ["Stadium", "concert", "people"]
