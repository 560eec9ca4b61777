"""Copy a SQLite database's tables into PostgreSQL: the sample database as a PostgreSQL source.

Each table becomes a PostgreSQL table with types from SQLite's affinity rules (INTEGER
-> bigint, REAL -> double precision, BLOB -> bytea, NUMERIC -> numeric, else text),
the same primary keys and foreign keys, and its rows copied with COPY. Dates the
SQLite file keeps as text stay text, so the same queries give the same answers.

    python -m sample_db.to_postgres sample_db/aerospace.db postgresql://user@host/askdb_sample
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import psycopg
from psycopg import sql


def pg_type(declared: str) -> str:
    """The PostgreSQL type for a SQLite declared type (https://www.sqlite.org/datatype3.html, 3.1)."""
    t = declared.upper()
    if "INT" in t:
        return "bigint"
    if any(k in t for k in ("CHAR", "CLOB", "TEXT")) or not t:
        return "text"
    if "BLOB" in t:
        return "bytea"
    if any(k in t for k in ("REAL", "FLOA", "DOUB")):
        return "double precision"
    return "numeric"


def copy_database(source: str | Path, url: str, *, replace: bool = False) -> list[str]:
    """Create every table of `source` in the database at `url` and copy its rows; return the table names.

    Args:
        replace: drop tables of the same names first.
    """
    lite = sqlite3.connect(f"file:{Path(source).resolve()}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in lite.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
            " ORDER BY rowid")]
        with psycopg.connect(url) as pg:
            if replace:
                for table in reversed(tables):
                    pg.execute(sql.SQL("DROP TABLE IF EXISTS {} CASCADE").format(sql.Identifier(table)))
            for table in tables:
                columns = lite.execute("SELECT name, type, \"notnull\", pk FROM pragma_table_info(?) ORDER BY cid",
                                       (table,)).fetchall()
                keys = [c[0] for c in sorted((c for c in columns if c[3]), key=lambda c: c[3])]
                parts = [sql.SQL("{} {}{}").format(sql.Identifier(name), sql.SQL(pg_type(declared or "")),
                                                   sql.SQL(" NOT NULL" if not_null else ""))
                         for name, declared, not_null, _ in columns]
                if keys:
                    parts.append(sql.SQL("PRIMARY KEY ({})").format(sql.SQL(", ").join(map(sql.Identifier, keys))))
                pg.execute(sql.SQL("CREATE TABLE {} ({})").format(sql.Identifier(table), sql.SQL(", ").join(parts)))
                names = [sql.Identifier(c[0]) for c in columns]
                copy = sql.SQL("COPY {} ({}) FROM STDIN").format(sql.Identifier(table), sql.SQL(", ").join(names))
                with pg.cursor().copy(copy) as writer:
                    quoted = ", ".join(_quote(c[0]) for c in columns)
                    for row in lite.execute(f"SELECT {quoted} FROM {_quote(table)}"):
                        writer.write_row(row)
            # Foreign keys last, so tables can be copied in any order.
            for table in tables:
                for ref_table, column, ref_column in lite.execute(
                        'SELECT "table", "from", "to" FROM pragma_foreign_key_list(?)', (table,)):
                    pg.execute(sql.SQL("ALTER TABLE {} ADD FOREIGN KEY ({}) REFERENCES {} ({})").format(
                        sql.Identifier(table), sql.Identifier(column), sql.Identifier(ref_table),
                        sql.Identifier(ref_column or "id")))
            pg.execute("ANALYZE")
    finally:
        lite.close()
    return tables


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m sample_db.to_postgres SQLITE_FILE POSTGRESQL_URL", file=sys.stderr)
        return 2
    tables = copy_database(argv[0], argv[1], replace=True)
    print(f"copied {len(tables)} tables: {', '.join(tables)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
