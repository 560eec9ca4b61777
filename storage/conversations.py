"""ConversationStore: conversations, their steps and their query results, on SQLite or PostgreSQL.

Written once over the store core (storage/sql.py); the backend is the `Database` it is given
(`ConversationStore.connect` opens one from a path or URL). The schema is in each backend's
migrations (storage/schema.py). The state is any pydantic model (askdb passes
`agent.state.AgentState`); the store keeps it as one JSON document in `conversations.state_data`
and never looks inside except through the JSON paths that are the documented contract
(`messages`, `sql_history`). The sidecar stores (archive, leases, episodes, memory items,
examples) share its database handle and depend on the transaction interface only.
"""

from __future__ import annotations

import json
import re
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel, Field, ValidationError

from storage.archive import ArchiveStore, MessageT
from storage.backends import as_database, open_database
from storage.episodes import EpisodeStore
from storage.errors import ConversationNotFound, CorruptState, InvalidThreadId
from storage.examples import ExampleStore
from storage.export import EXPORT_FORMAT, ExportImport  # noqa: F401  (EXPORT_FORMAT: kept importable here)
from storage.leases import LEASE_SECONDS, TurnLeases
from storage.memory_items import MemoryItemStore
from storage.schema import migrate
from storage.steps import StepsAndResults
from storage.sql import Database, Dialect, Row, Transaction, UniqueViolation
from storage.threads import check_thread_id, short_title, state_columns, write_state
from storage.validity import check, repaired

StateT = TypeVar("StateT", bound=BaseModel)

class Conversation(BaseModel):
    """A conversation's metadata, without its state."""

    thread_id: str
    user_id: str
    title: str
    created_at: str
    updated_at: str
    tags: list[str] = Field(default_factory=list)
    tool_categories: list[str] = Field(default_factory=list)
    version: int
    message_count: int = 0
    question_count: int = 0  # the user's questions (archived ones too), what the list shows
    source: str | None = None  # the state's `source` (the data source it asks); None: the state names none


class ConversationPage(BaseModel):
    items: list[Conversation]
    total: int


class Loaded(BaseModel, Generic[StateT]):
    conversation: Conversation
    state: StateT
    last_result_id: int = 0  # the number of the conversation's newest query result (0: none)


def _select_conversation(d: Dialect, extra: str = "") -> str:
    """The metadata of conversations (and `extra` columns), for a WHERE to follow."""
    return f"""
    SELECT thread_id, user_id, title, {d.timestamp("created_at")} AS created_at,
           {d.timestamp("updated_at")} AS updated_at, {d.json_out("tags")} AS tags,
           {d.json_out("tool_categories")} AS tool_categories, version,
           -- the hot state's counts are kept beside it (write_state); archived messages count too:
           -- positions run 0..n-1, so max + 1 (an index seek, not a count)
           live_messages + coalesce((SELECT max(position) + 1 FROM archived_messages a
                                     WHERE a.thread_id = conversations.thread_id), 0) AS message_count,
           live_questions + (SELECT count(*) FROM archived_messages a
                             WHERE a.thread_id = conversations.thread_id AND a.role = 'user') AS question_count,
           live_source AS source
           {extra}
    FROM conversations"""


