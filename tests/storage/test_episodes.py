"""EpisodeStore on real SQLite files: idempotent indexing, keyword search, isolation, cascades."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.state import AgentState
from storage.sqlite_backend import SQLiteDatabase, SQLiteDialect, connect, fts_query
from storage.episodes import (
    EpisodeIn, EpisodeNotFound, EpisodeStore, episode_id, query_terms,
)
from storage.errors import ConversationNotFound
from storage.text import search_terms

PAYLOADS = (Path(__file__).resolve().parents[1] / "data" / "sql_payloads.txt").read_text(errors="replace").splitlines()


@pytest.fixture
def episodes(store):
    # Same connection and lock as the conversation store, as the app shares them.
    return store.episodes()


def new_thread(store, user="alice"):
    return store.create(user_id=user, state=AgentState()).thread_id


def turn(thread, n, question, *, user="alice", sql="", answer="", topics=()):
    return EpisodeIn(thread_id=thread, user_id=user, turn_index=n, question=question, sql=sql, answer=answer,
                     topics=list(topics))


def fts_rows(episodes) -> int:
    return episodes.db.conn.execute("SELECT count(*) FROM episodes_fts").fetchone()[0]


def test_search_terms_drop_stopwords_and_cut_chinese_into_bigrams():
    assert search_terms("What were Caroline's launches in 2020?") == ["caroline", "launches", "2020"]
    assert search_terms("我只关心2020年以后的数据") == ["我只", "只关", "关心", "2020", "年以", "以后", "后的", "的数", "数据"]
    assert search_terms("发") == ["发"]


def test_indexing_a_turn_twice_keeps_one_row(store, episodes):
    thread = new_thread(store)
    first = episodes.upsert(turn(thread, 0, "How many launches in 2020?", answer="114"), embedding=b"\0" * 8,
                            embedding_model="m")
    again = episodes.upsert(turn(thread, 0, "How many launches in 2020?", answer="114"))
    assert first.id == again.id == episode_id(thread, 0)
    assert first.seq == again.seq
    assert episodes.count(user_id="alice") == 1 and fts_rows(episodes) == 1
    assert again.embedding_model == "m"  # unchanged text keeps its vector


def test_reindexing_changed_text_updates_the_row_and_drops_its_vector(store, episodes):
    thread = new_thread(store)
    episodes.upsert(turn(thread, 0, "How many launches?"), embedding=b"\0" * 8, embedding_model="m")
    before = episodes.vector_state(user_id="alice")
    changed = episodes.upsert(turn(thread, 0, "How many payloads?"))
    assert changed.question == "How many payloads?" and changed.embedding_model is None
    assert episodes.vector_state(user_id="alice")[1] == before[1] + 1  # caches must reload
    assert [seq for seq, _ in episodes.keyword_search(["payloads"], user_id="alice")] == [changed.seq]
    assert episodes.keyword_search(["launches"], user_id="alice") == []
    assert episodes.count(user_id="alice") == 1 and fts_rows(episodes) == 1


def test_keyword_search_ranks_and_filters_by_user_and_thread(store, episodes):
    a1, a2, b1 = new_thread(store), new_thread(store), new_thread(store, "bob")
    episodes.upsert(turn(a1, 0, "How many launches per year?", sql="SELECT year, count(*) FROM launches"))
    episodes.upsert(turn(a1, 1, "Which payloads were heaviest?", sql="SELECT name FROM payloads"))
    episodes.upsert(turn(a2, 0, "Launch sites in China", topics=["sites"]))
    episodes.upsert(turn(b1, 0, "launches launches launches", user="bob"))
    hits = episodes.keyword_search(search_terms("launches per year"), user_id="alice")
    found = episodes.by_seq([seq for seq, _ in hits], user_id="alice")
    assert [found[s].question for s, _ in hits][0] == "How many launches per year?"
    assert all(e.user_id == "alice" for e in found.values())
    in_thread = episodes.keyword_search(["sites"], user_id="alice", thread_id=a1)
    assert in_thread == []
    assert len(episodes.keyword_search(["sites"], user_id="alice", thread_id=a2)) == 1
    assert episodes.by_seq([s for s, _ in episodes.keyword_search(["launches"], user_id="bob")], user_id="alice") == {}


def test_chinese_questions_are_found_by_chinese_words(store, episodes):
    thread = new_thread(store)
    episodes.upsert(turn(thread, 0, "2020年中国发射了多少次火箭？", answer="39次"))
    episodes.upsert(turn(thread, 1, "哪些卫星最重？"))
    hits = episodes.keyword_search(search_terms("中国的火箭发射"), user_id="alice")
    assert episodes.by_seq([hits[0][0]], user_id="alice")[hits[0][0]].turn_index == 0


def test_prefix_matching_finds_longer_words(store, episodes):
    thread = new_thread(store)
    episodes.upsert(turn(thread, 0, "Manufacturers of launchers"))
    assert episodes.keyword_search(["manufact"], user_id="alice") == []
    assert len(episodes.keyword_search(["manufact"], user_id="alice", prefix_min=4)) == 1


@pytest.mark.parametrize("payload", [p for p in PAYLOADS if p.strip()][:150])
def test_any_text_is_a_safe_query(store, episodes, payload):
    thread = new_thread(store)
    episodes.upsert(turn(thread, 0, payload, sql=payload, answer=payload))
    episodes.keyword_search(search_terms(payload), user_id="alice")
    # Quoted even when handed raw: FTS5 syntax characters are never operators.
    episodes.keyword_search([payload, 'a" OR "b', "NEAR(x y)", "col:x", "*"], user_id="alice")
    assert episodes.count(user_id="alice") == 1


def test_match_expression_quotes_every_term():
    assert fts_query(query_terms(['he said "hi"', "x"])) == '"he said ""hi""" OR "x"'
    assert fts_query(query_terms(["launch", "发射"], prefix_min=4)) == '"launch"* OR "发射"'


