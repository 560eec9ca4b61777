"""The data-source contract: what askdb needs from an analytics database, whatever its engine.

`DataSource` is the one interface the agent, the web pages, the CLI and the eval harness use;
`agent.sources.factory.open_source` picks the engine from the location. The models here
(`QueryResult`, `TableSchema`, ...) are what crosses the boundary: no driver rows, no driver
errors (agent/sources/errors.py). The helpers below are shared by the engines, so every engine
caps rows and cells and suggests close names the same way.
"""

from __future__ import annotations

import datetime as dt
import decimal
import difflib
import json
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from agent.sources.errors import SourceError


class Column(BaseModel):
    name: str
    type: str
    not_null: bool
    default: str | None
    primary_key: bool


class ForeignKey(BaseModel):
    column: str
    ref_table: str
    ref_column: str | None


class TableSchema(BaseModel):
    name: str
    columns: list[Column]
    foreign_keys: list[ForeignKey]
    row_count: int


def finds_nothing(row_count: int, rows: list[list[Any]]) -> bool:
    """Whether a result holds nothing: no row, or one row of zeros and NULLs (a count or a sum over no row)."""
    return row_count == 0 or (row_count == 1 and bool(rows) and all(v in (0, None) for v in rows[0]))


def may_hold_text(declared: str) -> bool:
    """Whether a column of this declared type may hold text (SQLite's affinity rules: no type at all may)."""
    kind = declared.upper()
    return not kind or any(word in kind for word in ("CHAR", "TEXT", "CLOB", "STRING", "JSON"))


class QueryResult(BaseModel):
    sql: str
    columns: list[str]
    rows: list[list[Any]]
    row_count: int
    truncated: bool
    truncated_cells: int
    duration_ms: float


class DataSource(Protocol):
    """An analytics database that runs guarded, bounded, read-only queries.

    To add an engine, write one module in agent/sources/ with a class that has every member
    below (no need to subclass this Protocol), teach `open_source` its location form, and add it
    to the conformance suite's engines (tests/agent/sources/conftest.py). The suite checks each
    point marked *checked*.

    Attributes:
        dialect: sqlglot's name of the engine's SQL ("sqlite", "postgres", "mysql", "duckdb"): the
            guard parses in it, and SQL askdb writes (the offline planner's) is transpiled to it.
        engine: what the model and the messages call the engine ("SQLite", "PostgreSQL").
        label: a short name of this database for people ("aerospace"); it also keys the verified
            examples (agent/examples.py), so it must not change between runs. No password in it.

    Limits (constructor arguments of every engine, passed by `open_source`): ``time_limit_s``,
    a wall-clock limit of every call, introspection included, enforced by the engine itself (a
    deadline, ``statement_timeout``, ``max_execution_time``...); ``max_rows``, the rows `execute`
    returns before it sets ``truncated``; ``max_cell_bytes``, the longest text or blob kept in a
    cell (`cap_cell`); ``limits`` (`PoolLimits`), memory and temporary disk of one query, honoured
    as far as the engine can; ``trusted``, for SQL whoever holds the location typed (the CLI's
    `store query`), never for model-written SQL. Opening is lazy: constructing a source never
    connects, so the app starts before its database does and reports it per request.

    Security, *checked*: `execute` runs `check_sql(sql, dialect=self.dialect)` first, then the
    statement in a read-only session (a read-only file or transaction, and a role or authorizer
    that cannot write), so writes, ATTACH/COPY/file reads, extension loading and several
    statements are refused with `SQLRejected` even when the parser misreads one. Every driver
    error becomes a `SourceError` subclass; nothing else escapes a public method.
    """

    dialect: str
    engine: str
    label: str

    def where(self) -> str:
        """Where the data lives, for messages and logs: a path, or a URL without its password."""
        ...

    def cache_key(self) -> tuple:
        """A key that changes when the schema or data may have changed (*checked*: hashable, stable
        between two calls on an unchanged database). Indexes built from the source (schema search,
        the planner's values) are cached under it: a file gives its path, modification time and
        size; a server, its location and a time bucket."""
        ...

    def list_tables(self) -> list[str]:
        """Names of the tables and views a query may read, sorted case-insensitively (*checked*)."""
        ...

    def describe_table(self, table: str) -> TableSchema:
        """Columns (in order), foreign keys and row count of a table or view (*checked*). The name
        matches case-insensitively.

        Raises:
            UnknownTable: with the closest real names (`resolve_name`).
        """
        ...

    def catalogue(self) -> list[TableSchema]:
        """Every table and view as `describe_table` gives it, in `list_tables` order (*checked*), read
        in one connection or transaction: the list_tables tool and schema search read them all."""
        ...

    def sample_rows(self, table: str, limit: int = 5) -> QueryResult:
        """The first rows of a table or view; ``limit`` is clamped to 1..5."""
        ...

    def find_values(self, table: str, column: str, term: str, limit: int = 20) -> list[Any]:
        """Distinct values of ``column`` in rows where any text cell contains ``term`` (a literal
        substring: ``%``, ``_`` and ``\\`` match themselves), most frequent first, NULLs skipped, at
        most ``limit`` (clamped to 1..max_rows).

        Raises:
            UnknownTable, UnknownColumn: with the closest real names.
        """
        ...

    def execute(self, sql: str, *, max_rows: int | None = None) -> QueryResult:
        """Check ``sql`` with the guard, then run it read-only within every limit (*checked*).

        Cells are JSON-safe (numbers, text, None; see `cap_cell`); at most ``max_rows`` rows
        (default: the source's), with ``truncated`` set when more existed.

        Raises:
            SQLRejected: the guard or the database refused the statement.
            QueryTimeout: stopped at ``time_limit_s`` (*checked*); QueryBusy when it never started.
            QueryFailed: the engine's own error for the query (a bad column, a type error).
            SourceUnavailable: the database cannot be reached or read.
        """
        ...

    def close(self) -> None:
        """Release connections and pools; safe to call twice, and before first use (*checked*)."""
        ...


