"""Copying a SQLite file into PostgreSQL (sample_db/to_postgres.py) when the file is as loose as
Spider's: values its declared types cannot hold, mixed-case names, keys PostgreSQL refuses."""

from __future__ import annotations

import uuid

import psycopg
import pytest
from psycopg import sql

from app.eval.postgres import with_search_path
from sample_db.to_postgres import copy_database, pg_name, pg_type


@pytest.fixture
def schema_url(postgres_url):
    schema = f"copy_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    yield with_search_path(postgres_url, schema)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


@pytest.mark.parametrize("declared, stored, expected", [
    ("INTEGER", {"integer"}, "bigint"), ("VARCHAR(20)", {"text"}, "text"),
    ("REAL", {"real", "integer"}, "double precision"),
    ("DATETIME", {"text", "integer"}, "text"), ("BOOLEAN", {"integer"}, "numeric"), ("BOOLEAN", {"text"}, "text"),
    ("INT", {"integer", "real"}, "double precision"), ("BLOB", {"blob"}, "bytea"), ("", {"integer"}, "text"),
])
def test_types_widen_to_the_values_held(declared, stored, expected):
    assert pg_type(declared, stored) == expected


@pytest.mark.parametrize("name, expected", [
    ("launch_date", "launch_date"), ("PetType", "pet_type"), ("StuID", "stu_id"), ("GNPOld", "gnp_old"),
    ("Stadium_ID", "stadium_id"), ("CDSCode", "cds_code"), ("Code2", "code2"),
    ("Free Meal Count (K-12)", "free meal count (k-12)"),
])
def test_names_become_snake_case(name, expected):
    assert pg_name(name) == expected


def test_a_loose_file_is_copied_whole_with_the_keys_postgres_accepts(loose_db, schema_url, caplog):
    assert copy_database(loose_db, schema_url) == ["stadium", "concert", "people"]
    with psycopg.connect(schema_url) as conn:
        types = dict(conn.execute("SELECT table_name || '.' || column_name, data_type FROM information_schema.columns"
                                  " WHERE table_schema = current_schema()").fetchall())
        assert types["stadium.opened"] == "text" and types["stadium.capacity"] == "double precision"
        assert types["concert.is_main"] == "text"  # IsMain, holding 'T' and 0
        # The text column that refers to an integer one took its type, and the key exists.
        assert types["concert.stadium_id"] == "bigint"
        keys = {r[0] for r in conn.execute("SELECT pg_get_constraintdef(oid) FROM pg_constraint"
                                           " WHERE connamespace = current_schema()::regnamespace")}
        assert keys == {"PRIMARY KEY (stadium_id)", "FOREIGN KEY (stadium_id) REFERENCES stadium(stadium_id) NOT VALID"}
        assert conn.execute("SELECT Name FROM Stadium WHERE Stadium_ID = 2").fetchone() == ("Hampden",)
        assert conn.execute("SELECT count(*) FROM concert JOIN stadium USING (stadium_id)").fetchone() == (2,)
    left_out = " ".join(r.getMessage() for r in caplog.records)
    assert "primary key of concert" in left_out  # a NULL in it
    assert "foreign key concert(Owner) -> people" in left_out  # people.Name is not unique
