"""Memory and verified examples with the store on PostgreSQL: a turn is remembered there and
recalled in a later one, /memories edits it, and a thumbs-up makes an example the planner reuses."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from agent.memory.user_memory import dedupe_hash
from app.settings import Settings
from app.web import create_app
from storage.memory_items import MemoryItemIn
from storage.episodes import EpisodeStore
from storage.examples import ExampleStore

QUESTION = "How many launches were there in 2020?"


@pytest.fixture
def client(pg_store_url, postgres_analytics_url):
    settings = Settings(store=pg_store_url, database=postgres_analytics_url, llm="offline", memory_embedder="none",
                        memory_recall_scope="user")
    with TestClient(create_app(settings)) as client:
        yield client


def ask(client: TestClient, question: str, thread_id: str | None = None) -> dict:
    reply = client.post("/api/chat", json={"question": question, "thread_id": thread_id},
                        headers={"Accept": "application/json"})
    assert reply.status_code == 200, reply.text
    # Remembering runs after the answer, in the background: wait for it.
    client.app.state.askdb.remembering.wait()
    return reply.json()


def test_a_turn_is_remembered_in_postgres_and_recalled_later(client):
    askdb = client.app.state.askdb
    assert isinstance(askdb.memory.index.episodes, EpisodeStore) and askdb.memory.index.episodes.db.dialect.name == "postgresql"
    first = ask(client, QUESTION)
    ask(client, "Please call me Ada.", first["thread_id"])
    later = ask(client, "How many launches were there in 2021?")  # another conversation: recall of the user's turns
    [recall] = [s for s in later["steps"] if s["step_type"] == "recall"]
    assert QUESTION in recall["content"] and "Ada" in recall["content"]
    assert "2021" in later["answer"]["data"]["text"]

    listed = client.get("/api/memories").json()
    [ada] = listed["data"]
    assert ada["type"] == "PROFILE" and "Ada" in ada["text"] and listed["episodes"] == 3
    assert "Ada" in client.get("/memories").text
    other = askdb.store.memory_items().add(MemoryItemIn(user_id="default", text="I work in finance",
                                                        dedupe_hash=dedupe_hash("I work in finance")))
    clash = client.patch(f"/api/memories/{other.id}", json={"text": ada["text"]})
    assert clash.status_code == 409 and clash.json()["error"] == "DuplicateMemory"
    assert client.patch(f"/api/memories/{ada['id']}", json={"importance": 0.8}).json()["importance"] == 0.8
    assert client.delete(f"/api/memories/{other.id}").status_code == 204
    gone = client.delete(f"/api/memories/{other.id}")
    assert gone.status_code == 404 and gone.json()["error"] == "MemoryItemNotFound"
    assert client.delete("/api/memories").json() == {"memories": 1, "episodes": 3}
    assert client.get("/api/memories").json() == {"data": [], "count": 0, "episodes": 0}


def test_a_thumbs_up_makes_an_example_in_postgres_that_the_planner_reuses(client):
    assert isinstance(client.app.state.askdb.examples_store, ExampleStore)
    assert client.app.state.askdb.examples_store.db.dialect.name == "postgresql"
    thread = ask(client, QUESTION)["thread_id"]
    voted = client.post(f"/api/conversations/{thread}/feedback", json={"rating": "up", "turn": 0})
    assert voted.status_code == 201 and voted.json()["example_id"]
    assert [f["rating"] for f in client.get(f"/api/conversations/{thread}/feedback").json()["data"]] == ["up"]
    [example] = client.get("/api/examples").json()["data"]
    assert example["question"] == QUESTION
    reused = ask(client, "how many launches were there in 2020")
    assert [s["action"] for s in reused["steps"] if s["step_type"] != "recall"] == ["run_sql", "answer"]
    assert "verified example" in [s for s in reused["steps"] if s["action"] == "run_sql"][0]["thought"]
    assert reused["answer"]["data"]["sql"].split() == example["sql"].split()  # laid out again, the same query
    assert QUESTION in client.get("/examples").text
    edited = client.patch(f"/api/examples/{example['id']}", json={"note": "checked"})
    assert edited.status_code == 200 and edited.json()["note"] == "checked"
    assert client.delete(f"/api/examples/{example['id']}").status_code == 204
    missing = client.delete(f"/api/examples/{example['id']}")
    assert missing.status_code == 404 and missing.json()["error"] == "ExampleNotFound"
    assert client.delete(f"/api/conversations/{thread}").status_code in (200, 204)
    assert client.get(f"/api/conversations/{thread}/feedback").status_code == 404