def row_limit(max_rows: int | None, default: int) -> int:
    """The rows one `execute` returns: ``max_rows`` when given (never negative), else the source's."""
    return default if max_rows is None else max(0, max_rows)


# Row counts are exact up to here (`capped_count_sql`); past it an engine reports this, or its own
# estimate: listing a large database's tables costs a bounded scan each.
COUNT_CAP = 1_000_000


def capped_count_sql(quoted_table: str) -> str:
    """SQL counting a table's rows up to one past COUNT_CAP (the table's name already quoted); the
    limit is a literal, so the text takes no arguments."""
    return f"SELECT count(*) FROM (SELECT 1 FROM {quoted_table} LIMIT {COUNT_CAP + 1}) AS capped"


def clamp(limit: int, highest: int) -> int:
    """A caller's ``limit`` (sample rows, values) kept within 1..``highest``."""
    return min(max(int(limit), 1), highest)


def contains_pattern(term: str, escape: str = "\\") -> str:
    """A LIKE pattern for text containing ``term`` literally: its ``%``, ``_`` and ``escape`` are
    escaped with ``escape`` (the statement must say ``ESCAPE`` with the same character)."""
    escaped = term.replace(escape, escape * 2).replace("%", escape + "%").replace("_", escape + "_")
    return f"%{escaped}%"


def render_cell(value: Any, max_bytes: int) -> tuple[Any, bool]:
    """A driver's value as a JSON-safe cell (`plain_value`) capped at ``max_bytes`` (`cap_cell`), and
    whether it was cut."""
    return cap_cell(plain_value(value), max_bytes)


def capped_result(sql: str, columns: list[str], cursor: Iterable, *, limit: int, started: float,
                  max_cell_bytes: int) -> QueryResult:
    """At most ``limit`` rows of ``cursor``, each cell through `render_cell`, timed from ``started``
    (a `time.perf_counter()` reading).

    Iterates instead of fetchmany(limit + 1) so at most one row of uncapped cells is held
    in memory at a time; a row past ``limit`` only sets ``truncated``.
    """
    rows: list[list[Any]] = []
    truncated, cut = False, 0
    for raw in cursor:
        if len(rows) >= limit:
            truncated = True
            break
        row = []
        for value in raw:
            rendered, was_cut = render_cell(value, max_cell_bytes)
            row.append(rendered)
            cut += was_cut
        rows.append(row)
    return QueryResult(sql=sql, columns=columns, rows=rows, row_count=len(rows), truncated=truncated,
                       truncated_cells=cut, duration_ms=(time.perf_counter() - started) * 1000)


