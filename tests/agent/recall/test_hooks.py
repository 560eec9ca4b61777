"""The hooks the loop will call: after_turn indexes and remembers, before_turn recalls.

Real turns run through agent.loop.run_turn against the scripted server, then the hooks
are called on the saved states, as the lead's wiring will."""

from __future__ import annotations

import json

from agent.loop import TurnSetup, run_turn
from agent.memory.hooks import (
    after_turn, archive_hook, before_turn, episode_from_state, episodes_from_messages, index_archived, recent_turns, topics_of,
)
from agent.models.openai_model import OpenAIChatModel
from agent.sources.sqlite import SQLiteSource
from agent.state import AgentState, Message
from storage.episodes import episode_id
from bench.scripted_llm import text, tool_call

SITES_SQL = ("SELECT countries.name, count(*) AS n FROM sites JOIN countries ON countries.id = sites.country_id"
             " GROUP BY countries.name")


def ask(store, tiny_db, scripted_llm, question, *, thread=None, user="alice", answer="China has 2 sites."):
    scripted_llm.enqueue(tool_call("run_sql", {"sql": SITES_SQL}), tool_call("answer", {"text": answer, "sql": SITES_SQL}))
    model = OpenAIChatModel(base_url=scripted_llm.base_url, api_key=None, model="scripted", max_retries=0)
    setup = TurnSetup(store=store, database=SQLiteSource(tiny_db), model=model)
    events = list(run_turn(setup, user_id=user, question=question, thread_id=thread))
    thread = events[0].thread_id
    return thread, events[0].turn_index, store.load(thread, user_id=user).state, model


def test_after_turn_indexes_the_finished_turn_and_remembers(store, tiny_db, scripted_llm, memory):
    thread, turn, state, model = ask(store, tiny_db, scripted_llm, "Call me Ada. Which countries have launch sites?")
    scripted_llm.enqueue(text('{"memories": [{"type": "PROFILE", "text": "Wants to be called Ada", '
                              '"importance": 0.9, "key": "preferred_name", "value": "Ada"}]}'))
    done = after_turn(memory, state=state, thread_id=thread, user_id="alice", turn_index=turn, model=model)
    episode = done.episode
    assert episode.id == episode_id(thread, 0) and episode.question.startswith("Call me Ada")
    assert episode.sql == SITES_SQL and episode.answer == "China has 2 sites."
    assert episode.topics == ["countries", "sites"] and episode.embedding_model == "openai:hashed"
    assert [c.action for c in done.changes] == ["added"] and done.changes[0].item.text == "Wants to be called Ada"
    # Running it again (a retried background job) changes nothing.
    scripted_llm.enqueue(text('{"memories": [{"type": "PROFILE", "text": "Wants to be called Ada", '
                              '"importance": 0.9, "key": "preferred_name", "value": "Ada"}]}'))
    again = after_turn(memory, state=state, thread_id=thread, user_id="alice", turn_index=turn, model=model)
    assert again.episode.seq == episode.seq and [c.action for c in again.changes] == ["merged"]
    assert memory.index.episodes.count(user_id="alice") == 1 and memory.users.items.count(user_id="alice") == 1


def test_before_turn_recalls_old_turns_and_memories_with_a_step(store, tiny_db, scripted_llm, memory):
    thread = None
    questions = ["Our fiscal year starts in April. How many launch sites are there?",
                 "Which payload was the heaviest?", "List the rocket families", "Show the launch sites of China"]
    for q in questions:
        thread, turn, state, _ = ask(store, tiny_db, scripted_llm, q, thread=thread)
        after_turn(memory, state=state, thread_id=thread, user_id="alice", turn_index=turn)
    state = store.load(thread, user_id="alice").state
    state.messages.append(Message(role="user", content="How many launch sites per country?"))
    before = before_turn(memory, state=state, thread_id=thread, user_id="alice",
                         question="How many launch sites per country?", turn_index=4, exclude_turns=frozenset({3}))
    recalled_turns = [h.episode.turn_index for h in before.hits]
    assert recalled_turns[0] == 0 and 3 not in recalled_turns and 4 not in recalled_turns
    assert "Q: Our fiscal year starts in April." in before.recalled
    assert before.user_memory.startswith("What askdb knows about you")
    assert "Our fiscal year starts in April." in before.user_memory
    step = before.step
    assert step.step_type == "recall" and step.turn_index == 4
    observation = json.loads(step.observation)
    assert observation["memories"][0]["text"] == "Our fiscal year starts in April."
    assert len(observation["episodes"]) == len(before.hits)
    assert before.user_memory in step.content and before.recalled in step.content
    assert before.access.thread_id == thread and before.access.exclude_turns == frozenset({3})
    # The step is recorded like any other (the loop will number it).
    store.append_step(thread, step_index=len(state.steps), step=step)
    assert store.steps(thread, user_id="alice")[-1].data["step_type"] == "recall"


