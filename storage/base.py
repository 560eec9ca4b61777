"""The store interface, and the factory that opens a store on either backend.

`ConversationStore` is written once over the store core (storage/sql.py) and runs on one
SQLite file or a PostgreSQL server (for several app servers), taking and returning the same
models and raising the same errors; tests/storage/test_conformance.py runs one suite against
both. It hands out its sidecar stores (archive, leases, episodes, memory items, examples),
which share its database handle.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Protocol, TypeAlias, TypeVar, runtime_checkable

import psycopg
from pydantic import BaseModel

from storage.archive import ArchiveStore, MessageT
from storage.conversations import Conversation, ConversationPage, ConversationStore, Loaded
from storage.episodes import EpisodeStore
from storage.examples import ExampleStore
from storage.leases import TurnLeases
from storage.memory_items import MemoryItemStore
from storage.sql import Database, Transaction
from storage.steps import NewResult, StoredResult, StoredStep

StateT = TypeVar("StateT", bound=BaseModel)

# The sidecar stores: one class each, whichever the backend.
Episodes: TypeAlias = EpisodeStore
MemoryItems: TypeAlias = MemoryItemStore
Examples: TypeAlias = ExampleStore
# What a store may raise besides `StoreError`: its driver's own errors (a constraint it does
# not translate, a broken connection mid-statement).
DRIVER_ERRORS: tuple[type[Exception], ...] = (sqlite3.Error, psycopg.Error)


@runtime_checkable
class Store(Protocol[StateT]):
    """Conversations, their steps and query results, for many users; safe to share between threads."""

    backend: str  # "sqlite" or "postgresql"
    db: Database
    state_model: type[StateT]
    max_result_bytes: int  # the result caps (storage/result_caps.py), set from the settings
    max_conversation_result_bytes: int

    def create(self, *, user_id: str, state: StateT, thread_id: str | None = None, title: str = "",
               tags: list[str] | None = None, tool_categories: list[str] | None = None) -> Conversation: ...
    def get(self, thread_id: str, *, user_id: str) -> Conversation: ...
    def load(self, thread_id: str, *, user_id: str) -> Loaded[StateT]: ...
    def save(self, thread_id: str, *, user_id: str, state: StateT, expected_version: int,
             title: str | None = None) -> int: ...
    def list(self, *, user_id: str, search: str | None = None, limit: int = 50, offset: int = 0) -> ConversationPage: ...
    def update(self, thread_id: str, *, user_id: str, title: str | None = None,
               tags: list[str] | None = None) -> Conversation: ...
    def delete(self, thread_id: str, *, user_id: str) -> None: ...
    def threads_awaiting_answer(self) -> list[tuple[str, str]]: ...
    def append_step(self, thread_id: str, *, step_index: int, step: BaseModel) -> int: ...
    def record_step(self, thread_id: str, *, step_index: int, step: BaseModel,
                    result: NewResult | None = None) -> StoredResult | None: ...
    def steps(self, thread_id: str, *, user_id: str, after_id: int = 0) -> list[StoredStep]: ...
    def save_result(self, thread_id: str, *, sql: str, columns: list[str], rows: list[list[Any]],
                    truncated: bool) -> int: ...
    def load_result(self, thread_id: str, result_id: int, *, user_id: str) -> StoredResult: ...
    def export_conversation(self, thread_id: str, *, user_id: str) -> dict[str, Any]: ...
    def import_conversation(self, document: dict[str, Any], *, user_id: str,
                            thread_id: str | None = None) -> Conversation: ...
    def archive(self, message_model: type[MessageT]) -> ArchiveStore[MessageT]: ...
    def leases(self, *, seconds: float) -> TurnLeases: ...
    def episodes(self) -> EpisodeStore: ...
    def memory_items(self) -> MemoryItemStore: ...
    def examples(self) -> ExampleStore: ...
    def transaction(self) -> AbstractContextManager[Transaction]: ...
    def schema_version(self) -> int: ...
    def backup(self, destination: str | Path) -> None: ...
    def ping(self) -> None: ...
    def close(self) -> None: ...


def open_store(location: str | Path, state_model: type[StateT]) -> Store[StateT]:
    """The store at a SQLite path (refused when damaged) or a ``postgresql://`` URL; the caller closes it.

    Raises:
        UnsupportedStore: a URL of another scheme (mysql://...).
    """
    return ConversationStore.connect(location, state_model, checked=True)


@contextmanager
def opened_store(location: str | Path, state_model: type[StateT]) -> Iterator[Store[StateT]]:
    """`open_store` as a context manager that closes it."""
    store = open_store(location, state_model)
    try:
        yield store
    finally:
        store.close()