def test_an_episode_in_another_users_conversation_is_refused(store, episodes):
    thread = new_thread(store, "bob")
    with pytest.raises(ConversationNotFound):
        episodes.upsert(turn(thread, 0, "mine now", user="alice"))
    assert episodes.count(user_id="alice") == 0 and episodes.count(user_id="bob") == 0
    with pytest.raises(EpisodeNotFound):
        episodes.get(episode_id(thread, 0), user_id="alice")


def test_deleting_a_conversation_leaves_no_episode_row(store, episodes):
    keep, gone = new_thread(store), new_thread(store)
    for n in range(3):
        episodes.upsert(turn(gone, n, f"question {n} about launches"), embedding=b"\0" * 8, embedding_model="m")
    episodes.upsert(turn(keep, 0, "kept launches"))
    store.delete(gone, user_id="alice")
    assert episodes.count(user_id="alice") == 1 and fts_rows(episodes) == 1
    assert episodes.db.conn.execute("SELECT count(*) FROM episodes WHERE thread_id = ?", (gone,)).fetchone()[0] == 0
    assert episodes.vector_state(user_id="alice")[1] == 3  # three vectors gone: caches reload


def test_erasing_a_user_removes_only_their_episodes(store, episodes):
    a, b = new_thread(store), new_thread(store, "bob")
    episodes.upsert(turn(a, 0, "alice's question"))
    episodes.upsert(turn(b, 0, "bob's question", user="bob"))
    assert episodes.delete_for_user("alice") == 1
    assert episodes.count(user_id="alice") == 0 and episodes.count(user_id="bob") == 1 and fts_rows(episodes) == 1


def test_vectors_load_incrementally_and_stale_rows_are_listed(store, episodes):
    thread = new_thread(store)
    episodes.upsert(turn(thread, 0, "one"), embedding=b"\1" * 8, embedding_model="m1")
    episodes.upsert(turn(thread, 1, "two"))
    episodes.upsert(turn(thread, 2, "three"), embedding=b"\2" * 8, embedding_model="m2")
    first = episodes.vectors(user_id="alice", model="m1")
    assert [v.embedding for v in first] == [b"\1" * 8]
    assert [e.question for e in episodes.stale(user_id="alice", model="m1")] == ["two", "three"]
    newest, _ = episodes.vector_state(user_id="alice")
    seqs = {e.question: e.seq for e in episodes.list(user_id="alice")}
    assert episodes.set_embeddings([(seqs["two"], b"\3" * 8), (seqs["three"], b"\4" * 8)], user_id="alice",
                                   model="m1") == 2
    assert episodes.set_embeddings([(seqs["two"], b"\5" * 8)], user_id="bob", model="m1") == 0
    later = episodes.vectors(user_id="alice", model="m1", after_version=newest)
    assert [v.embedding for v in later] == [b"\3" * 8, b"\4" * 8]
    assert episodes.stale(user_id="alice", model="m1") == []


def test_the_store_opens_a_file_and_migrates_it(tmp_path):
    path = tmp_path / "s.db"
    with EpisodeStore.open(path) as episodes:
        assert episodes.count(user_id="x") == 0
    conn = connect(path)
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name IN ('episodes', 'episodes_fts',"
                        " 'memory_items', 'memory_vectors')").fetchone()[0] == 4
    conn.close()


def test_migration_6_rebuilds_the_keyword_index_with_owner_and_thread(tmp_path, monkeypatch):
    from storage import schema

    path = tmp_path / "old.db"
    folder = tmp_path / "migrations"
    folder.mkdir()
    for script in sorted(schema.MIGRATIONS_DIR.glob("*.sql"))[:5]:  # the schema before migration 6
        (folder / script.name).write_text(script.read_text())
    monkeypatch.setattr(SQLiteDialect, "migrations_dir", folder)
    conn = connect(path)
    assert schema.migrate(SQLiteDatabase(conn)) == 5
    conn.execute("INSERT INTO conversations (thread_id, user_id, state_data, created_at, updated_at)"
                 " VALUES ('t-1', 'alice', '{}', '2026-01-01', '2026-01-01')")
    conn.execute("INSERT INTO episodes (id, thread_id, user_id, turn_index, question, created_at, updated_at)"
                 " VALUES ('e1', 't-1', 'alice', 0, 'How many launches?', '2026-01-01', '2026-01-01')")
    seq = conn.execute("SELECT seq FROM episodes").fetchone()[0]
    conn.execute("INSERT INTO episodes_fts (rowid, question) VALUES (?, 'how many launches')", (seq,))
    conn.close()
    monkeypatch.undo()
    with EpisodeStore.open(path) as episodes:
        assert [s for s, _ in episodes.keyword_search(["launches"], user_id="alice")] == [seq]
        assert [s for s, _ in episodes.keyword_search(["launches"], user_id="alice", thread_id="t-1")] == [seq]
        assert episodes.keyword_search(["launches"], user_id="bob") == []
        episodes.db.conn.execute("DELETE FROM conversations")  # the trigger was recreated
        assert fts_rows(episodes) == 0
