"""The gold query's rows, and comparing an answer's rows with them, for the eval harness (app/eval/harness.py).

Two scores. `same_result` is Spider's execution match and the headline: the same rows and the
same columns, in any order. `holds_answer` is the second: the gold's answer columns are among
the answer's, so a right list of names without the gold's counts beside them (or with a column
the gold has not) still holds the answer. docs/evaluation.md describes both.
"""

from __future__ import annotations

import itertools
import sqlite3
import time
from collections import Counter
from pathlib import Path

import sqlglot

from agent.sources.factory import is_duckdb_path, is_mysql_url, open_source
from app.eval.postgres import postgres_gold_rows
from storage.backends import is_postgres_url

MAX_ROWS = 100_000  # rows compared per query; more is rare in these suites and reported as a mismatch
MAX_COLUMN_MAPPINGS = 5040  # column orders tried (7!): wide results compare in their own order
Location = Path | str  # a question's database: a SQLite or DuckDB file, a postgresql:// or mysql:// URL


def gold_rows(location: Location, sql: str, *, time_limit_s: float) -> list[tuple]:
    """The gold query's rows, read-only but not through the guard: gold SQL may use what it refuses
    (SQLite's quirks; PostgreSQL's functions). On SQLite, plain sqlite3; on MySQL and DuckDB the
    source itself, its guard included (gold written for them needs nothing it refuses)."""
    if is_postgres_url(location):
        return postgres_gold_rows(location, sql, time_limit_s=time_limit_s, max_rows=MAX_ROWS)
    if is_mysql_url(location) or is_duckdb_path(location):
        source = open_source(location, time_limit_s=time_limit_s, max_rows=MAX_ROWS, trusted=True)
        try:
            return [tuple(row) for row in source.execute(sql).rows]
        finally:
            source.close()
    conn = sqlite3.connect(f"file:{location}?mode=ro", uri=True)
    conn.text_factory = lambda b: b.decode("utf-8", "replace")
    deadline = time.monotonic() + time_limit_s
    conn.set_progress_handler(lambda: time.monotonic() > deadline, 1000)
    try:
        return [tuple(row) for row in conn.execute(sql).fetchmany(MAX_ROWS)]
    finally:
        conn.close()


def is_ordered(sql: str, *, dialect: str = "sqlite") -> bool:
    """Whether the outermost query orders its rows (then order counts in the comparison)."""
    try:
        return sqlglot.parse_one(sql, read=dialect).args.get("order") is not None
    except sqlglot.errors.SqlglotError:
        return " order by " in f" {' '.join(sql.lower().split())} "


def same_result(got: list[tuple], gold: list[tuple], *, ordered: bool) -> bool:
    """Equal as multisets of rows (as lists when `ordered`), under some order of the columns; floats
    to 6 decimals."""
    got, gold = _rounded(got), _rounded(gold)
    if got and gold and len(got[0]) != len(gold[0]):
        return False
    return _columns_give(got, gold, ordered=ordered)


def holds_answer(got: list[tuple], gold: list[tuple], *, ordered: bool, answer_columns: list[int] | None = None) -> bool:
    """The gold's answer columns (`answer_columns`, indexes into its row; None: all of them) are
    among `got`'s: the same number of rows, and some of got's columns, one per answer column, equal
    the gold's projected onto them, as `same_result` compares. Other columns of either side are free,
    but for a gold of one cell given no answer columns, which only the same single cell holds.

    Raises:
        ValueError: an answer column the gold's rows do not have.
    """
    if answer_columns is None and len(gold) == 1 and len(gold[0]) == 1:
        # One figure (a count, an average): any one-row answer with that number among its cells, an id
        # or a year, would hold it. Only the figure alone does.
        return same_result(got, gold, ordered=ordered)
    got, gold = _rounded(got), _rounded(gold)
    if answer_columns is not None:
        if gold and any(i >= len(gold[0]) for i in answer_columns):
            raise ValueError(f"answer_columns {answer_columns} name a column the gold result has not "
                             f"(it has {len(gold[0])})")
        gold = [tuple(row[i] for i in answer_columns) for row in gold]
    return _columns_give(got, gold, ordered=ordered)


def _rounded(rows: list[tuple]) -> list[tuple]:
    return [tuple(round(v, 6) if isinstance(v, float) else v for v in row) for row in rows]


def _columns_give(got: list[tuple], gold: list[tuple], *, ordered: bool) -> bool:
    """Whether some of got's columns, one for each of gold's and each used once, give gold's rows.
    Only columns holding the same values as the gold column they stand for are tried, and at most
    MAX_COLUMN_MAPPINGS choices."""
    if len(got) != len(gold):
        return False
    if not gold:
        return True
    width = len(gold[0])
    got_columns = [Counter(row[j] for row in got) for j in range(len(got[0]))]
    gold_columns = [Counter(row[i] for row in gold) for i in range(width)]
    options = [[j for j, column in enumerate(got_columns) if column == gold_columns[i]] for i in range(width)]
    for order in itertools.islice(itertools.product(*options), MAX_COLUMN_MAPPINGS):
        if len(set(order)) < width:
            continue
        moved = [tuple(row[j] for j in order) for row in got]
        if (moved == gold) if ordered else Counter(moved) == Counter(gold):
            return True
    return False
