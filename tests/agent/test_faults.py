"""Faults from the analytics database end the turn in bounded time, saved, with a message
that says what happened and what to do."""

from __future__ import annotations

import sqlite3

import pytest

from agent.loop import TurnSetup, run_turn
from agent.models.openai_model import OpenAIChatModel
from agent.sources.sqlite import SQLiteSource
from bench.scripted_llm import cut_stream, error, raw, text, tool_call


def _turn(store, db_path, scripted_llm):
    model = OpenAIChatModel(base_url=scripted_llm.base_url, api_key=None, model="m", max_retries=0, timeout_s=10)
    setup = TurnSetup(store=store, database=SQLiteSource(db_path, time_limit_s=2), model=model)
    events = list(run_turn(setup, user_id="u", question="How many sites?"))
    return events, store.load(events[0].thread_id, user_id="u").state


@pytest.mark.parametrize("break_it, expected", [
    (lambda path: path.unlink(), "not found"),
    (lambda path: path.write_bytes(b"this is not a database" * 100), "not a database"),
])
def test_a_missing_or_corrupt_database(store, tiny_db, scripted_llm, break_it, expected):
    break_it(tiny_db)
    scripted_llm.enqueue(tool_call("list_tables", {}))
    events, state = _turn(store, tiny_db, scripted_llm)
    error = next(e for e in events if e.type == "error")
    assert "analytics database is unavailable" in error.message and expected in error.message.lower()
    assert state.done and not state.answer.ok and state.error_history[-1].kind == "database_unavailable"
    assert state.messages[0].content == "How many sites?"


def test_a_locked_database(store, tiny_db, scripted_llm):
    holder = sqlite3.connect(tiny_db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        scripted_llm.enqueue(tool_call("run_sql", {"sql": "SELECT count(*) FROM sites"}))
        events, state = _turn(store, tiny_db, scripted_llm)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    error = next(e for e in events if e.type == "error")
    assert "locked" in error.message.lower()
    assert state.done and state.error_history[-1].kind == "database_unavailable"


@pytest.mark.parametrize("replies, stream, kind", [
    ([error(429, headers={"retry-after-ms": "10"})] * 2, False, "rate_limited"),
    ([error(503)] * 2, False, "server_error"),
    ([cut_stream(text("partial answer that never ends"), after_chunks=1)] * 2, True, "stream_cut"),
    ([raw("this is not json", content_type="text/plain")] * 2, False, "bad_reply"),
])
def test_model_faults_end_the_turn_saved_with_a_message(store, tiny_db, scripted_llm, replies, stream, kind):
    scripted_llm.enqueue(*replies)
    model = OpenAIChatModel(base_url=scripted_llm.base_url, api_key=None, model="m", max_retries=1, timeout_s=5,
                            stream=stream)
    setup = TurnSetup(store=store, database=SQLiteSource(tiny_db), model=model)
    events = list(run_turn(setup, user_id="u", question="How many sites?"))
    error_event = next(e for e in events if e.type == "error")
    assert kind in error_event.message and "try again" in error_event.message
    state = store.load(events[0].thread_id, user_id="u").state
    assert state.done and not state.answer.ok and state.error_history[-1].kind == kind
    assert state.messages[0].content == "How many sites?"
