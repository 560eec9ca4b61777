"""The memories page and /api/memories: a user sees, edits and erases only their own."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from agent.memory.user_memory import dedupe_hash
from agent.state import AgentState
from app.auth import add_token
from app.settings import Settings
from app.web import create_app
from storage.conversations import ConversationStore
from storage.sqlite_backend import connect
from storage.episodes import EpisodeIn, EpisodeStore
from storage.memory_items import MemoryItemIn, MemoryItemStore

XSS = '<script>alert("x")</script><img src=x onerror=alert(1)>'


@pytest.fixture
def tokens(tmp_path):
    path = tmp_path / "tokens.txt"
    return path, {"alice": add_token(path, "alice"), "mallory": add_token(path, "mallory")}


@pytest.fixture
def app_parts(tmp_path, tiny_db, tokens):
    settings = Settings(database=tiny_db, store=tmp_path / "store.db", llm="offline", auth="token",
                        tokens_file=tokens[0], memory_embedder="none")
    with TestClient(create_app(settings)) as client:
        conn = connect(settings.store)
        yield client, tokens[1], conn
        conn.close()


def remember(conn, user, text, **fields):
    items = MemoryItemStore(conn)
    return items.add(MemoryItemIn(user_id=user, text=text, dedupe_hash=dedupe_hash(text), **fields),
                     embedding=b"\0" * 16, embedding_model="m")


def add_episode(conn, user, question):
    thread = ConversationStore(conn, AgentState).create(user_id=user, state=AgentState()).thread_id
    EpisodeStore(conn).upsert(EpisodeIn(thread_id=thread, user_id=user, turn_index=0, question=question))
    return thread


def as_(token):
    return {"Authorization": f"Bearer {token}"}


def test_the_list_holds_only_the_users_memories(app_parts):
    client, token, conn = app_parts
    remember(conn, "alice", "Call me Ada", type="PROFILE", importance=0.9)
    remember(conn, "mallory", "Mallory's secret")
    add_episode(conn, "alice", "How many launches?")
    add_episode(conn, "mallory", "secret question")
    body = client.get("/api/memories", headers=as_(token["alice"])).json()
    assert [m["text"] for m in body["data"]] == ["Call me Ada"] and body["count"] == 1 and body["episodes"] == 1
    assert body["data"][0]["type"] == "PROFILE" and body["data"][0]["status"] == "active"
    assert client.get("/api/memories").status_code == 401


def test_edit_and_delete_own_memories_only(app_parts):
    client, token, conn = app_parts
    mine = remember(conn, "alice", "Call me Ada")
    theirs = remember(conn, "mallory", "Mallory's secret")
    alice = as_(token["alice"])
    edited = client.patch(f"/api/memories/{mine.id}", json={"text": "Call me Ada L.", "importance": 0.4},
                          headers=alice).json()
    assert (edited["text"], edited["importance"]) == ("Call me Ada L.", 0.4)
    for method in ("patch", "delete"):
        reply = client.request(method, f"/api/memories/{theirs.id}", json={"text": "pwned"}, headers=alice)
        assert reply.status_code == 404
        assert reply.json() == {"detail": f"memory {theirs.id!r} not found", "error": "MemoryItemNotFound"}
    assert client.patch(f"/api/memories/{mine.id}", json={"importance": 2}, headers=alice).status_code == 422
    assert client.delete(f"/api/memories/{mine.id}", headers=alice).status_code == 204
    assert client.get("/api/memories", headers=alice).json()["count"] == 0
    assert MemoryItemStore(conn).get(theirs.id, user_id="mallory").text == "Mallory's secret"


def test_editing_into_a_duplicate_is_a_conflict(app_parts):
    client, token, conn = app_parts
    remember(conn, "alice", "Call me Ada")
    other = remember(conn, "alice", "Our fiscal year starts in April")
    reply = client.patch(f"/api/memories/{other.id}", json={"text": "call me ada!"}, headers=as_(token["alice"]))
    assert reply.status_code == 409 and reply.json()["error"] == "DuplicateMemory"


def test_erasing_removes_every_memory_and_episode_of_the_user(app_parts):
    client, token, conn = app_parts
    remember(conn, "alice", "Call me Ada")
    remember(conn, "alice", "Our fiscal year starts in April")
    thread = add_episode(conn, "alice", "How many launches?")
    remember(conn, "mallory", "Mallory's secret")
    add_episode(conn, "mallory", "secret question")
    assert client.get("/api/memories", headers=as_(token["alice"])).json()["episodes"] == 1
    reply = client.delete("/api/memories", headers=as_(token["alice"]))
    assert reply.json() == {"memories": 2, "episodes": 1}
    count = lambda sql, *p: conn.execute(sql, p).fetchone()[0]  # noqa: E731
    assert count("SELECT count(*) FROM memory_items WHERE user_id = 'alice'") == 0
    assert count("SELECT count(*) FROM episodes WHERE user_id = 'alice'") == 0
    assert count("SELECT count(*) FROM episodes_fts") == 1  # mallory's
    assert count("SELECT count(*) FROM memory_items WHERE user_id = 'mallory'") == 1
    assert count("SELECT count(*) FROM memory_vectors") == 1  # mallory's: alice's went with their items
    # The conversation itself stays: deleting it is done on its own page, and then nothing of
    # alice is left in any memory table.
    assert client.get(f"/api/conversations/{thread}", headers=as_(token["alice"])).status_code == 200
    assert client.delete(f"/api/conversations/{thread}", headers=as_(token["alice"])).status_code == 204
    for table in ("conversations", "episodes", "memory_items"):
        assert count(f"SELECT count(*) FROM {table} WHERE user_id = 'alice'") == 0


def test_the_page_lists_escapes_edits_and_deletes(app_parts):
    client, token, conn = app_parts
    mine = remember(conn, "alice", XSS, type="FACT", importance=0.6)
    remember(conn, "mallory", "Mallory's secret")
    client.cookies.set("askdb_token", token["alice"])
    page = client.get("/memories").text
    assert XSS not in page and "&lt;script&gt;" in page and "Mallory" not in page
    assert f'action="/memories/{mine.id}/edit"' in page and "Remembered (1)" in page
    reply = client.post(f"/memories/{mine.id}/edit", data={"text": "Masses are in tonnes", "importance": "0.8"},
                        follow_redirects=False)
    assert reply.status_code == 303 and MemoryItemStore(conn).get(mine.id, user_id="alice").importance == 0.8
    assert "Masses are in tonnes" in client.get("/memories").text
    assert client.post(f"/memories/{mine.id}/delete", follow_redirects=False).status_code == 303
    assert "Remembered (0)" in client.get("/memories").text


def test_the_page_erases_only_after_confirmation(app_parts):
    client, token, conn = app_parts
    remember(conn, "alice", "Call me Ada")
    client.cookies.set("askdb_token", token["alice"])
    refused = client.post("/memories/erase", data={"confirm": "yes"})
    assert "type ERASE to confirm" in refused.text and "Remembered (1)" in refused.text
    done = client.post("/memories/erase", data={"confirm": "ERASE"})
    assert "erased 1 memories and 0 earlier turns" in done.text and "Remembered (0)" in done.text


def test_another_users_memory_page_actions_are_404(app_parts):
    client, token, conn = app_parts
    theirs = remember(conn, "mallory", "Mallory's secret")
    client.cookies.set("askdb_token", token["alice"])
    assert client.post(f"/memories/{theirs.id}/delete").status_code == 404
    assert client.post(f"/memories/{theirs.id}/edit", data={"text": "x", "importance": "0.5"}).status_code == 404
    assert MemoryItemStore(conn).count(user_id="mallory") == 1
