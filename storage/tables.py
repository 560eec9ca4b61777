"""The base of the stores beside the conversations (episodes, memory items, examples).

Each is handed the store's database handle (`store.episodes()` shares the conversation
store's), so their transactions never interleave with its own; `open` gives one a handle of
its own (tools, benchmarks, tests).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from storage.backends import as_database, open_database
from storage.schema import migrate
from storage.sql import Database

TablesT = TypeVar("TablesT", bound="Tables")


class Tables:
    """A store on a shared database handle, migrated on first use."""

    def __init__(self, db: Database | sqlite3.Connection):
        """Args:
        db: the store's handle (`ConversationStore.db`), or an open SQLite connection.
        """
        self.db = as_database(db)
        migrate(self.db)

    @classmethod
    @contextmanager
    def open(cls: type[TablesT], location: str | Path) -> Iterator[TablesT]:
        """The store at a SQLite path or PostgreSQL URL on a handle of its own, closed at the end."""
        db = open_database(location)
        try:
            yield cls(db)
        finally:
            db.close()
