"""A user's own files as tables: CSV, TSV, Parquet and Excel loaded into that user's DuckDB file.

Each user has one file, `<ASKDB_UPLOADS_DIR>/<hash of the user id>.duckdb`, which askdb reads as
any DuckDB source (agent/sources/duckdb.py: read-only and locked). A change never writes that
file in place: it is copied, the copy changed, and the copy moved over the original (DuckDB lets
no one write a file while askdb reads it; the source opens the new file at its next query). A
file that cannot be read whole changes nothing.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from agent.sources.base import quote_identifier
from agent.sources.errors import SourceError

KINDS = {".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".xlsx": "excel"}
ENCODINGS = ("utf-8-sig", "gb18030")  # UTF-8 (with a BOM or without), then GBK's superset


class UploadRejected(SourceError):
    """The file cannot become a table: too large, of another kind, malformed (the message says
    where), or its name is taken."""


@dataclass
class LoadedTable:
    name: str
    columns: list[tuple[str, str]]  # each column's name and type, as DuckDB inferred it
    rows: int


def uploads_path(uploads_dir: Path, user_id: str) -> Path:
    """The DuckDB file of `user_id`'s tables (the id hashed, so any id is a safe file name)."""
    return Path(uploads_dir) / f"{hashlib.sha256(user_id.encode()).hexdigest()[:24]}.duckdb"


def table_name(requested: str | None, file: Path) -> str:
    """The table's name: as requested, else the file's stem; runs of characters other than letters
    (any script), digits and _ become one _."""
    name = re.sub(r"\W+", "_", requested or file.stem).strip("_")
    if not name:
        raise UploadRejected("the table needs a name with a letter or digit in it; pass --table NAME")
    return f"t_{name}" if name[0].isdigit() else name


def add_table(target: Path, file: Path, *, table: str | None = None, max_bytes: int,
              replace: bool = False) -> LoadedTable:
    """Load `file` as one table of the DuckDB file `target` (created when missing).

    Raises:
        UploadRejected: too large, not CSV/TSV/Parquet/Excel, malformed, or the name taken
            (without `replace`).
    """
    file = Path(file)
    kind = KINDS.get(file.suffix.lower())
    if kind is None:
        raise UploadRejected(f"{file.name}: not a CSV, TSV, Parquet or Excel (.xlsx) file")
    if (size := file.stat().st_size) > max_bytes:
        raise UploadRejected(f"{file.name} has {size} bytes; the limit is {max_bytes} (ASKDB_MAX_UPLOAD_BYTES)")
    name = table_name(table, file)
    with _changing(target) as (duck, scratch):
        if (existing := _existing(duck, name)) is not None and not replace:
            raise UploadRejected(f"a table named {existing} exists; choose another name or replace it")
        reader, parameters = _reader(file, kind, scratch)
        try:
            duck.execute(f"CREATE OR REPLACE TABLE {quote_identifier(name)} AS SELECT * FROM {reader}", parameters)
        except duckdb.Error as e:
            raise UploadRejected(f"{file.name}: {_reason(e)}") from None
        return _loaded(duck, name)


def list_tables(target: Path) -> list[LoadedTable]:
    """The tables of the DuckDB file `target` (none when it does not exist yet)."""
    if not target.exists():
        return []
    with duckdb.connect(str(target), read_only=True) as duck:
        return [_loaded(duck, name) for name in _tables(duck)]


def remove_table(target: Path, name: str) -> None:
    """Delete one table.

    Raises:
        UploadRejected: no table of that name.
    """
    with _changing(target) as (duck, _):
        existing = _existing(duck, name)
        if existing is None:
            raise UploadRejected(f"no table named {name}")
        duck.execute(f"DROP TABLE {quote_identifier(existing)}")


