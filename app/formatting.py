"""Query results as text for the terminal: an aligned table, JSON or CSV."""

from __future__ import annotations

import csv
import io
import json
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

MAX_CELL_WIDTH = 60


def _width(text: str) -> int:
    # CJK characters take two columns in a terminal.
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def display_cell(value: Any) -> str:
    """A cell for reading: NULL said, floats to at most 4 decimals with thousands separators (88,589.1, not
    88589.09999999999); JSON and CSV keep full precision."""
    if value is None:
        return "NULL"
    if isinstance(value, float):
        return f"{value:,.4f}".rstrip("0").rstrip(".") if abs(value) < 1e15 else repr(value)
    return str(value)


def _cell(value: Any) -> str:
    text = display_cell(value).replace("\n", " ")
    return text if len(text) <= MAX_CELL_WIDTH else text[: MAX_CELL_WIDTH - 1] + "…"


def render_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """An aligned plain-text table."""
    cells = [[_cell(c) for c in columns]] + [[_cell(v) for v in row] for row in rows]
    widths = [max(_width(r[i]) for r in cells) for i in range(len(columns))]
    lines = []
    for n, row in enumerate(cells):
        lines.append("  ".join(v + " " * (w - _width(v)) for v, w in zip(row, widths)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


# A spreadsheet runs a cell beginning with one of these as a formula (=HYPERLINK(...), @SUM(...)).
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def csv_cell(value: Any) -> Any:
    """A value safe to open in a spreadsheet: text that would start a formula gets a leading `'`, as
    OWASP advises for CSV injection; numbers, and text that is only a number ("-5"), are kept. Only
    CSV is escaped: JSON and the page show values as they are."""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def to_csv(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Every CSV askdb writes (downloads, the SQL page, the CLI), with formula-like cells escaped."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow([csv_cell(c) for c in columns])
    writer.writerows([csv_cell(v) for v in row] for row in rows)
    return buffer.getvalue()


def format_result(result: Any, fmt: str) -> str:
    """Format anything with `columns`, `rows`, `row_count` and `truncated` (a QueryResult)."""
    if fmt == "json":
        return json.dumps({"columns": result.columns, "rows": result.rows, "row_count": result.row_count,
                           "truncated": result.truncated}, ensure_ascii=False, default=str) + "\n"
    if fmt == "csv":
        return to_csv(result.columns, result.rows)
    text = render_table(result.columns, result.rows)
    note = f"({result.row_count} row{'s' if result.row_count != 1 else ''}"
    note += ", truncated: more rows exist)" if result.truncated else ")"
    return text + note + "\n"
