"""The recall_memory tool: its scopes, its isolation between users, and memory switched off."""

from __future__ import annotations

import json

import pytest

from agent.memory.recall_tool import RecallAccess
from agent.sources.sqlite import SQLiteSource
from agent.state import AgentState
from agent.tools import TOOLS, ToolContext, parse_arguments, run_tool, tool_schemas
from tests.agent.recall.conftest import LAUNCH_TURNS, add_thread


@pytest.fixture
def ctx(tiny_db):
    return ToolContext(database=SQLiteSource(tiny_db), state=AgentState())


def call(ctx, **arguments):
    tool, args, failure = parse_arguments("recall_memory", json.dumps(arguments))
    outcome = failure or run_tool(ctx, tool, args)
    return outcome, outcome.observation


def test_the_tool_is_offered_with_its_schema():
    assert "recall_memory" in TOOLS
    schema = next(s for s in tool_schemas() if s["function"]["name"] == "recall_memory")["function"]
    assert schema["parameters"]["required"] == ["query"]
    assert schema["parameters"]["properties"]["scope"]["enum"] == ["conversation", "user"]


def test_conversation_scope_is_the_default(store, memory, ctx):
    here = add_thread(store, memory, LAUNCH_TURNS[:2])
    add_thread(store, memory, LAUNCH_TURNS[2:])
    ctx.memory = RecallAccess(index=memory.index, user_id="alice", thread_id=here, turn_index=2)
    outcome, observation = call(ctx, query="heaviest payload")
    assert outcome.ok and observation["scope"] == "conversation"
    assert {e["thread_id"] for e in observation["episodes"]} == {here}


def test_user_scope_searches_all_of_the_users_conversations(store, memory, ctx):
    here = add_thread(store, memory, LAUNCH_TURNS[:2])
    there = add_thread(store, memory, LAUNCH_TURNS[2:])
    ctx.memory = RecallAccess(index=memory.index, user_id="alice", thread_id=here, turn_index=2)
    _, observation = call(ctx, query="heaviest payload", scope="user", k=2)
    first = observation["episodes"][0]
    assert first["thread_id"] == there and first["question"] == "What is the heaviest payload ever launched?"
    assert first["sql"].startswith("SELECT name, mass") and len(observation["episodes"]) == 2


def test_another_users_episodes_are_never_returned(store, memory, ctx):
    add_thread(store, memory, [("Our secret launch budget is 9 billion", "", "Noted.")], user="bob")
    mine = add_thread(store, memory, LAUNCH_TURNS)
    ctx.memory = RecallAccess(index=memory.index, user_id="alice", thread_id=mine, turn_index=4)
    for scope in ("conversation", "user"):
        _, observation = call(ctx, query="secret launch budget billion", scope=scope, k=20)
        assert all("secret" not in e["question"] for e in observation["episodes"])
        assert len(observation["episodes"]) == len(LAUNCH_TURNS)


def test_the_turns_in_context_are_not_recalled(store, memory, ctx):
    here = add_thread(store, memory, LAUNCH_TURNS)
    ctx.memory = RecallAccess(index=memory.index, user_id="alice", thread_id=here, turn_index=4,
                              exclude_turns=frozenset({2, 3}))
    _, observation = call(ctx, query="heaviest payload", k=10)
    assert sorted(e["turn"] for e in observation["episodes"]) == [1, 2]  # turns are shown 1-based


def test_nothing_found_says_so(store, memory, ctx):
    here = store.create(user_id="alice", state=AgentState()).thread_id
    ctx.memory = RecallAccess(index=memory.index, user_id="alice", thread_id=here, turn_index=0)
    _, observation = call(ctx, query="anything at all")
    assert observation["episodes"] == [] and "nothing relevant" in observation["note"]


def test_without_memory_the_model_reads_an_error(ctx):
    outcome, observation = call(ctx, query="launches")
    assert not outcome.ok and outcome.error_kind == "memory_off" and "not enabled" in observation["error"]


def test_bad_arguments_come_back_as_an_observation(ctx):
    outcome, observation = call(ctx, query="x", scope="everyone")
    assert outcome.error_kind == "bad_arguments" and "scope" in observation["error"]
