"""Issue 18, items 6 and 11: every error under /api/ is the documented JSON shape, pages get the
error page, and no reply carries a traceback, an absolute path or a driver's message."""

from __future__ import annotations

import json
import logging

import pytest
from fastapi.testclient import TestClient

from app.settings import Settings
from app.web import create_app
from bench.scripted_llm import tool_call

HUGE = str(2**63)
LEAKS = ("Traceback", "/tmp/", "/work/", "sqlite3.", "OperationalError", "psycopg")


@pytest.fixture
def client(tmp_path, tiny_db, scripted_llm):
    settings = Settings(database=tiny_db, store=tmp_path / "store.db", llm="openai",
                        openai_base_url=scripted_llm.base_url, llm_max_retries=0)
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        yield client


def assert_api_error(response, status: int) -> dict:
    assert response.status_code == status, (response.status_code, response.text[:300])
    body = response.json()
    assert set(body) == {"detail", "error"} and body["detail"], body
    assert response.headers["x-request-id"]
    for leak in LEAKS:
        assert leak not in response.text, leak
    return body


@pytest.mark.parametrize("method, path", [
    ("GET", f"/api/conversations?offset={HUGE}"),
    ("GET", f"/api/conversations?limit=10&offset={HUGE}"),
    ("GET", f"/api/chat/history?thread_id=THREAD&offset={HUGE}"),
    ("GET", f"/api/conversations/THREAD/steps?after_id={HUGE}"),
    ("GET", f"/api/conversations/THREAD/results/{HUGE}.csv"),
    ("GET", f"/api/examples?offset={HUGE}"),
    ("PATCH", f"/api/examples/{HUGE}"),
    ("DELETE", f"/api/examples/{HUGE}"),
    ("GET", f"/api/conversations/THREAD/events?after_step={HUGE}"),
])
def test_integers_past_64_bits_are_422(client, method, path):
    thread_id = client.post("/api/conversations", json={"title": "t"}).json()["thread_id"]
    kwargs = {"json": {"note": "n"}} if method == "PATCH" else {}
    response = client.request(method, path.replace("THREAD", thread_id), **kwargs)
    assert_api_error(response, 422)


@pytest.mark.parametrize("method", ["PATCH", "DELETE"])
def test_memory_ids_past_64_bits_are_not_found(client, method):
    assert_api_error(client.request(method, f"/api/memories/{HUGE}", json={"text": "t"}), 404)


def test_pages_with_integers_past_64_bits_are_the_error_page(client):
    thread_id = client.post("/api/conversations", json={"title": "t"}).json()["thread_id"]
    for path in (f"/?page={HUGE}", f"/c/{thread_id}?result={HUGE}", f"/examples?page={HUGE}"):
        response = client.get(path)
        assert response.status_code == 422 and "<html" in response.text.lower(), path


def test_a_lone_surrogate_in_a_question_is_a_clear_422(client):
    body = b'{"question": "how many \\ud800 sites?"}'
    response = client.post("/api/chat", content=body, headers={"Content-Type": "application/json",
                                                                 "Accept": "application/json"})
    assert "surrogate" in assert_api_error(response, 422)["detail"]
    assert client.get("/api/conversations").json()["count"] == 0  # nothing was created


def test_deeply_nested_json_is_422(client):
    nested = b'{"a": ' * 100_000 + b"1" + b"}" * 100_000
    for path in ("/api/conversations/import", "/api/examples/import"):
        response = client.post(path, content=nested, headers={"Content-Type": "application/json"})
        assert_api_error(response, 422)
    page = client.post("/import", files={"file": ("deep.json", nested, "application/json")})
    assert page.status_code == 422 and "<html" in page.text.lower()


def test_an_unexpected_error_is_a_500_with_a_request_id_logged(client, caplog, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("secret detail at /work/main/storage/x.py")

    monkeypatch.setattr(client.app.state.askdb.store, "list", broken)
    with caplog.at_level(logging.ERROR, logger="askdb"):
        response = client.get("/api/conversations")
        page = client.get("/")
    body = assert_api_error(response, 500)
    assert body["error"] == "InternalError" and response.headers["x-request-id"] in body["detail"]
    assert "secret detail" not in response.text and "secret detail" not in page.text
    assert page.status_code == 500 and "<html" in page.text.lower()
    assert any(response.headers["x-request-id"] in r.getMessage() for r in caplog.records)


def test_database_unavailable_names_no_absolute_path(tmp_path, scripted_llm):
    settings = Settings(database=tmp_path / "missing.db", store=tmp_path / "store.db", llm="offline")
    with TestClient(create_app(settings)) as client:
        response = client.get("/sql.csv", params={"sql": "SELECT 1"})
        assert response.status_code == 503 and "missing.db" in response.text
        assert str(tmp_path) not in response.text


def test_a_lone_surrogate_in_tool_arguments_does_not_abort_the_turn(client, scripted_llm):
    scripted_llm.enqueue(tool_call("run_sql", {"sql": "SELECT 'a\ud800' AS v"}),
                         tool_call("answer", {"text": "done \ud800"}))
    reply = client.post("/api/chat", json={"question": "q"}, headers={"Accept": "application/json"})
    assert reply.status_code == 200, reply.text[:300]
    body = reply.json()
    assert body["error"] is None and body["steps"], json.dumps(body)[:500]
