"""One suite, both store backends: SQLite (a file in tmp_path) and PostgreSQL (a fresh schema on
the session's throwaway server). Whatever one backend promises, the other must keep."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest

from agent.state import AgentState, Message, SQLRecord, Step
from storage.base import Store, open_store, opened_store
from storage.conversations import ConversationStore
from storage.steps import NewResult
from storage.text import search_terms
from storage.episodes import EpisodeIn, EpisodeNotFound, StoredVector, episode_id
from storage.errors import (
    ConversationNotFound, CorruptState, InvalidThreadId, LeaseLost, ResultNotFound, VersionConflict,
)
from storage.examples import DuplicateQuestion, Example, ExampleNotFound, Feedback, FeedbackIn
from storage.memory_items import DuplicateMemory, ItemVector, MemoryItemIn, MemoryItemNotFound
from storage.schema import PG_MIGRATIONS_DIR, migrations

PAYLOADS = (Path(__file__).resolve().parents[1] / "data" / "sql_payloads.txt").read_text(errors="replace").splitlines()

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


def raw(store: Store, sql: str, *params) -> list:
    """Trusted test SQL in a transaction of the store's own (`?` placeholders on both backends)."""
    with store.db.write() as tx:
        cursor = tx.execute(sql, params)
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
    assert isinstance(store, ConversationStore) and store.db.dialect.name == store.backend


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


def test_long_titles_are_cut_at_a_word_with_an_ellipsis(store):
    question = "Which launch vehicles flew more than 10 times since 2015?"
    created = store.create(user_id="u", state=AgentState(), title=question)
    assert created.title == "Which launch vehicles flew more than 10 times…"
    assert store.create(user_id="u", state=AgentState(), title="x" * 80).title == "x" * 49 + "…"
    assert store.create(user_id="u", state=AgentState(), title=" two\n lines ").title == "two lines"
    untitled = store.create(user_id="u", state=AgentState())
    store.save(untitled.thread_id, user_id="u", state=AgentState(), expected_version=1, title="中国" * 40)
    assert store.load(untitled.thread_id, user_id="u").conversation.title == "中国" * 24 + "中…"


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


def test_stored_results_are_capped_per_result_and_per_conversation(store):
    """Issue 18: one turn of large results grew a store by 119 MB."""
    store.max_result_bytes, store.max_conversation_result_bytes = 5_000, 12_000
    thread = store.create(user_id="u", state=AgentState()).thread_id
    rows = [[n, "x" * 90] for n in range(200)]  # about 20 KB as JSON
    for n in range(1, 4):
        store.save_result(thread, sql=f"SELECT {n}", columns=["n", "t"], rows=rows, truncated=False)
    first, second, third = (store.load_result(thread, n, user_id="u") for n in (1, 2, 3))
    assert first.truncated and 0 < first.row_count == len(first.rows) < 200 and first.rows == rows[:first.row_count]
    assert len(json.dumps(first.rows)) <= 5_000 and second.row_count == first.row_count
    assert third.truncated and third.row_count < first.row_count  # what the conversation had left
    small = store.save_result(thread, sql="SELECT 4", columns=["n"], rows=[[1]] * 2000, truncated=False)
    assert store.load_result(thread, small, user_id="u").row_count < 2000


def test_a_step_and_its_result_are_kept_together_and_returned_as_stored(store):
    """A turn writes a step with the result it shows in one transaction, numbering the result from
    `load`'s last_result_id, and never reads back what it wrote (issue 19)."""
    store.max_result_bytes = 200
    thread = store.create(user_id="u", state=AgentState()).thread_id
    assert store.load(thread, user_id="u").last_result_id == 0
    store.save_result(thread, sql="SELECT 0", columns=["x"], rows=[[0]], truncated=False)
    assert store.load(thread, user_id="u").last_result_id == 1
    rows = [[n, "x" * 20] for n in range(50)]
    kept = store.record_step(thread, step_index=0, step=Step(step_index=0, action="run_sql", result_id=2),
                             result=NewResult(result_id=2, sql="SELECT 2", columns=["n", "t"], rows=rows, truncated=False))
    stored = store.load_result(thread, 2, user_id="u")
    assert kept.model_dump(exclude={"created_at"}) == stored.model_dump(exclude={"created_at"})
    assert kept.truncated and 0 < kept.row_count < 50 and store.load(thread, user_id="u").last_result_id == 2
    assert store.record_step(thread, step_index=1, step=Step(step_index=1)) is None
    assert [s.step_index for s in store.steps(thread, user_id="u")] == [0, 1]
    with pytest.raises(ConversationNotFound):  # deleted: neither the step nor the result is written
        store.record_step("missing", step_index=0, step=Step(step_index=0),
                          result=NewResult(result_id=1, sql="SELECT 1", columns=["x"], rows=[[1]], truncated=False))


