"""The chat-model seam: messages and tool schemas in, one reply out.

Two providers sit behind it: the OpenAI-compatible client (`agent.models.openai_model`)
and the deterministic offline planner (`agent.offline_planner`). Tests script the
wire (a real HTTP server on loopback), never this class.
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, Field

from storage.errors import AskdbError


class ToolCall(BaseModel):
    """One tool the model asked for; `arguments` is the raw JSON text the model wrote."""

    id: str
    name: str
    arguments: str = "{}"


class TokenUsage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    #: Of prompt_tokens, those the server read from its prompt cache (OpenAI's
    #: `prompt_tokens_details.cached_tokens`, llama.cpp's `timings.cache_n`); None: not reported.
    cached_tokens: int | None = None


class ModelReply(BaseModel):
    """What one model call returned."""

    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    reasoning: str | None = None
    usage: TokenUsage | None = None
    model: str = ""
    #: Why the model stopped: "stop", "tool_calls", "length" (cut off at max_tokens)...
    finish_reason: str | None = None
    #: How the tool calls came: "native" `tool_calls`, or "text" (written in the content and parsed).
    tool_style: str | None = None
    #: For a reply cut off because it kept repeating itself: the text it repeated.
    repeating: str | None = None


class ModelError(AskdbError):
    """The model endpoint failed after retries (unreachable, timeout, 5xx, bad reply)."""

    def __init__(self, message: str, *, kind: str = "error", status: int | None = None, window: int | None = None):
        super().__init__(message)
        self.kind = kind
        self.status = status
        #: kind "context_length": the window the server named, when it did.
        self.window = window


class ChatModel(Protocol):
    """Anything that can take the next step of a conversation."""

    #: Shown on the page and stored with each answer ("offline planner", "gpt-4o-mini").
    label: str
    #: Whether it reads the schema written into the system prompt (a language model does). One that
    #: does is not offered list_tables and describe_table beside it (`agent.tools.registry.SCHEMA_TOOLS`).
    reads_schema: bool

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *,
                 max_tokens: int | None = None, on_text: Any = None,
                 readable: list[dict[str, Any]] | None = None) -> ModelReply:
        """Return the next reply for `messages` (OpenAI chat shape) given `tools` (OpenAI tool schemas);
        `max_tokens` is the room the context budget left for the reply (None: the model's own setting);
        `on_text` (an `agent.models.answer_draft.DraftCallback`), when the model streams, gets the answer's
        text as it is written; `readable`, the tools whose calls written as text are read as calls
        (default `tools`): the loop runs some it does not offer."""
        ...
