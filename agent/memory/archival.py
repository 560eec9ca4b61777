"""Archival: past MEMORY_MAX_MESSAGES_PER_THREAD messages, the oldest leave the hot state.

The oldest (total − max + 20) messages go, cut at a turn boundary so a tool call
never leaves without its result and the hot part starts with a question. Before
they go they are summarised and handed to `on_archive` (the recall index); their
SQL records move with them, and their steps (already in `conversation_steps`)
leave the blob. Saving the trimmed state and writing the archive is one
transaction (`storage.archive.ArchiveStore.archive`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from pydantic import BaseModel

from agent.models.llm import ChatModel
from agent.memory.config import MemoryConfig
from agent.memory.summary import refresh_summary
from agent.memory.tokens import counter_for
from agent.state import AgentState, Message, SQLRecord
from storage.archive import ArchiveStats, ArchiveStore

log = logging.getLogger(__name__)


class ArchivedBatch(BaseModel):
    """Messages about to leave the hot state, as the recall index receives them."""

    thread_id: str
    user_id: str
    first_position: int  # absolute position of messages[0] in the conversation
    messages: list[Message]


ArchiveHook = Callable[[ArchivedBatch], None]


def no_archive_hook(batch: ArchivedBatch) -> None:
    """The default: nothing indexes archived messages."""


def archive_cut(state: AgentState, config: MemoryConfig, *, covered: int | None = None) -> int | None:
    """How many leading messages to archive now (None: not due, or no turn boundary to cut at).

    Args:
        covered: cut no further than this (the messages the summary covers).
    """
    limit = config.max_messages_per_thread
    total = len(state.messages)
    if limit <= 0 or total <= limit:
        return None
    ideal = total - limit + config.archive_slack
    furthest = total if covered is None else covered
    starts = [i for i, m in enumerate(state.messages) if m.role == "user" and 0 < i <= furthest]
    later = [i for i in starts if i >= ideal]
    if later:
        return later[0]
    earlier = [i for i in starts if i < ideal]
    return earlier[-1] if earlier else None


def split_state(state: AgentState, cut: int, *, archived_turns: int) -> tuple[AgentState, list[SQLRecord]]:
    """The state without its first `cut` messages, and the SQL records that leave with them.

    `state` is not changed. Steps of archived turns are dropped (they are in
    `conversation_steps`), but the last step stays so step numbers continue.
    """
    moved, kept = state.messages[:cut], state.messages[cut:]
    first_hot_turn = archived_turns + sum(1 for m in moved if m.role == "user")
    steps = [s for s in state.steps if s.turn_index >= first_hot_turn] or state.steps[-1:]
    first_step = steps[0].step_index if steps else 0
    boundary = kept[0].timestamp if kept else "\uffff"
    n_sql = 0
    while n_sql < len(state.sql_history) and state.sql_history[n_sql].timestamp < boundary:
        n_sql += 1  # records are in time order: those before the first hot question belong to archived turns
    trimmed = state.model_copy(update={
        "messages": list(kept), "steps": steps, "sql_history": state.sql_history[n_sql:],
        "error_history": [e for e in state.error_history if e.step_index >= first_step],
        "compressed_message_count": max(0, state.compressed_message_count - cut)})
    return trimmed, state.sql_history[:n_sql]


def archive_if_due(state: AgentState, config: MemoryConfig, *, archive: ArchiveStore, thread_id: str, user_id: str,
                   expected_version: int, stats: ArchiveStats, summariser: ChatModel | None,
                   on_archive: ArchiveHook = no_archive_hook, database_name: str = "") -> tuple[AgentState, int] | None:
    """Archive the oldest messages if the thread is over its limit, saving the trimmed state.

    Returns:
        (the trimmed state, the new version), or None when nothing was archived (the
        caller saves as usual).
    Raises:
        VersionConflict: the conversation changed since `expected_version`.
    """
    cut = archive_cut(state, config)
    if cut is None:
        return None
    if config.enable_summary:
        # Summarised first, so what leaves the blob is still in every context (tier 1).
        refresh_summary(state, config, summariser=summariser, upto=cut, database_name=database_name)
        cut = archive_cut(state, config, covered=state.compressed_message_count)
        if cut is None:
            log.warning("thread %s: archival postponed, the summary does not cover the oldest turn yet", thread_id)
            return None
    moved = state.messages[:cut]
    try:
        on_archive(ArchivedBatch(thread_id=thread_id, user_id=user_id, first_position=stats.messages,
                                 messages=moved))
    except Exception:  # the recall index is an add-on: a failure postpones archival, never the answer
        log.warning("thread %s: archival postponed, on_archive failed", thread_id, exc_info=True)
        return None
    trimmed, sql_records = split_state(state, cut, archived_turns=stats.user_messages)
    counter = counter_for(config.model)
    version = archive.archive(thread_id, user_id=user_id, state=trimmed, expected_version=expected_version,
                              messages=moved, tokens=[counter.message(m.to_api()) for m in moved],
                              sql_records=sql_records)
    return trimmed, version
