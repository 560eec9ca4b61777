"""Reading one uploaded file for DuckDB: its kind, its text's encoding, whether its first line
names the columns, and the table function that reads it (agent/sources/uploads.py loads it).

Every refusal is an `UploadRejected` whose message template and values travel apart, so a page
can say it in the reader's language (app/i18n.py) and the CLI in English.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

import duckdb

from agent.sources.errors import SourceError

KINDS = {".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".xlsx": "excel"}
# What one upload may expand to, checked before or while it is read (issue 39, item 2: a 1 MB .xlsx
# whose shared string expands to 1 GB took the server to 3.8 GB; a 3 KB one referencing a large
# string from many cells wrote 3 GB; an 800 KB CSV of 200,000 columns took 3.2 GB and 200 s).
MAX_COLUMNS = 1_000
MAX_FIELD_CHARS = 131_072  # one CSV field or Excel cell (Python's csv module's own limit)
MAX_LINE_BYTES = 2_000_000  # one CSV line (DuckDB's max_line_size)
MAX_XLSX_MEMBER_BYTES = 200 << 20  # one part of the workbook, unzipped
MAX_XLSX_EXPANDED_BYTES = 400 << 20  # the whole workbook, unzipped
_FOLDERS = re.compile(r"(/[^\s\"']+)+/")
MAX_SHEET_BYTES = 512 << 20  # the rows a sheet becomes (sheet.json)
ENCODINGS = (("utf-8-sig", "UTF-8"), ("gb18030", "GBK"))  # UTF-8 (with a BOM or without), then GBK's superset


class UploadRejected(SourceError):
    """The file cannot become a table: too large, of another kind, malformed (the message says
    where), or its name is taken or empty. `template` and `values` make the message."""

    def __init__(self, template: str, **values: object) -> None:
        super().__init__(template.format(**values))
        self.template, self.values = template, values


class UploadTooLarge(UploadRejected):
    """The file, or what it expands to, is past a limit: ASKDB_MAX_UPLOAD_BYTES, columns, a field's or a
    line's length, an Excel workbook's unzipped size, or the user's quota (413 on the page)."""


class TablesUnreadable(UploadRejected):
    """The user's own tables file cannot be opened (damaged): the page offers to set it aside."""


class UploadNotFound(UploadRejected):
    """No such table, or no such pending upload, of this user."""


@dataclass
class FileReader:
    """How DuckDB reads one file, and what was found out on the way."""

    sql: str  # a table function with `?` parameters, to put after FROM
    parameters: list
    encoding: str | None  # "UTF-8" or "GBK" for text; None for Parquet and Excel
    header: bool | None  # the first line (row) names the columns; None for Parquet (its own names)


def file_kind(file: Path) -> str:
    """csv, tsv, parquet or excel, by the file's extension.

    Raises:
        UploadRejected: any other extension.
    """
    kind = KINDS.get(file.suffix.lower())
    if kind is None:
        raise UploadRejected("{file}: not a CSV, TSV, Parquet or Excel (.xlsx) file", file=file.name)
    return kind


def check_size(file: Path, max_bytes: int) -> None:
    """Refuse a file over `max_bytes` (ASKDB_MAX_UPLOAD_BYTES)."""
    if (size := file.stat().st_size) > max_bytes:
        raise UploadTooLarge("{file} has {size} bytes; the limit is {limit} (ASKDB_MAX_UPLOAD_BYTES)",
                             file=file.name, size=size, limit=max_bytes)


def open_reader(duck: duckdb.DuckDBPyConnection, file: Path, scratch: Path, *,
                header: bool | None = None) -> FileReader:
    """The table function that reads `file`; text is checked line by line first.

    Args:
        duck: a connection to sniff a CSV's header with.
        scratch: a directory for the file's UTF-8 copy or an Excel sheet's rows.
        header: whether the first line names the columns; None: a CSV's is detected (DuckDB's
            sniffer), an Excel sheet's first row is taken as the header.
    """
    kind = file_kind(file)
    if kind == "parquet":
        return FileReader("read_parquet(?)", [str(file)], encoding=None, header=None)
    if kind == "excel":
        header = True if header is None else header
        rows = _excel_as_json(file, scratch, header=header)
        return FileReader("read_json(?, format = 'newline_delimited')", [str(rows)], encoding=None, header=header)
    text, encoding = _utf8(file, scratch)
    delimiter = "\t" if kind == "tsv" else ","
    _check_rows(text, file.name, delimiter)
    if header is None:
        try:
            (header,) = duck.execute("SELECT HasHeader FROM sniff_csv(?, delim = ?, sample_size = -1)",
                                     [str(text), delimiter]).fetchone()
        except duckdb.Error as e:
            raise read_failure(file, e) from None
    return FileReader("read_csv(?, delim = ?, header = ?, sample_size = -1)", [str(text), delimiter, bool(header)],
                      encoding=encoding, header=bool(header))


