"""The chat-model seam: messages and tool schemas in, one reply out.

Two providers sit behind it: the OpenAI-compatible client (`agent.openai_model`)
and the deterministic offline planner (`agent.offline_planner`). Tests script the
wire (a real HTTP server on loopback), never this class.
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, Field


class ToolCall(BaseModel):
    """One tool the model asked for; `arguments` is the raw JSON text the model wrote."""

    id: str
    name: str
    arguments: str = "{}"


class TokenUsage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class ModelReply(BaseModel):
    """What one model call returned."""

    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    reasoning: str | None = None
    usage: TokenUsage | None = None
    model: str = ""


class ModelError(Exception):
    """The model endpoint failed after retries (unreachable, timeout, 5xx, bad reply)."""

    def __init__(self, message: str, *, kind: str = "error", status: int | None = None):
        super().__init__(message)
        self.kind = kind
        self.status = status


class ChatModel(Protocol):
    """Anything that can take the next step of a conversation."""

    #: Shown on the page and stored with each answer ("offline planner", "gpt-4o-mini").
    label: str

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
        """Return the next reply for `messages` (OpenAI chat shape) given `tools` (OpenAI tool schemas)."""
        ...