def test_a_transaction_commits_several_calls_together_or_none_of_them(store):
    thread = store.create(user_id="u", state=AgentState()).thread_id
    leases = store.leases(seconds=30)
    with store.transaction():
        assert leases.acquire(thread, "remote:1:a") is None
        loaded = store.load(thread, user_id="u")  # reads see the transaction's own writes
        version = store.save(thread, user_id="u", state=state_with("q"), expected_version=loaded.conversation.version)
        store.append_step(thread, step_index=0, step=Step(step_index=0))
    assert leases.is_held(thread) and store.load(thread, user_id="u").conversation.version == version
    with pytest.raises(VersionConflict), store.transaction():
        leases.release(thread, "remote:1:a")
        store.append_step(thread, step_index=1, step=Step(step_index=1))
        store.save(thread, user_id="u", state=state_with("q", "a"), expected_version=version - 1)
    assert leases.is_held(thread) and [s.step_index for s in store.steps(thread, user_id="u")] == [0]
    assert store.load(thread, user_id="u").state.messages[-1].content == "q"


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


def test_export_carries_the_archive_and_import_restores_it(store):
    state = state_with("q1", "a1", "q2", "a2", "q3")
    state.sql_history += [SQLRecord(sql="SELECT bad", ok=False, error="no such table"),
                          SQLRecord(sql="SELECT 1", ok=True, row_count=1, columns=["x"]),
                          SQLRecord(sql="SELECT 2", ok=True)]
    created = store.create(user_id="u", state=state, title="Long")
    archive = store.archive(Message)
    hot = state.model_copy(update={"messages": state.messages[1:], "sql_history": state.sql_history[1:]})
    version = archive.archive(created.thread_id, user_id="u", state=hot, expected_version=1,
                              messages=state.messages[:1], tokens=[5], sql_records=state.sql_history[:1])
    # A second archiving appends after the first.
    kept = state.model_copy(update={"messages": state.messages[2:], "sql_history": state.sql_history[2:]})
    archive.archive(created.thread_id, user_id="u", state=kept, expected_version=version,
                    messages=state.messages[1:2], tokens=[7], sql_records=state.sql_history[1:2])
    document = json.loads(json.dumps(store.export_conversation(created.thread_id, user_id="u")))  # as a file holds it
    assert document["archive"]["messages"] == [{"message": m.model_dump(mode="json", exclude_none=True), "tokens": n}
                                               for m, n in zip(state.messages[:2], (5, 7))]
    assert [r["sql"] for r in document["archive"]["sql"]] == ["SELECT bad", "SELECT 1"]

    copy = store.import_conversation(document, user_id="v")
    assert copy.message_count == 5 and store.load(copy.thread_id, user_id="v").state == kept
    assert archive.history(copy.thread_id, user_id="v").items == archive.history(created.thread_id, user_id="u").items
    assert archive.stats(copy.thread_id) == archive.stats(created.thread_id)
    assert archive.dump(copy.thread_id, user_id="v") == archive.dump(created.thread_id, user_id="u")
    assert raw(store, "SELECT position, sql FROM v_sql_history WHERE thread_id = ? ORDER BY position",
               copy.thread_id) == [(0, "SELECT bad"), (1, "SELECT 1"), (2, "SELECT 2")]
    for call in (lambda: store.export_conversation(created.thread_id, user_id="v"),
                 lambda: archive.dump(created.thread_id, user_id="v")):
        with pytest.raises(ConversationNotFound):
            call()

    del document["archive"]  # an export made before archives were exported
    older = store.import_conversation(document, user_id="v")
    assert (older.version, older.message_count, archive.stats(older.thread_id).messages) == (1, 3, 0)
    assert store.load(older.thread_id, user_id="v").state == kept