@contextmanager
def _changing(target: Path) -> Iterator[tuple[duckdb.DuckDBPyConnection, Path]]:
    """A writable copy of `target` and a scratch directory; the copy replaces `target` only when the
    block ends without an error."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="askdb-upload-", dir=target.parent) as scratch:
        copy = Path(scratch) / "next.duckdb"
        if target.exists():
            shutil.copyfile(target, copy)
        with duckdb.connect(str(copy)) as duck:
            yield duck, Path(scratch)
            duck.execute("CHECKPOINT")
        copy.replace(target)


def _existing(duck: duckdb.DuckDBPyConnection, name: str) -> str | None:
    """The table `name` stands for: DuckDB's names ignore case, even quoted ("Sales" is "sales")."""
    return next((t for t in _tables(duck) if t.lower() == name.lower()), None)


def _loaded(duck: duckdb.DuckDBPyConnection, name: str) -> LoadedTable:
    columns = duck.execute("SELECT column_name, data_type FROM information_schema.columns"
                           " WHERE lower(table_name) = lower(?) ORDER BY ordinal_position", [name]).fetchall()
    (rows,) = duck.execute(f"SELECT count(*) FROM {quote_identifier(name)}").fetchone()
    return LoadedTable(name=name, columns=columns, rows=rows)


def _tables(duck: duckdb.DuckDBPyConnection) -> list[str]:
    return [r[0] for r in duck.execute("SELECT table_name FROM information_schema.tables"
                                       " WHERE table_schema = 'main' ORDER BY table_name").fetchall()]


def _reader(file: Path, kind: str, scratch: Path) -> tuple[str, list]:
    """The table function that reads the file, and its parameters."""
    if kind == "parquet":
        return "read_parquet(?)", [str(file)]
    if kind == "excel":
        return "read_json(?, format = 'newline_delimited')", [str(_excel_as_json(file, scratch))]
    text = _utf8(file, scratch)
    delimiter = "\t" if kind == "tsv" else ","
    _check_rows(text, file.name, delimiter)
    return "read_csv(?, delim = ?, sample_size = -1)", [str(text), delimiter]


def _utf8(file: Path, scratch: Path) -> Path:
    """The text file as UTF-8 without a BOM (what DuckDB reads): GBK is decoded and written again."""
    data = file.read_bytes()
    for encoding in ENCODINGS:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if encoding == "utf-8-sig" and not data.startswith(b"\xef\xbb\xbf"):
            return file
        copy = scratch / "utf8.txt"
        copy.write_text(text, encoding="utf-8")
        return copy
    raise UploadRejected(f"{file.name}: the text is neither UTF-8 nor GBK")


def _check_rows(path: Path, label: str, delimiter: str) -> None:
    """Every row has the header's number of fields; else say which line does not (DuckDB's own
    error names no line when it cannot tell the file's dialect)."""
    with path.open(encoding="utf-8", newline="") as text:
        reader = csv.reader(text, delimiter=delimiter)
        header = next(reader, None)
        if not header:
            raise UploadRejected(f"{label} is empty")
        for row in reader:
            if row and len(row) != len(header):
                raise UploadRejected(f"{label}, line {reader.line_num}: {len(row)} fields where the first line "
                                     f"has {len(header)}")


def _excel_as_json(file: Path, scratch: Path) -> Path:
    """The first sheet, its first row the column names, as JSON lines DuckDB reads with its types."""
    import openpyxl

    try:
        book = openpyxl.load_workbook(file, read_only=True, data_only=True)
    except Exception as e:  # noqa: BLE001 - openpyxl raises many kinds for a file that is not a workbook
        raise UploadRejected(f"{file.name}: not a readable Excel workbook ({type(e).__name__})") from None
    try:
        rows = book.worksheets[0].iter_rows(values_only=True)
        header = [str(v) if v is not None else f"column{i}" for i, v in enumerate(next(rows, ()))]
        if not header:
            raise UploadRejected(f"{file.name}: the first sheet is empty")
        lines = scratch / "sheet.json"
        with lines.open("w", encoding="utf-8") as out:
            for row in rows:
                if any(v is not None for v in row):
                    out.write(json.dumps(dict(zip(header, row)), ensure_ascii=False, default=_json_value) + "\n")
        return lines
    finally:
        book.close()


def _json_value(value: object) -> str:
    return value.isoformat() if isinstance(value, (dt.date, dt.time, dt.datetime)) else str(value)


def _reason(e: duckdb.Error) -> str:
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    return " ".join(lines[:2])[:300]
