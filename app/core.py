"""AskDB: the one core object the web app and the CLI both build from Settings.

It puts together the parts of the service (app/service/): turn leases renewed on a timer, the
models, memory and the remembering after each answer, and following a running turn. A turn is
claimed at once (the question checked, the conversation loaded or created, its lease taken and the
question saved: one transaction, `agent.turn_recorder`), then run here (the CLI) or in the
background (the web).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from agent.analyst_sql import run_analyst_sql
from agent.models.answer_draft import DraftCallback
from agent.examples import ExampleRetriever, database_key
from agent.models.llm import ChatModel
from agent.loop import TurnEvent, TurnSetup, run_turn
from agent.memory.hooks import Memory, archive_hook, index_conversation
from agent.recovery import close_interrupted_turn
from agent.sources.base import DataSource
from agent.sources.errors import SourceError
from agent.sources.schema_search import SchemaOptions
from agent.state import DEFAULT_SOURCE, AgentState, Message, Step
from agent.turn_recorder import TurnRecorder
from app.quotas import UserSlots
from app.service.following import follow_turn
from app.service.leases import LeaseKeeper, TurnLease
from app.service.models import Models
from app.service.remembering import Remembering
from app.settings import Settings
from app.sources import Sources, SourceMismatch
from app.turns import RunningTurn, TurnInProgress, TurnRegistry
from storage.base import Store, open_store
from storage.conversations import Conversation
from storage.errors import AskdbError, ConversationNotFound


class BadQuestion(AskdbError, ValueError):
    """A question that is empty or longer than the configured limit."""


class AskDB:
    """Holds the settings and the store; opens the data sources and the model on demand."""

    def __init__(self, settings: Settings, *, models: Models | None = None):
        """Args:
            models: the chat model and what was learnt of it, shared by a harness that builds an AskDB
                per question (`app.eval.harness`); None: built from `settings`.
        """
        self.settings = settings
        self.store: Store[AgentState] = open_store(settings.store, AgentState)
        self.store.max_result_bytes = settings.max_result_bytes
        self.store.max_conversation_result_bytes = settings.max_conversation_result_bytes
        self.turns = TurnRegistry()
        self.slots = UserSlots(settings.max_running_per_user if settings.auth != "none" else None)
        self.models = models if models is not None else Models(settings)
        self.sources = Sources(settings)  # a bad ASKDB_SOURCES file is refused here, at start-up
        self.examples_store = self.store.examples()
        self.remembering = Remembering(self.store, settings, embedder=self.models.embedder)
        # A lease outlives the longest silent wait of a turn: every model retry timing out.
        lease_seconds = settings.llm_timeout * (settings.llm_max_retries + 1) + 60
        self.leases = self.store.leases(seconds=lease_seconds)
        self.lease_keeper = LeaseKeeper(self.leases, seconds=lease_seconds)

    def recover(self) -> int:
        """Close the turns that a stopped process left unanswered; return how many."""
        closed = 0
        for thread_id, user_id in self.store.threads_awaiting_answer():
            lease = self.lease_keeper.hold(busy=lambda t: self.turns.get(t) is not None)
            try:
                # The lease is taken in the transaction that closes the turn: a turn another server begins
                # meanwhile is either seen holding it, or waits for this to commit (PostgreSQL's row lock,
                # SQLite's one writer) and then closes nothing of this.
                with self.store.transaction():
                    lease.take(thread_id)
                    closed += close_interrupted_turn(self.store, thread_id, user_id=user_id)
            except (TurnInProgress, ConversationNotFound):
                continue  # a live turn holds it, or it was deleted since it was listed
            finally:
                lease.release()
        return closed

    def database(self, source: str | None = None, *, user_id: str | None = None) -> DataSource:
        """The data source named `source` (None: the default); `uploads` is `user_id`'s own tables
        (`Sources.open`).

        Raises:
            UnknownSource: no source of that name.
        """
        return self.sources.open(source, user_id=user_id)

    def conversation_source(self, thread_id: str, *, user_id: str) -> str:
        """The name of the source conversation `thread_id` is bound to.

        Raises:
            ConversationNotFound: not this user's conversation.
        """
        return self.store.load(thread_id, user_id=user_id).state.source

    def _bind(self, source: str | None, *, user_id: str, thread_id: str | None) -> str:
        """The source of the turn: chosen for a new conversation; a follow-up keeps its conversation's,
        and naming another is refused before anything is written."""
        if thread_id is None:
            return self.sources.choose(source, user_id=user_id)
        if source is None:
            return DEFAULT_SOURCE  # unused: the conversation's state already names its source
        bound = self.conversation_source(thread_id, user_id=user_id)
        if bound != source:
            raise SourceMismatch(f"conversation {thread_id} is bound to the source {bound!r}; a follow-up cannot "
                                 f"ask {source!r} (start a new conversation on it)")
        return bound

    def model(self, database: DataSource, *, source: str | None = None) -> ChatModel:
        """The chat model (`Models.chat`) for `database`, the source named `source` (None: the default)."""
        return self.models.chat(database, vocabulary=self.sources.vocabulary(source))

    def ask(self, question: str, *, user_id: str, thread_id: str | None = None,
            source: str | None = None) -> Iterator[TurnEvent]:
        """Run one turn here and now, yielding its events as they happen (the CLI's path); a new
        conversation is bound to `source` (None: the default).

        Raises:
            BadQuestion, ConversationNotFound, TurnInProgress, UnknownSource, SourceMismatch.
        """
        source = self._bind(source, user_id=user_id, thread_id=thread_id)
        recorder, lease = self._claim(question, user_id=user_id, thread_id=thread_id, source=source)
        yield from self._run(recorder, lease, question=question, user_id=user_id)

    def start_turn(self, question: str, *, user_id: str, thread_id: str | None = None,
                   source: str | None = None) -> RunningTurn:
        """Start a turn in the background and return it to follow (the web's path); a new conversation
        is bound to `source` (None: the default).

        Raises:
            BadQuestion, ConversationNotFound, TurnInProgress, TooManyRequests, UnknownSource, SourceMismatch.
        """
        source = self._bind(source, user_id=user_id, thread_id=thread_id)
        self.slots.acquire(user_id)  # released when the turn ends
        try:
            # A turn still registered here refuses the claim before the question is saved (it would be
            # left unanswered), and after the conversation is found to be this user's (else a 404).
            recorder, lease = self._claim(question, user_id=user_id, thread_id=thread_id, source=source,
                                          busy=lambda t: self.turns.get(t) is not None)
        except Exception:
            self.slots.release(user_id)
            raise
        try:
            return self.turns.start(recorder.thread_id, lambda turn: self._holding_slot(user_id, self._run(
                recorder, lease, question=question, user_id=user_id, background=True,
                stop_requested=lambda: turn.stop.is_set() or lease.stop_requested(), on_draft=turn.publish_draft)))
        except TurnInProgress:  # the next turn closes this one's question as interrupted
            lease.release()
            self.slots.release(user_id)
            raise

    def _holding_slot(self, user_id: str, events: Iterator[TurnEvent]) -> Iterator[TurnEvent]:
        try:
            yield from events
        finally:
            self.slots.release(user_id)

    def _claim(self, question: str, *, user_id: str, thread_id: str | None, source: str = DEFAULT_SOURCE,
               busy: Callable[[str], bool] = lambda thread_id: False) -> tuple[TurnRecorder, TurnLease]:
        """Check the question, then in one transaction: find or create the conversation, take its turn
        lease, close a turn a killed process left, and save the question."""
        self.check_question(question)
        lease = self.lease_keeper.hold(busy=busy)
        recorder = TurnRecorder.begin(self.store, user_id=user_id, question=question, thread_id=thread_id,
                                      max_steps=self.settings.max_steps, hold=lease, source=source)
        return recorder, lease

    def run_analyst_sql(self, thread_id: str, *, user_id: str, sql: str, corrects: int | None = None) -> int:
        """Run the analyst's edited SQL in the conversation, as a turn of its own; return its index.
        `corrects`: the turn whose SQL was edited (a thumbs up keeps the SQL under its question).

        Raises:
            TurnInProgress, SQLRejected, SourceError (nothing written), ConversationNotFound.
        """
        database = self.sources.bound(self.conversation_source(thread_id, user_id=user_id), user_id=user_id)
        # As `start_turn`: a turn of this process still finishing after its lease was released refuses it.
        lease = self.lease_keeper.hold(busy=lambda t: self.turns.get(t) is not None)
        try:
            with self.store.transaction():  # a question a killed process left is closed first, as a turn does
                lease.take(thread_id)
                close_interrupted_turn(self.store, thread_id, user_id=user_id)
            return run_analyst_sql(self.store, database, thread_id=thread_id, user_id=user_id, sql=sql,
                                   corrects=corrects)
        finally:
            lease.release()

    def stop_turn(self, thread_id: str, *, user_id: str) -> bool:
        """Ask the conversation's running web turn to stop after its current step, here or on another
        server sharing the store (through its lease: that server reads it at the turn's next step);
        False when none runs. A CLI `ask` or an analyst's query runs to its end.

        Raises:
            ConversationNotFound: not this user's conversation.
        """
        self.store.get(thread_id, user_id=user_id)
        running = self.turns.get(thread_id)
        if running is not None:
            running.stop.set()
        # Through the store as well: this server's turn may be finishing while the next runs elsewhere.
        return self.leases.request_stop(thread_id) or running is not None

    def _run(self, recorder: TurnRecorder, lease: TurnLease, *, question: str, user_id: str,
             background: bool = False, stop_requested: Callable[[], bool] = lambda: False,
             on_draft: DraftCallback | None = None) -> Iterator[TurnEvent]:
        self.remembering.wait(user_id, timeout=30)
        try:
            database = self.sources.bound(recorder.state.source, user_id=user_id)
            model, memory = self.model(database, source=recorder.state.source), self.memory
            setup = TurnSetup(store=self.store, database=database, model=model, budget=self.models.budget,
                              vocabulary=self.sources.vocabulary(recorder.state.source),
                              max_steps=self.settings.max_steps, memory=self.settings.memory_config(),
                              schema=self.schema_options(), examples=self.examples(database), recall=memory,
                              stop_requested=stop_requested, on_draft=on_draft, strategy=self.settings.strategy,
                              candidates=self.settings.candidates)
            if memory is not None:
                setup.on_archive = archive_hook(memory, archived_questions=lambda t: self.store.archive(Message)
                                                .stats(t).user_messages)
            yield from run_turn(setup, user_id=user_id, question=question, thread_id=recorder.thread_id,
                                recorder=recorder)
        finally:
            if not recorder.finished:  # a finished turn released its lease with its final state
                lease.release()
        self.remembering.remember(recorder.state, thread_id=recorder.thread_id, user_id=user_id,
                                  turn_index=recorder.turn_index, model=model, background=background)

    def follow(self, thread_id: str, *, user_id: str, after_step: int = -1,
               poll_s: float = 0.3) -> AsyncIterator[TurnEvent | None]:
        """The events of the conversation's running turn after `after_step`; None is a heartbeat
        (`app.service.following.follow_turn`).

        Raises:
            ConversationNotFound: at once, before any event is produced.
        """
        self.store.get(thread_id, user_id=user_id)
        return follow_turn(self.turns, self.leases, self.store, thread_id, user_id=user_id, after_step=after_step,
                           poll_s=poll_s)

    @property
    def memory(self) -> Memory | None:
        """Episodes and user memories (`Remembering.memory`); None when both recall and user memory are off."""
        return self.remembering.memory

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
        return self.models.embedder()

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
        self.remembering.wait(timeout=10)
        self.lease_keeper.close()
        self.store.close()
        self.sources.close()
