"""AskDB: the one core object the web app and the CLI both build from Settings."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from agent.analyst_sql import run_analyst_sql
from agent.examples import ExampleRetriever, database_key
from agent.llm import ChatModel
from agent.loop import TurnEvent, TurnSetup, run_turn
from agent.memory.hooks import Memory, after_turn, archive_hook, index_conversation
from agent.memory.recall_config import RecallConfig
from agent.recovery import close_interrupted_turn
from agent.sources.base import DataSource
from agent.sources.errors import SourceError
from agent.sources.factory import open_source
from agent.sources.schema_search import SchemaOptions
from agent.state import AgentState, Message, Step
from app.quotas import UserSlots
from app.settings import Settings
from app.turns import RunningTurn, TurnInProgress, TurnRegistry
from storage.base import Store, open_store
from storage.conversations import Conversation
from storage.leases import new_owner


class BadQuestion(ValueError):
    """A question that is empty or longer than the configured limit."""


class AskDB:
    """Holds the settings and the store; opens the analytics database and the model on demand."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.store: Store[AgentState] = open_store(settings.store, AgentState)
        self.store.max_result_bytes = settings.max_result_bytes
        self.store.max_conversation_result_bytes = settings.max_conversation_result_bytes
        self.turns = TurnRegistry()
        self.slots = UserSlots(settings.max_running_per_user if settings.auth != "none" else None)
        self._openai_model: ChatModel | None = None
        self._model_lock = threading.Lock()
        self._database: DataSource | None = None
        self.examples_store = self.store.examples()
        self._embedder_built, self._embedder = False, None
        self._memory: Memory | None = None
        # Remembering that runs after an answer, by user: a user's next turn waits for it, so it
        # sees what the previous one taught (and the model is never asked two things at once).
        self._background: dict[str, list[threading.Thread]] = {}
        # A lease outlives the longest silent wait of a turn: every model retry timing out.
        lease_seconds = settings.llm_timeout * (settings.llm_max_retries + 1) + 60
        self.leases = self.store.leases(seconds=lease_seconds)

    def recover(self) -> int:
        """Close the turns that a stopped process left unanswered; return how many."""
        closed = 0
        for thread_id, user_id in self.store.threads_awaiting_answer():
            if not self.leases.is_held(thread_id):
                closed += close_interrupted_turn(self.store, thread_id, user_id=user_id)
        return closed

    def database(self) -> DataSource:
        """The analytics database, built once: a PostgreSQL one keeps its connection pool."""
        if self._database is None:
            s = self.settings
            self._database = open_source(s.database, time_limit_s=s.sql_timeout, max_rows=s.sql_max_rows,
                                                     max_cell_bytes=s.sql_max_cell_bytes, limits=s.query_limits())
        return self._database

    def model(self, database: DataSource) -> ChatModel:
        """The chat model. The OpenAI-compatible one is built once: its client keeps connections,
        and in `auto` tool mode it remembers an endpoint that refuses tools."""
        s = self.settings
        if s.llm == "offline":
            from agent.offline_planner import OfflinePlanner

            return OfflinePlanner(database, embedder=self.embedder())
        with self._model_lock:
            if self._openai_model is None:
                from agent.openai_model import OpenAIChatModel

                self._openai_model = OpenAIChatModel(
                    base_url=s.openai_base_url, api_key=s.openai_api_key, model=s.model, timeout_s=s.llm_timeout,
                    max_retries=s.llm_max_retries, tool_mode=s.tool_mode, max_output_tokens=s.max_output_tokens)
            return self._openai_model

    def ask(self, question: str, *, user_id: str, thread_id: str | None = None) -> Iterator[TurnEvent]:
        """Run one turn here and now, yielding its events as they happen (the CLI's path).

        Raises:
            BadQuestion, ConversationNotFound, TurnInProgress.
        """
        thread_id, owner = self._claim(question, user_id=user_id, thread_id=thread_id)
        yield from self._run(question, user_id=user_id, thread_id=thread_id, owner=owner)

    def start_turn(self, question: str, *, user_id: str, thread_id: str | None = None) -> RunningTurn:
        """Start a turn in the background and return it to follow (the web's path).

        Raises:
            BadQuestion, ConversationNotFound, TurnInProgress, TooManyRequests.
        """
        self.slots.acquire(user_id)  # released when the turn ends
        try:
            thread_id, owner = self._claim(question, user_id=user_id, thread_id=thread_id)
        except Exception:
            self.slots.release(user_id)
            raise
        try:
            return self.turns.start(thread_id, lambda turn: self._holding_slot(user_id, self._run(
                question, user_id=user_id, thread_id=thread_id, owner=owner, background=True,
                stop_requested=turn.stop.is_set)))
        except TurnInProgress:
            self.leases.release(thread_id, owner)
            self.slots.release(user_id)
            raise

    def _holding_slot(self, user_id: str, events: Iterator[TurnEvent]) -> Iterator[TurnEvent]:
        try:
            yield from events
        finally:
            self.slots.release(user_id)

    def _claim(self, question: str, *, user_id: str, thread_id: str | None) -> tuple[str, str]:
        """Check the question, find or create the conversation, and take its turn lease."""
        self.check_question(question)
        if thread_id is None:
            thread_id = self.store.create(user_id=user_id, state=AgentState(max_steps=self.settings.max_steps),
                                          title=question).thread_id
        else:
            self.store.get(thread_id, user_id=user_id)
        owner = new_owner()
        if self.leases.acquire(thread_id, owner) is not None:
            raise TurnInProgress(thread_id)
        return thread_id, owner

    def run_analyst_sql(self, thread_id: str, *, user_id: str, sql: str) -> int:
        """Run the analyst's edited SQL in the conversation, as a turn of its own; return its index.

        Raises:
            TurnInProgress, SQLRejected, SourceError (nothing written), ConversationNotFound.
        """
        self.store.get(thread_id, user_id=user_id)
        owner = new_owner()
        if self.leases.acquire(thread_id, owner) is not None:
            raise TurnInProgress(thread_id)
        try:
            return run_analyst_sql(self.store, self.database(), thread_id=thread_id, user_id=user_id, sql=sql)
        finally:
            self.leases.release(thread_id, owner)

    def stop_turn(self, thread_id: str, *, user_id: str) -> bool:
        """Ask the conversation's running turn to stop after its current step; False when none runs here.

        Raises:
            ConversationNotFound: not this user's conversation.
        """
        self.store.get(thread_id, user_id=user_id)
        running = self.turns.get(thread_id)
        if running is None:
            return False
        running.stop.set()
        return True

    def _run(self, question: str, *, user_id: str, thread_id: str, owner: str, background: bool = False,
             stop_requested: Callable[[], bool] = lambda: False) -> Iterator[TurnEvent]:
        memory = turn_index = None
        for worker in self._background.get(user_id, []):
            worker.join(timeout=30)
        try:
            close_interrupted_turn(self.store, thread_id, user_id=user_id)
            database = self.database()
            model, memory = self.model(database), self.memory
            setup = TurnSetup(store=self.store, database=database, model=model,
                              max_steps=self.settings.max_steps, memory=self.settings.memory_config(),
                              schema=self.schema_options(), examples=self.examples(database), recall=memory,
                              stop_requested=stop_requested)
            if memory is not None:
                setup.on_archive = archive_hook(memory, archived_questions=lambda t: self.store.archive(Message)
                                                .stats(t).user_messages)
            for event in run_turn(setup, user_id=user_id, question=question, thread_id=thread_id):
                self.leases.renew(thread_id, owner)
                turn_index = event.turn_index if event.type == "start" else turn_index
                yield event
        finally:
            self.leases.release(thread_id, owner)
        if memory is not None and turn_index is not None:
            remember = lambda: self._remember(thread_id, user_id=user_id, turn_index=turn_index,  # noqa: E731
                                              model=model)
            # Remembering never slows the answer: on the web it runs after the turn, in the background.
            if background:
                worker = threading.Thread(target=remember, name=f"remember-{thread_id}", daemon=True)
                worker.start()  # before it is listed: a listed thread may be joined at once
                with self._model_lock:
                    pending = [t for t in self._background.get(user_id, []) if t.is_alive()]
                    self._background[user_id] = pending + [worker]
            else:
                remember()

    def follow(self, thread_id: str, *, user_id: str, after_step: int = -1,
               poll_s: float = 0.3) -> AsyncIterator[TurnEvent | None]:
        """The events of the conversation's running turn after `after_step`; None is a heartbeat.

        A turn running in this process is followed directly; one running in another process
        (several workers on one store) is followed through the steps it stores, until its
        lease is released. Nothing when no turn runs. A follower holds no thread while it
        waits: only the store reads run in one, briefly.

        Raises:
            ConversationNotFound: at once, before any event is produced.
        """
        self.store.get(thread_id, user_id=user_id)
        return self._follow(thread_id, user_id=user_id, after_step=after_step, poll_s=poll_s)

    async def _follow(self, thread_id: str, *, user_id: str, after_step: int,
                      poll_s: float) -> AsyncIterator[TurnEvent | None]:
        running = self.turns.get(thread_id)
        if running is not None:
            async for event in running.follow():
                if event is None or not (event.step and event.step.step_index <= after_step):
                    yield event
            return
        seen_id = 0
        while True:
            held, steps = await asyncio.to_thread(
                lambda: (self.leases.is_held(thread_id), self.store.steps(thread_id, user_id=user_id, after_id=seen_id)))
            for stored in steps:
                seen_id = stored.id
                step = Step.model_validate(stored.data)
                if step.step_index > after_step:
                    yield TurnEvent(type="step", thread_id=thread_id, turn_index=step.turn_index, step=step)
            if not held:
                return
            yield None
            await asyncio.sleep(poll_s)

    @property
    def memory(self) -> Memory | None:
        """Episodes and user memories in the store (issue 6, either backend), built on first use;
        None when both recall and user memory are off."""
        s = self.settings
        if not (s.memory_recall_top_k or s.memory_user_memory):
            return None
        embedder = self.embedder()
        with self._model_lock:
            if self._memory is None:
                self._memory = Memory.open(self.store, RecallConfig.from_settings(s), embedder=embedder)
        return self._memory

    def _remember(self, thread_id: str, *, user_id: str, turn_index: int, model: ChatModel) -> None:
        """Index the finished turn as an episode and extract the user's memories from it."""
        memory = self.memory
        if memory is not None:
            state = self.store.load(thread_id, user_id=user_id).state
            after_turn(memory, state=state, thread_id=thread_id, user_id=user_id, turn_index=turn_index, model=model)

    def import_conversation(self, document: Any, *, user_id: str) -> Conversation:
        """Add an exported conversation (`Store.export_conversation`) as a new one of `user_id`,
        its turns indexed for recall when memory is on. No memories are extracted from it: its
        questions may be another user's words.

        Raises:
            InvalidExport: `document` is not a valid export; nothing was written.
        """
        created = self.store.import_conversation(document, user_id=user_id, step_model=Step, message_model=Message)
        memory = self.memory
        if memory is not None:
            messages = [*self.store.archive(Message).messages(created.thread_id, user_id=user_id),
                        *self.store.load(created.thread_id, user_id=user_id).state.messages]
            index_conversation(memory, thread_id=created.thread_id, user_id=user_id, messages=messages)
        return created

    def embedder(self):
        """The embedder of MEMORY_EMBEDDER (None: keywords only), built on first use."""
        with self._model_lock:
            if not self._embedder_built:
                self._embedder = RecallConfig.from_settings(self.settings).build_embedder()
                self._embedder_built = True
        return self._embedder

    def schema_options(self) -> SchemaOptions:
        s = self.settings
        return SchemaOptions(max_tables=s.schema_max_tables, token_budget=s.schema_token_budget, top_k=s.schema_top_k,
                             embedder=self.embedder() if s.schema_embeddings else None, check_columns=s.column_check)

    def examples(self, database: DataSource) -> ExampleRetriever | None:
        """The verified examples of `database`; None when its schema cannot be read (the turn then
        meets the failure in its tools, as usual)."""
        try:
            key = database_key(database)
        except SourceError:
            return None
        embedder = self.embedder() if self.settings.examples_top_k else None
        return ExampleRetriever(self.examples_store, key, embedder=embedder, top_k=self.settings.examples_top_k)

    def check_question(self, question: str) -> str:
        if not question or not question.strip():
            raise BadQuestion("the question is empty")
        if any("\ud800" <= c <= "\udfff" for c in question):
            # A JSON "\ud800" escape with no pair: no text encoding can store it.
            raise BadQuestion("the question contains a lone surrogate (an invalid \\uD800-\\uDFFF escape); "
                              "send valid Unicode text")
        if len(question) > self.settings.max_question_chars:
            raise BadQuestion(f"the question has {len(question)} characters; the limit is "
                              f"{self.settings.max_question_chars} (ASKDB_MAX_QUESTION_CHARS)")
        return question

    def close(self) -> None:
        """Let background remembering finish (briefly), then close the store and the database."""
        for workers in list(self._background.values()):
            for worker in workers:
                worker.join(timeout=10)
        self.store.close()
        if self._database is not None:
            self._database.close()
