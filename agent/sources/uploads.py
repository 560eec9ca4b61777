"""A user's own files as tables: CSV, TSV, Parquet and Excel loaded into that user's DuckDB file.

Each user has one file, `<ASKDB_UPLOADS_DIR>/<user key>.duckdb`, which askdb reads as any
DuckDB source (agent/sources/duckdb.py: read-only and locked). A change never writes that file
in place: it is copied, the copy changed, and the copy moved over the original (DuckDB lets no
one write a file while askdb reads it; the source opens the new file at its next query). A file
that cannot be read whole changes nothing. Changes to one user's file take turns under a lock
(`<user key>.lock` beside it): two adds at once would each copy the same original and the later
move would drop the earlier table.
"""

from __future__ import annotations

import fcntl
import hashlib
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from agent.sources.base import plain_value, quote_identifier
from agent.sources.upload_files import (
    TablesUnreadable, UploadNotFound, UploadRejected, UploadTooLarge, check_size, file_kind, open_reader,
    read_failure, without_paths,
)

__all__ = ["UploadRejected", "UploadTooLarge", "UploadNotFound", "LoadedTable", "FilePreview", "uploads_path",
           "user_key", "table_name", "add_table", "preview_file", "list_tables", "rename_table", "remove_table",
           "TablesUnreadable", "set_tables_aside"]

MAX_NAME_CHARS = 64
PREVIEW_ROWS = 10
PREVIEW_CELL_CHARS = 500  # a preview shows the start of a long value (a 157 MB preview page once)


@dataclass
class LoadedTable:
    name: str
    columns: list[tuple[str, str]]  # each column's name and type, as DuckDB inferred it
    rows: int


@dataclass
class FilePreview:
    """What a file would become, shown before it is loaded: the table it would make and how the
    file was read."""

    table: LoadedTable  # the name proposed, the columns with their inferred types, the row count
    first_rows: list[list]  # up to PREVIEW_ROWS rows, JSON-safe values
    kind: str  # csv, tsv, parquet or excel
    encoding: str | None  # UTF-8 or GBK for text
    header: bool | None  # the first line names the columns (None: Parquet, named by the file)


def user_key(user_id: str) -> str:
    """A file-name-safe key of the user id (a hash, so any id is safe and none is shown)."""
    return hashlib.sha256(user_id.encode()).hexdigest()[:24]


def uploads_path(uploads_dir: Path, user_id: str) -> Path:
    """The DuckDB file of `user_id`'s tables."""
    return Path(uploads_dir) / f"{user_key(user_id)}.duckdb"


def table_name(requested: str | None, file: Path | None = None) -> str:
    """The table's name: as requested, else the file's stem; runs of characters other than letters
    (any script), digits and _ become one _; at most MAX_NAME_CHARS characters."""
    name = re.sub(r"\W+", "_", (requested or "").strip() or (file.stem if file else "")).strip("_")[:MAX_NAME_CHARS]
    if not name:
        raise UploadRejected("the table needs a name with a letter or digit in it")
    return f"t_{name}" if name[0].isdigit() else name


def add_table(target: Path, file: Path, *, table: str | None = None, max_bytes: int, replace: bool = False,
              header: bool | None = None, quota_bytes: int | None = None,
              engine_memory_mb: int | None = None) -> LoadedTable:
    """Load `file` as one table of the DuckDB file `target` (created when missing).

    Args:
        header: whether the file's first line names the columns; None: detected (open_reader).
        quota_bytes: the most the user's tables may take on disk, this one included
            (ASKDB_UPLOAD_QUOTA_MB); past it nothing changes.
        engine_memory_mb: DuckDB's memory limit (in an upload worker, below its address space).

    Raises:
        UploadRejected: too large, not CSV/TSV/Parquet/Excel, malformed, the name taken
            (without `replace`), or over the quota.
    """
    file = Path(file)
    file_kind(file)
    check_size(file, max_bytes)
    name = table_name(table, file)
    with _changing(target, quota_bytes=quota_bytes, engine_memory_mb=engine_memory_mb) as (duck, scratch):
        if (existing := _existing(duck, name)) is not None and not replace:
            raise UploadRejected("a table named {name} exists; choose another name or replace it", name=existing)
        reader = open_reader(duck, file, scratch, header=header)
        try:
            duck.execute(f"CREATE OR REPLACE TABLE {quote_identifier(name)} AS SELECT * FROM {reader.sql}",
                         reader.parameters)
        except duckdb.Error as e:
            raise read_failure(file, e) from None
        return _loaded(duck, name)