def test_an_invalid_export_writes_nothing(store):
    created = store.create(user_id="u", state=state_with("q"))
    document = store.export_conversation(created.thread_id, user_id="u")
    for broken, problem in ((["not", "a", "dict"], "not an askdb conversation export"),
                            ({**document, "format": "askdb.conversation/0"}, "not an askdb conversation export"),
                            ({**document, "archive": {"messages": [{"tokens": 3}]}}, "archive.messages.0.message"),
                            ({**document, "results": [{"sql": "SELECT 1"}]}, "results.0.columns"),
                            ({**document, "state": {"messages": "not a list"}}, "state is not valid"),
                            ({"format": document["format"], "state": {"messages": 3}}, "state is not valid")):
        with pytest.raises(ValueError, match=problem):
            store.import_conversation(broken, user_id="v")
    assert store.list(user_id="v").total == 0


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


def test_a_stop_is_asked_of_the_live_turn_holding_the_lease(store):
    """Stop pressed on one server reaches a turn another runs: through its lease, until the next turn's."""
    thread = store.create(user_id="u", state=AgentState()).thread_id
    leases = store.leases(seconds=30)
    assert not leases.request_stop(thread)  # no turn runs
    assert leases.acquire(thread, "remote:1:a") is None and not leases.confirm(thread, "remote:1:a")
    assert leases.request_stop(thread) and leases.confirm(thread, "remote:1:a")  # read as the turn confirms
    assert store.leases(seconds=-1).acquire(thread, "remote:1:a") is None  # renewed, now expired
    assert not leases.request_stop(thread)  # an expired lease runs no turn
    assert leases.acquire(thread, "remote:2:b") is None and not leases.confirm(thread, "remote:2:b")


def test_a_lease_is_confirmed_only_by_its_holder(store):
    """A turn confirms its lease in each of its writes: once taken over (or released by whoever took it
    over), its writes are refused."""
    thread = store.create(user_id="u", state=AgentState()).thread_id
    assert store.leases(seconds=-1).acquire(thread, "remote:1:a") is None  # taken, and expired at once
    store.leases(seconds=30).confirm(thread, "remote:1:a")  # expired but not taken over: still its own
    assert store.leases(seconds=30).acquire(thread, "remote:2:b") is None
    with pytest.raises(LeaseLost), store.transaction():
        store.leases(seconds=30).confirm(thread, "remote:1:a")
        store.append_step(thread, step_index=0, step=Step(step_index=0))
    assert store.steps(thread, user_id="u") == []
    store.leases(seconds=30).release(thread, "remote:2:b")
    with pytest.raises(LeaseLost):
        store.leases(seconds=30).confirm(thread, "remote:1:a")
    with pytest.raises(ConversationNotFound):
        store.leases(seconds=30).confirm("missing", "remote:1:a")


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


# -- episodes -------------------------------------------------------------------------

def vector(*values: float) -> bytes:
    """An embedding as the stores take and return it: float32, little-endian."""
    return np.asarray(values, dtype="<f4").tobytes()


def episode(thread: str, n: int, question: str, *, user: str = "u", **fields) -> EpisodeIn:
    return EpisodeIn(thread_id=thread, user_id=user, turn_index=n, question=question, **fields)


def index_rows(store: Store, seq: int) -> int:
    """Keyword index entries of one episode: FTS5 rows on SQLite, the row's own tsvector on PostgreSQL."""
    if store.backend == "sqlite":
        return raw(store, "SELECT count(*) FROM episodes_fts WHERE rowid = ?", seq)[0][0]
    return raw(store, "SELECT count(*) FROM episodes WHERE seq = ? AND terms <> ''::tsvector", seq)[0][0]


