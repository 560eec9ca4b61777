"""PostgresConversationStore: the conversation store on a PostgreSQL server, for several app servers.

The same interface, models and errors as `storage.conversations.ConversationStore` (the
`storage.base.Store` protocol); schema in `storage/postgres/migrations/`. `state_data` is
JSONB. psycopg 3 with a connection pool; every write is one short transaction. A save is
the same optimistic version check as on SQLite (an UPDATE ... WHERE version = expected),
which PostgreSQL's row lock makes safe between servers; turns on one thread are kept
apart by leases (storage/postgres/leases.py).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Generic, TypeVar

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import ConnectionPool
from pydantic import BaseModel, ValidationError

from storage.conversations import (
    Conversation, ConversationPage, Loaded, NewResult, StoredResult, StoredStep, check_thread_id, short_title,
)
from storage.errors import (
    BackupFailed, ConversationNotFound, CorruptState, InvalidThreadId, ResultNotFound, VersionConflict,
)
from storage.export import ExportImport
from storage.result_caps import ResultCaps
from storage.postgres.episodes import PostgresEpisodeStore
from storage.postgres.examples import PostgresExampleStore
from storage.postgres.memory_items import PostgresMemoryItemStore
from storage.postgres.schema import migrate, schema_version
from storage.postgres.tables import POOL_SIZE, PostgresTransactions, iso, jsonb_text, open_pool

StateT = TypeVar("StateT", bound=BaseModel)

_SELECT_CONVERSATION = f"""
    SELECT thread_id, user_id, title, {iso("created_at")} AS created_at,
           {iso("updated_at")} AS updated_at, tags, tool_categories, version,
           CASE jsonb_typeof(state_data -> 'messages') WHEN 'array' THEN jsonb_array_length(state_data -> 'messages')
                ELSE 0 END
             -- archived messages count too: positions run 0..n-1, so max + 1 (an index seek, not a count)
             + coalesce((SELECT max(position) + 1 FROM archived_messages a
                         WHERE a.thread_id = conversations.thread_id), 0) AS message_count,
           (SELECT count(*) FROM jsonb_array_elements(CASE jsonb_typeof(state_data -> 'messages')
                                                      WHEN 'array' THEN state_data -> 'messages' ELSE '[]' END) m
             WHERE m ->> 'role' = 'user')
             + (SELECT count(*) FROM archived_messages a
                WHERE a.thread_id = conversations.thread_id AND a.role = 'user') AS question_count
             {{extra}}
    FROM conversations"""
class PostgresConversationStore(PostgresTransactions, ExportImport, ResultCaps, Generic[StateT]):
    """Conversations for many users on a PostgreSQL server; safe to share between threads and servers.

    Args:
        pool: an open pool of autocommit connections (see `connect`); the store does not close it
            unless it made it.
    """

    backend = "postgresql"

    def __init__(self, pool: ConnectionPool, state_model: type[StateT], *, owns_pool: bool = False):
        self.pool, self.state_model, self._owns_pool = pool, state_model, owns_pool
        with self._connection() as conn:
            migrate(conn)

    @classmethod
    def connect(cls, url: str, state_model: type[StateT], *, pool_size: int = POOL_SIZE,
                timeout_s: float = 30.0) -> PostgresConversationStore[StateT]:
        """A store with its own pool of connections to `url`; `close()` closes it.

        Raises:
            StoreUnavailable: no connection within `timeout_s`.
        """
        return cls(open_pool(url, size=pool_size, timeout_s=timeout_s), state_model, owns_pool=True)

    @classmethod
    @contextmanager
    def open(cls, url: str, state_model: type[StateT]) -> Iterator[PostgresConversationStore[StateT]]:
        store = cls.connect(url, state_model)
        try:
            yield store
        finally:
            store.close()

    def close(self) -> None:
        if self._owns_pool:
            self.pool.close()

    def backup(self, destination: str | Path) -> None:
        """Dump the store's database to `destination` with pg_dump (custom format, for pg_restore):
        one consistent snapshot in one transaction, which blocks no turn.

        Raises:
            BackupFailed: pg_dump is not on PATH, or failed (with its message).
        """
        pg_dump = shutil.which("pg_dump")
        if pg_dump is None:
            raise BackupFailed("the store is on PostgreSQL and pg_dump is not on PATH; install PostgreSQL's client "
                               "tools (the server's major version or newer), or run pg_dump where they are")
        params = conninfo_to_dict(self.pool.conninfo)
        # The password travels in the environment: other users of the machine can read a command line.
        env = {**os.environ, **({"PGPASSWORD": str(params.pop("password"))} if "password" in params else {})}
        destination = Path(destination)
        destination.parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([pg_dump, "--format=custom", f"--file={destination}",
                               f"--dbname={make_conninfo(**params)}"], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise BackupFailed(f"pg_dump failed: {done.stderr.strip()}")

    def ping(self) -> None:
        """Raise if the store cannot answer a trivial query."""
        self._read("SELECT 1")

    def schema_version(self) -> int:
        with self._connection() as conn:
            return schema_version(conn)

    def archive(self, message_model: type[BaseModel]):
        """The archive of this store's conversations, read back as `message_model`."""
        from storage.postgres.archive import PostgresArchiveStore

        return PostgresArchiveStore(self, message_model)

    def leases(self, *, seconds: float):
        """Turn leases in this store, shared by every app server."""
        from storage.postgres.leases import PostgresTurnLeases

        return PostgresTurnLeases(self, seconds=seconds)

    # The sidecar stores, on this store's pool (storage/postgres/tables.py).

    def episodes(self) -> PostgresEpisodeStore:
        """The episodes of this store's conversations (storage/postgres/episodes.py)."""
        return PostgresEpisodeStore(self.pool)

    def memory_items(self) -> PostgresMemoryItemStore:
        """The users' memory items in this store (storage/postgres/memory_items.py)."""
        return PostgresMemoryItemStore(self.pool)

    def examples(self) -> PostgresExampleStore:
        """The verified examples and feedback in this store (storage/postgres/examples.py)."""
        return PostgresExampleStore(self.pool)

    # -- conversations ------------------------------------------------------------

    def create(self, *, user_id: str, state: StateT, thread_id: str | None = None, title: str = "",
               tags: list[str] | None = None, tool_categories: list[str] | None = None) -> Conversation:
        """Create a conversation; a new random thread id unless one is given."""
        import uuid

        thread_id = check_thread_id(thread_id or uuid.uuid4().hex)
        try:
            with self._write() as conn:
                conn.execute(
                    # One clock reading for both, so a new conversation's created_at == updated_at.
                    "INSERT INTO conversations (thread_id, user_id, title, tags, tool_categories, state_data, version,"
                    " created_at, updated_at)"
                    " SELECT %s, %s, %s, %s::jsonb, %s::jsonb, %s::jsonb, 1, t.ts, t.ts"
                    " FROM (SELECT clock_timestamp() AS ts) t",
                    (thread_id, user_id, short_title(title), json.dumps(tags or []),
                     json.dumps(tool_categories or []), jsonb_text(state.model_dump_json())))
        except psycopg.errors.UniqueViolation as exc:
            raise InvalidThreadId(thread_id) from exc
        return self.get(thread_id, user_id=user_id)

    def get(self, thread_id: str, *, user_id: str) -> Conversation:
        """The metadata of one conversation of this user."""
        check_thread_id(thread_id)
        rows = self._read(_SELECT_CONVERSATION.format(extra="") + " WHERE thread_id = %s AND user_id = %s",
                          (thread_id, user_id))
        if not rows:
            raise ConversationNotFound(thread_id)
        return _conversation(rows[0])

    def load(self, thread_id: str, *, user_id: str) -> Loaded[StateT]:
        """The conversation and its state."""
        check_thread_id(thread_id)
        rows = self._read(_SELECT_CONVERSATION.format(
            extra=", state_data::text AS state_data, (SELECT coalesce(max(result_id), 0) FROM query_results q"
                  " WHERE q.thread_id = conversations.thread_id) AS last_result_id")
                          + " WHERE thread_id = %s AND user_id = %s", (thread_id, user_id))
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
            VersionConflict: someone else saved first (on any server); nothing was written.
        """
        check_thread_id(thread_id)
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE conversations SET state_data = %s::jsonb, version = version + 1, updated_at = clock_timestamp(),"
                " title = CASE WHEN title = '' AND %s::text IS NOT NULL THEN %s ELSE title END"
                " WHERE thread_id = %s AND user_id = %s AND version = %s",
                (jsonb_text(state.model_dump_json()), title, short_title(title or ""), thread_id, user_id,
                 expected_version))
            if cursor.rowcount == 0:
                self._raise_conflict(conn, thread_id, user_id, expected_version)
        return expected_version + 1

    def _raise_conflict(self, conn: psycopg.Connection, thread_id: str, user_id: str, expected: int) -> None:
        row = conn.execute("SELECT version FROM conversations WHERE thread_id = %s AND user_id = %s",
                           (thread_id, user_id)).fetchone()
        if row is None:
            raise ConversationNotFound(thread_id)
        raise VersionConflict(thread_id, expected, row[0])

    def list(self, *, user_id: str, search: str | None = None, limit: int = 50, offset: int = 0) -> ConversationPage:
        """This user's conversations, newest first, optionally filtered by a substring of the title or a tag."""
        where, params = "user_id = %s", [user_id]
        if search:
            # ILIKE: SQLite's LIKE ignores case too.
            where += (" AND (title ILIKE %s ESCAPE '\\' OR EXISTS (SELECT 1 FROM jsonb_array_elements_text(tags) AS t"
                      " WHERE t ILIKE %s ESCAPE '\\'))")
            params += ["%" + re.sub(r"([\\%_])", r"\\\1", search) + "%"] * 2
        total = self._read(f"SELECT count(*) AS n FROM conversations WHERE {where}", tuple(params))[0]["n"]
        rows = self._read(_SELECT_CONVERSATION.format(extra="") + f" WHERE {where}"
                          " ORDER BY updated_at DESC, seq DESC LIMIT %s OFFSET %s",
                          (*params, max(0, limit), max(0, offset)))
        return ConversationPage(items=[_conversation(r) for r in rows], total=total)

    def update(self, thread_id: str, *, user_id: str, title: str | None = None,
               tags: list[str] | None = None) -> Conversation:
        """Rename and/or retag a conversation (does not change its state, version or last activity:
        renaming does not move it to the top of the list)."""
        check_thread_id(thread_id)
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE conversations SET title = coalesce(%s, title), tags = coalesce(%s::jsonb, tags)"
                " WHERE thread_id = %s AND user_id = %s",
                (None if title is None else title[:200], None if tags is None else json.dumps(tags),
                 thread_id, user_id))
            if cursor.rowcount == 0:
                raise ConversationNotFound(thread_id)
        return self.get(thread_id, user_id=user_id)

    def delete(self, thread_id: str, *, user_id: str) -> None:
        """Delete the conversation and every row that belongs to it, in one transaction
        (PostgreSQL always enforces the ON DELETE CASCADE foreign keys)."""
        check_thread_id(thread_id)
        with self._write() as conn:
            cursor = conn.execute("DELETE FROM conversations WHERE thread_id = %s AND user_id = %s", (thread_id, user_id))
            if cursor.rowcount == 0:
                raise ConversationNotFound(thread_id)

    def threads_awaiting_answer(self) -> list[tuple[str, str]]:
        """(thread_id, user_id) of conversations whose last message is a question."""
        rows = self._read("SELECT thread_id, user_id FROM conversations"
                          " WHERE jsonb_typeof(state_data -> 'messages') = 'array'"
                          " AND state_data -> 'messages' -> -1 ->> 'role' = 'user'")
        return [(r["thread_id"], r["user_id"]) for r in rows]

    # -- steps --------------------------------------------------------------------

    def append_step(self, thread_id: str, *, step_index: int, step: BaseModel) -> int:
        """Append one step the moment it finishes; return its row id.

        Raises:
            ConversationNotFound: the conversation was deleted.
        """
        try:
            with self._write() as conn:
                return conn.execute(
                    "INSERT INTO conversation_steps (thread_id, step_index, step_data)"
                    " VALUES (%s, %s, %s::jsonb) RETURNING id",
                    (check_thread_id(thread_id), step_index, jsonb_text(step.model_dump_json()))).fetchone()[0]
        except psycopg.errors.ForeignKeyViolation as exc:
            raise ConversationNotFound(thread_id) from exc

    def record_step(self, thread_id: str, *, step_index: int, step: BaseModel,
                    result: NewResult | None = None) -> StoredResult | None:
        """Append a step and the query result it shows in one transaction; return the result as kept.

        Raises:
            ConversationNotFound: the conversation was deleted; nothing was written.
        """
        with self._write() as conn:
            kept = None if result is None else self._insert_result(conn, check_thread_id(thread_id), result)
            self.append_step(thread_id, step_index=step_index, step=step)
        return kept

    def steps(self, thread_id: str, *, user_id: str, after_id: int = 0) -> list[StoredStep]:
        """The steps of a conversation in the order they happened (optionally only newer ones)."""
        self.get(thread_id, user_id=user_id)
        rows = self._read(
            f"SELECT id, thread_id, step_index, step_data, {iso('created_at')} AS created_at"
            " FROM conversation_steps WHERE thread_id = %s AND id > %s ORDER BY id", (thread_id, after_id))
        return [StoredStep(id=r["id"], thread_id=r["thread_id"], step_index=r["step_index"], data=r["step_data"],
                           created_at=r["created_at"]) for r in rows]

    # -- query results ------------------------------------------------------------

    def save_result(self, thread_id: str, *, sql: str, columns: list[str], rows: list[list[Any]], truncated: bool) -> int:
        """Keep a full query result beside the state; return its number in the conversation (1, 2, ...)."""
        check_thread_id(thread_id)
        with self._write() as conn:
            # The conversation's row lock numbers results one at a time, whichever server saves them.
            if conn.execute("SELECT 1 FROM conversations WHERE thread_id = %s FOR UPDATE", (thread_id,)).fetchone() is None:
                raise ConversationNotFound(thread_id)
            result_id = conn.execute("SELECT coalesce(max(result_id), 0) + 1 FROM query_results WHERE thread_id = %s",
                                     (thread_id,)).fetchone()[0]
            new = NewResult(result_id=result_id, sql=sql, columns=columns, rows=rows, truncated=truncated)
            return self._insert_result(conn, thread_id, new).result_id

    def _insert_result(self, conn: psycopg.Connection, thread_id: str, result: NewResult) -> StoredResult:
        stored = conn.execute("SELECT coalesce(sum(octet_length(rows::text)), 0) FROM query_results"
                              " WHERE thread_id = %s", (thread_id,)).fetchone()[0]
        rows_json, kept, cut = self._rows_within_caps(result.rows, stored_bytes=stored)
        try:
            created_at = conn.execute(
                "INSERT INTO query_results (thread_id, result_id, sql, columns, rows, row_count, truncated)"
                f" VALUES (%s, %s, %s, %s::jsonb, %s::jsonb, %s, %s) RETURNING {iso('created_at')}",
                (thread_id, result.result_id, result.sql, json.dumps(result.columns), jsonb_text(rows_json), kept,
                 result.truncated or cut)).fetchone()[0]
        except psycopg.errors.ForeignKeyViolation as exc:
            raise ConversationNotFound(thread_id) from exc
        return StoredResult(thread_id=thread_id, result_id=result.result_id, sql=result.sql, columns=result.columns,
                            rows=json.loads(jsonb_text(rows_json)), row_count=kept, truncated=result.truncated or cut,
                            created_at=created_at)

    def load_result(self, thread_id: str, result_id: int, *, user_id: str) -> StoredResult:
        self.get(thread_id, user_id=user_id)
        rows = self._read(
            f"SELECT thread_id, result_id, sql, columns, rows, row_count, truncated,"
            f" {iso('created_at')} AS created_at FROM query_results WHERE thread_id = %s AND result_id = %s",
            (thread_id, result_id))
        if not rows:
            raise ResultNotFound(f"no result {result_id} in conversation {thread_id!r}")
        return StoredResult(**rows[0])

    def _result_ids(self, thread_id: str) -> list[int]:
        return [r["result_id"] for r in self._read(
            "SELECT result_id FROM query_results WHERE thread_id = %s ORDER BY result_id", (thread_id,))]


def _conversation(row: dict[str, Any]) -> Conversation:
    return Conversation(
        thread_id=row["thread_id"], user_id=row["user_id"], title=row["title"], created_at=row["created_at"],
        updated_at=row["updated_at"], tags=_json_list(row["tags"]), tool_categories=_json_list(row["tool_categories"]),
        version=row["version"], message_count=row["message_count"] or 0,
        question_count=row["question_count"] or 0)


def _json_list(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []
