"""Turns at the same time: one per conversation (409 for the second), none lost across processes."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections import Counter

import httpx
import pytest

from bench.responders import three_tool_turn
from bench.scripted_llm import delay, tool_call

pytestmark = pytest.mark.slow


def _env(tmp_path, tiny_db, scripted_llm):
    return {"ASKDB_DATABASE": str(tiny_db), "ASKDB_STORE": str(tmp_path / "store.db"),
            "OPENAI_BASE_URL": scripted_llm.base_url, "ASKDB_LLM_MAX_RETRIES": "0"}


def test_a_second_turn_on_the_same_thread_is_refused_with_409(tmp_path, tiny_db, scripted_llm, live_server_factory):
    server = live_server_factory(_env(tmp_path, tiny_db, scripted_llm)).start()
    thread_id = httpx.post(server.url + "/api/conversations", json={"title": "two tabs"}).json()["thread_id"]
    scripted_llm.enqueue(delay(2, tool_call("answer", {"text": "first"})))
    first = {}

    def ask_first():
        first["reply"] = httpx.post(server.url + "/api/chat", json={"question": "tab one", "thread_id": thread_id},
                                    headers={"Accept": "application/json"}, timeout=30)

    worker = threading.Thread(target=ask_first)
    worker.start()
    while not scripted_llm.requests:  # the first turn is running
        time.sleep(0.02)
    second = httpx.post(server.url + "/api/chat", json={"question": "tab two", "thread_id": thread_id},
                        headers={"Accept": "application/json"}, timeout=30)
    worker.join()
    assert second.status_code == 409 and "already being answered" in second.json()["detail"]
    assert first["reply"].status_code == 200 and first["reply"].json()["answer"]["data"]["text"].endswith("first")
    state = httpx.get(f"{server.url}/api/conversations/{thread_id}/state").json()
    assert [m["content"] for m in state["messages"] if m["role"] == "user"] == ["tab one"]
    assert len(httpx.get(f"{server.url}/api/conversations/{thread_id}/steps").json()["data"]) == 1


def test_two_processes_share_one_store_without_losing_anything(tmp_path, tiny_db, scripted_llm, live_server_factory):
    scripted_llm.responder(three_tool_turn)
    env = _env(tmp_path, tiny_db, scripted_llm)
    servers = [live_server_factory(env).start(), live_server_factory(env).start()]
    users, turns_each = 6, 4
    threads = [httpx.post(servers[0].url + "/api/conversations", json={"title": f"user {n}"}).json()["thread_id"]
               for n in range(users)]
    # (thread, question, status) of every reply; list.append is atomic across the six threads
    # (`counter[status] += 1` is not: a fresh-clone run once counted 28 answers for 29 stored).
    replies: list[tuple[str, str, int]] = []
    errors: list[str] = []

    def user(n: int) -> None:
        for turn in range(turns_each):
            # Alternate servers, and every user also pokes a shared thread to contend on it.
            server = servers[(n + turn) % 2]
            for thread_id in (threads[n], threads[0]):
                question = f"u{n} t{turn}"
                reply = httpx.post(server.url + "/api/chat", json={"question": question, "thread_id": thread_id},
                                   headers={"Accept": "application/json"}, timeout=60)
                replies.append((thread_id, question, reply.status_code))
                if reply.status_code not in (200, 409):
                    errors.append(reply.text)
                elif reply.status_code == 200 and reply.json().get("error"):
                    errors.append(reply.json()["error"])

    workers = [threading.Thread(target=user, args=(n,)) for n in range(users)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert not errors, errors[:3]
    assert len(replies) == users * turns_each * 2
    answered = Counter((thread, question) for thread, question, status in replies if status == 200)
    with sqlite3.connect(tmp_path / "store.db") as conn:
        questions = Counter(conn.execute("SELECT thread_id, content FROM v_messages WHERE role = 'user'").fetchall())
        steps = conn.execute("SELECT count(*) FROM conversation_steps"
                             " WHERE json_extract(step_data, '$.step_type') != 'recall'").fetchone()[0]
        duplicates = conn.execute("SELECT count(*) FROM (SELECT thread_id, step_index FROM conversation_steps"
                                  " GROUP BY thread_id, step_index HAVING count(*) > 1)").fetchone()[0]
        unfinished = conn.execute("SELECT count(*) FROM conversations"
                                  " WHERE json_extract(state_data, '$.done') = 0").fetchone()[0]
    assert questions == answered  # each answered question stored once, no refused one stored
    assert steps == answered.total() * 4 and duplicates == 0 and unfinished == 0
    assert answered.total() >= users * turns_each  # every user's own thread answered every time


def test_a_turn_running_in_another_process_is_followed_through_the_store(tmp_path, tiny_db, scripted_llm,
                                                                          live_server_factory):
    env = _env(tmp_path, tiny_db, scripted_llm)
    runner, follower = live_server_factory(env).start(), live_server_factory(env).start()
    thread_id = httpx.post(runner.url + "/api/conversations", json={}).json()["thread_id"]
    scripted_llm.enqueue(tool_call("list_tables", {}), delay(1.0, tool_call("describe_table", {"table": "sites"})),
                         delay(1.0, tool_call("answer", {"text": "done"})))
    worker = threading.Thread(target=lambda: httpx.post(
        runner.url + "/api/chat", json={"question": "slow", "thread_id": thread_id},
        headers={"Accept": "application/json"}, timeout=30))
    worker.start()
    while not scripted_llm.requests:
        time.sleep(0.02)
    names, steps = [], []
    with httpx.stream("GET", f"{follower.url}/api/conversations/{thread_id}/events", timeout=30) as response:
        for line in response.iter_lines():
            if line.startswith("event: "):
                names.append(line[7:])
            elif line.startswith("data: ") and names[-1] == "step":
                steps.append(json.loads(line[6:])["step"]["action"])
    worker.join()
    assert names[-1] == "done" and steps == ["list_tables", "describe_table", "answer"]
