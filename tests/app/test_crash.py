"""A server killed mid-turn loses nothing: the real server as a process, SIGKILL, restart."""

from __future__ import annotations

import json
import sqlite3
import time

import httpx
import pytest

from bench.scripted_llm import delay, tool_call

pytestmark = pytest.mark.slow


def _env(tmp_path, tiny_db, scripted_llm):
    return {"ASKDB_DATABASE": str(tiny_db), "ASKDB_STORE": str(tmp_path / "store.db"),
            "OPENAI_BASE_URL": scripted_llm.base_url, "ASKDB_LLM_MAX_RETRIES": "0", "ASKDB_LLM_TIMEOUT": "60"}


def _first_step_then_kill(server, scripted_llm, question):
    """Ask over SSE; once the first step is reported and the next model call is waiting, SIGKILL."""
    with httpx.stream("POST", server.url + "/api/chat", json={"question": question},
                      headers={"Accept": "text/event-stream"}, timeout=30) as response:
        thread_id = None
        for line in response.iter_lines():
            if line.startswith("data: "):
                data = json.loads(line[6:])
                thread_id = data.get("thread_id", thread_id)
                if data.get("step"):
                    while len(scripted_llm.chat_requests) < 2:
                        time.sleep(0.05)
                    server.kill()
                    return thread_id
    raise AssertionError("no step arrived")


def test_sigkill_mid_turn_keeps_the_steps_and_the_conversation_goes_on(tmp_path, tiny_db, scripted_llm,
                                                                       live_server_factory):
    env = _env(tmp_path, tiny_db, scripted_llm)
    # The second model call hangs long enough for the kill to land mid-turn.
    scripted_llm.enqueue(tool_call("list_tables", {}), delay(30, tool_call("answer", {"text": "too late"})))
    server = live_server_factory(env).start()
    thread_id = _first_step_then_kill(server, scripted_llm, "How many sites are there?")

    store = tmp_path / "store.db"
    with sqlite3.connect(store) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    scripted_llm.enqueue(tool_call("run_sql", {"sql": "SELECT count(*) AS n FROM sites"}),
                         tool_call("answer", {"text": "There are 3 sites."}))
    restarted = live_server_factory(env, port=server.port).start()
    state = httpx.get(f"{restarted.url}/api/conversations/{thread_id}/state").json()
    assert state["messages"][0]["content"] == "How many sites are there?"
    kinds = [(s["step_type"], s.get("action")) for s in state["steps"]]
    assert kinds == [("tool", "list_tables"), ("interrupted", None)]
    page = httpx.get(f"{restarted.url}/c/{thread_id}").text
    assert "interrupted before it was answered" in page and "list_tables" in page

    reply = httpx.post(f"{restarted.url}/api/chat", json={"question": "How many sites are there?",
                                                         "thread_id": thread_id},
                       headers={"Accept": "application/json"}, timeout=30).json()
    assert reply["answer"]["data"]["text"] == "There are 3 sites."
    with sqlite3.connect(store) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM conversation_steps").fetchone()[0] == 4
        assert conn.execute("SELECT count(*) FROM turn_leases").fetchone()[0] == 0


def test_a_process_killed_while_saving_leaves_the_old_or_the_new_state(tmp_path):
    """Kill a writer in a loop of saves at random moments: every load sees a whole state."""
    import subprocess
    import sys

    from agent.state import AgentState
    from app.settings import ROOT
    from storage.conversations import ConversationStore

    store_path = tmp_path / "store.db"
    with ConversationStore.open(store_path, AgentState) as store:
        thread_id = store.create(user_id="u", state=AgentState(question="q0")).thread_id
    writer = f"""
import sys
from agent.state import AgentState, Message
from storage.conversations import ConversationStore
with ConversationStore.open({str(store_path)!r}, AgentState) as store:
    n = 0
    while True:
        loaded = store.load({thread_id!r}, user_id="u")
        state = loaded.state
        n += 1
        state.question = f"q{{n}}"
        state.messages.append(Message(role="user", content="x" * 5000 + str(n)))
        store.save({thread_id!r}, user_id="u", state=state, expected_version=loaded.conversation.version)
        print(n, flush=True)
"""
    for pause in (0.3, 0.5, 0.8):
        process = subprocess.Popen([sys.executable, "-c", writer], cwd=ROOT, stdout=subprocess.PIPE)
        process.stdout.readline()
        time.sleep(pause)
        process.kill()
        process.wait()
        with ConversationStore.open(store_path, AgentState) as store:
            loaded = store.load(thread_id, user_id="u")
            state = loaded.state
            assert state.question == f"q{int(state.question[1:])}"
            assert all(m.content.startswith("x" * 5000) for m in state.messages)
            assert store.db.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
