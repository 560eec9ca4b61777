"""The conversation store against real SQLite files."""

from __future__ import annotations

import json
import sqlite3

import pytest

from agent.state import AgentState, Message, SQLRecord, Step
from storage.conversations import ConversationStore
from storage.sqlite_backend import SQLiteDatabase, SQLiteDialect, connect
from storage.errors import (
    ConversationNotFound, CorruptState, InvalidThreadId, ResultNotFound, StoreError, VersionConflict,
)
from storage.schema import migrations


def _state(question="How many launches in 2020?", turns=1) -> AgentState:
    state = AgentState(question=question)
    for n in range(turns):
        state.messages.append(Message(role="user", content=f"{question} #{n}"))
        state.messages.append(Message(role="assistant", content=f"answer {n}"))
        state.sql_history.append(SQLRecord(sql=f"SELECT {n}", ok=True, row_count=1, columns=["n"]))
    return state


def test_round_trip_keeps_the_state(store):
    state = _state(turns=3)
    created = store.create(user_id="alice", state=state, title=state.question)
    loaded = store.load(created.thread_id, user_id="alice")
    assert loaded.state == state
    assert loaded.conversation.version == 1
    assert loaded.conversation.message_count == 6
    assert loaded.conversation.title == "How many launches in 2020?"


def test_save_bumps_version_and_stale_save_is_refused(store):
    created = store.create(user_id="u", state=_state())
    first = store.load(created.thread_id, user_id="u")
    second = store.load(created.thread_id, user_id="u")
    first.state.messages.append(Message(role="user", content="first writer"))
    assert store.save(created.thread_id, user_id="u", state=first.state, expected_version=1) == 2
    second.state.messages.append(Message(role="user", content="second writer"))
    with pytest.raises(VersionConflict) as info:
        store.save(created.thread_id, user_id="u", state=second.state, expected_version=1)
    assert info.value.actual == 2 and "reload" in str(info.value)
    # The first writer's state is intact.
    assert store.load(created.thread_id, user_id="u").state.messages[-1].content == "first writer"


def test_missing_and_foreign_threads_are_not_found(store):
    created = store.create(user_id="alice", state=_state())
    with pytest.raises(ConversationNotFound):
        store.load("nope", user_id="alice")
    with pytest.raises(ConversationNotFound):
        store.load(created.thread_id, user_id="bob")
    with pytest.raises(ConversationNotFound):
        store.save(created.thread_id, user_id="bob", state=_state(), expected_version=1)
    with pytest.raises(ConversationNotFound):
        store.delete(created.thread_id, user_id="bob")
    assert store.list(user_id="bob").total == 0


@pytest.mark.parametrize("bad", ["", "../etc/passwd", "a b", "x" * 65, "id;DROP TABLE conversations", "é"])
def test_invalid_thread_ids_are_refused(store, bad):
    with pytest.raises(InvalidThreadId):
        store.load(bad, user_id="u")


def test_corrupt_state_is_a_typed_error_and_spares_the_rest(store):
    good = store.create(user_id="u", state=_state())
    bad = store.create(user_id="u", state=_state())
    store.db.conn.execute("UPDATE conversations SET state_data = ? WHERE thread_id = ?",
                       (json.dumps({"messages": "not a list"}), bad.thread_id))
    with pytest.raises(CorruptState):
        store.load(bad.thread_id, user_id="u")
    assert store.load(good.thread_id, user_id="u").state.question
    assert store.list(user_id="u").total == 2


def test_state_data_must_be_json(store):
    created = store.create(user_id="u", state=_state())
    with pytest.raises(sqlite3.IntegrityError):
        store.db.conn.execute("UPDATE conversations SET state_data = 'not json' WHERE thread_id = ?",
                           (created.thread_id,))


def test_list_newest_first_with_search_and_paging(store):
    ids = [store.create(user_id="u", state=_state(), title=f"question {n}").thread_id for n in range(7)]
    store.create(user_id="other", state=_state(), title="question other")
    store.save(ids[2], user_id="u", state=_state(), expected_version=1)  # now the newest
    page = store.list(user_id="u", limit=3)
    assert page.total == 7
    assert [c.thread_id for c in page.items][0] == ids[2]
    assert len(store.list(user_id="u", limit=3, offset=6).items) == 1
    assert [c.title for c in store.list(user_id="u", search="question 5").items] == ["question 5"]
    # LIKE wildcards in the search are literal.
    assert store.list(user_id="u", search="%").total == 0


def test_rename_and_tag(store):
    created = store.create(user_id="u", state=_state())
    updated = store.update(created.thread_id, user_id="u", title="Launches 2020", tags=["launches", "2020"])
    assert (updated.title, updated.tags, updated.version) == ("Launches 2020", ["launches", "2020"], 1)
    assert store.update(created.thread_id, user_id="u", tags=[]).title == "Launches 2020"


def test_delete_removes_every_row_of_the_thread(store):
    keep = store.create(user_id="u", state=_state())
    gone = store.create(user_id="u", state=_state())
    for thread in (keep, gone):
        store.append_step(thread.thread_id, step_index=0, step=Step(step_index=0, action="list_tables"))
        store.save_result(thread.thread_id, sql="SELECT 1", columns=["1"], rows=[[1]], truncated=False)
    store.delete(gone.thread_id, user_id="u")
    for table in ("conversations", "conversation_steps", "query_results"):
        counts = dict(store.db.conn.execute(f"SELECT thread_id, count(*) FROM {table} GROUP BY thread_id").fetchall())
        assert gone.thread_id not in counts and counts[keep.thread_id] == 1


