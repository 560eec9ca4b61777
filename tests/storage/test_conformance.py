"""One suite, both store backends: SQLite (a file in tmp_path) and PostgreSQL (a fresh schema on
the session's throwaway server). Whatever one backend promises, the other must keep."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from agent.state import AgentState, Message, SQLRecord, Step
from storage.base import Store, open_store
from storage.conversations import ConversationStore
from storage.errors import (
    ConversationNotFound, CorruptState, InvalidThreadId, ResultNotFound, VersionConflict,
)

BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(params=BACKENDS)
def location(request, tmp_path) -> str | Path:
    if request.param == "sqlite":
        return tmp_path / "store" / "conversations.db"
    return request.getfixturevalue("pg_store_url")


@pytest.fixture
def store(location):
    opened = open_store(location, AgentState)
    yield opened
    opened.close()


def placeholder(store: Store) -> str:
    return "?" if store.backend == "sqlite" else "%s"


def raw(store: Store, sql: str, *params) -> list:
    """Trusted test SQL on the store's own connection (`?` becomes the backend's placeholder)."""
    sql = sql.replace("?", placeholder(store))
    if store.backend == "sqlite":
        with store._write() as conn:
            return conn.execute(sql, params).fetchall()
    with store._write() as conn:
        cursor = conn.execute(sql, params)
        return cursor.fetchall() if cursor.description else []


def state_with(*texts: str) -> AgentState:
    state = AgentState(question=texts[-1] if texts else "")
    for i, text in enumerate(texts):
        state.messages.append(Message(role="user" if i % 2 == 0 else "assistant", content=text))
    return state


# -- conversations ------------------------------------------------------------------

def test_the_factory_picks_the_backend(store, location):
    assert isinstance(store, Store)
    assert store.backend == ("sqlite" if isinstance(location, Path) else "postgresql")
    assert isinstance(store, ConversationStore) == (store.backend == "sqlite")


def test_round_trip(store):
    state = state_with("How many launches in 2020?", "97, 中文 and \"quotes\" and émoji 🚀")
    state.sql_history.append(SQLRecord(sql="SELECT 1", ok=True, row_count=1))
    created = store.create(user_id="u", state=state, title="How many launches in 2020?", tags=["a", "b"])
    loaded = store.load(created.thread_id, user_id="u")
    assert loaded.state == state
    assert loaded.conversation.model_dump() == created.model_dump()
    assert (created.version, created.message_count, created.tags) == (1, 2, ["a", "b"])
    assert created.created_at.endswith("Z") and created.created_at == created.updated_at[: len(created.created_at)]
    renamed = store.update(created.thread_id, user_id="u", title="Launches", tags=["x"])
    assert (renamed.title, renamed.tags, renamed.version) == ("Launches", ["x"], 1)


def test_list_is_per_user_newest_first_with_literal_search(store):
    ids = [store.create(user_id="u", state=AgentState(), title=t).thread_id for t in ("Alpha", "100% beta", "gamma")]
    store.create(user_id="other", state=AgentState(), title="Alpha too")
    page = store.list(user_id="u")
    assert [c.thread_id for c in page.items] == ids[::-1] and page.total == 3
    assert [c.title for c in store.list(user_id="u", search="ALPHA").items] == ["Alpha"]
    assert [c.title for c in store.list(user_id="u", search="%").items] == ["100% beta"]
    assert store.list(user_id="u", search="'; DROP TABLE conversations; --").total == 0
    assert [c.thread_id for c in store.list(user_id="u", limit=1, offset=1).items] == [ids[1]]


def test_another_users_conversation_is_not_found(store):
    created = store.create(user_id="u", state=AgentState())
    for call in (lambda: store.get(created.thread_id, user_id="v"), lambda: store.load(created.thread_id, user_id="v"),
                 lambda: store.delete(created.thread_id, user_id="v"),
                 lambda: store.steps(created.thread_id, user_id="v"),
                 lambda: store.save(created.thread_id, user_id="v", state=AgentState(), expected_version=1)):
        with pytest.raises(ConversationNotFound):
            call()


@pytest.mark.parametrize("thread_id", ["a" * 65, "../etc", "x'; DROP TABLE conversations; --", "a b", "é"])
def test_invalid_thread_ids_are_refused(store, thread_id):
    with pytest.raises(InvalidThreadId):
        store.create(user_id="u", state=AgentState(), thread_id=thread_id)
    with pytest.raises(InvalidThreadId):
        store.get(thread_id, user_id="u")


def test_version_conflict_refuses_a_stale_save(store):
    created, first = store.create(user_id="u", state=AgentState()), state_with("first")
    assert store.save(created.thread_id, user_id="u", state=first, expected_version=1) == 2
    with pytest.raises(VersionConflict) as info:
        store.save(created.thread_id, user_id="u", state=state_with("stale"), expected_version=1)
    assert (info.value.expected, info.value.actual) == (1, 2)
    assert store.load(created.thread_id, user_id="u").state == first
    with pytest.raises(ConversationNotFound):
        store.save("missing", user_id="u", state=AgentState(), expected_version=1)


def test_concurrent_saves_from_two_servers_never_lose_an_update(store, location):
    """Two store objects (two pools, as two app servers) race on one thread: each version is won once."""
    other = open_store(location, AgentState)
    created = store.create(user_id="u", state=AgentState())
    wins: list[int] = []
    barrier = threading.Barrier(2)

    def racer(target: Store, name: str) -> None:
        barrier.wait()
        for _ in range(20):
            loaded = target.load(created.thread_id, user_id="u")
            state = loaded.state
            state.messages.append(Message(role="user", content=name))
            try:
                wins.append(target.save(created.thread_id, user_id="u", state=state,
                                        expected_version=loaded.conversation.version))
            except VersionConflict:
                pass

    try:
        threads = [threading.Thread(target=racer, args=(s, n)) for s, n in ((store, "a"), (other, "b"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        other.close()
    final = store.load(created.thread_id, user_id="u")
    assert sorted(wins) == list(range(2, 2 + len(wins)))  # no version was written twice
    assert len(final.state.messages) == len(wins) == final.conversation.version - 1


def test_a_corrupt_state_is_a_typed_error_and_spares_the_rest(store):
    fine = state_with("fine")
    good = store.create(user_id="u", state=fine)
    bad = store.create(user_id="u", state=AgentState())
    raw(store, "UPDATE conversations SET state_data = ? WHERE thread_id = ?", '{"messages": "not a list"}',
        bad.thread_id)
    with pytest.raises(CorruptState):
        store.load(bad.thread_id, user_id="u")
    assert {c.thread_id for c in store.list(user_id="u").items} == {good.thread_id, bad.thread_id}
    assert store.load(good.thread_id, user_id="u").state == fine


def test_threads_awaiting_answer(store):
    waiting = store.create(user_id="u", state=state_with("a question")).thread_id
    store.create(user_id="u", state=state_with("a question", "an answer"))
    store.create(user_id="u", state=AgentState())
    assert store.threads_awaiting_answer() == [(waiting, "u")]


# -- steps and results ----------------------------------------------------------------

def test_steps_are_appended_in_order_and_read_after_an_id(store):
    thread = store.create(user_id="u", state=AgentState()).thread_id
    ids = [store.append_step(thread, step_index=i, step=Step(step_index=i, action="run_sql", args={"sql": f"SELECT {i}"}))
           for i in range(3)]
    assert ids == sorted(ids)
    steps = store.steps(thread, user_id="u")
    assert [s.step_index for s in steps] == [0, 1, 2] and steps[2].data["args"] == {"sql": "SELECT 2"}
    assert [s.id for s in store.steps(thread, user_id="u", after_id=ids[0])] == ids[1:]
    store.delete(thread, user_id="u")
    with pytest.raises(ConversationNotFound):
        store.append_step(thread, step_index=3, step=Step(step_index=3))


def test_results_are_numbered_per_conversation(store):
    a, b = (store.create(user_id="u", state=AgentState()).thread_id for _ in range(2))
    rows = [[1, 2.5, "中文", None, True], [2, -1.0, "x'y", "z", False]]
    assert store.save_result(a, sql="SELECT 1", columns=["i", "f", "t", "n", "b"], rows=rows, truncated=True) == 1
    assert store.save_result(a, sql="SELECT 2", columns=["x"], rows=[], truncated=False) == 2
    assert store.save_result(b, sql="SELECT 3", columns=["x"], rows=[[3]], truncated=False) == 1
    loaded = store.load_result(a, 1, user_id="u")
    assert (loaded.rows, loaded.columns, loaded.row_count, loaded.truncated) == (rows, ["i", "f", "t", "n", "b"], 2, True)
    with pytest.raises(ResultNotFound):
        store.load_result(a, 3, user_id="u")
    with pytest.raises(ConversationNotFound):
        store.load_result(a, 1, user_id="v")


def test_export_then_import_makes_an_equal_copy(store):
    original = state_with("q", "a")
    created = store.create(user_id="u", state=original, title="Exported", tags=["t"])
    store.append_step(created.thread_id, step_index=0, step=Step(step_index=0, action="list_tables"))
    store.save_result(created.thread_id, sql="SELECT 1", columns=["x"], rows=[[1]], truncated=False)
    document = store.export_conversation(created.thread_id, user_id="u")
    copy = store.import_conversation(document, user_id="v")
    assert store.load(copy.thread_id, user_id="v").state == original
    assert (copy.title, copy.tags) == ("Exported", ["t"])
    assert store.load_result(copy.thread_id, 1, user_id="v").rows == [[1]]
    assert [s.data["action"] for s in store.steps(copy.thread_id, user_id="v")] == ["list_tables"]


# -- archive, views, cascade -------------------------------------------------------------

def test_archive_moves_messages_under_the_version_check(store):
    state = state_with("q1", "a1", "q2", "a2")
    created = store.create(user_id="u", state=state)
    archive = store.archive(Message)
    old, state.messages = state.messages[:2], state.messages[2:]
    version = archive.archive(created.thread_id, user_id="u", state=state, expected_version=1, messages=old,
                              tokens=[5, 7], sql_records=[SQLRecord(sql="SELECT 1", ok=False, error="no")])
    assert version == 2
    stats = archive.stats(created.thread_id)
    assert (stats.messages, stats.user_messages, stats.tokens, stats.sql_records) == (2, 1, 12, 1)
    assert [m.content for m in archive.messages(created.thread_id, user_id="u", role="user")] == ["q1"]
    page = archive.history(created.thread_id, user_id="u", offset=1, limit=2)
    assert [m.content for m in page.items] == ["a1", "q2"] and page.total == 4
    assert store.get(created.thread_id, user_id="u").message_count == 4
    with pytest.raises(VersionConflict):
        archive.archive(created.thread_id, user_id="u", state=state, expected_version=1, messages=old)
    assert archive.stats(created.thread_id).messages == 2


def test_operator_views_show_archived_and_hot_rows(store):
    state = state_with("q1", "a1", "q2")
    state.sql_history += [SQLRecord(sql="SELECT bad", ok=False, error="no such table"), SQLRecord(sql="SELECT 1", ok=True)]
    created = store.create(user_id="u", state=state)
    hot = state.model_copy(update={"messages": state.messages[2:], "sql_history": state.sql_history[1:]})
    store.archive(Message).archive(created.thread_id, user_id="u", state=hot, expected_version=1,
                                   messages=state.messages[:2], sql_records=state.sql_history[:1])
    store.append_step(created.thread_id, step_index=0, step=Step(step_index=0, action="run_sql", duration_ms=3))
    assert raw(store, "SELECT position, role, content, archived FROM v_messages WHERE thread_id = ? ORDER BY position",
               created.thread_id) == [(0, "user", "q1", 1), (1, "assistant", "a1", 1), (2, "user", "q2", 0)]
    assert raw(store, "SELECT position, sql, ok, error FROM v_sql_history WHERE thread_id = ? ORDER BY position",
               created.thread_id) == [(0, "SELECT bad", 0, "no such table"), (1, "SELECT 1", 1, None)]
    assert raw(store, "SELECT action, duration_ms FROM v_steps WHERE thread_id = ?", created.thread_id) == [("run_sql", 3)]


def test_delete_removes_every_row_of_the_conversation(store):
    keep = store.create(user_id="u", state=state_with("keep")).thread_id
    gone = store.create(user_id="u", state=state_with("q", "a")).thread_id
    for thread in (keep, gone):
        store.append_step(thread, step_index=0, step=Step(step_index=0))
        store.save_result(thread, sql="SELECT 1", columns=["x"], rows=[[1]], truncated=False)
        store.leases(seconds=30).acquire(thread, "owner")
    store.archive(Message).archive(gone, user_id="u", state=AgentState(), expected_version=1,
                                   messages=state_with("q", "a").messages, sql_records=[SQLRecord(sql="SELECT 1", ok=True)])
    store.delete(gone, user_id="u")
    for table in ("conversations", "conversation_steps", "query_results", "archived_messages", "archived_sql",
                  "turn_leases"):
        counts = dict(raw(store, f"SELECT thread_id, count(*) FROM {table} GROUP BY thread_id"))
        assert gone not in counts, table
    assert dict(raw(store, "SELECT thread_id, count(*) FROM conversation_steps GROUP BY thread_id")) == {keep: 1}
    with pytest.raises(ConversationNotFound):
        store.delete(gone, user_id="u")


# -- leases ---------------------------------------------------------------------------

def test_leases_serialise_turns_on_one_thread(store):
    thread = store.create(user_id="u", state=AgentState()).thread_id
    leases = store.leases(seconds=30)
    assert leases.acquire(thread, "remote:1:a") is None and leases.is_held(thread)
    assert leases.acquire(thread, "remote:2:b") == "remote:1:a"
    assert leases.acquire(thread, "remote:1:a") is None  # the holder may take it again
    leases.renew(thread, "remote:1:a")
    leases.release(thread, "remote:2:b")  # not the holder: nothing happens
    assert leases.is_held(thread)
    leases.release(thread, "remote:1:a")
    assert not leases.is_held(thread) and leases.acquire(thread, "remote:2:b") is None
    with pytest.raises(ConversationNotFound):
        leases.acquire("missing", "remote:1:a")


def test_an_expired_lease_is_taken_over(store):
    thread = store.create(user_id="u", state=AgentState()).thread_id
    assert store.leases(seconds=-1).acquire(thread, "remote:1:a") is None
    assert not store.leases(seconds=30).is_held(thread)
    assert store.leases(seconds=30).acquire(thread, "remote:2:b") is None


def test_exactly_one_of_many_concurrent_acquirers_wins(store, location):
    """Eight "servers" (each its own store object) ask for the same thread at the same moment."""
    thread = store.create(user_id="u", state=AgentState()).thread_id
    stores = [open_store(location, AgentState) for _ in range(8)]
    barrier, results = threading.Barrier(len(stores)), []

    def ask(target: Store, n: int) -> None:
        barrier.wait()
        results.append(target.leases(seconds=30).acquire(thread, f"server{n}:1:x"))

    try:
        threads = [threading.Thread(target=ask, args=(s, n)) for n, s in enumerate(stores)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for s in stores:
            s.close()
    assert results.count(None) == 1 and len(results) == 8


# -- migrations -----------------------------------------------------------------------

def test_migrations_are_applied_once_and_numbered_alike(store, location):
    from storage.postgres.schema import migrations as pg_migrations
    from storage.schema import MIGRATIONS_DIR
    from storage.postgres.schema import MIGRATIONS_DIR as PG_DIR

    version = store.schema_version()
    again = open_store(location, AgentState)  # a second server starting on the same store
    try:
        assert again.schema_version() == version
    finally:
        again.close()
    applied = [r[0] for r in raw(store, "SELECT number FROM schema_migrations ORDER BY number")]
    assert len(applied) == len(set(applied))
    sqlite_names = {p.name for p in MIGRATIONS_DIR.glob("*.sql")}
    assert {p.name for p in PG_DIR.glob("*.sql")} <= sqlite_names  # the same numbers and names
    if store.backend == "postgresql":
        assert applied == [n for n, _ in pg_migrations()] and version == applied[-1]
