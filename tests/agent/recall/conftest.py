"""Memory on a real store file, embedded through the scripted server's /v1/embeddings
(hashed word vectors, so texts sharing words are close) by the real openai client."""

from __future__ import annotations

import socket

import pytest

from agent.memory.embeddings import OpenAIEmbedder
from agent.memory.hooks import Memory
from agent.memory.recall_config import RecallConfig
from agent.state import AgentState
from storage.episodes import EpisodeIn


@pytest.fixture
def embedder(scripted_llm):
    return OpenAIEmbedder(model="hashed", base_url=scripted_llm.base_url, api_key=None, max_retries=0)


@pytest.fixture
def memory(store, embedder):
    return Memory.open(store, RecallConfig(embedder="openai"), embedder=embedder)


@pytest.fixture
def keyword_memory(store):
    return Memory.open(store, RecallConfig(embedder="none", search="keyword"), embedder=None)


def dead_url() -> str:
    """A loopback URL where nothing listens (connection refused at once)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def add_thread(store, memory, turns: list[tuple[str, str, str]], *, user: str = "alice") -> str:
    """A conversation of `user` whose turns (question, sql, answer) are indexed as episodes."""
    thread = store.create(user_id=user, state=AgentState()).thread_id
    memory.index.index([EpisodeIn(thread_id=thread, user_id=user, turn_index=n, question=q, sql=s, answer=a)
                        for n, (q, s, a) in enumerate(turns)])
    return thread


LAUNCH_TURNS = [
    ("How many launches were there in 2020?", "SELECT count(*) FROM launches WHERE year = 2020", "There were 114."),
    ("Which country has the most launch sites?", "SELECT country, count(*) FROM sites GROUP BY country",
     "China has the most launch sites."),
    ("What is the heaviest payload ever launched?", "SELECT name, mass FROM payloads ORDER BY mass DESC LIMIT 1",
     "Tiangong core module, 22.5 tonnes."),
    ("List the rocket families by number of flights", "SELECT family, count(*) FROM launches GROUP BY family",
     "Falcon leads, then Long March."),
]
