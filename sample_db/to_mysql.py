"""Copy a SQLite database's tables into MySQL or MariaDB: the sample database as a MySQL source.

Each table becomes an InnoDB table in utf8mb4 with types from SQLite's affinity rules
(`sample_db.sqlite_tables.affinity`: INTEGER -> BIGINT, REAL and NUMERIC -> DOUBLE, as SQLite
stores them, BLOB -> LONGBLOB, else LONGTEXT), with the same names, primary keys and foreign
keys. A text column in a key becomes VARCHAR, which InnoDB can index. Rows go over in batches
of multi-row INSERTs (PyMySQL's `executemany`). Dates the SQLite file keeps as text stay text,
so the same queries give the same answers.

    python -m sample_db.to_mysql sample_db/aerospace.db mysql://root@127.0.0.1:3306/askdb_sample
"""

from __future__ import annotations

import itertools
import logging
import sqlite3
import sys
from pathlib import Path

import pymysql

from agent.sources.mysql import connect_args
from sample_db.sqlite_tables import SourceTable, copy_command, open_sqlite, read_tables, rows

logger = logging.getLogger(__name__)
_MYSQL_TYPES = {"integer": "BIGINT", "real": "DOUBLE", "numeric": "DOUBLE", "text": "LONGTEXT", "blob": "LONGBLOB"}
# InnoDB indexes at most 3072 bytes of a key, 768 characters of utf8mb4.
_KEY_CHARS = (255, 768)
BATCH_ROWS = 1000


def mysql_type(table: SourceTable, column_name: str, key_columns: set[str]) -> str:
    """The MySQL type of one column; text in a key is VARCHAR when its longest value fits an index."""
    column = next(c for c in table.columns if c.name == column_name)
    if column.affinity == "text" and column_name in key_columns:
        fitting = [n for n in _KEY_CHARS if column.max_length <= n]
        if fitting:
            return f"VARCHAR({fitting[0]})"
    return _MYSQL_TYPES[column.affinity]


def copy_database(source: str | Path, url: str, *, replace: bool = False) -> list[str]:
    """Create every table of `source` in the database of `url` and copy its rows; return the table names.

    A key MySQL refuses is left out with a warning: a primary key over NULLs or duplicates
    (SQLite allows them), a foreign key to columns that are not a key or of another type. Foreign
    keys are added with checks off, as SQLite does not enforce them and real files break some.

    Args:
        replace: drop tables of the same names first.
    """
    lite = open_sqlite(source)
    try:
        tables = read_tables(lite)
        with pymysql.connect(**connect_args(url), autocommit=True) as conn, conn.cursor() as cursor:
            cursor.execute("SET SESSION foreign_key_checks = 0")
            if replace:
                for table in reversed(tables):
                    cursor.execute(f"DROP TABLE IF EXISTS {quote(table.name)}")
            keyed = _key_columns(tables)
            for table in tables:
                _copy_table(lite, cursor, table, keyed.get(table.name, set()))
            for table in tables:
                _add_keys(cursor, table)
    finally:
        lite.close()
    return [t.name for t in tables]


def _key_columns(tables: list[SourceTable]) -> dict[str, set[str]]:
    """Per table, the columns in a primary or foreign key, on either side of a reference."""
    keyed: dict[str, set[str]] = {t.name: set(t.primary_key) for t in tables}
    for table in tables:
        for key in table.foreign_keys:
            keyed[table.name].update(key.columns)
            keyed.setdefault(key.ref_table, set()).update(key.ref_columns)
    return keyed


def _copy_table(lite: sqlite3.Connection, cursor, table: SourceTable, keyed: set[str]) -> None:
    parts = [f"{quote(c.name)} {mysql_type(table, c.name, keyed)}{' NOT NULL' if c.not_null else ''}"
             for c in table.columns]
    cursor.execute(f"CREATE TABLE {quote(table.name)} ({', '.join(parts)})"
                   " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4")
    insert = (f"INSERT INTO {quote(table.name)} ({', '.join(quote(c.name) for c in table.columns)})"
              f" VALUES ({', '.join(['%s'] * len(table.columns))})")
    source = rows(lite, table)
    while batch := list(itertools.islice(source, BATCH_ROWS)):
        cursor.executemany(insert, batch)


def _add_keys(cursor, table: SourceTable) -> None:
    if table.primary_key:
        _try(cursor, f"ALTER TABLE {quote(table.name)} ADD PRIMARY KEY ({', '.join(map(quote, table.primary_key))})",
             f"primary key of {table.name}")
    for key in table.foreign_keys:
        _try(cursor, f"ALTER TABLE {quote(table.name)} ADD FOREIGN KEY ({', '.join(map(quote, key.columns))})"
                     f" REFERENCES {quote(key.ref_table)} ({', '.join(map(quote, key.ref_columns))})",
             f"foreign key {table.name}({', '.join(key.columns)}) -> {key.ref_table}")


def _try(cursor, statement: str, what: str) -> None:
    """Run `statement`; a refusal leaves it out with a warning, not the whole copy."""
    try:
        cursor.execute(statement)
    except pymysql.MySQLError as e:
        logger.warning("left out the %s: %s", what, e.args[-1] if e.args else e)


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


if __name__ == "__main__":
    sys.exit(copy_command(sys.argv[1:], copy_database, "python -m sample_db.to_mysql SQLITE_FILE MYSQL_URL"))