class ConversationStore(ExportImport, StepsAndResults, Generic[StateT]):
    """Conversations for many users in one store; safe to share between threads (and, on
    PostgreSQL, between app servers).

    Args:
        db: the store's database handle, or an open SQLite connection (`storage.sqlite_backend.connect`);
            the caller closes what it opened (`connect` makes a store that closes its own).
    """

    def __init__(self, db: Database | sqlite3.Connection, state_model: type[StateT], *, owns_db: bool = False):
        self.db, self.state_model, self._owns_db = as_database(db), state_model, owns_db
        self.backend = self.db.dialect.name  # "sqlite" or "postgresql"
        self._loaded = Loaded[state_model]  # pydantic builds a generic class per subscript: once, not per load
        self._select = _select_conversation(self.db.dialect)
        self._select_state = _select_conversation(
            self.db.dialect, f", {self.db.dialect.json_out('state_data')} AS state_data, (SELECT coalesce(max(result_id),"
            " 0) FROM query_results q WHERE q.thread_id = conversations.thread_id) AS last_result_id")
        migrate(self.db)

    @classmethod
    def connect(cls, location: str | Path, state_model: type[StateT], *, checked: bool = False,
                timeout_s: float = 30.0) -> ConversationStore[StateT]:
        """The store at a SQLite path or a ``postgresql://`` URL, on a connection (pool) of its own
        that `close()` closes; `checked`: a damaged SQLite file is refused.

        Raises:
            StoreCorrupt: `checked` and the file fails SQLite's quick_check.
            StoreUnavailable: no PostgreSQL connection within `timeout_s`.
        """
        db = open_database(location, checked=checked, timeout_s=timeout_s)
        try:
            return cls(db, state_model, owns_db=True)
        except BaseException:
            db.close()
            raise

    @classmethod
    @contextmanager
    def open(cls, location: str | Path, state_model: type[StateT]) -> Iterator[ConversationStore[StateT]]:
        store = cls.connect(location, state_model)
        try:
            yield store
        finally:
            store.close()

    def backup(self, destination: str | Path) -> None:
        """Copy the whole store to `destination`: SQLite's online backup, or pg_dump's custom format
        (both safe while serving).

        Raises:
            BackupFailed: pg_dump is not on PATH, or failed.
        """
        self.db.backup(destination)

    def ping(self) -> None:
        """Raise if the store cannot answer a trivial query."""
        self.db.value("SELECT 1 AS one")

    def close(self) -> None:
        if self._owns_db:
            self.db.close()

    def schema_version(self) -> int:
        return self.db.schema_version()

    def transaction(self) -> AbstractContextManager[Transaction]:
        """One write transaction around several calls of this store and of the stores sharing its
        database (leases, archive, sidecars); all or nothing.

        Raises:
            StoreUnavailable: the store cannot be reached or written; nothing was written.
        """
        return self.db.write()

    def archive(self, message_model: type[MessageT]) -> ArchiveStore[MessageT]:
        """The archive of this store's conversations (storage/archive.py), read back as `message_model`."""
        return ArchiveStore(self.db, message_model)

    def leases(self, *, seconds: float = LEASE_SECONDS) -> TurnLeases:
        """Turn leases in this store (storage/leases.py), shared by every process on it."""
        return TurnLeases(self.db, seconds=seconds)

    def episodes(self) -> EpisodeStore:
        """The episodes of this store's conversations (storage/episodes.py)."""
        return EpisodeStore(self.db)

    def memory_items(self) -> MemoryItemStore:
        """The users' memory items in this store (storage/memory_items.py)."""
        return MemoryItemStore(self.db)

    def examples(self) -> ExampleStore:
        """The verified examples and feedback in this store (storage/examples.py)."""
        return ExampleStore(self.db)

    # -- conversations ------------------------------------------------------------

    def create(self, *, user_id: str, state: StateT, thread_id: str | None = None, title: str = "",
               tags: list[str] | None = None, tool_categories: list[str] | None = None) -> Conversation:
        """Create a conversation; a new random thread id unless one is given."""
        thread_id = check_thread_id(thread_id or uuid.uuid4().hex)
        check(title, "the title"), check(tags, "the tags")
        d = self.db.dialect
        with self.db.write() as tx:
            try:
                tx.execute(
                    # One clock reading for both, so a new conversation's created_at == updated_at.
                    "INSERT INTO conversations (thread_id, user_id, title, tags, tool_categories, state_data,"
                    " live_messages, live_questions, live_source, version, created_at, updated_at)"
                    f" SELECT ?, ?, ?, {d.json_in}, {d.json_in}, {d.json_in}, ?, ?, ?, 1, t.ts, t.ts"
                    f" FROM (SELECT {d.now} AS ts) t",
                    (thread_id, user_id, short_title(title), json.dumps(tags or []), json.dumps(tool_categories or []),
                     d.json_param(state.model_dump_json()), *state_columns(state)))
            except UniqueViolation as exc:
                raise InvalidThreadId(thread_id) from exc
        return self.get(thread_id, user_id=user_id)

    def get(self, thread_id: str, *, user_id: str) -> Conversation:
        """The metadata of one conversation of this user."""
        check_thread_id(thread_id)
        row = self.db.row(self._select + " WHERE thread_id = ? AND user_id = ?", (thread_id, user_id))
        if row is None:
            raise ConversationNotFound(thread_id)
        return _conversation(row)

    def load(self, thread_id: str, *, user_id: str) -> Loaded[StateT]:
        """The conversation and its state (migrated to the current version on the way in)."""
        check_thread_id(thread_id)
        row = self.db.row(self._select_state + " WHERE thread_id = ? AND user_id = ?", (thread_id, user_id))
        if row is None:
            raise ConversationNotFound(thread_id)
        try:
            state = self.state_model.model_validate_json(row["state_data"])
        except ValidationError as exc:
            raise CorruptState(thread_id, f"{exc.error_count()} validation errors; first: {exc.errors()[0]['msg']}") from exc
        return self._loaded(conversation=_conversation(row), state=state,
                                        last_result_id=row["last_result_id"])

    def save(self, thread_id: str, *, user_id: str, state: StateT, expected_version: int, title: str | None = None) -> int:
        """Replace the state if nobody saved since `expected_version`; return the new version.

        Raises:
            VersionConflict: someone else saved first (in any process); nothing was written.
        """
        check_thread_id(thread_id)
        with self.db.write() as tx:
            return write_state(tx, thread_id, user_id=user_id, state=state,
                               expected_version=expected_version, title=title)

    def list(self, *, user_id: str, search: str | None = None, limit: int = 50, offset: int = 0) -> ConversationPage:
        """This user's conversations, newest first, optionally filtered by a substring of the title or a tag
        (in any case)."""
        d = self.db.dialect
        where, params = "user_id = ?", [user_id]
        if search:
            where += (f" AND (title {d.like} ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM"
                      f" {d.json_elements('conversations.tags')} WHERE {d.element_value()} {d.like} ? ESCAPE '\\'))")
            params += ["%" + re.sub(r"([\\%_])", r"\\\1", search) + "%"] * 2
        with self.db.read() as tx:
            total = tx.value(f"SELECT count(*) AS n FROM conversations WHERE {where}", params)
            rows = tx.rows(self._select + f" WHERE {where} ORDER BY conversations.updated_at DESC,"
                           f" conversations.{d.insertion_order} DESC LIMIT ? OFFSET ?",
                           (*params, max(0, limit), max(0, offset)))
        return ConversationPage(items=[_conversation(r) for r in rows], total=total)

    def update(self, thread_id: str, *, user_id: str, title: str | None = None,
               tags: list[str] | None = None) -> Conversation:
        """Rename and/or retag a conversation (does not change its state, version or last activity:
        renaming does not move it to the top of the list)."""
        check_thread_id(thread_id)
        check(title, "the title"), check(tags, "the tags")
        with self.db.write() as tx:
            cursor = tx.execute(
                f"UPDATE conversations SET title = coalesce(?, title), tags = coalesce({self.db.dialect.json_in}, tags)"
                " WHERE thread_id = ? AND user_id = ?",
                (None if title is None else title[:200], None if tags is None else json.dumps(tags), thread_id, user_id))
            if cursor.rowcount == 0:
                raise ConversationNotFound(thread_id)
        return self.get(thread_id, user_id=user_id)

    def delete(self, thread_id: str, *, user_id: str) -> None:
        """Delete the conversation and every row that belongs to it, in one transaction."""
        check_thread_id(thread_id)
        with self.db.write() as tx:
            cursor = tx.execute("DELETE FROM conversations WHERE thread_id = ? AND user_id = ?", (thread_id, user_id))
            if cursor.rowcount == 0:
                raise ConversationNotFound(thread_id)
            # ON DELETE CASCADE covers the sidecar tables; this is a second line should a SQLite
            # connection ever run without foreign_keys.
            for table in ("conversation_steps", "query_results", "archived_messages", "archived_sql"):
                tx.execute(f"DELETE FROM {table} WHERE thread_id = ?", (thread_id,))

    def threads_awaiting_answer(self) -> list[tuple[str, str]]:
        """(thread_id, user_id) of conversations whose last message is a question: a turn
        is running, or was interrupted."""
        rows = self.db.rows("SELECT thread_id, user_id FROM conversations"
                            f" WHERE {self.db.dialect.last_element_text('state_data', 'messages', 'role')} = 'user'")
        return [(r["thread_id"], r["user_id"]) for r in rows]


def _conversation(row: Row) -> Conversation:
    # repaired: a title or tag stored before the check (a lone surrogate) must not break every list.
    return Conversation(
        thread_id=row["thread_id"], user_id=row["user_id"], title=repaired(row["title"]), created_at=row["created_at"],
        updated_at=row["updated_at"], tags=_json_list(row["tags"]), tool_categories=_json_list(row["tool_categories"]),
        version=row["version"], message_count=row["message_count"] or 0, question_count=row["question_count"] or 0,
        source=row["source"])


def _json_list(text: str | None) -> list[str]:
    try:
        value = json.loads(text or "[]")
    except ValueError:
        return []
    return [repaired(str(v)) for v in value] if isinstance(value, list) else []
