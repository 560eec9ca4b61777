"""The chat model and the embedder, built once from the settings and shared by every turn, with what
was learnt of the model's window and token count."""

from __future__ import annotations

import threading

from agent.sources.base import DataSource
from agent.models.llm import ChatModel
from agent.models.budget import ModelBudget
from agent.memory.embeddings import Embedder
from agent.memory.recall_config import RecallConfig
from agent.vocabulary.domain import DomainVocabulary
from app.settings import Settings


class Models:
    """Builds each model once, under its own lock: the OpenAI-compatible client keeps connections, and
    what it learns of its endpoint (in `auto` tool mode, that it refuses tools; the window its server
    reports). `budget` keeps what turns learn of the model's window and token count.

    One per AskDB; the eval harness shares one among the AskDBs it builds per question, so a run
    learns these once, and a test that builds its own learns afresh.
    """

    def __init__(self, settings: Settings):
        self.settings = settings
        self.budget = ModelBudget()
        self._lock = threading.Lock()
        self._chat: ChatModel | None = None
        self._embedder_built, self._embedder = False, None

    def chat(self, database: DataSource, *, vocabulary: DomainVocabulary | None = None) -> ChatModel:
        """The chat model; the offline planner is made per turn (it reads `database`, and `vocabulary`,
        the source's own words)."""
        s = self.settings
        if s.llm == "offline":
            from agent.offline_planner import OfflinePlanner

            return OfflinePlanner(database, embedder=self.embedder(), vocabulary=vocabulary)
        with self._lock:
            if self._chat is None:
                from agent.models.openai_model import OpenAIChatModel

                self._chat = OpenAIChatModel(
                    base_url=s.openai_base_url, api_key=s.openai_api_key, model=s.model, timeout_s=s.llm_timeout,
                    max_retries=s.llm_max_retries, tool_mode=s.tool_mode, max_output_tokens=s.max_output_tokens,
                    stream=s.llm_stream)
            return self._chat

    def embedder(self) -> Embedder | None:
        """The embedder of MEMORY_EMBEDDER (None: keywords only), built on first use."""
        with self._lock:
            if not self._embedder_built:
                self._embedder = RecallConfig.from_settings(self.settings).build_embedder()
                self._embedder_built = True
        return self._embedder