def test_indexing_a_turn_again_updates_its_row(store):
    episodes, thread = store.episodes(), store.create(user_id="u", state=AgentState()).thread_id
    first = episodes.upsert(episode(thread, 0, "How many launches in 2020?", answer="114"),
                            embedding=vector(0.25, -1.5), embedding_model="m")
    again = episodes.upsert(episode(thread, 0, "How many launches in 2020?", answer="114"))
    assert (again.id, again.seq, again.embedding_model) == (episode_id(thread, 0), first.seq, "m")  # kept its vector
    assert again.created_at == first.created_at and again.updated_at >= first.updated_at
    invalidations = episodes.vector_state(user_id="u")[1]
    changed = episodes.upsert(episode(thread, 0, "How many payloads?", topics=["payloads"]))
    assert (changed.seq, changed.topics, changed.embedding_model) == (first.seq, ["payloads"], None)
    assert episodes.vector_state(user_id="u")[1] == invalidations + 1  # a cache must drop the old vector
    assert episodes.count(user_id="u") == 1 and index_rows(store, first.seq) == 1
    assert [seq for seq, _ in episodes.keyword_search(["payloads"], user_id="u")] == [first.seq]
    assert episodes.keyword_search(["launches"], user_id="u") == []


def test_keyword_search_finds_words_stems_and_chinese(store):
    episodes, thread = store.episodes(), store.create(user_id="u", state=AgentState()).thread_id
    other = store.create(user_id="u", state=AgentState()).thread_id
    seqs = [episodes.upsert(e).seq for e in (
        episode(thread, 0, "How many launches per year?", sql="SELECT year, count(*) FROM launches GROUP BY year"),
        episode(thread, 1, "Which payloads were heaviest?", answer="The Starlink batches", topics=["payloads"]),
        episode(thread, 2, "2020年中国发射了多少次火箭？", answer="39次"),
        episode(thread, 3, "And in 2021?", context="How many rockets failed?"),
        episode(other, 0, "Rockets built by each manufacturer"),
        episode(other, 1, "Café launches in São Paulo"),
    )]

    def found(query: str, **scope) -> list[int]:
        hits = episodes.keyword_search(search_terms(query), user_id="u", **scope)
        assert [score for _, score in hits] == sorted(score for _, score in hits)  # best (lowest) first
        return [seq for seq, _ in hits]

    assert found("launches per year")[0] == seqs[0]
    assert sorted(found("launch")) == [seqs[0], seqs[5]]  # stemmed on both backends: "launch" finds "launches"
    assert found("Starlink") == [seqs[1]] and found("payload") == [seqs[1]]
    assert found("中国的火箭发射") == [seqs[2]]  # CJK bigrams
    assert found("rockets") == [seqs[4], seqs[3]]  # a question outranks a neighbour's words (context)
    assert found("rockets", thread_id=thread) == [seqs[3]]
    assert found("sao paulo cafe") == [seqs[5]]  # accents folded
    assert found("select count group") == []  # SQL words are not indexed
    assert episodes.keyword_search(["manufact"], user_id="u") == []
    assert [s for s, _ in episodes.keyword_search(["manufact"], user_id="u", prefix_min=4)] == [seqs[4]]
    assert episodes.keyword_search([], user_id="u") == [] and found("the of and") == []


def test_a_search_past_scored_rows_leaves_out_the_commonest_words(store, monkeypatch):
    import storage.episodes

    episodes, thread = store.episodes(), store.create(user_id="u", state=AgentState()).thread_id
    for n in range(6):
        episodes.upsert(episode(thread, n, f"launches of vehicle number {n}"))
    rare = episodes.upsert(episode(thread, 6, "orbits of the moon")).seq
    both = episodes.upsert(episode(thread, 7, "launches toward the moon")).seq
    assert len(episodes.keyword_search(["launches", "moon"], user_id="u")) == 8
    monkeypatch.setattr(storage.episodes, "SCORED_ROWS", 3)
    # "launches" matches 7 rows, more than 3: only "moon" (2 rows) is searched for.
    assert {s for s, _ in episodes.keyword_search(["launches", "moon"], user_id="u")} == {rare, both}
    assert {s for s, _ in episodes.keyword_search(["launches", "moon"], user_id="u", thread_id=thread)} == {rare, both}
    assert len(episodes.keyword_search(["launches"], user_id="u")) == 7  # a lone word is always searched for


