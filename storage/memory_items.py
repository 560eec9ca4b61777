"""MemoryItemStore: what askdb remembers about each user, and the vectors beside it.

The schema is migration 3 (`storage/migrations/0003_memory.sql`). Every method takes
the user id and filters by it: another user's item is "not found". A contradicted
memory is archived (`status`, `valid_to`), never deleted; deleting is the user's act.
Deciding what to remember, merge or supersede is `agent.memory.user_memory`'s job.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, Field

from storage.clock import utc_now
from storage.errors import StoreError
from storage.sqlite_tables import SQLiteTables

MemoryType = Literal["PROFILE", "TASK", "FACT", "EPISODIC"]
Status = Literal["active", "archived"]


class MemoryItemNotFound(StoreError):
    """No memory item with this id belongs to this user."""

    def __init__(self, item_id: str):
        super().__init__(f"memory {item_id!r} not found")
        self.item_id = item_id


class DuplicateMemory(StoreError):
    """Another active memory of this user already says this (the same normalized text)."""

    def __init__(self) -> None:
        super().__init__("another memory already says this")


@contextmanager
def unique_text(refusal: type[Exception]) -> Iterator[None]:
    """Turn a refusal by the one-active-item-per-text index (`refusal`: the driver's error for a
    broken constraint) into `DuplicateMemory`; both backends' writes run inside it."""
    try:
        yield
    except refusal as exc:
        if "dedupe_hash" not in str(exc):
            raise
        raise DuplicateMemory() from exc


class MemoryItemIn(BaseModel):
    """A memory to keep."""

    user_id: str
    type: MemoryType = "FACT"
    text: str = Field(min_length=1, max_length=2000)
    data: dict[str, Any] = Field(default_factory=dict)
    importance: float = Field(0.5, ge=0, le=1)
    tags: list[str] = Field(default_factory=list)
    source_session_id: str | None = None
    dedupe_hash: str


class MemoryItem(MemoryItemIn):
    id: str
    status: Status
    created_at: str
    updated_at: str
    valid_from: str
    valid_to: str | None = None


class ItemVector(NamedTuple):
    item_id: str
    embedding: bytes


_COLUMNS = ("id, user_id, type, text, data, importance, tags, source_session_id, dedupe_hash, status,"
            " created_at, updated_at, valid_from, valid_to")


