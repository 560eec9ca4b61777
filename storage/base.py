"""The store interface both backends satisfy, and the factory that picks one.

`ConversationStore` (one SQLite file) and `PostgresConversationStore` (a PostgreSQL server,
for several app servers) take and return the same models and raise the same errors;
tests/storage/test_conformance.py runs one suite against both. Each hands out its sidecar
stores (episodes, memory items, examples), which share its connection or pool.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, TypeVar, runtime_checkable

import psycopg
from pydantic import BaseModel

from storage.conversations import Conversation, ConversationPage, Loaded, NewResult, StoredResult, StoredStep
from storage.episodes import EpisodeStore
from storage.examples import ExampleStore
from storage.memory_items import MemoryItemStore

if TYPE_CHECKING:  # psycopg's pool and the PostgreSQL stores load only when a URL is opened
    from storage.postgres.episodes import PostgresEpisodeStore
    from storage.postgres.examples import PostgresExampleStore
    from storage.postgres.memory_items import PostgresMemoryItemStore

StateT = TypeVar("StateT", bound=BaseModel)

# The sidecar stores of either backend: the same methods, models and errors.
Episodes: TypeAlias = "EpisodeStore | PostgresEpisodeStore"
MemoryItems: TypeAlias = "MemoryItemStore | PostgresMemoryItemStore"
Examples: TypeAlias = "ExampleStore | PostgresExampleStore"
# What a store may raise besides `StoreError`: its driver's own errors (a constraint it does
# not translate, a broken connection mid-statement).
DRIVER_ERRORS: tuple[type[Exception], ...] = (sqlite3.Error, psycopg.Error)


def is_postgres_url(location: object) -> bool:
    """Whether a store setting names a PostgreSQL server rather than a SQLite file."""
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))


@runtime_checkable
class Store(Protocol[StateT]):
    """Conversations, their steps and query results, for many users; safe to share between threads."""

    backend: str  # "sqlite" or "postgresql"
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
    def archive(self, message_model: type[BaseModel]) -> Any: ...
    def leases(self, *, seconds: float) -> Any: ...
    def episodes(self) -> Episodes: ...
    def memory_items(self) -> MemoryItems: ...
    def examples(self) -> Examples: ...
    def transaction(self) -> AbstractContextManager[Any]: ...
    def schema_version(self) -> int: ...
    def backup(self, destination: str | Path) -> None: ...
    def ping(self) -> None: ...
    def close(self) -> None: ...


def open_store(location: str | Path, state_model: type[StateT]) -> Store[StateT]:
    """The store at a SQLite path or a ``postgresql://`` URL; the caller closes it."""
    if is_postgres_url(location):
        from storage.postgres.conversations import PostgresConversationStore

        return PostgresConversationStore.connect(str(location), state_model)
    from storage.conversations import ConversationStore, connect_checked

    return ConversationStore(connect_checked(location), state_model)


@contextmanager
def opened_store(location: str | Path, state_model: type[StateT]) -> Iterator[Store[StateT]]:
    """`open_store` as a context manager that closes it."""
    store = open_store(location, state_model)
    try:
        yield store
    finally:
        store.close()