def read_failure(file: Path, error: duckdb.Error) -> UploadRejected:
    """DuckDB's reason a file would not load, short (its first two lines), naming no folder: the
    server's paths are not the user's business."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return UploadRejected("{file}: {reason}", file=file.name, reason=without_paths(" ".join(lines[:2]))[:300])


def without_paths(text: str) -> str:
    """`text` with every absolute path cut to its last part: the server's folders are not the user's
    business (a Parquet error quoted the pending upload's whole path)."""
    return _FOLDERS.sub("", text)


def _utf8(file: Path, scratch: Path) -> tuple[Path, str]:
    """The text file as UTF-8 without a BOM (what DuckDB reads), and the encoding it was in: GBK is
    decoded and written again."""
    data = file.read_bytes()
    for encoding, label in ENCODINGS:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if encoding == "utf-8-sig" and not data.startswith(b"\xef\xbb\xbf"):
            return file, label
        copy = scratch / "utf8.txt"
        copy.write_text(text, encoding="utf-8")
        return copy, label
    raise UploadRejected("{file}: the text is neither UTF-8 nor GBK", file=file.name)


def _check_rows(path: Path, label: str, delimiter: str) -> None:
    """Every row has the first line's number of fields; else say which line does not (DuckDB's
    own error names no line when it cannot tell the file's dialect)."""
    with path.open(encoding="utf-8", newline="") as text:
        reader = csv.reader(text, delimiter=delimiter)
        try:
            first = next(reader, None)
            if not first:
                raise UploadRejected("{file} is empty", file=label)
            check_columns(label, len(first))
            for row in reader:
                if row and len(row) != len(first):
                    raise UploadRejected("{file}, line {line}: {found} fields where the first line has {expected}",
                                         file=label, line=reader.line_num, found=len(row), expected=len(first))
                if sum(len(field) for field in row) > MAX_LINE_BYTES:
                    raise UploadTooLarge("{file}, line {line}: longer than {limit:,} characters",
                                         file=label, line=reader.line_num, limit=MAX_LINE_BYTES)
        except csv.Error:  # a field past MAX_FIELD_CHARS (the csv module's field_size_limit)
            raise UploadTooLarge("{file}, line {line}: a field longer than {limit:,} characters",
                                 file=label, line=reader.line_num, limit=MAX_FIELD_CHARS) from None


def check_columns(label: str, count: int) -> None:
    """Refuse more than MAX_COLUMNS columns."""
    if count > MAX_COLUMNS:
        raise UploadTooLarge("{file} has {count:,} columns; at most {limit:,}", file=label, count=count,
                             limit=MAX_COLUMNS)


def check_workbook(file: Path) -> None:
    """Refuse a workbook whose parts unzip past MAX_XLSX_MEMBER_BYTES each or MAX_XLSX_EXPANDED_BYTES in
    all, from the zip's own directory, before any part is parsed.

    Raises:
        UploadRejected: too large unzipped, or not a zip file at all.
    """
    try:
        with zipfile.ZipFile(file) as workbook:
            sizes = [member.file_size for member in workbook.infolist()]
    except (zipfile.BadZipFile, OSError):
        raise UploadRejected("{file}: not a readable Excel workbook ({kind})", file=file.name,
                             kind="BadZipFile") from None
    if max(sizes, default=0) > MAX_XLSX_MEMBER_BYTES:
        raise UploadTooLarge("{file} has a part that unzips to {size:,} bytes; at most {limit:,}: save the sheet "
                             "as CSV", file=file.name, size=max(sizes), limit=MAX_XLSX_MEMBER_BYTES)
    if sum(sizes) > MAX_XLSX_EXPANDED_BYTES:
        raise UploadTooLarge("{file} unzips to {size:,} bytes; at most {limit:,}: save the sheet as CSV",
                             file=file.name, size=sum(sizes), limit=MAX_XLSX_EXPANDED_BYTES)


def _excel_as_json(file: Path, scratch: Path, *, header: bool) -> Path:
    """The first sheet as JSON lines DuckDB reads with its types; its first row the column names
    when `header`, else columns column0, column1, ..."""
    import openpyxl

    check_workbook(file)
    try:
        book = openpyxl.load_workbook(file, read_only=True, data_only=True)
    except Exception as e:  # noqa: BLE001 - openpyxl raises many kinds for a file that is not a workbook
        raise UploadRejected("{file}: not a readable Excel workbook ({kind})", file=file.name,
                             kind=type(e).__name__) from None
    try:
        rows = book.worksheets[0].iter_rows(values_only=True)
        first = next(rows, ())
        if not first:
            raise UploadRejected("{file}: the first sheet is empty", file=file.name)
        check_columns(file.name, len(first))
        names = _column_names(first) if header else [f"column{i}" for i in range(len(first))]
        lines = scratch / "sheet.json"
        written = 0
        with lines.open("w", encoding="utf-8") as out:
            for number, row in enumerate(rows if header else [first, *rows], start=2 if header else 1):
                if any(v is not None for v in row):
                    if any(isinstance(v, str) and len(v) > MAX_FIELD_CHARS for v in row):
                        raise UploadTooLarge("{file}, row {row}: a cell longer than {limit:,} characters",
                                             file=file.name, row=number, limit=MAX_FIELD_CHARS)
                    line = json.dumps(dict(zip(names, row)), ensure_ascii=False, default=_json_value) + "\n"
                    written += len(line)
                    if written > MAX_SHEET_BYTES:
                        raise UploadTooLarge("{file}: the sheet holds more than {limit:,} bytes of text; save "
                                             "it as CSV", file=file.name, limit=MAX_SHEET_BYTES)
                    out.write(line)
        return lines
    finally:
        book.close()


def _column_names(cells: tuple) -> list[str]:
    """A header row's names, blanks named by position and repeats numbered (JSON keys must differ)."""
    names: list[str] = []
    for i, cell in enumerate(cells):
        name = str(cell) if cell is not None else f"column{i}"
        while name.lower() in (n.lower() for n in names):
            name = f"{name}_{i}"
        names.append(name)
    return names


def _json_value(value: object) -> str:
    return value.isoformat() if isinstance(value, (dt.date, dt.time, dt.datetime)) else str(value)
