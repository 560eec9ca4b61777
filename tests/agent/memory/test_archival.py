"""Archival: the hot state stays bounded while the history stays complete (views, history API,
page) and deletable. Real store, real openai client, the scripted server on loopback."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from agent.loop import TurnSetup, run_turn
from agent.memory.archival import archive_cut, split_state
from agent.memory.config import MemoryConfig
from agent.models.openai_model import OpenAIChatModel
from agent.sources.sqlite import SQLiteSource
from agent.state import Message, Step
from app.settings import Settings
from app.web import create_app
from bench.generator import conversation
from bench.scripted_llm import text, tool_call
from tests.storage.test_archive import _rows_of

SQL = "SELECT count(*) AS n FROM sites"


def analyst(request):
    """Summaries when asked without tools; otherwise run_sql after a question, answer after a result."""
    if not request.get("tools"):
        return text("Summary: the analyst keeps counting sites (3).")
    last = request["messages"][-1]
    if last["role"] == "tool":
        return tool_call("answer", {"text": "There are 3 sites.", "sql": SQL})
    return tool_call("run_sql", {"sql": SQL})


def test_the_cut_is_at_a_turn_boundary_and_keeps_the_newest():
    state = conversation(40)  # 240 messages, 6 a turn
    config = MemoryConfig(max_messages_per_thread=200)
    cut = archive_cut(state, config)
    assert cut == 60 and state.messages[cut].role == "user"  # 240 − 200 + 20
    assert archive_cut(state, config, covered=50) == 48  # never past what the summary covers
    assert archive_cut(conversation(33), config) is None  # 198 messages: under the limit
    assert archive_cut(state, MemoryConfig(max_messages_per_thread=0)) is None  # archival off


def test_split_state_moves_sql_and_old_steps_and_leaves_the_state_alone():
    state = conversation(10)
    before = state.model_dump_json()
    trimmed, sql = split_state(state, 24, archived_turns=0)
    assert state.model_dump_json() == before
    assert trimmed.messages == state.messages[24:] and trimmed.messages[0].role == "user"
    assert [s.turn_index for s in trimmed.steps][:1] == [4]
    assert len(sql) + len(trimmed.sql_history) == len(state.sql_history)


def _settings(tmp_path, tiny_db, scripted_llm, **memory):
    return Settings(database=tiny_db, store=tmp_path / "store.db", llm="openai", openai_base_url=scripted_llm.base_url,
                    model="scripted", llm_max_retries=0, llm_timeout=5, **memory)


def test_long_thread_stays_bounded_and_complete_then_deletes_cleanly(tmp_path, tiny_db, scripted_llm):
    scripted_llm.responder(analyst)
    settings = _settings(tmp_path, tiny_db, scripted_llm, memory_max_messages_per_thread=30,
                         memory_summary_threshold=10, memory_full_recent_count=4)
    turns = 25
    with TestClient(create_app(settings)) as client:
        thread = None
        blob_sizes = []
        for n in range(turns):
            reply = client.post("/api/chat", json={"question": f"Question {n}: how many sites?", "thread_id": thread},
                                headers={"Accept": "application/json"}).json()
            thread = reply["thread_id"]
            assert reply["answer"]["data"]["text"] == "There are 3 sites.", reply
            blob_sizes.append(len(client.get(f"/api/conversations/{thread}/state").content))
        store = client.app.state.askdb.store
        state = store.load(thread, user_id="default").state

        # The hot state is bounded: messages, steps and SQL records of archived turns left it.
        assert len(state.messages) <= 30 + 6 and state.messages[0].role == "user"
        assert max(blob_sizes[-10:]) <= 1.2 * max(blob_sizes[:10])  # archival keeps it from growing
        assert len(state.sql_history) <= 8 and len(state.steps) <= 16
        assert state.compressed_summary == "Summary: the analyst keeps counting sites (3)."

        # The history is complete: 6 messages a turn, numbered without gaps, in order.
        total = turns * 6
        history = client.get("/api/chat/history", params={"thread_id": thread, "limit": 1000}).json()
        assert history["count"] == total
        questions = [m["content"] for m in history["data"] if m["role"] == "user"]
        assert questions == [f"Question {n}: how many sites?" for n in range(turns)]
        page2 = client.get("/api/chat/history", params={"thread_id": thread, "limit": 6, "offset": 6}).json()
        assert page2["data"][0]["content"] == "Question 1: how many sites?"
        positions = [r[0] for r in store.db.conn.execute(
            "SELECT position FROM v_messages WHERE thread_id = ? ORDER BY position", (thread,))]
        assert positions == list(range(total))
        assert store.db.conn.execute("SELECT count(*) FROM v_sql_history WHERE thread_id = ?",
                                  (thread,)).fetchone()[0] == turns
        assert client.get(f"/api/conversations/{thread}").json()["message_count"] == total

        # Steps keep absolute turn numbers and unique step numbers across archival.
        steps = [Step.model_validate(s.data) for s in store.steps(thread, user_id="default")]
        assert [s.step_index for s in steps] == list(range(len(steps)))
        assert sorted({s.turn_index for s in steps}) == list(range(turns))

        # The page shows every question, archived ones too, and the context of each turn.
        page = client.get(f"/c/{thread}").text
        for n in range(turns):
            assert f"Question {n}: how many sites?" in page
        assert "tokens of history" in page

        # Deleting leaves no row in any table.
        assert client.delete(f"/api/conversations/{thread}").status_code == 204
        assert _rows_of(store.db.conn, thread) == {}


def test_the_hook_gets_each_archived_batch_once_and_a_failing_hook_postpones(store, tiny_db, scripted_llm):
    scripted_llm.responder(analyst)
    batches = []
    model = OpenAIChatModel(base_url=scripted_llm.base_url, api_key=None, model="m", max_retries=0, timeout_s=5)
    setup = TurnSetup(store=store, database=SQLiteSource(tiny_db), model=model, on_archive=batches.append,
                      memory=MemoryConfig(max_messages_per_thread=24, summary_threshold=6, full_recent_count=4))
    thread = None
    for n in range(12):
        events = list(run_turn(setup, user_id="u", question=f"q{n}", thread_id=thread))
        thread = events[0].thread_id
    positions = [(b.first_position, len(b.messages)) for b in batches]
    assert batches and all(b.thread_id == thread and b.messages[0].role == "user" for b in batches)
    assert [p for p, _ in positions] == [sum(n for _, n in positions[:i]) for i in range(len(positions))]

    def broken(batch):
        raise RuntimeError("index down")

    before = len(store.load(thread, user_id="u").state.messages)
    setup.on_archive = broken
    for n in range(4):
        list(run_turn(setup, user_id="u", question=f"later {n}", thread_id=thread))
    assert len(store.load(thread, user_id="u").state.messages) == before + 4 * 6  # nothing archived, nothing lost


def test_the_context_report_is_recorded_on_the_steps(store, tiny_db, scripted_llm):
    scripted_llm.responder(analyst)
    model = OpenAIChatModel(base_url=scripted_llm.base_url, api_key=None, model="gpt-4o-mini", max_retries=0,
                            timeout_s=5)
    setup = TurnSetup(store=store, database=SQLiteSource(tiny_db), model=model,
                      memory=MemoryConfig(model="gpt-4o-mini", context_budget=1_500, output_reserve=200))
    thread = None
    for n in range(6):
        events = list(run_turn(setup, user_id="u", question=f"How many sites, take {n}?", thread_id=thread))
        thread = events[0].thread_id
    steps = [e.step for e in events if e.type == "step"]
    report = steps[0].context
    assert report["mode"] == "tiered" and "recent" in report["tiers"]
    assert report["tokens_sent"] < report["history_tokens"] and report["encoding"] == "o200k_base"
    assert steps[1].context is not None  # one report per model call
    sent = scripted_llm.chat_requests[-1]["messages"]
    assert json.dumps(sent).count("How many sites, take 5?") == 1
