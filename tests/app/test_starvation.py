"""Issue 18, items 1 and 10: no request can starve the others.

A user over ASKDB_MAX_RUNNING_PER_USER gets 429, a full worker pool 503, both with Retry-After;
100 followers of a running turn hold no worker thread, so the server keeps answering.
"""

from __future__ import annotations

import threading
import time

import httpx
import pytest
from fastapi.testclient import TestClient

from app.settings import Settings
from app.web import create_app
from bench.scripted_llm import delay, hang, tool_call

pytestmark = pytest.mark.slow

SLOW_STEP = "SELECT instr(printf('%.*c', 15000000, 'x') || 'y', printf('%.*c', 5000000, 'x') || 'z')"


def test_a_user_over_the_running_limit_gets_429(tmp_path, tiny_db, scripted_llm):
    settings = Settings(database=tiny_db, store=tmp_path / "store.db", llm="openai", llm_max_retries=0,
                        openai_base_url=scripted_llm.base_url, llm_timeout=20, max_running_per_user=1, auth="proxy")
    alice, bob = {"X-Forwarded-User": "alice"}, {"X-Forwarded-User": "bob"}
    scripted_llm.enqueue(tool_call("answer", {"text": "earlier"}), delay(3, tool_call("answer", {"text": "first"})),
                         tool_call("answer", {"text": "again"}))
    with TestClient(create_app(settings)) as client:
        earlier = client.post("/api/chat", json={"question": "earlier"}, headers={"Accept": "application/json", **alice})
        earlier_id = earlier.json()["thread_id"]
        with client.stream("POST", "/api/chat", json={"question": "slow one"}, headers=alice) as first:
            assert first.status_code == 200
            while not scripted_llm.requests:  # its turn waits on the model
                time.sleep(0.02)
            second = client.post("/api/chat", json={"question": "another"},
                                 headers={"Accept": "application/json", **alice})
            assert second.status_code == 429 and second.headers["Retry-After"]
            assert second.json()["error"] == "TooManyRequests"
            assert "ASKDB_MAX_RUNNING_PER_USER" in second.json()["detail"]
            page = client.get("/sql", params={"sql": "SELECT 1"}, headers=alice)
            assert page.status_code == 429 and "wait for one to finish" in page.text
            rerun = client.post(f"/c/{earlier_id}/sql", data={"sql": "SELECT 1"}, headers=alice)
            assert rerun.status_code == 429  # an edited query in another conversation takes a slot too
            assert client.get("/sql", params={"sql": "SELECT 1"}, headers=bob).status_code == 200  # others go on
            first.read()
        # The slot is free once the turn ends.
        again = client.post("/api/chat", json={"question": "another"}, headers={"Accept": "application/json", **alice})
        assert again.status_code == 200 and again.json()["answer"]["data"]["text"].endswith("again")


def test_a_full_worker_pool_gets_503_with_retry_after(tmp_path, tiny_db):
    settings = Settings(database=tiny_db, store=tmp_path / "store.db", llm="offline", sql_workers=1,
                        sql_queue_wait=0.2, sql_timeout=2)
    with TestClient(create_app(settings)) as client:
        assert client.get("/sql", params={"sql": "SELECT 1"}).status_code == 200  # the worker is up
        # Two slow queries: one in each lane (a slow query gives its slot to the next; agent/sources/query_pool.py).
        slow = [threading.Thread(target=client.get, args=("/sql",), kwargs={"params": {"sql": SLOW_STEP}})
                for _ in range(2)]
        for thread in slow:
            thread.start()
        busy = None
        while any(t.is_alive() for t in slow):  # until both hold a worker and a query is refused
            busy = client.get("/sql.csv", params={"sql": "SELECT 1"})
            if busy.status_code == 503:
                break
        for thread in slow:
            thread.join()
        assert busy is not None and busy.status_code == 503 and busy.headers["Retry-After"]
        assert "query workers are busy" in busy.text


def test_a_hundred_followers_do_not_stall_the_server(tmp_path, tiny_db, scripted_llm, live_server_factory):
    """Each follower used to hold one of the 40 worker threads: the 41st request waited for the turn."""
    server = live_server_factory({
        "ASKDB_DATABASE": str(tiny_db), "ASKDB_STORE": str(tmp_path / "store.db"),
        "OPENAI_BASE_URL": scripted_llm.base_url, "ASKDB_LLM_MAX_RETRIES": "0", "ASKDB_LLM_TIMEOUT": "60",
        "ASKDB_ALLOWED_HOSTS": "127.0.0.1"}).start()
    scripted_llm.enqueue(hang(), tool_call("answer", {"text": "done"}))
    thread_id = httpx.post(server.url + "/api/conversations", json={"title": "watched"}).json()["thread_id"]
    with httpx.Client(timeout=60) as asker:
        with asker.stream("POST", server.url + "/api/chat", json={"question": "q", "thread_id": thread_id}):
            while not scripted_llm.requests:  # the turn is running, waiting on the model
                time.sleep(0.02)
            clients = [httpx.Client(timeout=60) for _ in range(100)]
            streams = [c.stream("GET", f"{server.url}/api/conversations/{thread_id}/events") for c in clients]
            try:
                for stream in streams:
                    assert stream.__enter__().status_code == 200
                # Every follower is connected and the turn still runs (for up to 60 s, the model's
                # timeout): other requests answer before it ends, not after.
                assert httpx.get(server.url + "/api/conversations", timeout=30).status_code == 200
                assert httpx.get(server.url + "/healthz", timeout=30).json() == {"status": "ok"}
                assert httpx.get(f"{server.url}/api/conversations/{thread_id}/steps", timeout=30).json()["count"] == 0
            finally:
                server.kill()
                for stream, client in zip(streams, clients):
                    try:
                        stream.__exit__(None, None, None)
                    except httpx.HTTPError:
                        pass
                    client.close()
