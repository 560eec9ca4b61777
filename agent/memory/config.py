"""MemoryConfig: the memory settings the agent is handed (it never reads the environment)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class MemoryConfig(BaseModel):
    """How much context each model call gets, and when to summarise and archive.

    `app.settings.Settings.memory_config()` builds this from the `MEMORY_*` variables.
    """

    model_config = ConfigDict(frozen=True)

    model: str = Field("", description="Model name, for its encoding and window; empty: the offline planner.")
    context_window: int = Field(0, ge=0, description="The model's window in tokens; 0 infers it from `model`.")
    context_budget: int = Field(16_000, ge=1_000, description="Cost cap: at most this many tokens per call.")
    full_recent_count: int = Field(10, ge=1, description="Newest messages sent in full (tier 3).")
    enable_summary: bool = True
    summary_threshold: int = Field(30, ge=1, description="Messages before the first summary.")
    max_summary_tokens: int = Field(1_000, ge=50)
    condensed_tool_max: int = Field(200, ge=40, description="Characters of a condensed tool result (a result card).")
    max_messages_per_thread: int = Field(200, ge=0, description="Hot messages before archival; 0 turns it off.")
    # Not settings: the shape of the budget (issue 5). The margin absorbs counting error
    # (approximate counter, endpoints whose tokenizer differs from ours).
    output_reserve: int = Field(1_024, ge=0)
    margin: float = Field(0.10, ge=0, lt=1)
    tier_shares: tuple[float, float, float] = (0.10, 0.35, 0.55)
    new_messages_for_summary: int = Field(5, ge=1, description="New messages needed before the summary is remade.")
    archive_slack: int = Field(20, ge=0, description="Archive down to max − slack, so archival is not every turn.")
