"""The ReAct loop end to end: the real openai client, a scripted server on loopback,
a real analytics SQLite file and a real store."""

from __future__ import annotations

import json

import pytest

from agent.loop import TurnSetup, run_turn
from agent.models.openai_model import OpenAIChatModel
from agent.sources.schema_search import SchemaOptions
from agent.sources.sqlite import SQLiteSource
from bench.scripted_llm import error, hang, text, tool_call


def _setup(store, tiny_db, scripted_llm, *, max_steps=12, tool_mode="native", timeout_s=5.0, max_retries=0):
    model = OpenAIChatModel(base_url=scripted_llm.base_url, api_key=None, model="scripted", timeout_s=timeout_s,
                            max_retries=max_retries, tool_mode=tool_mode)
    return TurnSetup(store=store, database=SQLiteSource(tiny_db), model=model, max_steps=max_steps)


def _run(setup, question, thread_id=None, user="u"):
    events = list(run_turn(setup, user_id=user, question=question, thread_id=thread_id))
    return events, events[0].thread_id


COUNT_SQL = "SELECT count(*) AS n FROM sites JOIN countries ON countries.id = sites.country_id WHERE countries.name = 'China'"


def test_a_full_turn_with_tool_calls(store, tiny_db, scripted_llm):
    scripted_llm.enqueue(
        tool_call("list_tables", {}, usage=(100, 10)),
        tool_call("describe_table", {"table": "sites"}),
        tool_call("run_sql", {"sql": COUNT_SQL}),
        tool_call("answer", {"text": "China has 2 launch sites.", "sql": COUNT_SQL}),
    )
    events, thread_id = _run(_setup(store, tiny_db, scripted_llm), "How many sites does China have?")
    assert [e.type for e in events] == ["start", "step", "step", "step", "step", "answer"]
    assert [e.step.action for e in events if e.type == "step"] == ["list_tables", "describe_table", "run_sql", "answer"]
    answer = events[-1].answer
    assert answer.ok and answer.data.text == "China has 2 launch sites."
    assert (answer.data.columns, answer.data.rows) == (["n"], [[2]])

    loaded = store.load(thread_id, user_id="u")
    state = loaded.state
    assert state.done and state.known_tables == ["countries", "sites"] and "sites" in state.known_schemas
    assert [m.role for m in state.messages] == ["user", "assistant", "tool", "assistant", "tool", "assistant", "tool",
                                                "assistant", "tool", "assistant"]
    assert state.sql_history[-1].ok and state.sql_history[-1].row_count == 1
    assert state.steps[0].tokens == {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    assert len(store.steps(thread_id, user_id="u")) == 4
    assert loaded.conversation.title == "How many sites does China have?"
    # The model received the tool results in the OpenAI shape, without our timestamps.
    last_request = scripted_llm.chat_requests[-1]
    assert last_request["messages"][-1]["role"] == "tool" and "timestamp" not in last_request["messages"][-1]


def test_each_step_is_stored_before_the_next_begins(store, tiny_db, scripted_llm):
    scripted_llm.enqueue(tool_call("list_tables", {}), tool_call("answer", {"text": "Two tables."}))
    turn = run_turn(_setup(store, tiny_db, scripted_llm), user_id="u", question="What tables are there?")
    start = next(turn)
    first_step = next(turn)
    stored = store.steps(start.thread_id, user_id="u")
    assert [s.data["action"] for s in stored] == [first_step.step.action]
    list(turn)


def test_text_react_fallback(store, tiny_db, scripted_llm):
    scripted_llm.enqueue(
        text('Thought: I should count the sites.\nAction: run_sql\nAction Input: {"sql": "SELECT count(*) AS n FROM sites"}'),
        text('Thought: I know the answer.\nAction: answer\nAction Input: {"text": "There are 3 sites."}'),
    )
    events, thread_id = _run(_setup(store, tiny_db, scripted_llm, tool_mode="text"), "How many sites?")
    steps = [e.step for e in events if e.type == "step"]
    assert [s.action for s in steps] == ["run_sql", "answer"]
    assert steps[0].thought == "I should count the sites."
    assert events[-1].answer.data.rows == [[3]]
    assert "tools" not in scripted_llm.chat_requests[0]


def test_failing_sql_then_a_corrected_one(store, tiny_db, scripted_llm):
    scripted_llm.enqueue(
        tool_call("run_sql", {"sql": "SELECT count(*) FROM launch_sites"}),
        tool_call("run_sql", {"sql": "SELECT count(*) AS n FROM sites"}),
        tool_call("answer", {"text": "3 sites."}),
    )
    events, thread_id = _run(_setup(store, tiny_db, scripted_llm), "How many sites?")
    state = store.load(thread_id, user_id="u").state
    assert [r.ok for r in state.sql_history] == [False, True]
    assert state.error_history[0].kind == "sql_error" and "no such table" in state.error_history[0].message
    assert "no such table" in state.last_error
    # The model saw the error as an observation, and the answer rests on the good query.
    second_request_tool_message = scripted_llm.chat_requests[1]["messages"][-1]
    assert json.loads(second_request_tool_message["content"])["ok"] is False
    assert events[-1].answer.data.rows == [[3]]


def test_a_rejected_write_is_an_observation_not_a_write(store, tiny_db, scripted_llm):
    before = tiny_db.read_bytes()
    scripted_llm.enqueue(tool_call("run_sql", {"sql": "DROP TABLE sites"}), tool_call("answer", {"text": "No."}))
    _run(_setup(store, tiny_db, scripted_llm), "Drop the sites table")
    assert "rejected" in json.loads(scripted_llm.chat_requests[1]["messages"][-1]["content"])["error"]
    assert tiny_db.read_bytes() == before


def test_malformed_tool_arguments_get_an_error_observation_and_a_retry(store, tiny_db, scripted_llm):
    scripted_llm.enqueue(
        tool_call("run_sql", '{"sql": "SELECT count(*) FROM sites'),
        tool_call("describe_table", {"tabel": "sites"}),
        tool_call("no_such_tool", {}),
        tool_call("run_sql", {"sql": "SELECT count(*) AS n FROM sites"}),
        tool_call("answer", {"text": "3."}),
    )
    events, thread_id = _run(_setup(store, tiny_db, scripted_llm), "How many sites?")
    state = store.load(thread_id, user_id="u").state
    assert [e.kind for e in state.error_history] == ["bad_arguments", "bad_arguments", "unknown_tool"]
    assert "not valid JSON" in state.error_history[0].message
    assert "table" in state.error_history[1].message
    assert events[-1].answer.ok


def test_the_step_limit_ends_with_a_graceful_answer(store, tiny_db, scripted_llm):
    scripted_llm.responder(lambda request: tool_call("run_sql", {"sql": f"SELECT {len(request['messages'])}"}))
    events, thread_id = _run(_setup(store, tiny_db, scripted_llm, max_steps=3), "Loop forever")
    assert events[-1].type == "answer" and not events[-1].answer.ok
    assert "limit of 3 steps" in events[-1].answer.data.text
    state = store.load(thread_id, user_id="u").state
    assert state.done and len(state.steps) == 4  # three tool steps and the closing answer
    assert len(scripted_llm.chat_requests) == 3


def test_an_endpoint_that_fails_is_retried_then_reported_with_the_state_saved(store, tiny_db, scripted_llm):
    scripted_llm.enqueue(error(500), error(500))
    events, thread_id = _run(_setup(store, tiny_db, scripted_llm, max_retries=1), "How many sites?")
    assert len(scripted_llm.chat_requests) == 2
    assert [e.type for e in events] == ["start", "step", "error", "answer"]
    assert "server_error" in events[2].message and "try again" in events[2].message
    state = store.load(thread_id, user_id="u").state
    assert state.messages[0].content == "How many sites?" and state.done and not state.answer.ok
    assert state.error_history[-1].kind == "server_error"


def test_an_endpoint_that_hangs_times_out(store, tiny_db, scripted_llm):
    scripted_llm.enqueue(hang())
    events, thread_id = _run(_setup(store, tiny_db, scripted_llm, timeout_s=0.5), "How many sites?")
    assert events[-2].type == "error" and "timeout" in events[-2].message
    assert store.load(thread_id, user_id="u").state.error_history[-1].kind == "timeout"


def test_a_small_schema_is_in_the_system_prompt_from_the_first_call(store, tiny_db, scripted_llm):
    scripted_llm.enqueue(tool_call("answer", {"text": "3"}))
    _run(_setup(store, tiny_db, scripted_llm), "How many sites?")
    system = scripted_llm.chat_requests[0]["messages"][0]["content"]
    assert "- sites (3 rows): id INTEGER primary key, name TEXT" in system
    assert "country_id INTEGER -> countries.id" in system and "'China'" in system


def test_a_follow_up_on_a_large_schema_reuses_what_the_conversation_knows(store, tiny_db, scripted_llm):
    setup = _setup(store, tiny_db, scripted_llm)
    setup.schema = SchemaOptions(max_tables=1)  # "large": explored with tools, not in the prompt
    scripted_llm.enqueue(tool_call("list_tables", {}), tool_call("describe_table", {"table": "sites"}),
                         tool_call("answer", {"text": "Sites has name and country_id."}))
    _, thread_id = _run(setup, "What is in the sites table?")
    scripted_llm.enqueue(tool_call("run_sql", {"sql": "SELECT name FROM sites"}), tool_call("answer", {"text": "3"}))
    events, _ = _run(setup, "List the sites", thread_id=thread_id)
    sent = scripted_llm.chat_requests[-2]["messages"]
    assert "Tables:" not in sent[0]["content"]
    question = sent[-1]["content"]
    assert "Tables already known" in question and "sites, countries" in question
    assert "sites(id INTEGER, name TEXT, country_id INTEGER)" in question
    assert question.endswith("Question: List the sites")
    state = store.load(thread_id, user_id="u").state
    assert state.turn_count == 2 and {s.turn_index for s in state.steps} == {0, 1}
    asked = [m for m in state.messages if m.role == "user"][-1]
    assert asked.content == "List the sites" and "sites, countries" in asked.note  # the note is sent, the question shown
    # The earlier turn's messages went along with the follow-up.
    assert sent[1]["content"] == "What is in the sites table?"


def test_another_users_thread_is_not_found(store, tiny_db, scripted_llm):
    from storage.errors import ConversationNotFound

    scripted_llm.enqueue(tool_call("answer", {"text": "hi"}))
    _, thread_id = _run(_setup(store, tiny_db, scripted_llm), "Hello?", user="alice")
    with pytest.raises(ConversationNotFound):
        _run(_setup(store, tiny_db, scripted_llm), "Hello?", thread_id=thread_id, user="mallory")


def test_steps_record_how_long_the_model_took(store, tiny_db, scripted_llm):
    scripted_llm.enqueue(tool_call("list_tables", {}), tool_call("answer", {"text": "ok"}))
    events, _ = _run(_setup(store, tiny_db, scripted_llm), "What tables?")
    steps = [e.step for e in events if e.type == "step"]
    assert all(s.model_ms is not None and 0 <= s.model_ms <= s.duration_ms for s in steps)