def test_before_turn_with_nothing_remembered_adds_no_step(store, memory):
    state = AgentState(question="first question", messages=[Message(role="user", content="first question")])
    thread = store.create(user_id="alice", state=state).thread_id
    before = before_turn(memory, state=state, thread_id=thread, user_id="alice", question="first question",
                         turn_index=0)
    assert before.step is None and before.recalled == "" and before.user_memory == ""
    assert before.access.turn_index == 0


def test_hooks_never_mix_users(store, tiny_db, scripted_llm, memory):
    bob_thread, turn, state, _ = ask(store, tiny_db, scripted_llm, "Call me Bob. Secret sites list please",
                                     user="bob", answer="Bob's secret answer")
    after_turn(memory, state=state, thread_id=bob_thread, user_id="bob", turn_index=turn)
    thread, turn, state, _ = ask(store, tiny_db, scripted_llm, "Hello there")
    state.messages.append(Message(role="user", content="Secret sites list"))
    before = before_turn(memory, state=state, thread_id=thread, user_id="alice", question="Secret sites list",
                         turn_index=1)
    assert before.hits == [] and before.memories == [] and before.step is None


def test_the_recent_window_is_left_out_by_default():
    messages = [Message(role=r, content="x") for r in ["user", "assistant"] * 6]  # 6 turns, 12 messages
    state = AgentState(messages=messages + [Message(role="user", content="now")])
    assert recent_turns(state, recent_messages=4, turn_index=6) == frozenset({4, 5, 6})
    assert recent_turns(state, recent_messages=0, turn_index=6) == frozenset({6})


def test_archived_messages_become_episodes(store, memory, scripted_llm):
    from agent.state import FunctionCall, MessageToolCall

    def call(name, args):
        return MessageToolCall(id=name, function=FunctionCall(name=name, arguments=json.dumps(args)))

    messages = [
        Message(role="user", content="How many sites?"),
        Message(role="assistant", tool_calls=[call("run_sql", {"sql": "SELECT count(*) FROM sites"})]),
        Message(role="tool", tool_call_id="run_sql", content="[[3]]"),
        Message(role="assistant", tool_calls=[call("answer", {"text": "Three.", "sql": "SELECT count(*) FROM sites"})]),
        Message(role="assistant", content="Three."),
        Message(role="user", content="And in China?"),
        Message(role="assistant", content="Two of them."),
    ]
    episodes = episodes_from_messages(messages, thread_id="t", user_id="alice", first_turn_index=7)
    assert [(e.turn_index, e.question, e.sql, e.answer, e.context) for e in episodes] == [
        (7, "How many sites?", "SELECT count(*) FROM sites", "Three.", ""),
        (8, "And in China?", "", "Two of them.", "How many sites?")]
    thread = store.create(user_id="alice", state=AgentState()).thread_id
    assert index_archived(memory, thread_id=thread, user_id="alice", messages=messages, first_turn_index=7) == 2
    assert index_archived(memory, thread_id=thread, user_id="alice", messages=messages, first_turn_index=7) == 2
    assert memory.index.episodes.count(user_id="alice", thread_id=thread) == 2
    # The same through issue 5's archive hook: the batch starts at the question of turn 7.
    from agent.memory.archival import ArchivedBatch

    hook = archive_hook(memory, archived_questions=lambda t: 7)
    hook(ArchivedBatch(thread_id=thread, user_id="alice", first_position=20, messages=messages))
    assert [e.turn_index for e in memory.index.episodes.list(user_id="alice", thread_id=thread)] == [8, 7]


def test_episode_from_an_unanswered_state_keeps_the_question():
    state = AgentState(question="Why?", messages=[Message(role="user", content="Why?")])
    episode = episode_from_state(state, thread_id="t", user_id="u", turn_index=0)
    assert (episode.question, episode.answer, episode.sql) == ("Why?", "", "")
    assert episode_from_state(AgentState(), thread_id="t", user_id="u", turn_index=0) is None
    assert topics_of('SELECT * FROM "launches" l JOIN payloads p ON 1') == ["launches", "payloads"]


def test_a_question_that_says_nothing_about_the_user_is_not_sent_to_the_model(scripted_llm):
    from agent.memory.extraction import extract
    from agent.models.openai_model import OpenAIChatModel

    model = OpenAIChatModel(base_url=scripted_llm.base_url, api_key=None, model="m", max_retries=0)
    assert extract("How many launches were there in 2020?", model=model) == []
    assert extract("2020年有多少次发射？", model=model) == []
    assert scripted_llm.chat_requests == []