def test_steps_are_appended_and_read_in_order(store):
    created = store.create(user_id="u", state=_state())
    for n in range(3):
        store.append_step(created.thread_id, step_index=n, step=Step(step_index=n, action=f"tool{n}"))
    steps = store.steps(created.thread_id, user_id="u")
    assert [s.data["action"] for s in steps] == ["tool0", "tool1", "tool2"]
    assert [s.step_index for s in store.steps(created.thread_id, user_id="u", after_id=steps[0].id)] == [1, 2]
    with pytest.raises(ConversationNotFound):
        store.steps(created.thread_id, user_id="intruder")


def test_results_are_numbered_per_thread(store):
    created = store.create(user_id="u", state=_state())
    assert store.save_result(created.thread_id, sql="SELECT 1", columns=["a"], rows=[[1]], truncated=False) == 1
    assert store.save_result(created.thread_id, sql="SELECT 2", columns=["a"], rows=[[2]], truncated=True) == 2
    result = store.load_result(created.thread_id, 2, user_id="u")
    assert (result.rows, result.truncated) == ([[2]], True)
    with pytest.raises(ResultNotFound):
        store.load_result(created.thread_id, 3, user_id="u")


def test_export_and_import(store):
    created = store.create(user_id="u", state=_state(turns=2), title="exported", tags=["t"])
    store.append_step(created.thread_id, step_index=0, step=Step(step_index=0, action="run_sql"))
    store.save_result(created.thread_id, sql="SELECT 1", columns=["a"], rows=[[1]], truncated=False)
    document = json.loads(json.dumps(store.export_conversation(created.thread_id, user_id="u")))
    copy = store.import_conversation(document, user_id="v")
    assert copy.thread_id != created.thread_id and copy.title == "exported" and copy.tags == ["t"]
    assert store.load(copy.thread_id, user_id="v").state == store.load(created.thread_id, user_id="u").state
    assert store.steps(copy.thread_id, user_id="v")[0].data["action"] == "run_sql"
    assert store.load_result(copy.thread_id, 1, user_id="v").rows == [[1]]
    with pytest.raises(ValueError):
        store.import_conversation({"format": "something else"}, user_id="v")


def test_an_import_that_fails_half_way_leaves_no_partial_copy(store):
    created = store.create(user_id="u", state=_state(), title="exported")
    store.save_result(created.thread_id, sql="SELECT 1", columns=["a"], rows=[[1]], truncated=False)
    document = store.export_conversation(created.thread_id, user_id="u")
    # A real failure of the database half way (after the conversation row is written): a trigger
    # refuses the result, as a full disk or a lost server would refuse some write.
    store.db.conn.execute("CREATE TEMP TRIGGER refuse BEFORE INSERT ON query_results"
                       " BEGIN SELECT RAISE(ABORT, 'refused'); END")
    with pytest.raises(StoreError):  # the store reports the refused insert as its own error
        store.import_conversation(document, user_id="v")
    assert store.list(user_id="v").total == 0
    assert store.db.conn.execute("SELECT count(*) FROM conversations").fetchone()[0] == 1


def test_schema_is_migrated_once_and_reopening_is_idempotent(store_path):
    with ConversationStore.open(store_path, AgentState) as store:
        assert store.schema_version() == migrations()[-1][0]
    with ConversationStore.open(store_path, AgentState) as store:
        assert store.schema_version() == migrations()[-1][0]
        assert store.db.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store.db.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_an_old_blob_is_migrated_on_load(store):
    created = store.create(user_id="u", state=AgentState())
    old_blob = {  # the seed's version 1: LangChain-style messages, answer a bare string
        "question": "How many sites?",
        "messages": [{"type": "human", "content": "How many sites?"}, {"type": "ai", "content": "20"}],
        "steps": [{"step_index": 0, "step_type": "tool", "action": "list_tables", "args": {},
                   "observation": "[...]", "timestamp": "2024-01-01T00:00:00Z"}],
        "answer": "There are 20 sites.",
        "done": True,
    }
    store.db.conn.execute("UPDATE conversations SET state_data = ? WHERE thread_id = ?",
                       (json.dumps(old_blob), created.thread_id))
    state = store.load(created.thread_id, user_id="u").state
    assert state.state_version == 2
    assert [m.role for m in state.messages] == ["user", "assistant"]
    assert state.answer.ok and state.answer.data.text == "There are 20 sites."
    assert state.steps[0].duration_ms == 0.0


def test_two_connections_share_one_file(store_path):
    with ConversationStore.open(store_path, AgentState) as a, ConversationStore.open(store_path, AgentState) as b:
        state = _state()
        created = a.create(user_id="u", state=state)
        assert b.load(created.thread_id, user_id="u").state == state


def test_a_migration_added_later_with_a_lower_number_still_runs(store_path, tmp_path, monkeypatch):
    import shutil

    from storage import schema

    folder = tmp_path / "migrations"
    folder.mkdir()
    shutil.copy(schema.MIGRATIONS_DIR / "0001_conversations.sql", folder)
    (folder / "0009_late.sql").write_text("CREATE TABLE late (x);")
    monkeypatch.setattr(SQLiteDialect, "migrations_dir", folder)
    conn = connect(store_path)
    assert schema.migrate(SQLiteDatabase(conn)) == 9
    (folder / "0004_parallel.sql").write_text("CREATE TABLE parallel (x);")
    assert schema.migrate(SQLiteDatabase(conn)) == 9
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"late", "parallel"} <= tables
    assert [r[0] for r in conn.execute("SELECT number FROM schema_migrations ORDER BY number")] == [1, 4, 9]
    conn.close()
