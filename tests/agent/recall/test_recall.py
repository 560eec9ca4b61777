"""Episode recall: hybrid ranking, the keyword fallback, lazy re-embedding, the vector cache,
and the text and step a turn receives."""

from __future__ import annotations

import json
import logging

from agent.memory.embeddings import OpenAIEmbedder
from agent.memory.recall import EpisodeIndex, recall_for_turn
from storage.episodes import EpisodeIn
from tests.agent.recall.conftest import LAUNCH_TURNS, add_thread, dead_url


def questions(result):
    return [h.episode.question for h in result.hits]


def test_hybrid_search_finds_the_relevant_turn(store, memory):
    thread = add_thread(store, memory, LAUNCH_TURNS)
    result = memory.index.search("heaviest payload mass", user_id="alice", thread_id=thread, k=2)
    assert result.mode == "hybrid"
    assert questions(result)[0] == "What is the heaviest payload ever launched?"
    top = result.hits[0]
    assert top.vector_rank == 1 and top.keyword_rank == 1 and top.cosine > 0


def test_without_an_embedder_keywords_answer(store, keyword_memory):
    thread = add_thread(store, keyword_memory, LAUNCH_TURNS)
    result = keyword_memory.index.search("launch sites per country", user_id="alice", thread_id=thread, k=3)
    assert result.mode == "keyword"
    assert questions(result)[0] == "Which country has the most launch sites?"
    assert all(h.vector_rank is None for h in result.hits)
    assert store.db.conn.execute("SELECT count(*) FROM episodes WHERE embedding IS NOT NULL").fetchone()[0] == 0


def test_a_failing_embedder_falls_back_to_keywords(store, caplog):
    failing = EpisodeIndex(memory_episodes(store), OpenAIEmbedder(model="m", base_url=dead_url(), api_key=None,
                                                                  max_retries=0, timeout_s=2))
    thread = store.create(user_id="alice", state=_state()).thread_id
    with caplog.at_level(logging.WARNING):
        failing.index([EpisodeIn(thread_id=thread, user_id="alice", turn_index=n, question=q, sql=s, answer=a)
                       for n, (q, s, a) in enumerate(LAUNCH_TURNS)])
        result = failing.search("heaviest payload", user_id="alice", k=2)
    assert "without vectors" in caplog.text and "fell back to keyword" in caplog.text
    assert result.mode == "keyword (embedder failed)"
    assert questions(result)[0] == "What is the heaviest payload ever launched?"


def test_a_new_embedding_model_re_embeds_lazily(store, memory, scripted_llm):
    thread = add_thread(store, memory, LAUNCH_TURNS)
    other = OpenAIEmbedder(model="other", base_url=scripted_llm.base_url, api_key=None, max_retries=0)
    index = EpisodeIndex(memory.index.episodes, other, reembed_batch=3)
    models = lambda: [r[0] for r in store.db.conn.execute("SELECT embedding_model FROM episodes ORDER BY seq")]  # noqa: E731
    assert set(models()) == {"openai:hashed"}
    first = index.search("rocket families", user_id="alice", thread_id=thread, k=4)
    assert models().count("openai:other") == 3  # one batch per search, so no turn waits on a whole re-index
    left = next(h for h in first.hits if h.episode.turn_index == 3)  # not re-embedded yet: found by its keywords
    assert left.vector_rank is None and left.keyword_rank == 1
    index.search("anything", user_id="alice", k=1)
    assert set(models()) == {"openai:other"}


def test_the_vector_cache_sees_new_and_deleted_episodes(store, memory):
    thread = add_thread(store, memory, LAUNCH_TURNS[:2])
    vector_only = lambda q: memory.index.search(q, user_id="alice", k=5, mode="vector")  # noqa: E731
    assert len(vector_only("launches").hits) == 2
    other = add_thread(store, memory, LAUNCH_TURNS[2:])
    assert len(vector_only("launches").hits) == 4  # loaded incrementally
    store.delete(thread, user_id="alice")
    after = vector_only("launches")
    assert {h.episode.thread_id for h in after.hits} == {other} and len(after.hits) == 2


def test_recall_for_turn_leaves_out_the_recent_window(store, memory):
    thread = add_thread(store, memory, LAUNCH_TURNS)
    recall = recall_for_turn(memory.index, question="How many launches and which payload was heaviest?",
                             user_id="alice", thread_id=thread, turn_index=4, k=5, exclude_turns=[3])
    turns = [h.episode.turn_index for h in recall.hits]
    assert 3 not in turns and 4 not in turns and set(turns) <= {0, 1, 2}
    assert recall.text.startswith("Earlier turns of this conversation")
    assert "Q: What is the heaviest payload ever launched?" in recall.text and "SQL: SELECT name, mass" in recall.text
    step = recall.step
    assert step.step_type == "recall" and step.action == "recall_memory" and step.turn_index == 4
    observation = json.loads(step.observation)
    assert observation["scope"] == "conversation" and len(observation["episodes"]) == len(recall.hits)
    assert step.content == recall.text


def test_recall_for_turn_in_user_scope_reaches_other_conversations(store, memory):
    add_thread(store, memory, LAUNCH_TURNS)
    current = add_thread(store, memory, [("Hello", "", "Hi")])
    mine = recall_for_turn(memory.index, question="heaviest payload", user_id="alice", thread_id=current,
                           turn_index=1, k=3, scope="conversation")
    everywhere = recall_for_turn(memory.index, question="heaviest payload", user_id="alice", thread_id=current,
                                 turn_index=1, k=3, scope="user")
    assert all(h.episode.thread_id == current for h in mine.hits)
    assert everywhere.hits[0].episode.question == "What is the heaviest payload ever launched?"
    assert "earlier conversations" in everywhere.text and "conversation " in everywhere.text


def test_nothing_to_recall_gives_empty_text(store, memory):
    thread = store.create(user_id="alice", state=_state()).thread_id
    recall = recall_for_turn(memory.index, question="anything", user_id="alice", thread_id=thread, turn_index=0)
    assert recall.hits == [] and recall.text == ""


def memory_episodes(store):
    return store.episodes()


def _state():
    from agent.state import AgentState

    return AgentState()


def test_a_re_embedded_episode_replaces_its_cached_vector(store, memory):
    thread = add_thread(store, memory, LAUNCH_TURNS)
    vector_only = lambda q: memory.index.search(q, user_id="alice", k=10, mode="vector")  # noqa: E731
    assert len(vector_only("launches").hits) == 4
    seq = memory.index.episodes.list(user_id="alice", thread_id=thread)[0].seq
    vector = memory.index.embedder.embed_passages(["completely different words"])[0]
    from agent.memory.embeddings import to_bytes

    memory.index.episodes.set_embeddings([(seq, to_bytes(vector))], user_id="alice", model="openai:hashed")
    hits = vector_only("completely different words").hits
    assert len(hits) == 4 and hits[0].episode.seq == seq and hits[0].cosine > 0.99
