"""The store core: a database handle, its transactions, and the dialect each backend speaks.

Every store (conversations, archive, leases, episodes, memory items, examples) is written
once against `Database` and `Transaction`, with `?` placeholders; what differs between SQLite
and PostgreSQL (JSON casts and extraction, timestamps, now(), vectors, full-text search,
locks) is a fragment or a call on `Dialect`. One implementation per backend:
storage/sqlite_backend.py and storage/postgres/backend.py (LangGraph's checkpoint savers:
one base, one file per backend).

Values are always bound as parameters. The only names spliced into SQL are tables, columns
and JSON keys written in the stores themselves, and `identifier` refuses anything else.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from storage.errors import StoreError

Params = Sequence[Any]
Row = Mapping[str, Any]

_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,62}(\.[a-z_][a-z0-9_]{0,62})?$")  # a name, maybe qualified


def identifier(name: str) -> str:
    """`name` if it is a plain lower-case SQL identifier (a table, column or JSON key of ours).

    Raises:
        ValueError: anything else; it never reaches SQL.
    """
    if not _IDENTIFIER.match(name):
        raise ValueError(f"not an identifier of the store: {name!r}")
    return name


class ConstraintViolation(StoreError):
    """A write was refused by a constraint or trigger of the schema (the message names it)."""


class UniqueViolation(ConstraintViolation):
    """A write broke a unique constraint; the stores translate it where it means something."""


class ForeignKeyViolation(ConstraintViolation):
    """A write referred to a row that does not exist (a deleted conversation)."""


@dataclass(frozen=True)
class TextIndex:
    """A table's keyword index: which columns are indexed, at which bm25 weights.

    SQLite keeps it in a `<table>_fts` FTS5 table keyed by rowid; PostgreSQL in the row's own
    `terms` tsvector. `scope_tokens` names the columns SQLite also keeps in its index as tokens
    (broad to narrow, with their one-letter kind; migration 6), so a search narrowed to them
    never leaves the index.
    """

    table: str
    key: str
    columns: tuple[str, ...]
    weights: tuple[float, ...]
    scope_tokens: tuple[tuple[str, str], ...] = ()


class TermsDocument(NamedTuple):
    """SQL fragments that write a row's keyword terms inline, with their parameters (PostgreSQL's
    `terms` column); empty on SQLite, whose index is written after the row (`write_text_index`)."""

    columns: str  # ", terms" after an INSERT's column list
    values: str  # ", <tsvector>" after its values
    assignment: str  # ", terms = <tsvector>" in an UPDATE's SET
    from_excluded: str  # ", terms = excluded.terms" in an upsert's DO UPDATE SET
    params: list[Any]


class Transaction(ABC):
    """One open transaction (or one read) on one connection; SQL with `?` placeholders."""

    dialect: Dialect

    @abstractmethod
    def execute(self, sql: str, params: Params = ()) -> Any:
        """Run one statement; return the driver's cursor (for `rowcount`).

        Raises:
            UniqueViolation, ForeignKeyViolation: a constraint refused the write.
        """

    @abstractmethod
    def execute_many(self, sql: str, rows: Iterable[Params]) -> None: ...

    @abstractmethod
    def rows(self, sql: str, params: Params = (), *, vectors: bool = False) -> list[Row]:
        """The rows of a query by column name; `vectors`: real[] columns as float32 bytes."""

    def row(self, sql: str, params: Params = ()) -> Row | None:
        found = self.rows(sql, params)
        return found[0] if found else None

    def value(self, sql: str, params: Params = ()) -> Any:
        """The first column of the first row (None without a row)."""
        found = self.row(sql, params)
        return None if found is None else next(iter(dict(found).values()))


class Dialect(ABC):
    """What one backend's SQL says differently; every method returns a fragment or a value."""

    name: str  # "sqlite" or "postgresql"
    now: str  # the time of the transaction, as the store's timestamp column type
    epoch_now: str  # seconds since 1970 as a float, on the store's own clock
    like: str  # a LIKE that ignores case
    for_update: str  # appended to a SELECT that locks its rows until the transaction ends
    insertion_order: str  # the hidden column that orders rows as inserted
    json_in: str  # a JSON parameter's placeholder
    vector_in: str  # an embedding parameter's placeholder
    driver_errors: tuple[type[Exception], ...]

    @abstractmethod
    def json_param(self, text: str) -> str:
        """JSON text as this backend can store it."""

    @abstractmethod
    def vector_param(self, embedding: bytes | None) -> Any:
        """float32 little-endian bytes as this backend stores an embedding."""

    @abstractmethod
    def json_out(self, column: str) -> str:
        """A JSON column read as JSON text."""

    @abstractmethod
    def json_bytes(self, column: str) -> str:
        """The stored size of a JSON column in bytes."""

    @abstractmethod
    def json_text(self, column: str, key: str) -> str:
        """The text at a top-level key of a JSON object column (NULL when missing)."""

    @abstractmethod
    def json_set_text(self, column: str, key: str) -> str:
        """The JSON object column with a top-level key set to a text parameter (one `?`)."""

    @abstractmethod
    def json_array_length(self, column: str, key: str) -> str:
        """The length of the array at a top-level key (0 or NULL when it is not one)."""

    @abstractmethod
    def json_elements(self, column: str, key: str | None = None) -> str:
        """A FROM item `item` over the array at a key (or the column itself), one row per element."""

    @abstractmethod
    def element_text(self, field: str) -> str:
        """A field of `json_elements`' current element, as text (NULL for a non-object)."""

    @abstractmethod
    def element_value(self) -> str:
        """`json_elements`' current element as text (for arrays of strings)."""

    @abstractmethod
    def last_element_text(self, column: str, key: str, field: str) -> str:
        """A field of the last element of the array at a key, as text."""

    @abstractmethod
    def timestamp(self, column: str) -> str:
        """A timestamp column as the stores' text: ISO 8601 UTC with microseconds and a Z."""

    @abstractmethod
    def in_list(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """`column` is one of `values`: the condition and its parameters."""

    @abstractmethod
    def unindexed(self, column: str) -> str:
        """A column the planner should not pick an index for."""

    @abstractmethod
    def lock(self, tx: Transaction, name: int, key: str = "") -> None:
        """Hold a named lock on `key` until the transaction ends (SQLite: its one writer is it)."""

    # -- migrations (storage/schema.py applies them) ------------------------------

    migrations_dir: Path  # this backend's numbered `NNNN_name.sql` files
    migrations_table: str  # DDL of `schema_migrations`, if it does not exist

    @abstractmethod
    def migration_statements(self, script: str) -> list[str]: ...

    @abstractmethod
    def after_migration(self, tx: Transaction, number: int) -> None:
        """Record the schema version where this backend keeps it besides `schema_migrations`."""

    @abstractmethod
    def schema_version(self, tx: Transaction) -> int: ...

    # -- full-text search ---------------------------------------------------------

    @abstractmethod
    def terms_document(self, index: TextIndex, texts: Sequence[str]) -> TermsDocument: ...

    @abstractmethod
    def write_text_index(self, tx: Transaction, index: TextIndex, key: int, texts: Sequence[str],
                         scope: Mapping[str, str]) -> None:
        """After the row is written: index its terms (SQLite's FTS5 row; nothing on PostgreSQL)."""

    @abstractmethod
    def count_matches(self, tx: Transaction, index: TextIndex, terms: Sequence[tuple[str, bool]],
                      scope: Mapping[str, str], cap: int) -> int:
        """How many rows within `scope` match any of `terms`, counting no further than `cap`."""

    @abstractmethod
    def text_search(self, tx: Transaction, index: TextIndex, terms: Sequence[tuple[str, bool]],
                    scope: Mapping[str, str], limit: int) -> list[tuple[int, float]]:
        """(key, score: lower is better) of the best rows within `scope` matching any of `terms`
        ((term, also as a prefix) pairs)."""


class Database(ABC):
    """A store's connection (SQLite) or pool (PostgreSQL), handing out transactions."""

    dialect: Dialect
    location: str

    @abstractmethod
    @contextmanager
    def write(self) -> Iterator[Transaction]:
        """One short write transaction, committed at the end, rolled back on any error. Inside
        another write of the same thread it joins that one (what belongs together commits
        together), and reads in the thread see its writes.

        Raises:
            StoreUnavailable: the store cannot be reached or written; nothing was written.
        """

    @abstractmethod
    @contextmanager
    def read(self) -> Iterator[Transaction]:
        """Reads that see one another's writes (one connection, held for the block)."""

    def rows(self, sql: str, params: Params = (), *, vectors: bool = False) -> list[Row]:
        with self.read() as tx:
            return tx.rows(sql, params, vectors=vectors)

    def row(self, sql: str, params: Params = ()) -> Row | None:
        with self.read() as tx:
            return tx.row(sql, params)

    def value(self, sql: str, params: Params = ()) -> Any:
        with self.read() as tx:
            return tx.value(sql, params)

    def schema_version(self) -> int:
        with self.read() as tx:
            return self.dialect.schema_version(tx)

    @abstractmethod
    def backup(self, destination: str | Path) -> None: ...

    @abstractmethod
    def close(self) -> None:
        """Close what this handle opened (a connection or pool handed in stays open)."""
