"""The glue between a turn and memory: `before_turn` recalls, `after_turn` remembers.

    memory = Memory.open(store, RecallConfig.from_settings(settings))  # either backend (storage.base)
    before = before_turn(memory, state=state, thread_id=t, user_id=u, question=q, turn_index=n)
    # before.recalled -> tier 1 of the context; before.user_memory -> the system prompt;
    # before.step -> record it like any step; before.access -> ToolContext.memory
    ... the turn runs and the state is saved ...
    after_turn(memory, state=state, thread_id=t, user_id=u, turn_index=n, model=chat_model)  # background

Memory is an aid, never a reason for a turn to fail: store and embedder errors are
logged and the turn goes on without it.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from agent.models.llm import ChatModel
from agent.memory.embeddings import Embedder, EmbeddingError
from agent.memory.extraction import extract, extract_offline, only_statements
from agent.memory.recall import EpisodeIndex, RecallHit, recall_for_turn
from agent.memory.recall_config import RecallConfig
from agent.memory.recall_tool import RecallAccess
from agent.memory.user_memory import MemoryChange, ScoredMemory, UserMemory, memory_text
from agent.state import AgentState, Message, Step
from storage.base import DRIVER_ERRORS, Store
from storage.episodes import Episode, EpisodeIn, episode_id
from storage.errors import StoreError
from storage.text import has_cjk

log = logging.getLogger(__name__)
_FAILURES = (StoreError, *DRIVER_ERRORS, EmbeddingError)
_TABLES = re.compile(r"\b(?:from|join)\s+[\"`\[]?([A-Za-z_][\w]*)", re.I)
ANSWER_CHARS = 1000  # an episode keeps a short answer; the full one stays in the conversation


@dataclass
class Memory:
    """Episodes and user memories in one store, with the embedder they share."""

    index: EpisodeIndex
    users: UserMemory
    config: RecallConfig

    @classmethod
    def open(cls, store: Store, config: RecallConfig, *, embedder: Embedder | None | str = "from-config") -> Memory:
        """Build both on the store's sidecar stores (SQLite or PostgreSQL), with the configured
        embedder unless one (or None, keywords only) is given."""
        if embedder == "from-config":
            embedder = config.build_embedder()
        index = EpisodeIndex(store.episodes(), embedder, mode=config.search)
        users = UserMemory(store.memory_items(), embedder, min_importance=config.min_importance)
        return cls(index=index, users=users, config=config)


class BeforeTurn(BaseModel):
    """What memory adds to a turn before the model is asked."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    recalled: str = ""  # tier 1: relevant earlier turns ("" when none)
    user_memory: str = ""  # system prompt: "What askdb knows about you ..." ("" when none)
    hits: list[RecallHit] = []
    memories: list[ScoredMemory] = []
    step: Step | None = None  # a `recall` step for the page; None when nothing was recalled
    access: RecallAccess | None = None  # for ToolContext.memory (the recall_memory tool)


class AfterTurn(BaseModel):
    episode: Episode | None = None
    changes: list[MemoryChange] = []


def recent_turns(state: AgentState, *, recent_messages: int, turn_index: int) -> frozenset[int]:
    """This turn and those with any message among the last `recent_messages` (already in the context)."""
    first = turn_index - sum(1 for m in state.messages[-recent_messages:] if m.role == "user") if recent_messages else turn_index
    return frozenset(range(max(0, first), turn_index + 1))


