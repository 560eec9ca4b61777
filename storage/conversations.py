"""ConversationStore: conversations, their steps and their query results in one SQLite file.

The schema lives in `storage/schema.py`. The state is any pydantic model (askdb
passes `agent.state.AgentState`); the store keeps it as one JSON document in
`conversations.state_data` and never looks inside except through the JSON1
paths that are the documented contract (`$.messages`, `$.sql_history`).
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, Field, ValidationError

from storage.clock import utc_now
from storage.episodes import EpisodeStore
from storage.errors import (
    ConversationNotFound,
    CorruptState,
    InvalidThreadId,
    ResultNotFound,
    StoreCorrupt,
    VersionConflict,
)
from storage.examples import ExampleStore
from storage.export import EXPORT_FORMAT, ExportImport  # noqa: F401  (EXPORT_FORMAT: kept importable here)
from storage.memory_items import MemoryItemStore
from storage.result_caps import ResultCaps
from storage.schema import migrate, schema_version
from storage.sqlite_tables import Transactions

StateT = TypeVar("StateT", bound=BaseModel)

THREAD_ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
TITLE_LENGTH = 50


def short_title(text: str) -> str:
    """`text` on one line, at most TITLE_LENGTH characters: a longer one is cut at a word boundary
    (anywhere, for scripts without spaces) and ends with an ellipsis, so a list never shows "sinc"."""
    text = " ".join(text.split())
    if len(text) <= TITLE_LENGTH:
        return text
    cut = text[:TITLE_LENGTH - 1]
    space = cut.rfind(" ")
    if space >= TITLE_LENGTH // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-") + "…"


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


class ConversationPage(BaseModel):
    items: list[Conversation]
    total: int


class StoredStep(BaseModel):
    id: int
    thread_id: str
    step_index: int
    data: dict[str, Any]
    created_at: str


class StoredResult(BaseModel):
    thread_id: str
    result_id: int
    sql: str
    columns: list[str]
    rows: list[list[Any]]
    row_count: int
    truncated: bool
    created_at: str


class NewResult(BaseModel):
    """A query result to keep, numbered by the caller (a turn knows its conversation's last number
    from `Loaded.last_result_id` and holds the turn lease)."""

    result_id: int
    sql: str
    columns: list[str]
    rows: list[list[Any]]
    truncated: bool


class Loaded(BaseModel, Generic[StateT]):
    conversation: Conversation
    state: StateT
    last_result_id: int = 0  # the number of the conversation's newest query result (0: none)


_SELECT_CONVERSATION = """
    SELECT thread_id, user_id, title, created_at, updated_at, tags, tool_categories, version,
           json_array_length(state_data, '$.messages')
             -- archived messages count too: positions run 0..n-1, so max + 1 (an index seek, not a count);
             -- lower case, as load() splices state_data in before the first upper-case keyword
             + coalesce((select max(position) + 1 from archived_messages a
                         where a.thread_id = conversations.thread_id), 0) AS message_count,
           (select count(*) from json_each(state_data, '$.messages')
            where case when type = 'object' then json_extract(value, '$.role') end = 'user')
             + (select count(*) from archived_messages a
                where a.thread_id = conversations.thread_id and a.role = 'user') AS question_count
    FROM conversations
"""


def check_thread_id(thread_id: str) -> str:
    if not isinstance(thread_id, str) or not THREAD_ID_PATTERN.match(thread_id):
        raise InvalidThreadId(str(thread_id))
    return thread_id


def connect(path: str | Path) -> sqlite3.Connection:
    """Open (creating if needed) a store file with the settings every connection needs."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30.0)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=30000")
    return conn


def connect_checked(path: str | Path) -> sqlite3.Connection:
    """`connect`, then SQLite's quick_check (issue 18): a corrupt or truncated store is refused, never
    served and written to. quick_check reads every page once; it skips the index cross-checks.

    Raises:
        StoreCorrupt: with how to recover from a backup.
    """
    conn = None
    try:
        conn = connect(path)
        problems = [row[0] for row in conn.execute("PRAGMA quick_check(3)")]
    except sqlite3.DatabaseError as exc:
        problems = [str(exc)]
    if problems == ["ok"]:
        return conn
    if conn is not None:
        conn.close()
    raise StoreCorrupt(f"the store {path} is damaged ({'; '.join(problems)}), so it is not served; stop the app "
                       f"and put a backup in its place (one made by `python -m app store backup BACKUP`: "
                       f"cp BACKUP {path}), or move the file aside to start with an empty store")


