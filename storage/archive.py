"""ArchiveStore: messages moved out of the hot `state_data` blob, one row each.

Schema in `storage/migrations/0002_archive.sql`. It shares the conversation store's
connection, lock and transactions, so moving messages and saving the trimmed state
happen in one transaction under the same optimistic version check. Positions are
absolute: the archive holds 0..n-1, the hot messages continue at n (`v_messages`).
"""

from __future__ import annotations

import json
from typing import Generic, TypeVar

from pydantic import BaseModel

from storage.clock import utc_now
from storage.conversations import ConversationStore, check_thread_id
from storage.errors import ConversationNotFound, VersionConflict

MessageT = TypeVar("MessageT", bound=BaseModel)


class ArchiveStats(BaseModel):
    """How much of a conversation is in the archive."""

    messages: int = 0
    user_messages: int = 0  # = the turns whose question is archived
    tokens: int = 0
    sql_records: int = 0


class HistorySlice(BaseModel, Generic[MessageT]):
    """A page of a conversation's messages, archive included, oldest first."""

    items: list[MessageT]
    total: int


class ArchiveStore(Generic[MessageT]):
    """The archive of the conversations in `store`, read back as `message_model`."""

    def __init__(self, store: ConversationStore, message_model: type[MessageT]):
        self.store = store
        self.message_model = message_model

    def stats(self, thread_id: str) -> ArchiveStats:
        check_thread_id(thread_id)
        row = self.store._read(
            "SELECT count(*), coalesce(sum(role = 'user'), 0), coalesce(sum(tokens), 0) FROM archived_messages"
            " WHERE thread_id = ?", (thread_id,))[0]
        sql = self.store._read("SELECT count(*) FROM archived_sql WHERE thread_id = ?", (thread_id,))[0][0]
        return ArchiveStats(messages=row[0], user_messages=row[1], tokens=row[2], sql_records=sql)

    def archive(self, thread_id: str, *, user_id: str, state: BaseModel, expected_version: int,
                messages: list[MessageT], tokens: list[int] | None = None,
                sql_records: list[BaseModel] | None = None) -> int:
        """Append `messages` (and SQL records) to the archive and save the trimmed `state`, at once.

        Args:
            state: the state without the archived messages.
            tokens: each message's token count, kept so reports can count the whole history.
        Returns:
            the conversation's new version.
        Raises:
            VersionConflict: someone saved since `expected_version`; nothing was written.
        """
        check_thread_id(thread_id)
        tokens = tokens or [0] * len(messages)
        now = utc_now()
        with self.store._write() as conn:
            cursor = conn.execute(
                "UPDATE conversations SET state_data = ?, version = version + 1, updated_at = ?"
                " WHERE thread_id = ? AND user_id = ? AND version = ?",
                (state.model_dump_json(), now, thread_id, user_id, expected_version))
            if cursor.rowcount == 0:
                row = conn.execute("SELECT version FROM conversations WHERE thread_id = ? AND user_id = ?",
                                   (thread_id, user_id)).fetchone()
                if row is None:
                    raise ConversationNotFound(thread_id)
                raise VersionConflict(thread_id, expected_version, row[0])
            start = conn.execute("SELECT coalesce(max(position) + 1, 0) FROM archived_messages WHERE thread_id = ?",
                                 (thread_id,)).fetchone()[0]
            conn.executemany(
                "INSERT INTO archived_messages (thread_id, position, role, message, tokens, archived_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [(thread_id, start + i, getattr(m, "role", ""), m.model_dump_json(exclude_none=True), n, now)
                 for i, (m, n) in enumerate(zip(messages, tokens))])
            start = conn.execute("SELECT coalesce(max(position) + 1, 0) FROM archived_sql WHERE thread_id = ?",
                                 (thread_id,)).fetchone()[0]
            conn.executemany("INSERT INTO archived_sql (thread_id, position, record) VALUES (?, ?, ?)",
                             [(thread_id, start + i, r.model_dump_json(exclude_none=True))
                              for i, r in enumerate(sql_records or [])])
        return expected_version + 1

    def messages(self, thread_id: str, *, user_id: str, role: str | None = None) -> list[MessageT]:
        """This user's archived messages of a conversation, oldest first (optionally one role)."""
        self.store.get(thread_id, user_id=user_id)
        rows = self.store._read(
            "SELECT message FROM archived_messages WHERE thread_id = ? AND (? IS NULL OR role = ?) ORDER BY position",
            (thread_id, role, role))
        return [self.message_model.model_validate_json(r[0]) for r in rows]

    def dump(self, thread_id: str, *, user_id: str) -> dict[str, list]:
        """This user's archive of a conversation as JSON-ready data, oldest first, as exports carry it:
        {"messages": [{"message": {...}, "tokens": n}, ...], "sql": [{...}, ...]}."""
        self.store.get(thread_id, user_id=user_id)
        messages = self.store._read(
            "SELECT message, tokens FROM archived_messages WHERE thread_id = ? ORDER BY position", (thread_id,))
        records = self.store._read("SELECT record FROM archived_sql WHERE thread_id = ? ORDER BY position",
                                   (thread_id,))
        return {"messages": [{"message": json.loads(r[0]), "tokens": r[1]} for r in messages],
                "sql": [json.loads(r[0]) for r in records]}

    def history(self, thread_id: str, *, user_id: str, offset: int = 0, limit: int = 100) -> HistorySlice[MessageT]:
        """A page of the whole conversation (archived, then hot), oldest first."""
        self.store.get(thread_id, user_id=user_id)
        total = self.store._read("SELECT count(*) FROM v_messages WHERE thread_id = ?", (thread_id,))[0][0]
        rows = self.store._read(
            "SELECT message FROM v_messages WHERE thread_id = ? ORDER BY position LIMIT ? OFFSET ?",
            (thread_id, max(0, limit), max(0, offset)))
        items = [self.message_model.model_validate(json.loads(r[0])) for r in rows]
        return HistorySlice[self.message_model](items=items, total=total)
