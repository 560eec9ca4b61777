"""RecallConfig: the settings of episodes, recall and user memory (issue 6), handed to the agent."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent.memory.embeddings import Embedder, make_embedder


class RecallConfig(BaseModel):
    """Built from the `MEMORY_*` settings by `from_settings`; the agent never reads the environment."""

    model_config = ConfigDict(frozen=True)

    embedder: Literal["local", "openai", "none"] = "local"
    embedding_model: str = ""
    embedding_base_url: str | None = None
    embedding_api_key: str | None = None
    embedding_timeout: float = Field(30.0, gt=0)
    search: Literal["hybrid", "vector", "keyword"] = "hybrid"
    recall_top_k: int = Field(5, ge=0, le=50)
    recall_scope: Literal["conversation", "user"] = "conversation"
    # Messages at the end of the conversation sent in full (tier 3): their turns are not recalled.
    recent_messages: int = Field(10, ge=0)
    user_memory: bool = True
    user_top_k: int = Field(5, ge=0, le=50)
    min_importance: float = Field(0.5, ge=0, le=1)

    @classmethod
    def from_settings(cls, settings: Any) -> RecallConfig:
        """Read `settings.memory_*` (app.settings.Settings); the embedding endpoint and key fall
        back to the chat endpoint's (`openai_base_url`, `openai_api_key`)."""
        get = lambda name, default=None: getattr(settings, name, default)  # noqa: E731
        values = {
            "embedder": get("memory_embedder", "local"),
            "embedding_model": get("memory_embedding_model", "") or "",
            "embedding_base_url": get("memory_embedding_base_url") or get("openai_base_url"),
            "embedding_api_key": get("memory_embedding_api_key") or get("openai_api_key"),
            "search": get("memory_search", "hybrid"),
            "recall_top_k": get("memory_recall_top_k", 5),
            "recall_scope": get("memory_recall_scope", "conversation"),
            "user_memory": get("memory_user_memory", True),
            "user_top_k": get("memory_user_top_k", 5),
            "min_importance": get("memory_min_importance", 0.5),
        }
        recent = get("memory_full_recent_count")  # issue 5's tier-3 size, when it exists
        if isinstance(recent, int):
            values["recent_messages"] = recent
        return cls(**values)

    def build_embedder(self) -> Embedder | None:
        """The embedder these settings name (None for `none`: keywords only)."""
        return make_embedder(self.embedder, model=self.embedding_model, base_url=self.embedding_base_url,
                             api_key=self.embedding_api_key, timeout_s=self.embedding_timeout)