class MemoryItemStore(SQLiteTables):
    """Per-user memory items in the store file; safe to share between threads."""

    # -- writing ------------------------------------------------------------------

    def add(self, item: MemoryItemIn, *, embedding: bytes | None = None, embedding_model: str | None = None,
            supersedes: str | None = None) -> MemoryItem:
        """Keep a new memory; if `supersedes` names an active item of the user, archive it in the
        same transaction (its `valid_to` is now, its data says what replaced it).

        Raises:
            DuplicateMemory: an active memory of the user has the same `dedupe_hash`.
            MemoryItemNotFound: `supersedes` is not an active memory of the user.
        """
        item_id, now = uuid.uuid4().hex, utc_now()
        with self._write() as conn, unique_text(sqlite3.IntegrityError):
            if supersedes is not None:
                self._archive(conn, supersedes, user_id=item.user_id, now=now, by=item_id)
            conn.execute(
                f"INSERT INTO memory_items ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, NULL)",
                (item_id, item.user_id, item.type, item.text, json.dumps(item.data, ensure_ascii=False),
                 item.importance, json.dumps(item.tags, ensure_ascii=False), item.source_session_id,
                 item.dedupe_hash, now, now, now))
            if embedding is not None and embedding_model:
                self._set_vector(conn, item_id, embedding, embedding_model)
        return self.get(item_id, user_id=item.user_id)

    def update(self, item_id: str, *, user_id: str, text: str | None = None, importance: float | None = None,
               tags: list[str] | None = None, data: dict[str, Any] | None = None, dedupe_hash: str | None = None,
               embedding: bytes | None = None, embedding_model: str | None = None) -> MemoryItem:
        """Change what is given. A new text without a new vector drops the old vector (it no longer fits).

        Raises:
            DuplicateMemory: the new `dedupe_hash` is another active memory's.
        """
        with self._write() as conn, unique_text(sqlite3.IntegrityError):
            cursor = conn.execute(
                "UPDATE memory_items SET text = coalesce(?, text), importance = coalesce(?, importance),"
                " tags = coalesce(?, tags), data = coalesce(?, data), dedupe_hash = coalesce(?, dedupe_hash),"
                " updated_at = ? WHERE id = ? AND user_id = ?",
                (text, importance, None if tags is None else json.dumps(tags, ensure_ascii=False),
                 None if data is None else json.dumps(data, ensure_ascii=False), dedupe_hash, utc_now(), item_id,
                 user_id))
            if cursor.rowcount == 0:
                raise MemoryItemNotFound(item_id)
            if embedding is not None and embedding_model:
                self._set_vector(conn, item_id, embedding, embedding_model)
            elif text is not None:
                conn.execute("DELETE FROM memory_vectors WHERE item_id = ?", (item_id,))
        return self.get(item_id, user_id=user_id)

    def archive(self, item_id: str, *, user_id: str) -> MemoryItem:
        """Mark a memory no longer valid (kept, but never read before a turn)."""
        with self._write() as conn:
            self._archive(conn, item_id, user_id=user_id, now=utc_now(), by=None)
        return self.get(item_id, user_id=user_id)

    @staticmethod
    def _archive(conn: sqlite3.Connection, item_id: str, *, user_id: str, now: str, by: str | None) -> None:
        patch = "json_set(data, '$.superseded_by', ?)" if by else "coalesce(?, data)"
        cursor = conn.execute(
            f"UPDATE memory_items SET status = 'archived', valid_to = ?, updated_at = ?, data = {patch}"
            " WHERE id = ? AND user_id = ? AND status = 'active'", (now, now, by, item_id, user_id))
        if cursor.rowcount == 0:
            raise MemoryItemNotFound(item_id)

    @staticmethod
    def _set_vector(conn: sqlite3.Connection, item_id: str, embedding: bytes, model: str) -> None:
        conn.execute("INSERT INTO memory_vectors (item_id, embedding, embedding_model) VALUES (?, ?, ?)"
                     " ON CONFLICT (item_id) DO UPDATE SET embedding = excluded.embedding,"
                     " embedding_model = excluded.embedding_model", (item_id, embedding, model))

    def set_vector(self, item_id: str, *, user_id: str, embedding: bytes, embedding_model: str) -> None:
        with self._write() as conn:
            if not conn.execute("SELECT 1 FROM memory_items WHERE id = ? AND user_id = ?", (item_id, user_id)).fetchone():
                raise MemoryItemNotFound(item_id)
            self._set_vector(conn, item_id, embedding, embedding_model)

    def delete(self, item_id: str, *, user_id: str) -> None:
        """Delete one memory and its vector."""
        with self._write() as conn:
            if conn.execute("DELETE FROM memory_items WHERE id = ? AND user_id = ?", (item_id, user_id)).rowcount == 0:
                raise MemoryItemNotFound(item_id)

    def delete_for_user(self, user_id: str) -> int:
        """Delete every memory of this user (their vectors cascade); return how many."""
        with self._write() as conn:
            return conn.execute("DELETE FROM memory_items WHERE user_id = ?", (user_id,)).rowcount

    # -- reading ------------------------------------------------------------------

    def get(self, item_id: str, *, user_id: str) -> MemoryItem:
        rows = self._read(f"SELECT {_COLUMNS} FROM memory_items WHERE id = ? AND user_id = ?", (item_id, user_id))
        if not rows:
            raise MemoryItemNotFound(item_id)
        return _item(rows[0])

    def list(self, *, user_id: str, status: Status | None = None, limit: int = 500, offset: int = 0) -> list[MemoryItem]:
        """This user's memories (active first, then archived), most recently updated first."""
        where, params = "user_id = ?", [user_id]
        if status is not None:
            where += " AND status = ?"
            params.append(status)
        rows = self._read(f"SELECT {_COLUMNS} FROM memory_items WHERE {where}"
                          " ORDER BY status = 'archived', updated_at DESC LIMIT ? OFFSET ?",
                          (*params, max(0, limit), max(0, offset)))
        return [_item(r) for r in rows]

    def count(self, *, user_id: str, status: Status | None = None) -> int:
        if status is None:
            return self._read("SELECT count(*) FROM memory_items WHERE user_id = ?", (user_id,))[0][0]
        return self._read("SELECT count(*) FROM memory_items WHERE user_id = ? AND status = ?", (user_id, status))[0][0]

    def find_active(self, *, user_id: str, dedupe_hash: str | None = None, key: str | None = None) -> list[MemoryItem]:
        """Active memories of this user with this normalized hash, or with this `data.key`."""
        if dedupe_hash is not None:
            rows = self._read(f"SELECT {_COLUMNS} FROM memory_items WHERE user_id = ? AND status = 'active'"
                              " AND dedupe_hash = ?", (user_id, dedupe_hash))
        elif key is not None:
            rows = self._read(f"SELECT {_COLUMNS} FROM memory_items WHERE user_id = ? AND status = 'active'"
                              " AND json_extract(data, '$.key') = ? ORDER BY updated_at DESC", (user_id, key))
        else:
            return []
        return [_item(r) for r in rows]

    def vectors(self, *, user_id: str, model: str) -> list[ItemVector]:
        """Vectors by `model` of this user's active memories."""
        rows = self._read("SELECT v.item_id, v.embedding FROM memory_vectors v JOIN memory_items m ON m.id = v.item_id"
                          " WHERE m.user_id = ? AND m.status = 'active' AND v.embedding_model = ?", (user_id, model))
        return [ItemVector(r[0], r[1]) for r in rows]


def _item(row: sqlite3.Row) -> MemoryItem:
    data = dict(row)
    data["data"] = json.loads(data["data"] or "{}")
    data["tags"] = json.loads(data["tags"] or "[]")
    return MemoryItem.model_validate(data)
