"""MemoryItemStore: what askdb remembers about each user, and the vectors beside it.

The schema is each backend's migration 3 (on PostgreSQL `data` and `tags` are JSONB, vectors
real[]). Every method takes
the user id and filters by it: another user's item is "not found". A contradicted
memory is archived (`status`, `valid_to`), never deleted; deleting is the user's act.
Deciding what to remember, merge or supersede is `agent.memory.user_memory`'s job.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, Field

from storage.errors import StoreError
from storage.sql import Dialect, Row, Transaction, UniqueViolation
from storage.tables import Tables

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
def unique_text() -> Iterator[None]:
    """Turn a refusal by the one-active-item-per-text index into `DuplicateMemory`."""
    try:
        yield
    except UniqueViolation as exc:
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


def _columns(d: Dialect) -> str:
    return (f"id, user_id, type, text, {d.json_out('data')} AS data, importance, {d.json_out('tags')} AS tags,"
            f" source_session_id, dedupe_hash, status, {d.timestamp('created_at')} AS created_at,"
            f" {d.timestamp('updated_at')} AS updated_at, {d.timestamp('valid_from')} AS valid_from,"
            f" {d.timestamp('valid_to')} AS valid_to")


class MemoryItemStore(Tables):
    """Per-user memory items in the store; safe to share between threads (and app servers)."""

    # -- writing ------------------------------------------------------------------

    def add(self, item: MemoryItemIn, *, embedding: bytes | None = None, embedding_model: str | None = None,
            supersedes: str | None = None) -> MemoryItem:
        """Keep a new memory; if `supersedes` names an active item of the user, archive it in the
        same transaction (its `valid_to` is the new item's `valid_from`, its data says what replaced it).

        Raises:
            DuplicateMemory: an active memory of the user has the same `dedupe_hash`.
            MemoryItemNotFound: `supersedes` is not an active memory of the user.
        """
        item_id, d = uuid.uuid4().hex, self.db.dialect
        with self.db.write() as tx, unique_text():
            if supersedes is not None:
                _archive(tx, supersedes, user_id=item.user_id, by=item_id)
            # The transaction's time: one reading for every timestamp written here.
            tx.execute(
                "INSERT INTO memory_items (id, user_id, type, text, data, importance, tags, source_session_id,"
                " dedupe_hash, status, created_at, updated_at, valid_from, valid_to)"
                f" VALUES (?, ?, ?, ?, {d.json_in}, ?, {d.json_in}, ?, ?, 'active', {d.now}, {d.now}, {d.now}, NULL)",
                (item_id, item.user_id, item.type, item.text, _json(d, item.data), item.importance,
                 _json(d, item.tags), item.source_session_id, item.dedupe_hash))
            if embedding is not None and embedding_model:
                _set_vector(tx, item_id, embedding, embedding_model)
        return self.get(item_id, user_id=item.user_id)

    def update(self, item_id: str, *, user_id: str, text: str | None = None, importance: float | None = None,
               tags: list[str] | None = None, data: dict[str, Any] | None = None, dedupe_hash: str | None = None,
               embedding: bytes | None = None, embedding_model: str | None = None) -> MemoryItem:
        """Change what is given. A new text without a new vector drops the old vector (it no longer fits).

        Raises:
            DuplicateMemory: the new `dedupe_hash` is another active memory's.
        """
        d = self.db.dialect
        with self.db.write() as tx, unique_text():
            cursor = tx.execute(
                "UPDATE memory_items SET text = coalesce(?, text), importance = coalesce(?, importance),"
                f" tags = coalesce({d.json_in}, tags), data = coalesce({d.json_in}, data),"
                f" dedupe_hash = coalesce(?, dedupe_hash), updated_at = {d.now} WHERE id = ? AND user_id = ?",
                (text, importance, None if tags is None else _json(d, tags), None if data is None else _json(d, data),
                 dedupe_hash, item_id, user_id))
            if cursor.rowcount == 0:
                raise MemoryItemNotFound(item_id)
            if embedding is not None and embedding_model:
                _set_vector(tx, item_id, embedding, embedding_model)
            elif text is not None:
                tx.execute("DELETE FROM memory_vectors WHERE item_id = ?", (item_id,))
        return self.get(item_id, user_id=user_id)

    def archive(self, item_id: str, *, user_id: str) -> MemoryItem:
        """Mark a memory no longer valid (kept, but never read before a turn)."""
        with self.db.write() as tx:
            _archive(tx, item_id, user_id=user_id, by=None)
        return self.get(item_id, user_id=user_id)

    def set_vector(self, item_id: str, *, user_id: str, embedding: bytes, embedding_model: str) -> None:
        with self.db.write() as tx:
            if tx.row("SELECT 1 AS found FROM memory_items WHERE id = ? AND user_id = ?", (item_id, user_id)) is None:
                raise MemoryItemNotFound(item_id)
            _set_vector(tx, item_id, embedding, embedding_model)

    def delete(self, item_id: str, *, user_id: str) -> None:
        """Delete one memory and its vector."""
        with self.db.write() as tx:
            if tx.execute("DELETE FROM memory_items WHERE id = ? AND user_id = ?", (item_id, user_id)).rowcount == 0:
                raise MemoryItemNotFound(item_id)

    def delete_for_user(self, user_id: str) -> int:
        """Delete every memory of this user (their vectors cascade); return how many."""
        with self.db.write() as tx:
            return tx.execute("DELETE FROM memory_items WHERE user_id = ?", (user_id,)).rowcount

    # -- reading ------------------------------------------------------------------

    def get(self, item_id: str, *, user_id: str) -> MemoryItem:
        row = self.db.row(f"SELECT {_columns(self.db.dialect)} FROM memory_items WHERE id = ? AND user_id = ?",
                          (item_id, user_id))
        if row is None:
            raise MemoryItemNotFound(item_id)
        return _item(row)

    def list(self, *, user_id: str, status: Status | None = None, limit: int = 500, offset: int = 0) -> list[MemoryItem]:
        """This user's memories (active first, then archived), most recently updated first."""
        where, params = _status(user_id, status)
        rows = self.db.rows(f"SELECT {_columns(self.db.dialect)} FROM memory_items WHERE {where}"
                            " ORDER BY status = 'archived', memory_items.updated_at DESC LIMIT ? OFFSET ?",
                            (*params, max(0, limit), max(0, offset)))
        return [_item(r) for r in rows]

    def count(self, *, user_id: str, status: Status | None = None) -> int:
        where, params = _status(user_id, status)
        return self.db.value(f"SELECT count(*) AS n FROM memory_items WHERE {where}", params)

    def find_active(self, *, user_id: str, dedupe_hash: str | None = None, key: str | None = None) -> list[MemoryItem]:
        """Active memories of this user with this normalized hash, or with this `data.key`."""
        d = self.db.dialect
        if dedupe_hash is not None:
            rows = self.db.rows(f"SELECT {_columns(d)} FROM memory_items WHERE user_id = ? AND status = 'active'"
                                " AND dedupe_hash = ?", (user_id, dedupe_hash))
        elif key is not None:
            rows = self.db.rows(f"SELECT {_columns(d)} FROM memory_items WHERE user_id = ? AND status = 'active'"
                                f" AND {d.json_text('data', 'key')} = ? ORDER BY memory_items.updated_at DESC",
                                (user_id, key))
        else:
            return []
        return [_item(r) for r in rows]

    def vectors(self, *, user_id: str, model: str) -> list[ItemVector]:
        """Vectors by `model` of this user's active memories."""
        rows = self.db.rows("SELECT v.item_id, v.embedding FROM memory_vectors v JOIN memory_items m ON m.id = v.item_id"
                            " WHERE m.user_id = ? AND m.status = 'active' AND v.embedding_model = ?", (user_id, model),
                            vectors=True)
        return [ItemVector(r["item_id"], r["embedding"]) for r in rows]


def _json(d: Dialect, value: Any) -> str:
    return d.json_param(json.dumps(value, ensure_ascii=False))


def _status(user_id: str, status: Status | None) -> tuple[str, tuple[str, ...]]:
    if status is None:
        return "user_id = ?", (user_id,)
    return "user_id = ? AND status = ?", (user_id, status)


def _archive(tx: Transaction, item_id: str, *, user_id: str, by: str | None) -> None:
    d = tx.dialect
    replaced = f", data = {d.json_set_text('data', 'superseded_by')}" if by else ""
    cursor = tx.execute(
        f"UPDATE memory_items SET status = 'archived', valid_to = {d.now}, updated_at = {d.now}{replaced}"
        " WHERE id = ? AND user_id = ? AND status = 'active'", (*([by] if by else []), item_id, user_id))
    if cursor.rowcount == 0:
        raise MemoryItemNotFound(item_id)


def _set_vector(tx: Transaction, item_id: str, embedding: bytes, model: str) -> None:
    tx.execute(f"INSERT INTO memory_vectors (item_id, embedding, embedding_model) VALUES (?, {tx.dialect.vector_in}, ?)"
               " ON CONFLICT (item_id) DO UPDATE SET embedding = excluded.embedding,"
               " embedding_model = excluded.embedding_model", (item_id, tx.dialect.vector_param(embedding), model))


def _item(row: Row) -> MemoryItem:
    data = dict(row)
    data["data"] = json.loads(data["data"] or "{}")
    data["tags"] = json.loads(data["tags"] or "[]")
    return MemoryItem.model_validate(data)
