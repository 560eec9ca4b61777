"""The recall_memory tool: offered only with memory on, its scopes, its isolation between users."""

from __future__ import annotations

import json

import pytest

from agent.loop import TurnSetup, run_turn
from agent.memory.recall_tool import RecallAccess
from agent.models.openai_model import OpenAIChatModel
from agent.sources.sqlite import SQLiteSource
from agent.state import AgentState
from agent.tools.registry import NO_MEMORY_TOOLS, ToolContext, parse_arguments, run_tool, tool_schemas, tools_for_turn
from tests.agent.recall.conftest import LAUNCH_TURNS, add_thread
from bench.scripted_llm import tool_call

WITH_MEMORY = tools_for_turn(memory=True)


@pytest.fixture
def ctx(tiny_db):
    return ToolContext(database=SQLiteSource(tiny_db), state=AgentState())


def call(ctx, **arguments):
    tool, args, failure = parse_arguments("recall_memory", json.dumps(arguments), WITH_MEMORY)
    outcome = failure or run_tool(ctx, tool, args)
    return outcome, outcome.observation


def test_the_tool_is_offered_with_its_schema_when_memory_is_on():
    assert list(WITH_MEMORY) == ["list_tables", "describe_table", "sample_rows", "find_values", "run_sql",
                                 "recall_memory", "answer"]
    schema = next(s for s in tool_schemas(WITH_MEMORY) if s["function"]["name"] == "recall_memory")["function"]
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


def test_without_memory_the_tool_is_not_offered_and_a_call_to_it_is_an_unknown_tool(ctx):
    assert "recall_memory" not in NO_MEMORY_TOOLS and "recall_memory" not in tools_for_turn(memory=False)
    assert "recall_memory" not in {s["function"]["name"] for s in tool_schemas()}
    tool, _, failure = parse_arguments("recall_memory", json.dumps({"query": "launches"}))
    assert tool is None and failure.error_kind == "unknown_tool" and "answer" in failure.observation["error"]


def test_offered_without_access_the_model_reads_an_error(ctx):
    outcome, observation = call(ctx, query="launches")
    assert not outcome.ok and outcome.error_kind == "memory_off" and "not enabled" in observation["error"]


@pytest.mark.parametrize("memory_on", [False, True])
def test_a_turn_offers_recall_memory_only_when_memory_is_on(store, tiny_db, scripted_llm, memory, memory_on):
    scripted_llm.enqueue(tool_call("recall_memory", {"query": "launches"}), tool_call("answer", {"text": "None."}))
    model = OpenAIChatModel(base_url=scripted_llm.base_url, api_key=None, model="scripted", max_retries=0)
    setup = TurnSetup(store=store, database=SQLiteSource(tiny_db), model=model,
                      recall=memory if memory_on else None)
    events = list(run_turn(setup, user_id="alice", question="What did we launch?"))
    offered = {t["function"]["name"] for t in scripted_llm.chat_requests[0]["tools"]}
    assert ("recall_memory" in offered) is memory_on and {"run_sql", "answer"} <= offered
    recall_step = next(e.step for e in events if e.type == "step" and e.step.action == "recall_memory"
                       and e.step.step_type != "recall")
    assert ("there is no tool 'recall_memory'" in str(recall_step.observation)) is not memory_on


def test_bad_arguments_come_back_as_an_observation(ctx):
    outcome, observation = call(ctx, query="x", scope="everyone")
    assert outcome.error_kind == "bad_arguments" and "scope" in observation["error"]
