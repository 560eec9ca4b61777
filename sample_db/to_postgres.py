"""Copy a SQLite database's tables into PostgreSQL: the sample database (or any SQLite file,
Spider's for `python -m app eval --load-into`) as a PostgreSQL source.

Each table becomes a PostgreSQL table with types from SQLite's affinity rules (INTEGER
-> bigint, REAL -> double precision, BLOB -> bytea, NUMERIC -> numeric, else text),
widened to text where the column holds text its affinity could not convert, with the same
primary keys and foreign keys, and its rows copied with COPY. Dates the SQLite file keeps
as text stay text, so the same queries give the same answers. Names become snake_case in
lower case (`pg_name`), which queries can write without quotes.

    python -m sample_db.to_postgres sample_db/aerospace.db postgresql://user@host/askdb_sample
"""

from __future__ import annotations

import logging
import re
import sqlite3
import sys
from pathlib import Path

import psycopg
from psycopg import sql

from sample_db.sqlite_tables import SourceTable, affinity, copy_command, open_sqlite, read_tables, rows

logger = logging.getLogger(__name__)
# Between a lower-case letter or digit and a capital, and before the last capital of a run that
# starts a word: PetType -> Pet_Type, StuID -> Stu_ID, GNPOld -> GNP_Old.
_WORD_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_PG_TYPES = {"integer": "bigint", "real": "double precision", "text": "text", "blob": "bytea", "numeric": "numeric"}


def pg_name(name: str) -> str:
    """A SQLite name as this copy names it in PostgreSQL: snake_case in lower case (PetType ->
    pet_type, StuID -> stu_id, launch_date stays). SQLite's names ignore case and PostgreSQL folds
    an unquoted name to lower case, so queries need no quotes; the underscores keep the words
    apart, for people and for the offline planner, which matches a question's words to them."""
    return _WORD_BOUNDARY.sub("_", name).lower()


def pg_type(declared: str, stored: set[str] | frozenset[str] = frozenset()) -> str:
    """The PostgreSQL type for a SQLite declared type, widened to the storage classes its values
    have (`sample_db.sqlite_tables.affinity`)."""
    return _PG_TYPES[affinity(declared, stored)]


def copy_database(source: str | Path, url: str, *, replace: bool = False) -> list[str]:
    """Create every table of `source` in the database at `url` and copy its rows; return the table names.

    Tables go to the first schema of the URL's search path (``?options=-csearch_path=...``
    selects another than ``public``). A text column that refers to a numeric one takes its type
    when every value converts (SQLite compares the two as numbers). A key PostgreSQL refuses is
    left out with a warning: a primary key over NULLs (SQLite allows them), a foreign key between
    columns of different types or to columns that are not unique. Foreign keys are declared
    ``NOT VALID``: SQLite does not enforce them and real files break some, and a key not checked
    against old rows still tells a reader how the tables join.

    Args:
        replace: drop tables of the same names first.
    """
    lite = open_sqlite(source)
    try:
        tables = read_tables(lite)
        with psycopg.connect(url) as pg:
            if replace:
                for table in reversed(tables):
                    pg.execute(sql.SQL("DROP TABLE IF EXISTS {} CASCADE").format(_name(table.name)))
            for table in tables:
                _copy_table(lite, pg, table)
            # Keys after the rows (faster, and tables can be copied in any order); a foreign key
            # needs the primary key it references, so those come first.
            for table in tables:
                _add_primary_key(pg, table)
            for table in tables:
                _add_foreign_keys(pg, table)
            pg.execute("ANALYZE")
    finally:
        lite.close()
    return [pg_name(t.name) for t in tables]


def _copy_table(lite: sqlite3.Connection, pg: psycopg.Connection, table: SourceTable) -> None:
    parts = [sql.SQL("{} {}{}").format(_name(c.name), sql.SQL(_PG_TYPES[c.affinity]),
                                       sql.SQL(" NOT NULL" if c.not_null else "")) for c in table.columns]
    pg.execute(sql.SQL("CREATE TABLE {} ({})").format(_name(table.name), sql.SQL(", ").join(parts)))
    copy = sql.SQL("COPY {} ({}) FROM STDIN").format(
        _name(table.name), sql.SQL(", ").join(_name(c.name) for c in table.columns))
    with pg.cursor().copy(copy) as writer:
        for row in rows(lite, table):
            writer.write_row(row)


def _add_primary_key(pg: psycopg.Connection, table: SourceTable) -> None:
    if table.primary_key:
        _try(pg, sql.SQL("ALTER TABLE {} ADD PRIMARY KEY ({})").format(
            _name(table.name), sql.SQL(", ").join(map(_name, table.primary_key))), f"primary key of {table.name}")


def _add_foreign_keys(pg: psycopg.Connection, table: SourceTable) -> None:
    for key in table.foreign_keys:
        for column, target in zip(key.columns, key.ref_columns):
            mine, theirs = _column_type(pg, table.name, column), _column_type(pg, key.ref_table, target)
            if mine == "text" and theirs not in (None, "text"):
                # SQLite compares a text column with a numeric one as numbers (affinity); converted,
                # the same values join in PostgreSQL too, and the key can be declared.
                _try(pg, sql.SQL("ALTER TABLE {} ALTER COLUMN {c} TYPE {t} USING {c}::{t}").format(
                    _name(table.name), c=_name(column), t=sql.SQL(theirs)),
                    f"conversion of {table.name}.{column} to {theirs}")
        _try(pg, sql.SQL("ALTER TABLE {} ADD FOREIGN KEY ({}) REFERENCES {} ({}) NOT VALID").format(
            _name(table.name), sql.SQL(", ").join(map(_name, key.columns)), _name(key.ref_table),
            sql.SQL(", ").join(map(_name, key.ref_columns))),
            f"foreign key {table.name}({', '.join(key.columns)}) -> {key.ref_table}")


def _column_type(pg: psycopg.Connection, table: str, column: str) -> str | None:
    row = pg.execute("SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
                     " WHERE attrelid = to_regclass(quote_ident(%s)) AND attname = %s AND attnum > 0",
                     (pg_name(table), pg_name(column))).fetchone()
    return row[0] if row else None


def _try(pg: psycopg.Connection, statement: sql.Composed, what: str) -> None:
    """Run `statement` in a savepoint; a refusal leaves it out with a warning, not the whole copy."""
    try:
        with pg.transaction():
            pg.execute(statement)
    except psycopg.Error as e:
        logger.warning("left out the %s: %s", what, (e.diag.message_primary or str(e)).strip())


def _name(name: str) -> sql.Identifier:
    return sql.Identifier(pg_name(name))


if __name__ == "__main__":
    sys.exit(copy_command(sys.argv[1:], copy_database, "python -m sample_db.to_postgres SQLITE_FILE POSTGRESQL_URL"))
