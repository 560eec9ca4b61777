"""Memory (episodes and user memories) and the remembering that runs after each answer."""

from __future__ import annotations

import threading
from collections.abc import Callable

from agent.models.llm import ChatModel
from agent.memory.embeddings import Embedder
from agent.memory.hooks import Memory, after_turn
from agent.memory.recall_config import RecallConfig
from agent.state import AgentState
from app.settings import Settings
from storage.base import Store


class Remembering:
    """Builds memory on first use and runs the remembering of each finished turn: inline, or (on the
    web) in the background by user, so that a user's next turn waits for it and sees what the
    previous one taught (and the model is never asked two things at once)."""

    def __init__(self, store: Store[AgentState], settings: Settings, *, embedder: Callable[[], Embedder | None]):
        self.store, self.settings, self._embedder = store, settings, embedder
        self._memory: Memory | None = None
        self._memory_lock = threading.Lock()
        self._workers: dict[str, list[threading.Thread]] = {}  # user -> remembering still under way
        self._workers_lock = threading.Lock()

    @property
    def memory(self) -> Memory | None:
        """Episodes and user memories in the store (issue 6, either backend); None when both recall
        and user memory are off."""
        s = self.settings
        if not (s.memory_recall_top_k or s.memory_user_memory):
            return None
        embedder = self._embedder()
        with self._memory_lock:
            if self._memory is None:
                self._memory = Memory.open(self.store, RecallConfig.from_settings(s), embedder=embedder)
        return self._memory

    def remember(self, state: AgentState, *, thread_id: str, user_id: str, turn_index: int, model: ChatModel,
                 background: bool) -> None:
        """Index the finished turn (its saved `state`) as an episode and extract the user's memories."""
        memory = self.memory
        if memory is None:
            return
        remember = lambda: after_turn(memory, state=state, thread_id=thread_id, user_id=user_id,  # noqa: E731
                                      turn_index=turn_index, model=model)
        if not background:
            remember()
            return
        # Remembering never slows the answer: on the web it runs after the turn, in the background.
        worker = threading.Thread(target=remember, name=f"remember-{thread_id}", daemon=True)
        worker.start()  # before it is listed: a listed thread may be joined at once
        with self._workers_lock:
            pending = [t for t in self._workers.get(user_id, []) if t.is_alive()]
            self._workers[user_id] = pending + [worker]

    def wait(self, user_id: str | None = None, *, timeout: float | None = None) -> None:
        """Until the remembering of `user_id`'s turns (everyone's: None) has finished, or `timeout` per turn."""
        with self._workers_lock:
            workers = [w for user, listed in self._workers.items() if user_id in (None, user) for w in listed]
        for worker in workers:
            worker.join(timeout=timeout)
