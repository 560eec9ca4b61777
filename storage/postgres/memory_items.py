"""PostgresMemoryItemStore: `storage.memory_items.MemoryItemStore` on the PostgreSQL store.

The same methods, models and errors; schema in `migrations/0003_memory.sql` (`data` and
`tags` are JSONB, vectors real[]). Every method takes the user id and filters by it.
"""

from __future__ import annotations

import uuid
from typing import Any

import psycopg

from storage.memory_items import (
    ItemVector, MemoryItem, MemoryItemIn, MemoryItemNotFound, Status, unique_text,
)
from storage.postgres.tables import PostgresTables, iso, json_param, to_real_array

_COLUMNS = ("id, user_id, type, text, data, importance, tags, source_session_id, dedupe_hash, status,"
            f" {iso('created_at')} AS created_at, {iso('updated_at')} AS updated_at,"
            f" {iso('valid_from')} AS valid_from, {iso('valid_to')} AS valid_to")


class PostgresMemoryItemStore(PostgresTables):
    """Per-user memory items on the PostgreSQL store; safe to share between threads and servers."""

    # -- writing ------------------------------------------------------------------

    def add(self, item: MemoryItemIn, *, embedding: bytes | None = None, embedding_model: str | None = None,
            supersedes: str | None = None) -> MemoryItem:
        """Keep a new memory; if `supersedes` names an active item of the user, archive it in the
        same transaction (its `valid_to` is the new item's `valid_from`, its data says what replaced it).

        Raises:
            DuplicateMemory: an active memory of the user has the same `dedupe_hash`.
            MemoryItemNotFound: `supersedes` is not an active memory of the user.
        """
        item_id = uuid.uuid4().hex
        with self._write() as conn, unique_text(psycopg.errors.UniqueViolation):
            if supersedes is not None:
                _archive(conn, supersedes, user_id=item.user_id, by=item_id)
            # now() is the transaction's time: one reading for every timestamp written here.
            conn.execute(
                "INSERT INTO memory_items (id, user_id, type, text, data, importance, tags, source_session_id,"
                " dedupe_hash, status, created_at, updated_at, valid_from)"
                " VALUES (%s, %s, %s, %s, %s::jsonb, %s, %s::jsonb, %s, %s, 'active', now(), now(), now())",
                (item_id, item.user_id, item.type, item.text, json_param(item.data), item.importance,
                 json_param(item.tags), item.source_session_id, item.dedupe_hash))
            if embedding is not None and embedding_model:
                _set_vector(conn, item_id, embedding, embedding_model)
        return self.get(item_id, user_id=item.user_id)

    def update(self, item_id: str, *, user_id: str, text: str | None = None, importance: float | None = None,
               tags: list[str] | None = None, data: dict[str, Any] | None = None, dedupe_hash: str | None = None,
               embedding: bytes | None = None, embedding_model: str | None = None) -> MemoryItem:
        """Change what is given. A new text without a new vector drops the old vector (it no longer fits).

        Raises:
            DuplicateMemory: the new `dedupe_hash` is another active memory's.
        """
        with self._write() as conn, unique_text(psycopg.errors.UniqueViolation):
            cursor = conn.execute(
                "UPDATE memory_items SET text = coalesce(%s, text), importance = coalesce(%s, importance),"
                " tags = coalesce(%s::jsonb, tags), data = coalesce(%s::jsonb, data),"
                " dedupe_hash = coalesce(%s, dedupe_hash), updated_at = now() WHERE id = %s AND user_id = %s",
                (text, importance, None if tags is None else json_param(tags),
                 None if data is None else json_param(data), dedupe_hash, item_id, user_id))
            if cursor.rowcount == 0:
                raise MemoryItemNotFound(item_id)
            if embedding is not None and embedding_model:
                _set_vector(conn, item_id, embedding, embedding_model)
            elif text is not None:
                conn.execute("DELETE FROM memory_vectors WHERE item_id = %s", (item_id,))
        return self.get(item_id, user_id=user_id)

    def archive(self, item_id: str, *, user_id: str) -> MemoryItem:
        """Mark a memory no longer valid (kept, but never read before a turn)."""
        with self._write() as conn:
            _archive(conn, item_id, user_id=user_id, by=None)
        return self.get(item_id, user_id=user_id)

    def set_vector(self, item_id: str, *, user_id: str, embedding: bytes, embedding_model: str) -> None:
        with self._write() as conn:
            if not conn.execute("SELECT 1 FROM memory_items WHERE id = %s AND user_id = %s",
                                (item_id, user_id)).fetchone():
                raise MemoryItemNotFound(item_id)
            _set_vector(conn, item_id, embedding, embedding_model)

    def delete(self, item_id: str, *, user_id: str) -> None:
        """Delete one memory and its vector."""
        with self._write() as conn:
            if conn.execute("DELETE FROM memory_items WHERE id = %s AND user_id = %s",
                            (item_id, user_id)).rowcount == 0:
                raise MemoryItemNotFound(item_id)

    def delete_for_user(self, user_id: str) -> int:
        """Delete every memory of this user (their vectors cascade); return how many."""
        with self._write() as conn:
            return conn.execute("DELETE FROM memory_items WHERE user_id = %s", (user_id,)).rowcount

    # -- reading ------------------------------------------------------------------

    def get(self, item_id: str, *, user_id: str) -> MemoryItem:
        rows = self._read(f"SELECT {_COLUMNS} FROM memory_items WHERE id = %s AND user_id = %s", (item_id, user_id))
        if not rows:
            raise MemoryItemNotFound(item_id)
        return MemoryItem.model_validate(rows[0])

    def list(self, *, user_id: str, status: Status | None = None, limit: int = 500, offset: int = 0) -> list[MemoryItem]:
        """This user's memories (active first, then archived), most recently updated first."""
        rows = self._read(f"SELECT {_COLUMNS} FROM memory_items WHERE user_id = %s"
                          " AND (%s::text IS NULL OR status = %s)"
                          " ORDER BY status = 'archived', memory_items.updated_at DESC LIMIT %s OFFSET %s",
                          (user_id, status, status, max(0, limit), max(0, offset)))
        return [MemoryItem.model_validate(r) for r in rows]

    def count(self, *, user_id: str, status: Status | None = None) -> int:
        return self._read("SELECT count(*) AS n FROM memory_items WHERE user_id = %s"
                          " AND (%s::text IS NULL OR status = %s)", (user_id, status, status))[0]["n"]

    def find_active(self, *, user_id: str, dedupe_hash: str | None = None, key: str | None = None) -> list[MemoryItem]:
        """Active memories of this user with this normalized hash, or with this `data.key`."""
        if dedupe_hash is not None:
            rows = self._read(f"SELECT {_COLUMNS} FROM memory_items WHERE user_id = %s AND status = 'active'"
                              " AND dedupe_hash = %s", (user_id, dedupe_hash))
        elif key is not None:
            rows = self._read(f"SELECT {_COLUMNS} FROM memory_items WHERE user_id = %s AND status = 'active'"
                              " AND data ->> 'key' = %s ORDER BY memory_items.updated_at DESC", (user_id, key))
        else:
            return []
        return [MemoryItem.model_validate(r) for r in rows]

    def vectors(self, *, user_id: str, model: str) -> list[ItemVector]:
        """Vectors by `model` of this user's active memories."""
        rows = self._read_vectors(
            "SELECT v.item_id, v.embedding FROM memory_vectors v JOIN memory_items m ON m.id = v.item_id"
            " WHERE m.user_id = %s AND m.status = 'active' AND v.embedding_model = %s", (user_id, model))
        return [ItemVector(r["item_id"], r["embedding"]) for r in rows]


def _archive(conn: psycopg.Connection, item_id: str, *, user_id: str, by: str | None) -> None:
    replaced = ", data = jsonb_set(data, '{superseded_by}', to_jsonb(%s::text))" if by else ""
    cursor = conn.execute(
        f"UPDATE memory_items SET status = 'archived', valid_to = now(), updated_at = now(){replaced}"
        " WHERE id = %s AND user_id = %s AND status = 'active'", (*([by] if by else []), item_id, user_id))
    if cursor.rowcount == 0:
        raise MemoryItemNotFound(item_id)


def _set_vector(conn: psycopg.Connection, item_id: str, embedding: bytes, model: str) -> None:
    conn.execute("INSERT INTO memory_vectors (item_id, embedding, embedding_model) VALUES (%s, %s::real[], %s)"
                 " ON CONFLICT (item_id) DO UPDATE SET embedding = excluded.embedding,"
                 " embedding_model = excluded.embedding_model", (item_id, to_real_array(embedding), model))
