"""The `recall_memory` tool: the model asks for earlier turns by meaning.

Offered by `agent.tools.registry.tools_for_turn` only when memory is on. It reads what it needs from
`ctx.memory`, the `RecallAccess` the loop attaches to its `ToolContext`; without one it answers
with an error observation the model can read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from agent.memory.recall import EpisodeIndex, recall_observation
from agent.tools.base import ToolContext, ToolOutcome, error


@dataclass
class RecallAccess:
    """Whose memory a turn may search, and which turns are already in its context."""

    index: EpisodeIndex
    user_id: str
    thread_id: str
    turn_index: int
    exclude_turns: frozenset[int] = field(default_factory=frozenset)


class RecallArgs(BaseModel):
    query: str = Field(min_length=1, max_length=1000, description="What to look for, in any language.")
    k: int = Field(5, ge=1, le=20, description="How many earlier turns to return (1-20).")
    scope: Literal["conversation", "user"] = Field(
        "conversation", description="`conversation` (this one) or `user` (all of this user's conversations).")


def recall_memory(ctx: ToolContext, args: RecallArgs) -> ToolOutcome:
    """Search earlier turns (questions, SQL and answers) by meaning and keywords: this
    conversation's by default, or all of the user's conversations with scope "user"."""
    access: RecallAccess | None = ctx.memory
    if access is None:
        return error("memory_off", "memory is not enabled here; answer from the conversation and the database")
    exclude = {(access.thread_id, t) for t in access.exclude_turns} | {(access.thread_id, access.turn_index)}
    result = access.index.search(args.query, user_id=access.user_id, k=args.k, exclude=exclude,
                                 thread_id=access.thread_id if args.scope == "conversation" else None)
    observation = recall_observation(result, scope=args.scope)
    if not result.hits:
        observation["note"] = "nothing relevant remembered; try other words or scope \"user\""
    return ToolOutcome(observation)