def preview_file(file: Path, *, max_bytes: int, table: str | None = None, header: bool | None = None,
                 rows: int = PREVIEW_ROWS, engine_memory_mb: int | None = None) -> FilePreview:
    """What `add_table` would make of `file`, without loading it anywhere.

    Raises:
        UploadRejected: as `add_table`, but for a taken name (checked when it is added).
    """
    file = Path(file)
    kind = file_kind(file)
    check_size(file, max_bytes)
    name = table_name(table, file)
    with tempfile.TemporaryDirectory(prefix="askdb-preview-") as scratch, \
            duckdb.connect(config=_engine_config(engine_memory_mb)) as duck:
        reader = open_reader(duck, file, Path(scratch), header=header)
        try:
            columns = [(c[0], c[1]) for c in duck.execute(f"DESCRIBE SELECT * FROM {reader.sql}",
                                                          reader.parameters).fetchall()]
            first = duck.execute(f"SELECT * FROM {reader.sql} LIMIT {int(rows)}", reader.parameters).fetchall()
            (count,) = duck.execute(f"SELECT count(*) FROM {reader.sql}", reader.parameters).fetchone()
        except duckdb.Error as e:
            raise read_failure(file, e) from None
    return FilePreview(table=LoadedTable(name=name, columns=columns, rows=count),
                       first_rows=[[_shortened(plain_value(v)) for v in row] for row in first], kind=kind,
                       encoding=reader.encoding, header=reader.header)


def list_tables(target: Path) -> list[LoadedTable]:
    """The tables of the DuckDB file `target` (none when it does not exist yet)."""
    if not target.exists():
        return []
    with duckdb.connect() as duck:
        # Attached, not connect(target): a server asking about the file holds it open with the
        # source's settings, and DuckDB refuses a second instance of a file with other settings
        # in one process. The path is ours (a hash under ASKDB_UPLOADS_DIR); ATTACH takes no parameter.
        try:
            duck.execute(f"ATTACH '{str(target).replace(chr(39), chr(39) * 2)}' AS uploads (READ_ONLY)")
            duck.execute("USE uploads")
            return [_loaded(duck, name) for name in _tables(duck)]
        except duckdb.Error as e:
            raise _unreadable(e) from None


def set_tables_aside(target: Path) -> Path | None:
    """The way out of a damaged tables file: move it aside (kept beside, for an operator), so the user
    starts again with none. Returns where it went, or None when there was none."""
    with _locked(target):
        if not target.exists():
            return None
        aside = target.with_name(f"{target.stem}.damaged-{int(time.time())}{target.suffix}")
        target.replace(aside)
        return aside


def _unreadable(error: duckdb.Error) -> TablesUnreadable:
    reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    reason = without_paths(reason)[:200]
    return TablesUnreadable("your tables cannot be read ({reason}); set them aside to start again",
                            reason=reason)


def rename_table(target: Path, name: str, new_name: str) -> LoadedTable:
    """Give table `name` the name `new_name` (cleaned as `table_name` cleans it).

    Raises:
        UploadRejected: no table `name`, an empty new name, or another table has it.
    """
    new_name = table_name(new_name)
    with _changing(target) as (duck, _):
        existing = _existing(duck, name)
        if existing is None:
            raise UploadNotFound("no table named {name}", name=name)
        clash = _existing(duck, new_name)
        if clash is not None and clash != existing:
            raise UploadRejected("a table named {name} exists; choose another name", name=clash)
        if new_name != existing:
            duck.execute(f"ALTER TABLE {quote_identifier(existing)} RENAME TO {quote_identifier(new_name)}")
        return _loaded(duck, new_name)