@pytest.mark.parametrize("payload", [p for p in PAYLOADS if p.strip() and not p.startswith("#")][:40])
def test_user_text_in_a_keyword_search_is_only_ever_a_value(store, payload):
    episodes, thread = store.episodes(), store.create(user_id="u", state=AgentState()).thread_id
    episodes.upsert(episode(thread, 0, payload, sql=payload, answer=payload))
    episodes.keyword_search(search_terms(payload), user_id="u")
    episodes.keyword_search([payload, "a' | 'b", "x:*", "!y", "'", "\\"], user_id="u", prefix_min=2)
    store.examples().keyword_search(payload, database_key=payload)
    assert episodes.count(user_id="u") == 1 and store.get(thread, user_id="u")


def test_vectors_are_read_back_as_written_by_version(store):
    episodes, thread = store.episodes(), store.create(user_id="u", state=AgentState()).thread_id
    rng = np.random.default_rng(7)
    written = [vector(*rng.standard_normal(384)) for _ in range(2)]
    one = episodes.upsert(episode(thread, 0, "one"), embedding=written[0], embedding_model="m1")
    two = episodes.upsert(episode(thread, 1, "two"))
    three = episodes.upsert(episode(thread, 2, "three"), embedding=written[1], embedding_model="m2")
    assert episodes.vectors(user_id="u", model="m1") == [StoredVector(one.seq, thread, 1, written[0])]
    assert [e.seq for e in episodes.stale(user_id="u", model="m1")] == [two.seq, three.seq]
    newest = episodes.vector_state(user_id="u")[0]
    assert newest == 2
    assert episodes.set_embeddings([(two.seq, vector(1, 0)), (three.seq, vector(0, 1))], user_id="u", model="m1") == 2
    assert episodes.set_embeddings([(two.seq, vector(9, 9))], user_id="v", model="m1") == 0  # not v's
    later = episodes.vectors(user_id="u", model="m1", after_version=newest)
    assert [(v.seq, v.vec_version, v.embedding) for v in later] == [(two.seq, 3, vector(1, 0)),
                                                                    (three.seq, 4, vector(0, 1))]
    assert episodes.stale(user_id="u", model="m1") == [] and episodes.vector_state(user_id="u")[0] == 4


