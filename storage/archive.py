"""ArchiveStore: messages moved out of the hot `state_data` document, one row each.

Schema in each backend's migration 2. Moving messages and saving the trimmed state happen in
one transaction under the conversation's optimistic version check (`storage.threads.write_state`,
whose row lock, on PostgreSQL, numbers the archive one writer at a time). Positions are
absolute: the archive holds 0..n-1, the hot messages continue at n (`v_messages`).
"""

from __future__ import annotations

import json
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from storage.sql import Database
from storage.threads import check_thread_id, require_conversation, write_state

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
    """The archive of the conversations in the store `db`, read back as `message_model`."""

    def __init__(self, db: Database, message_model: type[MessageT]):
        self.db = db
        self.message_model = message_model

    def stats(self, thread_id: str) -> ArchiveStats:
        check_thread_id(thread_id)
        row = self.db.row(
            "SELECT count(*) AS messages, coalesce(sum(CASE WHEN role = 'user' THEN 1 ELSE 0 END), 0) AS user_messages,"
            " coalesce(sum(tokens), 0) AS tokens,"
            " (SELECT count(*) FROM archived_sql WHERE thread_id = ?) AS sql_records"
            " FROM archived_messages WHERE thread_id = ?", (thread_id, thread_id))
        return ArchiveStats.model_validate(dict(row))

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
        d = self.db.dialect
        with self.db.write() as tx:
            version = write_state(tx, thread_id, user_id=user_id, state=state,
                                  expected_version=expected_version)
            start = tx.value("SELECT coalesce(max(position) + 1, 0) AS next FROM archived_messages WHERE thread_id = ?",
                             (thread_id,))
            tx.execute_many(
                "INSERT INTO archived_messages (thread_id, position, role, message, tokens, archived_at)"
                f" VALUES (?, ?, ?, {d.json_in}, ?, {d.now})",
                [(thread_id, start + i, getattr(m, "role", ""), d.json_param(m.model_dump_json(exclude_none=True)), n)
                 for i, (m, n) in enumerate(zip(messages, tokens))])
            start = tx.value("SELECT coalesce(max(position) + 1, 0) AS next FROM archived_sql WHERE thread_id = ?",
                             (thread_id,))
            tx.execute_many(f"INSERT INTO archived_sql (thread_id, position, record) VALUES (?, ?, {d.json_in})",
                            [(thread_id, start + i, d.json_param(r.model_dump_json(exclude_none=True)))
                             for i, r in enumerate(sql_records or [])])
        return version

    def messages(self, thread_id: str, *, user_id: str, role: str | None = None) -> list[MessageT]:
        """This user's archived messages of a conversation, oldest first (optionally one role)."""
        with self.db.read() as tx:
            require_conversation(tx, thread_id, user_id=user_id)
            rows = tx.rows(f"SELECT {self.db.dialect.json_out('message')} AS message FROM archived_messages"
                           " WHERE thread_id = ? AND (CAST(? AS TEXT) IS NULL OR role = ?) ORDER BY position",
                           (thread_id, role, role))
        return [self.message_model.model_validate_json(r["message"]) for r in rows]

    def dump(self, thread_id: str, *, user_id: str) -> dict[str, list[Any]]:
        """This user's archive of a conversation as JSON-ready data, oldest first, as exports carry it:
        {"messages": [{"message": {...}, "tokens": n}, ...], "sql": [{...}, ...]}."""
        d = self.db.dialect
        with self.db.read() as tx:
            require_conversation(tx, thread_id, user_id=user_id)
            messages = tx.rows(f"SELECT {d.json_out('message')} AS message, tokens FROM archived_messages"
                               " WHERE thread_id = ? ORDER BY position", (thread_id,))
            records = tx.rows(f"SELECT {d.json_out('record')} AS record FROM archived_sql WHERE thread_id = ?"
                              " ORDER BY position", (thread_id,))
        return {"messages": [{"message": json.loads(r["message"]), "tokens": r["tokens"]} for r in messages],
                "sql": [json.loads(r["record"]) for r in records]}

    def history(self, thread_id: str, *, user_id: str, offset: int = 0, limit: int = 100) -> HistorySlice[MessageT]:
        """A page of the whole conversation (archived, then hot), oldest first."""
        with self.db.read() as tx:
            require_conversation(tx, thread_id, user_id=user_id)
            total = tx.value("SELECT count(*) AS n FROM v_messages WHERE thread_id = ?", (thread_id,))
            rows = tx.rows(f"SELECT {self.db.dialect.json_out('message')} AS message FROM v_messages"
                           " WHERE thread_id = ? ORDER BY position LIMIT ? OFFSET ?",
                           (thread_id, max(0, limit), max(0, offset)))
        items = [self.message_model.model_validate_json(r["message"]) for r in rows]
        return HistorySlice[self.message_model](items=items, total=total)