class ConversationStore(Transactions, ExportImport, ResultCaps, Generic[StateT]):
    """Conversations for many users in one SQLite file; safe to share between threads."""

    backend = "sqlite"

    def __init__(self, conn: sqlite3.Connection, state_model: type[StateT]):
        self.conn = conn
        self.state_model = state_model
        self.lock = threading.RLock()
        migrate(conn)

    @classmethod
    @contextmanager
    def open(cls, path: str | Path, state_model: type[StateT]) -> Iterator[ConversationStore[StateT]]:
        conn = connect(path)
        try:
            yield cls(conn, state_model)
        finally:
            conn.close()

    def backup(self, destination: str | Path) -> None:
        """Copy the whole store to `destination` with SQLite's online backup (safe while serving)."""
        destination = Path(destination)
        destination.parent.mkdir(parents=True, exist_ok=True)
        target = sqlite3.connect(destination)
        try:
            with self.lock:
                self.conn.backup(target)
        finally:
            target.close()

    def ping(self) -> None:
        """Raise if the store cannot answer a trivial query."""
        self._read("SELECT 1")

    def close(self) -> None:
        # Under the lock: closing while another thread is inside the connection can crash SQLite.
        with self.lock:
            self.conn.close()

    def schema_version(self) -> int:
        with self.lock:
            return schema_version(self.conn)

    def archive(self, message_model: type[BaseModel]):
        """The archive of this store's conversations (storage/archive.py), read back as `message_model`."""
        from storage.archive import ArchiveStore

        return ArchiveStore(self, message_model)

    def leases(self, *, seconds: float):
        """Turn leases in this store (storage/leases.py)."""
        from storage.leases import TurnLeases

        return TurnLeases(self, seconds=seconds)

    # The sidecar stores, on this store's connection and lock (storage/sqlite_tables.py).

    def episodes(self) -> EpisodeStore:
        """The episodes of this store's conversations (storage/episodes.py)."""
        return EpisodeStore(self.conn, lock=self.lock)

    def memory_items(self) -> MemoryItemStore:
        """The users' memory items in this store (storage/memory_items.py)."""
        return MemoryItemStore(self.conn, lock=self.lock)

    def examples(self) -> ExampleStore:
        """The verified examples and feedback in this store (storage/examples.py)."""
        return ExampleStore(self.conn, lock=self.lock)

    # -- conversations ------------------------------------------------------------

    def create(
        self,
        *,
        user_id: str,
        state: StateT,
        thread_id: str | None = None,
        title: str = "",
        tags: list[str] | None = None,
        tool_categories: list[str] | None = None,
    ) -> Conversation:
        """Create a conversation; a new random thread id unless one is given."""
        thread_id = check_thread_id(thread_id or uuid.uuid4().hex)
        now = utc_now()
        with self._write() as conn:
            try:
                conn.execute(
                    "INSERT INTO conversations (thread_id, user_id, title, created_at, updated_at,"
                    " tags, tool_categories, state_data, version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)",
                    (
                        thread_id,
                        user_id,
                        short_title(title),
                        now,
                        now,
                        json.dumps(tags or []),
                        json.dumps(tool_categories or []),
                        state.model_dump_json(),
                    ),
                )
            except sqlite3.IntegrityError as exc:
                raise InvalidThreadId(thread_id) from exc
        return self.get(thread_id, user_id=user_id)

    def get(self, thread_id: str, *, user_id: str) -> Conversation:
        """The metadata of one conversation of this user."""
        check_thread_id(thread_id)
        rows = self._read(_SELECT_CONVERSATION + " WHERE thread_id = ? AND user_id = ?", (thread_id, user_id))
        if not rows:
            raise ConversationNotFound(thread_id)
        return _conversation(rows[0])

    def load(self, thread_id: str, *, user_id: str) -> Loaded[StateT]:
        """The conversation and its state (migrated to the current version on the way in)."""
        check_thread_id(thread_id)
        rows = self._read(
            _SELECT_CONVERSATION.replace("FROM", ", state_data, (select coalesce(max(result_id), 0) from query_results q"
                                         " where q.thread_id = conversations.thread_id) AS last_result_id FROM", 1)
            + " WHERE thread_id = ? AND user_id = ?",
            (thread_id, user_id),
        )
        if not rows:
            raise ConversationNotFound(thread_id)
        try:
            state = self.state_model.model_validate_json(rows[0]["state_data"])
        except ValidationError as exc:
            raise CorruptState(thread_id, f"{exc.error_count()} validation errors; first: {exc.errors()[0]['msg']}") from exc
        return Loaded[self.state_model](conversation=_conversation(rows[0]), state=state,
                                        last_result_id=rows[0]["last_result_id"])

    def save(self, thread_id: str, *, user_id: str, state: StateT, expected_version: int, title: str | None = None) -> int:
        """Replace the state if nobody saved since `expected_version`; return the new version.

        Raises:
            VersionConflict: someone else saved first; nothing was written.
        """
        check_thread_id(thread_id)
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE conversations SET state_data = ?, version = version + 1, updated_at = ?,"
                " title = CASE WHEN title = '' AND ? IS NOT NULL THEN ? ELSE title END"
                " WHERE thread_id = ? AND user_id = ? AND version = ?",
                (
                    state.model_dump_json(),
                    utc_now(),
                    title,
                    short_title(title or ""),
                    thread_id,
                    user_id,
                    expected_version,
                ),
            )
            if cursor.rowcount == 0:
                row = conn.execute(
                    "SELECT version FROM conversations WHERE thread_id = ? AND user_id = ?", (thread_id, user_id)
                ).fetchone()
                if row is None:
                    raise ConversationNotFound(thread_id)
                raise VersionConflict(thread_id, expected_version, row[0])
        return expected_version + 1

    def list(self, *, user_id: str, search: str | None = None, limit: int = 50, offset: int = 0) -> ConversationPage:
        """This user's conversations, newest first, optionally filtered by a substring of the title or a tag."""
        where, params = "user_id = ?", [user_id]
        if search:
            where += (" AND (title LIKE ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM json_each(conversations.tags)"
                      " WHERE value LIKE ? ESCAPE '\\'))")
            params += ["%" + re.sub(r"([\\%_])", r"\\\1", search) + "%"] * 2
        total = self._read(f"SELECT count(*) FROM conversations WHERE {where}", tuple(params))[0][0]
        rows = self._read(
            _SELECT_CONVERSATION + f" WHERE {where} ORDER BY updated_at DESC, rowid DESC LIMIT ? OFFSET ?",
            (*params, max(0, limit), max(0, offset)),
        )
        return ConversationPage(items=[_conversation(r) for r in rows], total=total)

    def update(
        self, thread_id: str, *, user_id: str, title: str | None = None, tags: list[str] | None = None
    ) -> Conversation:
        """Rename and/or retag a conversation (does not change its state, version or last activity:
        renaming does not move it to the top of the list)."""
        check_thread_id(thread_id)
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE conversations SET title = coalesce(?, title), tags = coalesce(?, tags)"
                " WHERE thread_id = ? AND user_id = ?",
                (
                    None if title is None else title[:200],
                    None if tags is None else json.dumps(tags),
                    thread_id,
                    user_id,
                ),
            )
            if cursor.rowcount == 0:
                raise ConversationNotFound(thread_id)
        return self.get(thread_id, user_id=user_id)

    def delete(self, thread_id: str, *, user_id: str) -> None:
        """Delete the conversation and every row that belongs to it, in one transaction."""
        check_thread_id(thread_id)
        with self._write() as conn:
            cursor = conn.execute("DELETE FROM conversations WHERE thread_id = ? AND user_id = ?", (thread_id, user_id))
            if cursor.rowcount == 0:
                raise ConversationNotFound(thread_id)
            # ON DELETE CASCADE covers the sidecar tables; this is a second line should a
            # connection ever run without foreign_keys.
            for table in ("conversation_steps", "query_results", "archived_messages", "archived_sql"):
                conn.execute(f"DELETE FROM {table} WHERE thread_id = ?", (thread_id,))

    def threads_awaiting_answer(self) -> list[tuple[str, str]]:
        """(thread_id, user_id) of conversations whose last message is a question: a turn
        is running, or was interrupted."""
        rows = self._read(
            "SELECT thread_id, user_id FROM conversations"
            " WHERE json_extract(state_data, '$.messages[#-1].role') = 'user'"
        )
        return [(r["thread_id"], r["user_id"]) for r in rows]

    # -- steps --------------------------------------------------------------------

    def append_step(self, thread_id: str, *, step_index: int, step: BaseModel) -> int:
        """Append one step the moment it finishes; return its row id.

        Raises:
            ConversationNotFound: the conversation was deleted.
        """
        with self._write() as conn:
            try:
                cursor = conn.execute(
                    "INSERT INTO conversation_steps (thread_id, step_index, step_data, created_at) VALUES (?, ?, ?, ?)",
                    (check_thread_id(thread_id), step_index, step.model_dump_json(), utc_now()),
                )
            except sqlite3.IntegrityError as exc:
                raise ConversationNotFound(thread_id) from exc
            return cursor.lastrowid

    def record_step(self, thread_id: str, *, step_index: int, step: BaseModel,
                    result: NewResult | None = None) -> StoredResult | None:
        """Append a step and the query result it shows in one transaction; return the result as kept
        (within the caps), so the caller never reads back what it wrote.

        Raises:
            ConversationNotFound: the conversation was deleted; nothing was written.
        """
        with self._write() as conn:
            kept = None if result is None else self._insert_result(conn, thread_id, result)
            self.append_step(thread_id, step_index=step_index, step=step)
        return kept

    def steps(self, thread_id: str, *, user_id: str, after_id: int = 0) -> list[StoredStep]:
        """The steps of a conversation in the order they happened (optionally only newer ones)."""
        self.get(thread_id, user_id=user_id)
        rows = self._read(
            "SELECT id, thread_id, step_index, step_data, created_at FROM conversation_steps"
            " WHERE thread_id = ? AND id > ? ORDER BY id",
            (thread_id, after_id),
        )
        return [
            StoredStep(id=r["id"], thread_id=r["thread_id"], step_index=r["step_index"],
                       data=json.loads(r["step_data"]), created_at=r["created_at"])
            for r in rows
        ]

    # -- query results ------------------------------------------------------------

    def save_result(self, thread_id: str, *, sql: str, columns: list[str], rows: list[list[Any]], truncated: bool) -> int:
        """Keep a query result beside the state, within the result caps (`ResultCaps`); return its
        number in the conversation (1, 2, ...)."""
        with self._write() as conn:
            result_id = conn.execute("SELECT coalesce(max(result_id), 0) + 1 FROM query_results WHERE thread_id = ?",
                                     (thread_id,)).fetchone()[0]
            new = NewResult(result_id=result_id, sql=sql, columns=columns, rows=rows, truncated=truncated)
            return self._insert_result(conn, thread_id, new).result_id

    def _insert_result(self, conn: sqlite3.Connection, thread_id: str, result: NewResult) -> StoredResult:
        stored = conn.execute("SELECT coalesce(sum(length(CAST(rows AS BLOB))), 0) FROM query_results"
                              " WHERE thread_id = ?", (thread_id,)).fetchone()[0]
        rows_json, kept, cut = self._rows_within_caps(result.rows, stored_bytes=stored)
        kept_result = StoredResult(thread_id=check_thread_id(thread_id), result_id=result.result_id, sql=result.sql,
                                   columns=result.columns, rows=json.loads(rows_json), row_count=kept,
                                   truncated=result.truncated or cut, created_at=utc_now())
        try:
            conn.execute(
                "INSERT INTO query_results (thread_id, result_id, sql, columns, rows, row_count, truncated,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (thread_id, result.result_id, result.sql, json.dumps(result.columns), rows_json,
                 kept, int(kept_result.truncated), kept_result.created_at),
            )
        except sqlite3.IntegrityError as exc:
            raise ConversationNotFound(thread_id) from exc
        return kept_result

    def load_result(self, thread_id: str, result_id: int, *, user_id: str) -> StoredResult:
        self.get(thread_id, user_id=user_id)
        rows = self._read(
            "SELECT * FROM query_results WHERE thread_id = ? AND result_id = ?", (thread_id, result_id)
        )
        if not rows:
            raise ResultNotFound(f"no result {result_id} in conversation {thread_id!r}")
        r = rows[0]
        return StoredResult(thread_id=r["thread_id"], result_id=r["result_id"], sql=r["sql"],
                            columns=json.loads(r["columns"]), rows=json.loads(r["rows"]),
                            row_count=r["row_count"], truncated=bool(r["truncated"]), created_at=r["created_at"])

    def _result_ids(self, thread_id: str) -> list[int]:
        return [r[0] for r in self._read(
            "SELECT result_id FROM query_results WHERE thread_id = ? ORDER BY result_id", (thread_id,))]


def _conversation(row: sqlite3.Row) -> Conversation:
    return Conversation(
        thread_id=row["thread_id"],
        user_id=row["user_id"],
        title=row["title"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        tags=_json_list(row["tags"]),
        tool_categories=_json_list(row["tool_categories"]),
        version=row["version"],
        message_count=row["message_count"] or 0,
        question_count=row["question_count"] or 0,
    )


def _json_list(text: str | None) -> list[str]:
    try:
        value = json.loads(text or "[]")
    except ValueError:
        return []
    return [str(v) for v in value] if isinstance(value, list) else []
