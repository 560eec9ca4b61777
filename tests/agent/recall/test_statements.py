"""Statements about the user, phrased any way, become memories; questions never do; a message that
only states things is answered by acknowledging what was remembered (issue 22).

tests/data/memory_statements.json was written before the rules: they were built on its `dev`
half, and the `heldout` half was run once they were done (docs/memory.md has the figures)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.loop import TurnSetup, run_turn
from agent.memory.extraction import extract_offline, only_statements
from agent.memory.hooks import after_turn
from agent.memory.user_memory import normalize_text
from agent.offline_planner import OfflinePlanner
from agent.models.openai_model import OpenAIChatModel
from agent.sources.sqlite import SQLiteSource
from bench.scripted_llm import tool_call

CASES = json.loads((Path(__file__).parents[2] / "data" / "memory_statements.json").read_text())


@pytest.mark.parametrize("split", ["dev", "heldout"])
def test_every_statement_becomes_a_memory_in_its_own_words(split):
    for said in CASES[split]["statements"]:
        found = extract_offline(said)
        assert found and only_statements(said), said
        for candidate in found:  # the user's own words, not a paraphrase
            assert normalize_text(candidate.text) in normalize_text(said), said


@pytest.mark.parametrize("split", ["dev", "heldout"])
def test_questions_never_become_memories(split):
    for asked in CASES[split]["questions"]:
        assert extract_offline(asked) == [] and not only_statements(asked), asked


def test_a_statement_followed_by_a_question_is_remembered_and_asked():
    said = "I only care about launches after 2015, how many were there?"
    assert [c.key for c in extract_offline(said)] == ["focus"] and not only_statements(said)


def _setup(store, tiny_db, model, memory):
    return TurnSetup(store=store, database=SQLiteSource(tiny_db), model=model, recall=memory)


def test_a_statement_turn_is_acknowledged_without_asking_the_model(store, tiny_db, scripted_llm, memory):
    model = OpenAIChatModel(base_url=scripted_llm.base_url, api_key=None, model="scripted", max_retries=0)
    events = list(run_turn(_setup(store, tiny_db, model, memory), user_id="alice",
                           question="Call me Ada. I prefer bar charts."))
    answer = events[-1].answer
    assert answer.data.text.startswith("Noted. I will remember: “Call me Ada.”; “I prefer bar charts.”")
    assert not answer.ok and answer.data.sql is None and not scripted_llm.chat_requests
    items = memory.users.items.list(user_id="alice", status="active")
    assert sorted(i.data.get("key") for i in items) == ["output_format", "preferred_name"]
    assert memory.users.items.list(user_id="bob", status="active") == []
    # The background step does not extract the same words again (here: it would ask the model).
    thread = events[0].thread_id
    state = store.load(thread, user_id="alice").state
    done = after_turn(memory, state=state, thread_id=thread, user_id="alice", turn_index=0, model=model)
    assert done.changes == [] and not scripted_llm.chat_requests
    # The next turn's prompt carries what was remembered (with its question, after the stable system prompt).
    scripted_llm.enqueue(tool_call("run_sql", {"sql": "SELECT count(*) FROM sites"}),
                         tool_call("answer", {"text": "3 sites.", "sql": "SELECT count(*) FROM sites"}))
    list(run_turn(_setup(store, tiny_db, model, memory), user_id="alice", question="How many sites are there?",
                  thread_id=thread))
    assert "Call me Ada." in scripted_llm.chat_requests[0]["messages"][-1]["content"]


def test_a_chinese_statement_turn_is_acknowledged_in_chinese(store, tiny_db, memory):
    planner = OfflinePlanner(SQLiteSource(tiny_db))
    events = list(run_turn(_setup(store, tiny_db, planner, memory), user_id="alice",
                           question="记住我们只看2020年以后的数据。"))
    assert events[-1].answer.data.text.startswith("好的，我记住了：“记住我们只看2020年以后的数据。”")
    assert [s.step.action for s in events if s.type == "step"] == ["remember"]


def test_a_question_is_not_taken_for_a_statement(store, tiny_db, memory):
    planner = OfflinePlanner(SQLiteSource(tiny_db))
    events = list(run_turn(_setup(store, tiny_db, planner, memory), user_id="alice",
                           question="How many launch sites do we have?"))
    assert "remember" not in [s.step.action for s in events if s.type == "step"]
    assert memory.users.items.list(user_id="alice", status="active") == []
