"""Stopping a turn between steps, and the analyst's own SQL kept as a turn (issue 20): the real
openai client against the scripted server, a real analytics file and a real store."""

from __future__ import annotations

import pytest

from agent.analyst_sql import run_analyst_sql
from agent.loop import TurnSetup, run_turn
from agent.models.openai_model import OpenAIChatModel
from agent.sources.errors import SQLRejected
from agent.sources.sqlite import SQLiteSource
from bench.scripted_llm import tool_call
from storage.errors import ResultNotFound, VersionConflict


def _setup(store, tiny_db, scripted_llm, **kw):
    model = OpenAIChatModel(base_url=scripted_llm.base_url, api_key=None, model="scripted", timeout_s=5.0,
                            max_retries=0, tool_mode="native")
    return TurnSetup(store=store, database=SQLiteSource(tiny_db), model=model, **kw)


def test_a_stop_ends_the_turn_after_the_current_step_with_everything_saved(store, tiny_db, scripted_llm):
    scripted_llm.enqueue(tool_call("list_tables", {}), tool_call("describe_table", {"table": "sites"}),
                         tool_call("answer", {"text": "Never given."}))
    steps_seen = []
    setup = _setup(store, tiny_db, scripted_llm, stop_requested=lambda: len(steps_seen) >= 1)
    for event in run_turn(setup, user_id="u", question="Which tables?"):
        if event.type == "step":
            steps_seen.append(event.step)
    thread_id = event.thread_id
    assert [s.action for s in steps_seen] == ["list_tables", "stopped"]
    state = store.load(thread_id, user_id="u").state
    assert state.done and not state.answer.ok and state.answer.data.text.startswith("Stopped at your request")
    assert [s.action for s in state.steps] == ["list_tables", "stopped"]
    assert len(store.steps(thread_id, user_id="u")) == 2
    # Every tool call in the history has its result: the next turn's request is valid.
    assert [m.role for m in state.messages] == ["user", "assistant", "tool", "assistant"]


def test_a_stopped_chinese_question_is_told_in_chinese(store, tiny_db, scripted_llm):
    setup = _setup(store, tiny_db, scripted_llm, stop_requested=lambda: True)
    events = list(run_turn(setup, user_id="u", question="有哪些表？"))
    assert [e.type for e in events] == ["start", "step", "error", "answer"]
    assert events[2].message.startswith("已按你的要求") and not events[-1].answer.ok
    assert scripted_llm.chat_requests == []  # stopped before the model was asked (its window was read)


def test_the_analysts_sql_becomes_a_turn_the_model_reads_next(store, tiny_db, scripted_llm):
    scripted_llm.enqueue(tool_call("answer", {"text": "Hello."}))
    setup = _setup(store, tiny_db, scripted_llm)
    thread_id = list(run_turn(setup, user_id="u", question="Hi"))[0].thread_id
    turn = run_analyst_sql(store, setup.database, thread_id=thread_id, user_id="u",
                           sql="SELECT name FROM countries ORDER BY name")
    assert turn == 1
    state = store.load(thread_id, user_id="u").state
    assert state.messages[-2].role == "user" and "SELECT name FROM countries" in state.messages[-2].content
    assert "China" in state.messages[-1].content and state.answer.ok and state.answer.data.row_count == 2
    step = store.steps(thread_id, user_id="u")[-1].data
    assert (step["turn_index"], step["action"], step["result_id"]) == (1, "run_sql", 1)
    scripted_llm.enqueue(tool_call("answer", {"text": "Two countries."}))
    list(run_turn(setup, user_id="u", question="How many were there?", thread_id=thread_id))
    sent = scripted_llm.requests[-1]["messages"]
    assert any("United States" in (m.get("content") or "") for m in sent)


def test_refused_analyst_sql_writes_nothing(store, tiny_db, scripted_llm):
    scripted_llm.enqueue(tool_call("answer", {"text": "Hello."}))
    setup = _setup(store, tiny_db, scripted_llm)
    thread_id = list(run_turn(setup, user_id="u", question="Hi"))[0].thread_id
    before = store.load(thread_id, user_id="u")
    with pytest.raises(SQLRejected):
        run_analyst_sql(store, setup.database, thread_id=thread_id, user_id="u", sql="DELETE FROM countries")
    after = store.load(thread_id, user_id="u")
    assert after.conversation.version == before.conversation.version and after.state == before.state


def test_analyst_sql_meeting_a_newer_version_writes_nothing(store, tiny_db, scripted_llm):
    """The result, its step and the state are one transaction: a VersionConflict leaves no result or step
    behind (they were three commits, found in review)."""
    scripted_llm.enqueue(tool_call("answer", {"text": "Hello."}))
    setup = _setup(store, tiny_db, scripted_llm)
    thread_id = list(run_turn(setup, user_id="u", question="Hi"))[0].thread_id

    class ChangedWhileRunning(SQLiteSource):  # the conversation is saved elsewhere while the query runs
        def execute(self, sql, **kwargs):
            loaded = store.load(thread_id, user_id="u")
            store.save(thread_id, user_id="u", state=loaded.state, expected_version=loaded.conversation.version)
            return super().execute(sql, **kwargs)

    steps = len(store.steps(thread_id, user_id="u"))
    with pytest.raises(VersionConflict):
        run_analyst_sql(store, ChangedWhileRunning(tiny_db), thread_id=thread_id, user_id="u",
                        sql="SELECT name FROM countries")
    assert len(store.steps(thread_id, user_id="u")) == steps
    with pytest.raises(ResultNotFound):
        store.load_result(thread_id, 1, user_id="u")
