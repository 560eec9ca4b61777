"""Every conversation belongs to one user; no endpoint lets another user see it (404, never 403)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.auth import add_token, hash_token, read_tokens
from app.settings import Settings
from app.web import create_app
from bench.scripted_llm import tool_call


@pytest.fixture
def tokens(tmp_path):
    path = tmp_path / "tokens.txt"
    return path, {"alice": add_token(path, "alice"), "mallory": add_token(path, "mallory")}


@pytest.fixture
def client(tmp_path, tiny_db, scripted_llm, tokens):
    settings = Settings(database=tiny_db, store=tmp_path / "store.db", llm="openai", auth="token",
                        tokens_file=tokens[0], openai_base_url=scripted_llm.base_url, llm_max_retries=0)
    with TestClient(create_app(settings)) as client:
        yield client


def bearer(token):
    return {"Authorization": f"Bearer {token}"}


def test_tokens_are_stored_hashed(tokens):
    path, issued = tokens
    text = path.read_text()
    assert issued["alice"] not in text and hash_token(issued["alice"]) in text
    assert set(read_tokens(path).values()) == {"alice", "mallory"}


def test_healthz_and_the_api_docs_name_nothing_without_a_token(client, tokens, tiny_db):
    """Issue 18, item 11: they answered anyone and named the database file."""
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/openapi.json").status_code == 401
    assert client.get("/docs", headers={"Accept": "application/json"}).status_code == 401
    alice = bearer(tokens[1]["alice"])
    assert client.get("/healthz", headers=alice).json()["database"] == tiny_db.name
    assert "/api/chat" in client.get("/openapi.json", headers=alice).json()["paths"]
    assert client.get("/docs", headers=alice).status_code == 200


def test_no_or_unknown_token_is_401(client):
    assert client.get("/api/conversations").status_code == 401
    assert client.get("/api/conversations", headers=bearer("forged")).status_code == 401
    page = client.get("/")
    assert page.status_code == 401 and "/login" in page.text


def test_login_sets_a_cookie_for_the_pages(client, tokens):
    response = client.post("/login", data={"token": tokens[1]["alice"]}, follow_redirects=False)
    assert response.status_code == 303
    assert client.get("/").status_code == 200
    client.cookies.clear()
    assert "unknown token" in client.post("/login", data={"token": "nope"}).text


def test_another_users_conversation_is_invisible_everywhere(client, scripted_llm, tokens):
    alice, mallory = bearer(tokens[1]["alice"]), bearer(tokens[1]["mallory"])
    scripted_llm.enqueue(tool_call("run_sql", {"sql": "SELECT 1 AS one"}), tool_call("answer", {"text": "secret"}))
    reply = client.post("/api/chat", json={"question": "alice's question"},
                        headers={**alice, "Accept": "application/json"}).json()
    thread = reply["thread_id"]
    assert client.get(f"/api/conversations/{thread}", headers=alice).status_code == 200

    assert client.get("/api/conversations", headers=mallory).json()["count"] == 0
    assert "alice&#39;s question" not in client.get("/", headers=mallory).text
    for method, path, kwargs in [
        ("get", f"/api/conversations/{thread}", {}),
        ("patch", f"/api/conversations/{thread}", {"json": {"title": "mine"}}),
        ("delete", f"/api/conversations/{thread}", {}),
        ("get", f"/api/conversations/{thread}/state", {}),
        ("get", f"/api/conversations/{thread}/steps", {}),
        ("get", f"/api/conversations/{thread}/events", {}),
        ("get", f"/api/conversations/{thread}/results/1.csv", {}),
        ("get", f"/api/conversations/{thread}/export", {}),
        ("get", "/api/chat/history", {"params": {"thread_id": thread}}),
        ("post", "/api/chat", {"json": {"question": "hi", "thread_id": thread}}),
        ("get", f"/c/{thread}", {}),
        ("get", f"/c/{thread}/state", {}),
        ("get", f"/c/{thread}/delete", {}),
        ("post", f"/c/{thread}/delete", {}),
        ("post", f"/c/{thread}/edit", {"data": {"title": "mine"}}),
        ("post", "/ask", {"data": {"question": "hi", "thread_id": thread}}),
    ]:
        response = getattr(client, method)(path, headers=mallory, **kwargs)
        assert response.status_code == 404, (method, path, response.status_code)
        assert "secret" not in response.text
    # Alice's conversation is untouched.
    state = client.get(f"/api/conversations/{thread}/state", headers=alice).json()
    assert state["answer"]["data"]["text"] == "secret"
    assert client.get(f"/api/conversations/{thread}", headers=alice).json()["title"] == "alice's question"


def test_proxy_mode_takes_the_user_from_the_header(tmp_path, tiny_db):
    settings = Settings(database=tiny_db, store=tmp_path / "s.db", llm="offline", auth="proxy")
    with TestClient(create_app(settings)) as client:
        assert client.get("/api/conversations").status_code == 401
        made = client.post("/api/conversations", json={"title": "t"}, headers={"X-Forwarded-User": "bob"}).json()
        assert client.get(f"/api/conversations/{made['thread_id']}", headers={"X-Forwarded-User": "eve"}).status_code == 404
        assert client.get("/api/conversations", headers={"X-Forwarded-User": "bob"}).json()["count"] == 1
        assert client.get("/api/conversations", headers={"X-Forwarded-User": "bad user!"}).status_code == 401


def test_one_user_never_reads_anothers_queries_on_a_shared_duckdb(tmp_path, duckdb_sample_path, tokens):
    """Issue 39, item 1: alice turned DuckDB's logging on through the SQL page, then read bob's
    query text, literals included, from duckdb_logs. Every step is refused and bob's literal is
    nowhere in what alice gets back."""
    path, issued = tokens
    settings = Settings(database=duckdb_sample_path, store=tmp_path / "store.db", llm="offline", auth="token",
                        tokens_file=path, memory_embedder="none")
    alice, bob = bearer(issued["alice"]), bearer(issued["mallory"])
    with TestClient(create_app(settings)) as client:
        for sql in ("SELECT * FROM enable_logging()", "SELECT * FROM enable_profiling()"):
            refused = client.get("/sql", params={"sql": sql}, headers=alice)
            assert refused.status_code == 400 and "is not allowed" in refused.text
        answered = client.get("/sql", params={"sql": "SELECT count(*) FROM countries WHERE name = 'bob-secret-42'"},
                              headers=bob)
        assert answered.status_code == 200
        for sql in ("SELECT message FROM duckdb_logs", "SELECT * FROM duckdb_logs_parsed('QueryLog')"):
            read = client.get("/sql", params={"sql": sql}, headers=alice)
            assert read.status_code == 400 and "bob-secret-42" not in read.text