def before_turn(memory: Memory, *, state: AgentState, thread_id: str, user_id: str, question: str,
                turn_index: int, exclude_turns: frozenset[int] | None = None) -> BeforeTurn:
    """Recall earlier turns and the user's memories for `question`; call once the question is in the state.

    Args:
        exclude_turns: this thread's turns already in the context; by default those whose
            question is within the last `config.recent_messages` messages.
    Returns:
        `recalled` for tier 1, `user_memory` for the system prompt, `step` to record
        (None when nothing was found), `access` to set as `ToolContext.memory`.
    """
    cfg = memory.config
    exclude = exclude_turns if exclude_turns is not None else recent_turns(
        state, recent_messages=cfg.recent_messages, turn_index=turn_index)
    access = RecallAccess(index=memory.index, user_id=user_id, thread_id=thread_id, turn_index=turn_index,
                          exclude_turns=frozenset(exclude))
    result = BeforeTurn(access=access)
    try:
        if cfg.recall_top_k:
            recall = recall_for_turn(memory.index, question=question, user_id=user_id, thread_id=thread_id,
                                     turn_index=turn_index, k=cfg.recall_top_k, scope=cfg.recall_scope,
                                     exclude_turns=exclude)
            result.recalled, result.hits, result.step = recall.text, recall.hits, recall.step
        if cfg.user_memory and cfg.user_top_k:
            result.memories = memory.users.relevant(question, user_id=user_id, k=cfg.user_top_k)
            result.user_memory = memory_text(result.memories)
    except _FAILURES as exc:
        log.warning("recall skipped for this turn: %s", exc)
    if not result.hits and not result.memories:
        result.step = None
        return result
    step = result.step or Step(step_index=0, turn_index=turn_index, step_type="recall", action="recall_memory",
                               args={"query": question, "automatic": True}, observation='{"ok": true}')
    observation = json.loads(step.observation or "{}")
    observation["memories"] = [{"id": m.item.id, "type": m.item.type, "text": m.item.text, "score": m.score}
                               for m in result.memories]
    step.observation = json.dumps(observation, ensure_ascii=False)
    step.content = "\n\n".join(t for t in (result.user_memory, result.recalled) if t)
    result.step = step
    return result


NOTE_ACTION = "remember"  # the action of the answer step of a turn that only stated things for memory


def remember_statements(memory: Memory, *, question: str, thread_id: str, user_id: str) -> str | None:
    """When `question` only states things for memory ("Call me Ada. I prefer bar charts."), remember them
    now and return the acknowledgement that answers the turn; None for anything that asks something,
    with user memory off, or when nothing could be stored (the turn then goes to the model as usual)."""
    if not memory.config.user_memory or not only_statements(question):
        return None
    try:
        changes = memory.users.remember(extract_offline(question), user_id=user_id, session_id=thread_id)
    except _FAILURES as exc:
        log.warning("statements not remembered: %s", exc)
        return None
    kept = [c.item.text for c in changes if c.item is not None]
    if not kept:
        return None
    if has_cjk(question):
        return "好的，我记住了：" + "；".join(f"“{t}”" for t in kept) + "。可以在“记忆”页面查看或删除。"
    return ("Noted. I will remember: " + "; ".join(f"“{t}”" for t in kept)
            + " You can see and erase what I remember on the Memories page.")


def after_turn(memory: Memory, *, state: AgentState, thread_id: str, user_id: str, turn_index: int,
               model: ChatModel | None = None) -> AfterTurn:
    """Index the finished turn as an episode and extract the user's memories from its question.

    Meant to run in the background once the state is saved; safe to run twice (the episode
    id is hash(thread, turn) and the same memory merges). `model` extracts memories as JSON
    unless it is None or the offline planner (explicit-statement rules then).
    """
    result = AfterTurn()
    try:
        episode = episode_from_state(state, thread_id=thread_id, user_id=user_id, turn_index=turn_index)
        if episode is not None:
            memory.index.index([episode])
            result.episode = memory.index.episodes.get(episode_id(thread_id, turn_index), user_id=user_id)
        noted = bool(state.steps) and state.steps[-1].action == NOTE_ACTION  # remembered during the turn
        if memory.config.user_memory and state.question.strip() and not noted:
            known = sorted({i.data["key"] for i in memory.users.items.list(user_id=user_id, status="active")
                            if i.data.get("key")})
            candidates = extract(state.question, model=model, known_keys=known)
            result.changes = memory.users.remember(candidates, user_id=user_id, session_id=thread_id)
    except _FAILURES as exc:
        log.warning("turn %s of %s not remembered: %s", turn_index, thread_id, exc)
    return result


