"""What the copies into other engines read from a SQLite file: tables, column affinities, keys, rows.

`sample_db.to_postgres`, `sample_db.to_mysql` and `sample_db.to_duckdb` each map the
affinities below to their engine's types; the SQLite side is read once, here.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class SourceColumn:
    name: str
    affinity: str  # "integer", "real", "text", "blob" or "numeric", widened to the values held
    not_null: bool
    max_length: int  # longest text value in characters (0 when none): engines that size key columns need it


@dataclass
class SourceForeignKey:
    columns: list[str]
    ref_table: str
    ref_columns: list[str]


@dataclass
class SourceTable:
    name: str
    columns: list[SourceColumn]
    primary_key: list[str]
    foreign_keys: list[SourceForeignKey] = field(default_factory=list)


def affinity(declared: str, stored: set[str] | frozenset[str] = frozenset()) -> str:
    """The affinity of a SQLite declared type (https://www.sqlite.org/datatype3.html, 3.1), widened.

    Args:
        stored: the storage classes the column's values have (`typeof`): SQLite keeps what its
            affinity cannot convert ('F' in a BOOLEAN column, '2005-11-12 07:09:48' in a DATETIME
            one, 2.5 in an INTEGER one), so the type widens to hold them.
    """
    t = declared.upper()
    if "INT" in t:
        found = "integer"
    elif any(k in t for k in ("CHAR", "CLOB", "TEXT")) or not t:
        found = "text"
    elif "BLOB" in t:
        found = "blob"
    elif any(k in t for k in ("REAL", "FLOA", "DOUB")):
        found = "real"
    else:
        found = "numeric"
    if "text" in stored and found != "text":
        return "text"
    if "real" in stored and found == "integer":
        return "real"
    return found


def open_sqlite(path: str | Path) -> sqlite3.Connection:
    """The file read-only; text that is not UTF-8 is read with replacement characters."""
    lite = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)
    lite.text_factory = lambda b: b.decode("utf-8", "replace")
    return lite


def table_names(lite: sqlite3.Connection) -> list[str]:
    """User tables in the order they were created."""
    return [r[0] for r in lite.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
        " ORDER BY rowid")]


def primary_key(lite: sqlite3.Connection, table: str) -> list[str]:
    return [r[0] for r in lite.execute("SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk", (table,))]


def read_table(lite: sqlite3.Connection, table: str) -> SourceTable:
    """A table's columns (one scan for their storage classes and text lengths) and keys.

    A foreign key without target columns refers to the parent's primary key, as in SQLite.
    """
    info = lite.execute('SELECT name, type, "notnull" FROM pragma_table_info(?) ORDER BY cid', (table,)).fetchall()
    scans = ", ".join(f"group_concat(DISTINCT typeof({quote(c[0])})), max(length(CAST({quote(c[0])} AS TEXT)))"
                      for c in info)
    found = lite.execute(f"SELECT {scans} FROM {quote(table)}").fetchone()
    columns = [SourceColumn(name=name, affinity=affinity(declared or "", set((found[2 * i] or "").split(","))),
                            not_null=bool(not_null), max_length=found[2 * i + 1] or 0)
               for i, (name, declared, not_null) in enumerate(info)]
    references: dict[int, list[tuple[str, str, str | None]]] = {}
    for key_id, ref_table, column, ref_column in lite.execute(
            'SELECT id, "table", "from", "to" FROM pragma_foreign_key_list(?) ORDER BY id, seq', (table,)):
        references.setdefault(key_id, []).append((ref_table, column, ref_column))
    keys = []
    for parts in references.values():
        targets = [p[2] for p in parts] if all(p[2] for p in parts) else primary_key(lite, parts[0][0])
        keys.append(SourceForeignKey(columns=[p[1] for p in parts], ref_table=parts[0][0], ref_columns=targets))
    return SourceTable(name=table, columns=columns, primary_key=primary_key(lite, table), foreign_keys=keys)


def read_tables(lite: sqlite3.Connection) -> list[SourceTable]:
    return [read_table(lite, name) for name in table_names(lite)]


def rows(lite: sqlite3.Connection, table: SourceTable) -> Iterator[tuple]:
    yield from lite.execute(f"SELECT {', '.join(quote(c.name) for c in table.columns)} FROM {quote(table.name)}")


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def copy_command(argv: list[str], copy_database: Callable[..., list[str]], usage: str) -> int:
    """A copy module's command line: copy SQLITE_FILE to the target, replacing its tables, and say what."""
    if len(argv) != 2:
        print(f"usage: {usage}", file=sys.stderr)
        return 2
    tables = copy_database(argv[0], argv[1], replace=True)
    print(f"copied {len(tables)} tables: {', '.join(tables)}")
    return 0
