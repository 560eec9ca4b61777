"""Query results as text for the terminal: an aligned table, JSON or CSV."""

from __future__ import annotations

import csv
import io
import json
import unicodedata
from collections.abc import Sequence
from typing import Any

MAX_CELL_WIDTH = 60


def _width(text: str) -> int:
    # CJK characters take two columns in a terminal.
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _cell(value: Any) -> str:
    text = "NULL" if value is None else str(value)
    text = text.replace("\n", " ")
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


def to_csv(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(columns)
    writer.writerows(rows)
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