def plain_value(value: Any) -> Any:
    """A driver's value as the JSON-safe value SQLite would give: numbers, text, or bytes for the cap."""
    if value is None or isinstance(value, (bool, int, float, str, bytes, bytearray, memoryview)):
        return value
    if isinstance(value, decimal.Decimal):
        # sum(bigint) is numeric in PostgreSQL (DECIMAL in MySQL) and an integer in SQLite; avg() a float.
        if not value.is_finite():
            return float(value)
        return int(value) if value.as_tuple().exponent >= 0 else float(value)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (uuid.UUID, dt.timedelta)):
        return str(value)
    if isinstance(value, (dict, list)):  # JSON, arrays, structs: their JSON text, capped as text
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def as_written(value: Any) -> str:
    """A result's value as a query would write it: 4.0 as 4. What a model saw in a result (the loop's
    shown values, the example rows of the SQL-first prompt) is compared with the SQL it then writes."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def add_row_mates(mates: dict[str, set[str]], rows: Iterable[Iterable[Any]]) -> None:
    """Each value of `rows` (as written) with the other values of its row, added to `mates`: the code 'ABW'
    a model read beside 'Aruba' in an example row (agent.checks.question.sampled_literals)."""
    for row in rows:
        written = [as_written(v) for v in row if v is not None]
        for value in written:
            mates.setdefault(value, set()).update(w for w in written if w != value)


class FileSource:
    """What a source that is one file shares: its path and label, its limits checked, `where`,
    `cache_key` and the repr."""

    def __init__(self, path: str | Path, *, time_limit_s: float, max_rows: int, max_cell_bytes: int) -> None:
        if time_limit_s <= 0 or max_rows < 1 or max_cell_bytes < 1:
            raise ValueError("time_limit_s, max_rows and max_cell_bytes must be positive")
        self.path = Path(path)
        self.label = self.path.stem
        self.time_limit_s = float(time_limit_s)
        self.max_rows = max_rows
        self.max_cell_bytes = max_cell_bytes

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r})"

    def where(self) -> str:
        return str(self.path)

    def worker_arguments(self) -> dict[str, Any]:
        """The constructor arguments a query worker builds the same source from (query_pool.py's
        `run_isolated`), its limits apart."""
        return {"path": str(self.path.absolute()), "time_limit_s": self.time_limit_s, "max_rows": self.max_rows,
                "max_cell_bytes": self.max_cell_bytes}

    def cache_key(self) -> tuple[str, int, int]:
        """The file's path, modification time and size: a rebuilt file gets a new key."""
        try:
            stat = self.path.stat()
        except OSError:
            return (str(self.path), 0, 0)
        return (str(self.path.resolve()), stat.st_mtime_ns, stat.st_size)


def cap_cell(value: Any, max_bytes: int) -> tuple[Any, bool]:
    """Cap one cell at ``max_bytes``; the marker makes any cut visible.

    Text longer than the cap keeps its first ``max_bytes`` UTF-8 bytes and gains
    "…[N bytes]". Blobs (never JSON-safe as bytes) become the SQL hex literal x'…'
    when that fits, else "<blob N bytes>". Returns the cell and whether it was cut.
    """
    if isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
        if len(data) <= max_bytes:
            return value, False
        kept = data[:max_bytes].decode("utf-8", "ignore")
        return f"{kept}…[{len(data)} bytes]", True
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        if 2 * len(data) + 3 <= max_bytes:
            return f"x'{data.hex()}'", False
        return f"<blob {len(data)} bytes>", True
    return value, False


def resolve_name(name: str, real: list[str], error: type[SourceError], missing: str) -> str:
    """Map ``name`` to a real schema name, case-insensitively; else raise ``error`` naming the
    closest real names (or the first 30)."""
    if name in real:
        return name
    folded = {n.lower(): n for n in real}
    if name.lower() in folded:
        return folded[name.lower()]
    close = difflib.get_close_matches(name.lower(), list(folded), n=3, cutoff=0.5)
    if close:
        hint = "did you mean " + ", ".join(folded[c] for c in close) + "?"
    else:
        hint = "available: " + (", ".join(real[:30]) or "none") + ("…" if len(real) > 30 else "")
    raise error(f"{missing}; {hint}")


def quote_identifier(name: str) -> str:
    """Quote an identifier the SQL-standard way (double quotes, an embedded one doubled), as SQLite
    and PostgreSQL read it."""
    return '"' + name.replace('"', '""') + '"'
