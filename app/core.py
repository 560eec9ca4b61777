"""AskDB: the one core object the web app and the CLI both build from Settings."""

from __future__ import annotations

from collections.abc import Iterator

from agent.database import AnalyticsDatabase
from agent.llm import ChatModel
from agent.loop import TurnEvent, TurnSetup, run_turn
from agent.state import AgentState
from app.settings import Settings
from app.turns import RunningTurn, TurnRegistry
from storage.conversations import ConversationStore, connect


class BadQuestion(ValueError):
    """A question that is empty or longer than the configured limit."""


class AskDB:
    """Holds the settings and the store; opens the analytics database and the model on demand."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.store: ConversationStore[AgentState] = ConversationStore(connect(settings.store), AgentState)
        self.turns = TurnRegistry()

    def database(self) -> AnalyticsDatabase:
        s = self.settings
        return AnalyticsDatabase(s.database, time_limit_s=s.sql_timeout, max_rows=s.sql_max_rows,
                                 max_cell_bytes=s.sql_max_cell_bytes)

    def model(self, database: AnalyticsDatabase) -> ChatModel:
        s = self.settings
        if s.llm == "offline":
            from agent.offline_planner import OfflinePlanner

            return OfflinePlanner(database)
        from agent.openai_model import OpenAIChatModel

        return OpenAIChatModel(base_url=s.openai_base_url, api_key=s.openai_api_key, model=s.model,
                               timeout_s=s.llm_timeout, max_retries=s.llm_max_retries, tool_mode=s.tool_mode)

    def ask(self, question: str, *, user_id: str, thread_id: str | None = None) -> Iterator[TurnEvent]:
        """Run one turn, yielding its events as they happen.

        Raises:
            BadQuestion: empty, or longer than ASKDB_MAX_QUESTION_CHARS.
        """
        self.check_question(question)
        database = self.database()
        setup = TurnSetup(store=self.store, database=database, model=self.model(database),
                          max_steps=self.settings.max_steps)
        yield from run_turn(setup, user_id=user_id, question=question, thread_id=thread_id)

    def start_turn(self, question: str, *, user_id: str, thread_id: str | None = None) -> RunningTurn:
        """Start a turn in the background (creating the conversation if needed) and return it to follow.

        Raises:
            BadQuestion, ConversationNotFound, TurnInProgress.
        """
        self.check_question(question)
        if thread_id is None:
            thread_id = self.store.create(user_id=user_id, state=AgentState(max_steps=self.settings.max_steps),
                                          title=question).thread_id
        else:
            self.store.get(thread_id, user_id=user_id)
        return self.turns.start(thread_id, lambda: self.ask(question, user_id=user_id, thread_id=thread_id))

    def check_question(self, question: str) -> str:
        if not question or not question.strip():
            raise BadQuestion("the question is empty")
        if len(question) > self.settings.max_question_chars:
            raise BadQuestion(f"the question has {len(question)} characters; the limit is "
                              f"{self.settings.max_question_chars} (ASKDB_MAX_QUESTION_CHARS)")
        return question

    def close(self) -> None:
        self.store.conn.close()
