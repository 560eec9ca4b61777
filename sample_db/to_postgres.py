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

logger = logging.getLogger(__name__)
# Between a lower-case letter or digit and a capital, and before the last capital of a run that
# starts a word: PetType -> Pet_Type, StuID -> Stu_ID, GNPOld -> GNP_Old.
_WORD_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def pg_name(name: str) -> str:
    """A SQLite name as this copy names it in PostgreSQL: snake_case in lower case (PetType ->
    pet_type, StuID -> stu_id, launch_date stays). SQLite's names ignore case and PostgreSQL folds
    an unquoted name to lower case, so queries need no quotes; the underscores keep the words
    apart, for people and for the offline planner, which matches a question's words to them."""
    return _WORD_BOUNDARY.sub("_", name).lower()


def pg_type(declared: str, stored: set[str] | frozenset[str] = frozenset()) -> str:
    """The PostgreSQL type for a SQLite declared type (https://www.sqlite.org/datatype3.html, 3.1).

    Args:
        stored: the storage classes the column's values have (`typeof`): SQLite keeps what its
            affinity cannot convert ('F' in a BOOLEAN column, '2005-11-12 07:09:48' in a DATETIME
            one, 2.5 in an INTEGER one), so the type widens to hold them.
    """
    t = declared.upper()
    if "INT" in t:
        affinity = "bigint"
    elif any(k in t for k in ("CHAR", "CLOB", "TEXT")) or not t:
        affinity = "text"
    elif "BLOB" in t:
        affinity = "bytea"
    elif any(k in t for k in ("REAL", "FLOA", "DOUB")):
        affinity = "double precision"
    else:
        affinity = "numeric"
    if "text" in stored and affinity != "text":
        return "text"
    if "real" in stored and affinity == "bigint":
        return "double precision"
    return affinity


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
    lite = sqlite3.connect(f"file:{Path(source).resolve()}?mode=ro", uri=True)
    lite.text_factory = lambda b: b.decode("utf-8", "replace")
    try:
        tables = [r[0] for r in lite.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
            " ORDER BY rowid")]
        with psycopg.connect(url) as pg:
            if replace:
                for table in reversed(tables):
                    pg.execute(sql.SQL("DROP TABLE IF EXISTS {} CASCADE").format(_name(table)))
            for table in tables:
                _copy_table(lite, pg, table)
            # Keys after the rows (faster, and tables can be copied in any order); a foreign key
            # needs the primary key it references, so those come first.
            for table in tables:
                _add_primary_key(lite, pg, table)
            for table in tables:
                _add_foreign_keys(lite, pg, table)
            pg.execute("ANALYZE")
    finally:
        lite.close()
    return [pg_name(t) for t in tables]


def _copy_table(lite: sqlite3.Connection, pg: psycopg.Connection, table: str) -> None:
    info = lite.execute('SELECT name, type, "notnull" FROM pragma_table_info(?) ORDER BY cid', (table,)).fetchall()
    columns = [c[0] for c in info]
    # One scan for the storage classes of every column.
    stored = lite.execute("SELECT " + ", ".join(f"group_concat(DISTINCT typeof({_quote(c)}))" for c in columns)
                          + f" FROM {_quote(table)}").fetchone()
    parts = [sql.SQL("{} {}{}").format(_name(name), sql.SQL(pg_type(declared or "", set((kinds or "").split(",")))),
                                       sql.SQL(" NOT NULL" if not_null else ""))
             for (name, declared, not_null), kinds in zip(info, stored)]
    pg.execute(sql.SQL("CREATE TABLE {} ({})").format(_name(table), sql.SQL(", ").join(parts)))
    copy = sql.SQL("COPY {} ({}) FROM STDIN").format(_name(table), sql.SQL(", ").join(map(_name, columns)))
    with pg.cursor().copy(copy) as writer:
        for row in lite.execute(f"SELECT {', '.join(map(_quote, columns))} FROM {_quote(table)}"):
            writer.write_row(row)


def _primary_key(lite: sqlite3.Connection, table: str) -> list[str]:
    return [r[0] for r in lite.execute("SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk", (table,))]


def _add_primary_key(lite: sqlite3.Connection, pg: psycopg.Connection, table: str) -> None:
    if keys := _primary_key(lite, table):
        _try(pg, sql.SQL("ALTER TABLE {} ADD PRIMARY KEY ({})").format(
            _name(table), sql.SQL(", ").join(map(_name, keys))), f"primary key of {table}")


def _add_foreign_keys(lite: sqlite3.Connection, pg: psycopg.Connection, table: str) -> None:
    references: dict[int, list[tuple[str, str, str | None]]] = {}
    for key_id, ref_table, column, ref_column in lite.execute(
            'SELECT id, "table", "from", "to" FROM pragma_foreign_key_list(?) ORDER BY id, seq', (table,)):
        references.setdefault(key_id, []).append((ref_table, column, ref_column))
    for parts in references.values():
        ref_table = parts[0][0]
        # No target column means the parent's primary key, as in SQLite.
        targets = [p[2] for p in parts] if all(p[2] for p in parts) else _primary_key(lite, ref_table)
        for (_, column, _), target in zip(parts, targets):
            mine, theirs = _column_type(pg, table, column), _column_type(pg, ref_table, target)
            if mine == "text" and theirs not in (None, "text"):
                # SQLite compares a text column with a numeric one as numbers (affinity); converted,
                # the same values join in PostgreSQL too, and the key can be declared.
                _try(pg, sql.SQL("ALTER TABLE {} ALTER COLUMN {c} TYPE {t} USING {c}::{t}").format(
                    _name(table), c=_name(column), t=sql.SQL(theirs)), f"conversion of {table}.{column} to {theirs}")
        _try(pg, sql.SQL("ALTER TABLE {} ADD FOREIGN KEY ({}) REFERENCES {} ({}) NOT VALID").format(
            _name(table), sql.SQL(", ").join(_name(p[1]) for p in parts), _name(ref_table),
            sql.SQL(", ").join(map(_name, targets))),
            f"foreign key {table}({', '.join(p[1] for p in parts)}) -> {ref_table}")


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
