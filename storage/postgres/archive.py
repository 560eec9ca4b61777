"""PostgresArchiveStore: `storage.archive.ArchiveStore` on the PostgreSQL store.

Moving messages and saving the trimmed state happen in one transaction under the same
version check; the UPDATE's row lock numbers the archive one writer at a time.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from pydantic import BaseModel

from storage.archive import ArchiveStats, HistorySlice
from storage.conversations import check_thread_id
from storage.postgres.conversations import PostgresConversationStore, jsonb_text

MessageT = TypeVar("MessageT", bound=BaseModel)


class PostgresArchiveStore(Generic[MessageT]):
    """The archive of the conversations in `store`, read back as `message_model`."""

    def __init__(self, store: PostgresConversationStore, message_model: type[MessageT]):
        self.store = store
        self.message_model = message_model

    def stats(self, thread_id: str) -> ArchiveStats:
        check_thread_id(thread_id)
        row = self.store._read(
            "SELECT count(*) AS messages, count(*) FILTER (WHERE role = 'user') AS user_messages,"
            " coalesce(sum(tokens), 0) AS tokens,"
            " (SELECT count(*) FROM archived_sql WHERE thread_id = %s) AS sql_records"
            " FROM archived_messages WHERE thread_id = %s", (thread_id, thread_id))[0]
        return ArchiveStats(**row)

    def archive(self, thread_id: str, *, user_id: str, state: BaseModel, expected_version: int,
                messages: list[MessageT], tokens: list[int] | None = None,
                sql_records: list[BaseModel] | None = None) -> int:
        """Append `messages` (and SQL records) to the archive and save the trimmed `state`, at once.

        Raises:
            VersionConflict: someone saved since `expected_version`; nothing was written.
        """
        check_thread_id(thread_id)
        tokens = tokens or [0] * len(messages)
        with self.store._write() as conn:
            cursor = conn.execute(
                "UPDATE conversations SET state_data = %s::jsonb, version = version + 1, updated_at = clock_timestamp()"
                " WHERE thread_id = %s AND user_id = %s AND version = %s",
                (jsonb_text(state.model_dump_json()), thread_id, user_id, expected_version))
            if cursor.rowcount == 0:
                self.store._raise_conflict(conn, thread_id, user_id, expected_version)
            start = conn.execute("SELECT coalesce(max(position) + 1, 0) FROM archived_messages WHERE thread_id = %s",
                                 (thread_id,)).fetchone()[0]
            with conn.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO archived_messages (thread_id, position, role, message, tokens)"
                    " VALUES (%s, %s, %s, %s::jsonb, %s)",
                    [(thread_id, start + i, getattr(m, "role", ""), jsonb_text(m.model_dump_json(exclude_none=True)), n)
                     for i, (m, n) in enumerate(zip(messages, tokens))])
                start = conn.execute("SELECT coalesce(max(position) + 1, 0) FROM archived_sql WHERE thread_id = %s",
                                     (thread_id,)).fetchone()[0]
                cursor.executemany("INSERT INTO archived_sql (thread_id, position, record) VALUES (%s, %s, %s::jsonb)",
                                   [(thread_id, start + i, jsonb_text(r.model_dump_json(exclude_none=True)))
                                    for i, r in enumerate(sql_records or [])])
        return expected_version + 1

    def messages(self, thread_id: str, *, user_id: str, role: str | None = None) -> list[MessageT]:
        """This user's archived messages of a conversation, oldest first (optionally one role)."""
        self.store.get(thread_id, user_id=user_id)
        rows = self.store._read(
            "SELECT message::text AS m FROM archived_messages WHERE thread_id = %s"
            " AND (%s::text IS NULL OR role = %s) ORDER BY position", (thread_id, role, role))
        return [self.message_model.model_validate_json(r["m"]) for r in rows]

    def dump(self, thread_id: str, *, user_id: str) -> dict[str, list]:
        """This user's archive of a conversation as JSON-ready data, oldest first, as exports carry it:
        {"messages": [{"message": {...}, "tokens": n}, ...], "sql": [{...}, ...]}."""
        self.store.get(thread_id, user_id=user_id)
        messages = self.store._read(
            "SELECT message, tokens FROM archived_messages WHERE thread_id = %s ORDER BY position", (thread_id,))
        records = self.store._read("SELECT record FROM archived_sql WHERE thread_id = %s ORDER BY position",
                                   (thread_id,))
        # psycopg hands jsonb back already parsed.
        return {"messages": [{"message": r["message"], "tokens": r["tokens"]} for r in messages],
                "sql": [r["record"] for r in records]}

    def history(self, thread_id: str, *, user_id: str, offset: int = 0, limit: int = 100) -> HistorySlice[MessageT]:
        """A page of the whole conversation (archived, then hot), oldest first."""
        self.store.get(thread_id, user_id=user_id)
        total = self.store._read("SELECT count(*) AS n FROM v_messages WHERE thread_id = %s", (thread_id,))[0]["n"]
        rows = self.store._read(
            "SELECT message::text AS m FROM v_messages WHERE thread_id = %s ORDER BY position LIMIT %s OFFSET %s",
            (thread_id, max(0, limit), max(0, offset)))
        items = [self.message_model.model_validate_json(r["m"]) for r in rows]
        return HistorySlice[self.message_model](items=items, total=total)