def index_archived(memory: Memory, *, thread_id: str, user_id: str, messages: list[Message],
                   first_turn_index: int) -> int:
    """Index the turns of messages moved out of the hot state (issue 5's archive), whose first
    user message is turn `first_turn_index`. Idempotent; returns how many turns were written."""
    episodes = episodes_from_messages(messages, thread_id=thread_id, user_id=user_id, first_turn_index=first_turn_index)
    return memory.index.index(episodes) if episodes else 0


def index_conversation(memory: Memory, *, thread_id: str, user_id: str, messages: list[Message]) -> int:
    """Index every turn of a conversation that arrived whole (an import), turn 0 on. Idempotent;
    never raises for store or embedder failures (logged): the conversation itself is safe."""
    try:
        return index_archived(memory, thread_id=thread_id, user_id=user_id, messages=messages, first_turn_index=0)
    except _FAILURES as exc:
        log.warning("conversation %s not indexed for recall: %s", thread_id, exc)
        return 0


def archive_hook(memory: Memory, *, archived_questions: Callable[[str], int]) -> Callable[[Any], None]:
    """An `on_archive` for `TurnSetup` (issue 5): index the turns of each archived batch.

    Args:
        archived_questions: thread id -> user messages already archived, i.e. the turn index of
            the batch's first question (the hook runs before the batch moves), for example
            `lambda t: store.archive(Message).stats(t).user_messages`.
    """
    def on_archive(batch: Any) -> None:
        index_archived(memory, thread_id=batch.thread_id, user_id=batch.user_id, messages=batch.messages,
                       first_turn_index=archived_questions(batch.thread_id))

    return on_archive


def episode_from_state(state: AgentState, *, thread_id: str, user_id: str, turn_index: int) -> EpisodeIn | None:
    """The episode of the turn that just finished in `state` (None before any question)."""
    if not state.question.strip():
        return None
    data = state.answer.data if state.answer is not None else None
    sql = (data.sql if data else None) or ""
    questions = [m.content or "" for m in state.messages if m.role == "user"]
    previous = questions[-2] if len(questions) >= 2 else ""
    return EpisodeIn(thread_id=thread_id, user_id=user_id, turn_index=turn_index, question=state.question,
                     sql=sql, answer=(data.text if data else "")[:ANSWER_CHARS], topics=topics_of(sql),
                     context=previous)


def episodes_from_messages(messages: list[Message], *, thread_id: str, user_id: str,
                           first_turn_index: int) -> list[EpisodeIn]:
    """One episode per user message: its question, the SQL the turn rested on, the final answer."""
    episodes: list[EpisodeIn] = []
    turn: dict | None = None
    previous = ""
    for message in [*messages, Message(role="user", content=None)]:  # a sentinel closes the last turn
        if message.role == "user":
            if turn is not None:
                episodes.append(EpisodeIn(thread_id=thread_id, user_id=user_id, **turn, topics=topics_of(turn["sql"])))
                previous = turn["question"]
            turn = {"turn_index": first_turn_index + len(episodes), "question": message.content or "",
                    "sql": "", "answer": "", "context": previous}
        elif turn is not None and message.role == "assistant":
            for call in message.tool_calls or []:
                args = _json(call.function.arguments)
                if call.function.name == "run_sql" and args.get("sql"):
                    turn["sql"] = str(args["sql"])
                elif call.function.name == "answer":
                    turn["answer"] = str(args.get("text", ""))[:ANSWER_CHARS]
                    turn["sql"] = str(args.get("sql") or turn["sql"])
            if not message.tool_calls and message.content:
                turn["answer"] = message.content[:ANSWER_CHARS]
    return [e for e in episodes if e.question.strip()]


def topics_of(sql: str) -> list[str]:
    """The tables a query reads, as the episode's topics."""
    return sorted({name.lower() for name in _TABLES.findall(sql or "")})


def _json(text: str) -> dict:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