def remove_table(target: Path, name: str) -> None:
    """Delete one table.

    Raises:
        UploadRejected: no table of that name.
    """
    with _changing(target) as (duck, _):
        existing = _existing(duck, name)
        if existing is None:
            raise UploadNotFound("no table named {name}", name=name)
        duck.execute(f"DROP TABLE {quote_identifier(existing)}")


# One lock per file within this process too: fcntl's record locks belong to the process, so two
# threads of one server would both hold it.
_THREAD_LOCKS: dict[Path, threading.Lock] = {}
_THREAD_LOCKS_GUARD = threading.Lock()


@contextmanager
def _locked(target: Path) -> Iterator[None]:
    """Hold the user's lock: one change at a time, across threads, processes and servers sharing
    the directory (lockf's locks work over NFS, where flock's may not)."""
    lock_file = target.with_suffix(".lock")
    with _THREAD_LOCKS_GUARD:
        thread_lock = _THREAD_LOCKS.setdefault(lock_file.resolve(), threading.Lock())
    with thread_lock, lock_file.open("a") as handle:
        fcntl.lockf(handle, fcntl.LOCK_EX)  # released when the file closes
        yield


def _engine_config(memory_mb: int | None) -> dict:
    """DuckDB's settings for reading an upload: within `memory_mb` and two threads when bounded."""
    return {} if memory_mb is None else {"memory_limit": f"{memory_mb}MB", "threads": 2}


def _shortened(value):
    if isinstance(value, str) and len(value) > PREVIEW_CELL_CHARS:
        return value[:PREVIEW_CELL_CHARS] + "…"
    return value


@contextmanager
def _changing(target: Path, *, quota_bytes: int | None = None,
              engine_memory_mb: int | None = None) -> Iterator[tuple[duckdb.DuckDBPyConnection, Path]]:
    """Under the user's lock, a writable copy of `target` and a scratch directory; the copy
    replaces `target` only when the block ends without an error and within `quota_bytes`."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with _locked(target), tempfile.TemporaryDirectory(prefix="askdb-upload-", dir=target.parent) as scratch:
        copy = Path(scratch) / "next.duckdb"
        if target.exists():
            shutil.copyfile(target, copy)
        try:
            duck = duckdb.connect(str(copy), config=_engine_config(engine_memory_mb))
            _tables(duck)
        except duckdb.Error as e:  # the user's own file is damaged: say so, with the way out
            raise _unreadable(e) from None
        with duck:
            yield duck, Path(scratch)
            duck.execute("CHECKPOINT")
        if quota_bytes is not None and (size := copy.stat().st_size) > quota_bytes:
            raise UploadTooLarge("your tables would take {size:,} bytes; your quota is {limit:,} "
                                 "(ASKDB_UPLOAD_QUOTA_MB): remove a table first", size=size, limit=quota_bytes)
        copy.replace(target)


def _existing(duck: duckdb.DuckDBPyConnection, name: str) -> str | None:
    """The table `name` stands for: DuckDB's names ignore case, even quoted ("Sales" is "sales")."""
    return next((t for t in _tables(duck) if t.lower() == name.lower()), None)


def _loaded(duck: duckdb.DuckDBPyConnection, name: str) -> LoadedTable:
    columns = duck.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_catalog ="
                           " current_database() AND lower(table_name) = lower(?) ORDER BY ordinal_position",
                           [name]).fetchall()
    (rows,) = duck.execute(f"SELECT count(*) FROM {quote_identifier(name)}").fetchone()
    return LoadedTable(name=name, columns=columns, rows=rows)


def _tables(duck: duckdb.DuckDBPyConnection) -> list[str]:
    return [r[0] for r in duck.execute("SELECT table_name FROM information_schema.tables WHERE table_catalog ="
                                       " current_database() AND table_schema = 'main' ORDER BY table_name").fetchall()]
