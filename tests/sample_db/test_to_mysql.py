"""Copying a SQLite file into MariaDB (sample_db/to_mysql.py): the sample database exactly, and a
file as loose as Spider's with the keys MariaDB accepts."""

from __future__ import annotations

import logging

import pymysql

from agent.sources.mysql import connect_args
from sample_db.to_mysql import copy_database
from tests.fixtures.sample_db import sorted_rows, sqlite_table_rows


def query(url: str, sql: str) -> list[tuple]:
    with pymysql.connect(**connect_args(url)) as conn, conn.cursor() as cursor:
        cursor.execute(sql)
        return list(cursor.fetchall())


def test_the_sample_database_is_copied_exactly(mariadb_sample_owner_url, sample_db_path):
    for table, rows in sqlite_table_rows(sample_db_path).items():
        assert sorted_rows(query(mariadb_sample_owner_url, f"SELECT * FROM `{table}`")) == rows, table
    # Chinese text survives (utf8mb4), and the foreign keys are declared.
    assert query(mariadb_sample_owner_url, "SELECT name_zh FROM countries WHERE code = 'CHN'") == [("中国",)]
    (keys,) = query(mariadb_sample_owner_url, "SELECT count(*) FROM information_schema.referential_constraints"
                                              " WHERE constraint_schema = DATABASE()")
    assert keys[0] > 10


def test_a_loose_file_is_copied_whole_with_the_keys_mariadb_accepts(loose_db, mariadb_server, caplog):
    url = mariadb_server.create_database("loose_copy")
    caplog.set_level(logging.WARNING)
    assert copy_database(loose_db, url) == ["Stadium", "concert", "people"]
    expected = sqlite_table_rows(loose_db, as_text=True)
    for table in expected:
        assert sorted_rows(query(url, f"SELECT * FROM `{table}`"), as_text=True) == expected[table], table
    types = dict(query(url, "SELECT concat(table_name, '.', column_name), column_type FROM information_schema.columns"
                            " WHERE table_schema = DATABASE()"))
    assert types["Stadium.Opened"] == "longtext" and types["Stadium.Capacity"] == "double"
    assert types["Stadium.Stadium_ID"] == "bigint(20)" and types["concert.Code"] == "varchar(255)"
    assert query(url, "SELECT count(*) FROM concert JOIN Stadium USING (Stadium_ID)") == [(2,)]
    left_out = " ".join(r.getMessage() for r in caplog.records)
    assert "primary key of concert" in left_out  # a NULL in it
    assert "foreign key concert(Owner) -> people" in left_out  # people.Name is not unique
    # Copying again with replace drops the tables first.
    assert copy_database(loose_db, url, replace=True) == ["Stadium", "concert", "people"]
    assert query(url, "SELECT count(*) FROM people") == [(2,)]