def test_servers_indexing_at_once_keep_one_row_per_turn_and_number_vectors_in_order(store, location):
    """Four "servers" (each its own store object) index the same three turns, with vectors, at once."""
    thread = store.create(user_id="u", state=AgentState()).thread_id
    servers = [open_store(location, AgentState) for _ in range(4)]
    barrier = threading.Barrier(len(servers))

    def index(server: Store, n: int) -> None:
        barrier.wait()
        server.episodes().upsert_many((episode(thread, turn, f"question {turn}"), vector(n, turn), "m")
                                      for turn in range(3))

    try:
        workers = [threading.Thread(target=index, args=(s, n)) for n, s in enumerate(servers)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    finally:
        for s in servers:
            s.close()
    vectors = store.episodes().vectors(user_id="u", model="m")
    assert store.episodes().count(user_id="u") == 3 and len(vectors) == 3
    # Each server's batch took three consecutive versions after the one before it, whole: the
    # last batch wrote 10-12, all three vectors from one server.
    assert [v.vec_version for v in vectors] == [10, 11, 12]
    assert len({np.frombuffer(v.embedding, dtype="<f4")[0] for v in vectors}) == 1


def test_episodes_are_per_user(store):
    episodes = store.episodes()
    mine, theirs = (store.create(user_id=user, state=AgentState()).thread_id for user in ("u", "v"))
    kept = episodes.upsert(episode(mine, 0, "launches"), embedding=vector(1, 2), embedding_model="m")
    with pytest.raises(ConversationNotFound):  # into another user's conversation
        episodes.upsert(episode(theirs, 0, "launches"))
    with pytest.raises(ConversationNotFound):
        episodes.upsert(episode("missing", 0, "launches"))
    with pytest.raises(EpisodeNotFound):
        episodes.get(kept.id, user_id="v")
    assert episodes.keyword_search(["launches"], user_id="v") == [] and episodes.by_seq([kept.seq], user_id="v") == {}
    assert episodes.list(user_id="v") == [] and episodes.count(user_id="v") == 0
    assert episodes.vectors(user_id="v", model="m") == [] and episodes.stale(user_id="v", model="m") == []
    assert episodes.list(user_id="u", thread_id=mine) == [episodes.get(kept.id, user_id="u")]
    assert episodes.delete_for_user("v") == 0 and episodes.delete_for_user("u") == 1


def test_deleting_a_conversation_leaves_no_row_of_it(store):
    episodes, examples, items = store.episodes(), store.examples(), store.memory_items()
    keep, gone = (store.create(user_id="u", state=AgentState()).thread_id for _ in range(2))
    for n in range(3):
        episodes.upsert(episode(gone, n, f"question {n} about launches"), embedding=vector(n, 1), embedding_model="m")
    kept = episodes.upsert(episode(keep, 0, "kept launches"))
    for thread in (keep, gone):
        examples.record_feedback(FeedbackIn(thread_id=thread, user_id="u", turn_index=0, rating="down",
                                            question="q", database_key="db"))
    items.add(MemoryItemIn(user_id="u", text="Call me Ada", dedupe_hash="h", source_session_id=gone))
    store.delete(gone, user_id="u")
    for table in ("episodes", "feedback"):
        assert dict(raw(store, f"SELECT thread_id, count(*) FROM {table} GROUP BY thread_id")) == {keep: 1}, table
    assert [seq for seq, _ in episodes.keyword_search(["launches"], user_id="u")] == [kept.seq]
    assert index_rows(store, kept.seq) == 1 and sum(index_rows(store, kept.seq + n) for n in (-3, -2, -1)) == 0
    assert episodes.vector_state(user_id="u")[1] == 3  # three vectors gone: caches reload
    assert items.count(user_id="u") == 1  # a memory outlives the conversation it came from


def test_a_sidecar_store_opens_on_its_own(store, location):
    """As tools and benchmarks open them: their own connection (or pool) to the same store."""
    thread = store.create(user_id="u", state=AgentState()).thread_id
    store.episodes().upsert(episode(thread, 0, "launches"))
    for sidecar in (store.memory_items(), store.examples()):
        with type(sidecar).open(location) as opened:
            assert type(opened) is type(sidecar)
    with type(store.episodes()).open(location) as episodes:
        assert episodes.count(user_id="u") == 1


# -- memory items ---------------------------------------------------------------------

def memory(text: str, *, user: str = "u", key: str | None = None, **fields) -> MemoryItemIn:
    return MemoryItemIn(user_id=user, text=text, dedupe_hash=f"h:{text}", data={"key": key} if key else {}, **fields)


def test_memory_items_are_added_superseded_updated_and_deleted(store):
    items = store.memory_items()
    old = items.add(memory("FY starts in April", key="fiscal_year_start", tags=["finance"], importance=0.7),
                    embedding=vector(1, 0), embedding_model="m")
    assert (old.status, old.tags, old.importance, old.valid_to) == ("active", ["finance"], 0.7, None)
    assert old.created_at == old.updated_at == old.valid_from and old.created_at.endswith("Z")
    new = items.add(memory("FY starts in July", key="fiscal_year_start"), supersedes=old.id)
    archived = items.get(old.id, user_id="u")
    assert (archived.status, archived.valid_to, archived.data) == ("archived", new.valid_from,
                                                                   {"key": "fiscal_year_start", "superseded_by": new.id})
    assert [i.id for i in items.find_active(user_id="u", key="fiscal_year_start")] == [new.id]
    assert [i.id for i in items.find_active(user_id="u", dedupe_hash="h:FY starts in July")] == [new.id]
    assert [i.status for i in items.list(user_id="u")] == ["active", "archived"]
    assert items.count(user_id="u") == 2 and items.count(user_id="u", status="archived") == 1
    with pytest.raises(MemoryItemNotFound):  # an archived item cannot be superseded again
        items.add(memory("FY starts in May"), supersedes=old.id)
    with pytest.raises(DuplicateMemory):
        items.add(memory("FY starts in July"))
    items.set_vector(new.id, user_id="u", embedding=vector(0.5, 0.5), embedding_model="m")
    assert items.vectors(user_id="u", model="m") == [ItemVector(new.id, vector(0.5, 0.5))]  # active items only
    updated = items.update(new.id, user_id="u", importance=0.9, tags=["fy"], data={"key": "fiscal_year_start", "n": 1})
    assert (updated.importance, updated.tags, updated.data["n"], updated.text) == (0.9, ["fy"], 1, "FY starts in July")
    assert len(items.vectors(user_id="u", model="m")) == 1
    reworded = items.update(new.id, user_id="u", text="The fiscal year starts in July", dedupe_hash="h:fy")
    assert reworded.text == "The fiscal year starts in July" and items.vectors(user_id="u", model="m") == []
    items.archive(new.id, user_id="u")
    assert items.list(user_id="u", status="active") == []
    items.delete(old.id, user_id="u")
    assert [i.id for i in items.list(user_id="u")] == [new.id]


def test_memory_items_are_per_user_and_their_vectors_go_with_them(store):
    items = store.memory_items()
    mine = items.add(memory("Call me Ada"), embedding=vector(1, 1), embedding_model="m")
    theirs = items.add(memory("Call me Ada", user="v"), embedding=vector(2, 2), embedding_model="m")
    for call in (lambda: items.get(mine.id, user_id="v"), lambda: items.delete(mine.id, user_id="v"),
                 lambda: items.update(mine.id, user_id="v", text="mine now"), lambda: items.archive(mine.id, user_id="v"),
                 lambda: items.set_vector(mine.id, user_id="v", embedding=vector(0, 0), embedding_model="m")):
        with pytest.raises(MemoryItemNotFound):
            call()
    assert [i.id for i in items.list(user_id="u")] == [mine.id] and items.vectors(user_id="u", model="m") == [
        ItemVector(mine.id, vector(1, 1))]
    assert items.delete_for_user("u") == 1
    assert items.get(theirs.id, user_id="v").text == "Call me Ada"
    assert raw(store, "SELECT item_id FROM memory_vectors") == [(theirs.id,)]  # the vector went with its item


# -- examples and feedback ---------------------------------------------------------------

def test_examples_are_kept_per_database_edited_searched_and_embedded(store):
    examples = store.examples()

    def add(question: str, sql: str = "SELECT 1", key: str = "db", **fields) -> Example:
        return examples.upsert(database_key=key, question=question, sql=sql, source="feedback", created_by="u",
                               **fields)

    first = add("How many singers?", "SELECT count(*) FROM singer", embedding=vector(1, 0), embedding_model="m")
    again = add("  how many SINGERS  ", "SELECT count(*) AS n FROM singer", note="checked")
    elsewhere = add("How many singers?", key="other")
    assert (again.id, again.note, again.question) == (first.id, "checked", "  how many SINGERS  ")
    assert elsewhere.id != first.id and examples.count(database_key="db") == 1
    stadiums = add("List the stadiums by capacity", "SELECT name FROM stadium ORDER BY capacity")
    add("Average age of singers from France", "SELECT avg(age) FROM singer WHERE country = 'France'",
        embedding=vector(0, 1), embedding_model="m")
    ranked = examples.keyword_search("what is the average age of the singers", database_key="db")
    assert [examples.get(i, database_key="db").question for i, _ in ranked][0] == "Average age of singers from France"
    assert len(ranked) == 2 and [s for _, s in ranked] == sorted(s for _, s in ranked)
    page = examples.list(database_key="db", search="SINGER")
    assert page.total == 2 and examples.list(database_key="db", search="%").total == 0
    assert examples.list(database_key="db", limit=1, offset=2).items[0].id == first.id  # newest first
    assert sorted(examples.by_ids([first.id, stadiums.id, elsewhere.id], database_key="db")) == sorted(
        [first.id, stadiums.id])
    # Upserting a question again replaced its vector with none.
    assert [e.id for e in examples.missing_vectors(database_key="db", model="m")] == [first.id, stadiums.id]
    examples.set_embedding(first.id, vector(1, 0), model="m")
    examples.set_embedding(stadiums.id, vector(0.5, 0.5), model="m")
    assert dict(examples.vectors(database_key="db", model="m"))[stadiums.id] == vector(0.5, 0.5)
    edited = examples.update(first.id, database_key="db", edited_by="u", sql="SELECT 2")
    assert (edited.sql, edited.source, edited.embedding_model, edited.note) == ("SELECT 2", "edit", "m", "checked")
    renamed = examples.update(stadiums.id, database_key="db", edited_by="u", question="Stadiums by size")
    assert renamed.embedding_model is None and examples.keyword_search("list", database_key="db") == []
    assert [i for i, _ in examples.keyword_search("size", database_key="db")] == [stadiums.id]  # re-indexed
    with pytest.raises(DuplicateQuestion):
        examples.update(stadiums.id, database_key="db", edited_by="u", question="how many singers")
    with pytest.raises(ExampleNotFound):
        examples.update(first.id, database_key="other", edited_by="u", sql="SELECT 3")
    examples.delete(first.id, database_key="db")
    with pytest.raises(ExampleNotFound):
        examples.delete(first.id, database_key="db")
    assert examples.keyword_search("how many", database_key="db") == []  # its index entry went with it


def test_feedback_is_per_user_and_outlives_its_example(store):
    examples, thread = store.examples(), store.create(user_id="u", state=AgentState()).thread_id
    example = examples.upsert(database_key="db", question="How many singers?", sql="SELECT 1", source="feedback",
                              created_by="u")

    def verdict(user: str, rating: str, note: str = "", **fields) -> Feedback:
        return examples.record_feedback(FeedbackIn(thread_id=thread, user_id=user, turn_index=0, rating=rating,
                                                   note=note, question="How many singers?", database_key="db",
                                                   **fields))

    first = verdict("u", "up", example_id=example.id, sql="SELECT 1")
    second = verdict("u", "down", "wrong year")
    assert (second.id, second.rating, second.note, second.example_id) == (first.id, "down", "wrong year", None)
    verdict("v", "up", example_id=example.id)
    assert list(examples.feedback_for_thread(thread, user_id="u")) == [0]
    assert [f.user_id for f in examples.feedback_for_user("v", database_key="db")] == ["v"]
    assert examples.feedback_for_user("v", database_key="other") == []
    examples.delete(example.id, database_key="db")
    assert examples.feedback_for_user("v")[0].example_id is None  # kept, unlinked


# -- migrations -----------------------------------------------------------------------

def test_both_backends_reach_the_same_schema_version(tmp_path, pg_store_url):
    with opened_store(tmp_path / "store.db", AgentState) as lite, opened_store(pg_store_url, AgentState) as pg:
        assert lite.schema_version() == pg.schema_version() == max(n for n, _ in migrations(PG_MIGRATIONS_DIR))
        for table in ("episodes", "episode_invalidations", "memory_items", "memory_vectors", "examples", "feedback"):
            assert raw(lite, f"SELECT count(*) FROM {table}") == raw(pg, f"SELECT count(*) FROM {table}") == [(0,)]


def test_migrations_are_applied_once_and_numbered_alike(store, location):
    from storage.schema import MIGRATIONS_DIR, PG_MIGRATIONS_DIR as PG_DIR

    version = store.schema_version()
    again = open_store(location, AgentState)  # a second server starting on the same store
    try:
        assert again.schema_version() == version
    finally:
        again.close()
    applied = [r[0] for r in raw(store, "SELECT number FROM schema_migrations ORDER BY number")]
    assert len(applied) == len(set(applied))
    sqlite_names = {p.name for p in MIGRATIONS_DIR.glob("*.sql")}
    assert {p.name for p in PG_DIR.glob("*.sql")} == sqlite_names  # the same numbers and names
    if store.backend == "postgresql":
        assert applied == [n for n, _ in migrations(PG_DIR)] and version == applied[-1]
