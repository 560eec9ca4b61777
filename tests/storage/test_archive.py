"""ArchiveStore on a real SQLite file: one transaction with the save, whole-history views, delete."""

from __future__ import annotations

import sqlite3

import pytest

from agent.state import AgentState, Message, SQLRecord
from storage.errors import ConversationNotFound, InvalidThreadId, VersionConflict


def _state(n: int, start: int = 0) -> AgentState:
    state = AgentState()
    for i in range(start, start + n):
        state.messages.append(Message(role="user" if i % 2 == 0 else "assistant", content=f"m{i}"))
        state.sql_history.append(SQLRecord(sql=f"SELECT {i}", ok=i % 3 != 0, error=None if i % 3 else "boom"))
    return state


def _archive_first(store, archive, thread, state, cut, version):
    kept = state.model_copy(update={"messages": state.messages[cut:], "sql_history": state.sql_history[cut:]})
    return kept, archive.archive(thread, user_id="u", state=kept, expected_version=version,
                                 messages=state.messages[:cut], tokens=[5] * cut, sql_records=state.sql_history[:cut])


def test_archiving_moves_messages_and_keeps_the_whole_history_in_order(store):
    archive = store.archive(Message)
    state = _state(10)
    thread = store.create(user_id="u", state=state).thread_id
    state, version = _archive_first(store, archive, thread, state, 4, 1)
    state, version = _archive_first(store, archive, thread, state, 2, version)
    assert version == 3
    loaded = store.load(thread, user_id="u")
    assert [m.content for m in loaded.state.messages] == ["m6", "m7", "m8", "m9"]
    assert loaded.conversation.message_count == 10
    stats = archive.stats(thread)
    assert (stats.messages, stats.user_messages, stats.tokens, stats.sql_records) == (6, 3, 30, 6)
    rows = store.db.conn.execute("SELECT position, content, archived FROM v_messages WHERE thread_id = ? ORDER BY position",
                              (thread,)).fetchall()
    assert rows == [(i, f"m{i}", int(i < 6)) for i in range(10)]
    sql = store.db.conn.execute("SELECT position, sql FROM v_sql_history WHERE thread_id = ? ORDER BY position",
                             (thread,)).fetchall()
    assert sql == [(i, f"SELECT {i}") for i in range(10)]
    page = archive.history(thread, user_id="u", offset=4, limit=4)
    assert page.total == 10 and [m.content for m in page.items] == ["m4", "m5", "m6", "m7"]
    assert [m.content for m in archive.messages(thread, user_id="u", role="user")] == ["m0", "m2", "m4"]


def test_a_stale_version_archives_nothing(store):
    archive = store.archive(Message)
    state = _state(6)
    thread = store.create(user_id="u", state=state).thread_id
    store.save(thread, user_id="u", state=state, expected_version=1)
    with pytest.raises(VersionConflict):
        _archive_first(store, archive, thread, state, 2, 1)
    assert archive.stats(thread).messages == 0
    assert len(store.load(thread, user_id="u").state.messages) == 6


def test_another_users_archive_is_not_found(store):
    archive = store.archive(Message)
    thread = store.create(user_id="u", state=_state(2)).thread_id
    with pytest.raises(ConversationNotFound):
        archive.history(thread, user_id="mallory")
    with pytest.raises(ConversationNotFound):
        archive.messages(thread, user_id="mallory")
    with pytest.raises(InvalidThreadId):
        archive.stats("x' OR 1=1 --")


def test_deleting_a_thread_deletes_its_archive_and_every_row(store):
    archive = store.archive(Message)
    state = _state(8)
    thread = store.create(user_id="u", state=state).thread_id
    other = store.create(user_id="u", state=_state(4)).thread_id
    _archive_first(store, archive, thread, state, 4, 1)
    _archive_first(store, archive, other, _state(4), 2, 1)
    store.delete(thread, user_id="u")
    assert _rows_of(store.db.conn, thread) == {}
    assert _rows_of(store.db.conn, other)["archived_messages"] == 2


def test_archived_rows_are_valid_json(store):
    thread = store.create(user_id="u", state=_state(2)).thread_id
    with pytest.raises(sqlite3.IntegrityError):
        store.db.conn.execute("INSERT INTO archived_messages (thread_id, position, role, message, archived_at)"
                           " VALUES (?, 0, 'user', 'not json', 'now')", (thread,))


def _rows_of(conn: sqlite3.Connection, thread_id: str) -> dict[str, int]:
    """Rows mentioning `thread_id` in every table that has a thread_id column."""
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    found = {}
    for table in tables:
        columns = [c[1] for c in conn.execute(f"PRAGMA table_info({table})")]
        if "thread_id" in columns:
            n = conn.execute(f"SELECT count(*) FROM {table} WHERE thread_id = ?", (thread_id,)).fetchone()[0]
            if n:
                found[table] = n
    return found
