"""What each MCP tool does, over the same core as the page and the API (app/core.py).

Every function takes who is asking (`Caller`) and the tool's arguments, calls what the matching
route calls, and returns a typed result (app/mcp/results.py). Domain errors are raised as the
routes raise them; app/mcp/server.py turns them into tool errors. Nothing here knows MCP.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio.to_thread

from agent.offline_planner import LABEL as OFFLINE_PLANNER
from agent.sources.base import DataSource
from agent.sources.schema_search import TableIndex
from agent.state import Step
from app.core import AskDB
from app.examples import FeedbackCreate, FeedbackPublic, give_verdict
from app.mcp.results import (
    AskResult, ColumnInfo, ConversationDetail, ConversationList, ForeignKeyInfo, QueryResult, RecalledTurn,
    RecallResult, RememberedFact, Rows, SchemaDescription, SchemaMatches, SourceInfo, SourceList, TableInfo,
    TurnSummary,
)
from app.schema_panel import SAMPLES_PER_COLUMN
from app.schemas import ConversationPublic
from app.views import conversation_view
from storage.errors import AskdbError

#: Tables `describe` lists without a table named; past it, `search_schema` finds the ones that matter.
MAX_TABLES = 100
LISTED = 50  # conversations `list_conversations` returns, newest first
RECALLED = 5  # earlier turns and memories `recall` returns
OFFLINE_NOTE = ("No model is configured (OPENAI_BASE_URL), so askdb's offline planner answered from the "
                "question's words and the schema; a model answers more kinds of questions.")


class ToolRefusal(AskdbError):
    """A tool's own refusal, said to the client with its reason (as a domain error is)."""


class TurnFailed(ToolRefusal):
    """The turn ended with an error (the model endpoint down or failing); its question and steps are saved."""


class MemoryOff(ToolRefusal):
    """Recall and user memory are both off: there is nothing remembered to search."""


@dataclass(frozen=True)
class Caller:
    """Who is asking (`user_id`), through which core, and where askdb's pages are (`site`, no trailing /)."""

    askdb: AskDB
    user_id: str
    site: str

    def page(self, thread_id: str) -> str:
        return f"{self.site}/c/{thread_id}"

    def source(self, name: str | None) -> tuple[str, DataSource]:
        """The data source `name` (None or "": the default), checked for this user as `?source=` is.

        Raises:
            UnknownSource: not configured, or `uploads` when the user has uploaded nothing.
        """
        chosen = self.askdb.sources.choose(name or None, user_id=self.user_id)
        return chosen, self.askdb.database(chosen, user_id=self.user_id)


StepCallback = Callable[[Step], Awaitable[None]]


async def ask(caller: Caller, question: str, *, conversation_id: str | None, source: str | None,
              on_step: StepCallback | None = None) -> AskResult:
    """One turn, started as `POST /api/chat` starts it (the user's slot, the same strategy, guard,
    checks and memory; saved as it runs) and followed to its answer.

    Raises:
        BadQuestion, ConversationNotFound, TurnInProgress, TooManyRequests, UnknownSource, SourceMismatch:
            refused before anything is written.
        TurnFailed: the turn ended with an error; the question and its steps are saved.
    """
    start = functools.partial(caller.askdb.start_turn, question, user_id=caller.user_id, thread_id=conversation_id,
                              source=source)
    turn = await anyio.to_thread.run_sync(start)
    answer = failure = None
    turn_index = 0
    async for event in turn.follow():
        if event is None:  # a heartbeat
            continue
        turn_index = event.turn_index
        if event.type == "step" and event.step is not None and on_step is not None:
            await on_step(event.step)
        elif event.type == "answer":
            answer = event.answer
        elif event.type == "error":
            failure = event.message
    url = caller.page(turn.thread_id)
    if failure is not None or answer is None:
        raise TurnFailed(f"{failure or 'the turn ended without an answer'} (the question is saved in conversation "
                         f"{turn.thread_id}: {url})")
    data = answer.data
    rows = Rows.first(data.columns, data.rows, row_count=data.row_count, truncated=data.truncated)
    offline = caller.askdb.settings.llm == "offline" and data.model == OFFLINE_PLANNER
    return AskResult(**rows.model_dump(), answer=data.text, ok=answer.ok, confidence=answer.confidence,
                     caveat=data.caveat, sql=data.sql, conversation_id=turn.thread_id, turn=turn_index, url=url,
                     answered_by=data.model, note=OFFLINE_NOTE if offline else None)


def run_sql(caller: Caller, sql: str, *, source: str | None) -> QueryResult:
    """One query through the guard and limits of the SQL page (`GET /sql`), holding one of the user's slots.

    Raises:
        SQLRejected, QueryFailed, QueryTimeout, QueryBusy, UnknownSource, TooManyRequests.
    """
    name, database = caller.source(source)
    with caller.askdb.slots.hold(caller.user_id):
        result = database.execute(sql)
    rows = Rows.first(result.columns, result.rows, row_count=result.row_count, truncated=result.truncated)
    return QueryResult(**rows.model_dump(), sql=result.sql, source=name)


def list_sources(caller: Caller) -> SourceList:
    """The sources the user may ask, as the new-conversation page offers them."""
    sources = caller.askdb.sources
    data = [SourceInfo(name=c.name, label=c.label, description=c.description, default=c.name == sources.default,
                       engine=caller.askdb.database(c.name, user_id=caller.user_id).engine)
            for c in sources.choices(user_id=caller.user_id)]
    return SourceList(data=data, count=len(data))


def describe(caller: Caller, *, source: str | None, table: str | None) -> SchemaDescription:
    """Tables (one, or all up to `MAX_TABLES`) with columns, types, keys and the sample values the
    schema panel shows, read from the catalogue the agent's list_tables ranks.

    Raises:
        UnknownSource, UnknownTable, SourceError (the schema cannot be read).
    """
    name, database = caller.source(source)
    schemas = [database.describe_table(table)] if table else database.catalogue()
    docs = {d.name: d for d in TableIndex.for_database(database).docs}
    tables = []
    for schema in schemas[:MAX_TABLES]:
        values = docs[schema.name].values if schema.name in docs else {}
        tables.append(TableInfo(
            name=schema.name, rows=schema.row_count,
            columns=[ColumnInfo(name=c.name, type=c.type, primary_key=c.primary_key, not_null=c.not_null,
                                samples=values.get(c.name, [])[:SAMPLES_PER_COLUMN]) for c in schema.columns],
            foreign_keys=[ForeignKeyInfo.model_validate(k.model_dump()) for k in schema.foreign_keys]))
    return SchemaDescription(source=name, engine=database.engine, tables=tables, table_count=len(schemas))


def search_schema(caller: Caller, text: str, *, source: str | None) -> SchemaMatches:
    """The tables most relevant to `text`, ranked as the agent's list_tables ranks a large schema."""
    name, database = caller.source(source)
    options = caller.askdb.schema_options()
    ranked = TableIndex.for_database(database, embedder=options.embedder).rank(text, k=options.top_k)
    return SchemaMatches(source=name, data=ranked)


def list_conversations(caller: Caller, *, query: str | None) -> ConversationList:
    """The user's conversations, newest first, as `GET /api/conversations` lists them."""
    page = caller.askdb.store.list(user_id=caller.user_id, search=query or None, limit=LISTED)
    return ConversationList(data=[ConversationPublic.of(c) for c in page.items], count=page.total)


def get_conversation(caller: Caller, conversation_id: str) -> ConversationDetail:
    """A conversation turn by turn, as its page groups it (`app.views.conversation_view`).

    Raises:
        ConversationNotFound: not this user's conversation.
    """
    askdb, user = caller.askdb, caller.user_id
    loaded = askdb.store.load(conversation_id, user_id=user)
    running = askdb.leases.is_held(conversation_id)
    dialect = askdb.sources.bound(loaded.state.source, user_id=user).dialect
    view = conversation_view(askdb.store, loaded.conversation, loaded.state, user_id=user, running=running,
                             result_options={}, dialect=dialect)
    turns = []
    for t in view.turns:
        summary = TurnSummary(turn=t.index, question=t.question)
        if t.answer is not None:
            result = t.answer.result
            rows = Rows.first(result.columns, result.rows, row_count=result.row_count,
                              truncated=result.truncated) if result else Rows()
            summary = TurnSummary(**rows.model_dump(), turn=t.index, question=t.question, answer=t.answer.text,
                                  ok=t.answer.ok, confidence=t.answer.confidence, caveat=t.answer.caveat,
                                  sql=t.answer.sql or None, answered_by=t.answer.model)
        turns.append(summary)
    return ConversationDetail(conversation=ConversationPublic.of(loaded.conversation), url=caller.page(conversation_id),
                              running=running, turns=turns)


def recall(caller: Caller, text: str) -> RecallResult:
    """The user's earlier turns (all conversations) and memories most relevant to `text`, once the
    remembering of the user's last answer has finished.

    Raises:
        MemoryOff: MEMORY_RECALL_TOP_K=0 and MEMORY_USER_MEMORY=false.
    """
    askdb, user = caller.askdb, caller.user_id
    memory = askdb.memory
    if memory is None:
        raise MemoryOff("memory is off here (MEMORY_RECALL_TOP_K=0 and MEMORY_USER_MEMORY=false): askdb keeps "
                        "no earlier turns or memories to search; use list_conversations instead")
    askdb.remembering.wait(user, timeout=30)
    found = memory.index.search(text, user_id=user, k=RECALLED)
    turns = [RecalledTurn(conversation_id=h.episode.thread_id, turn=h.episode.turn_index,
                          date=h.episode.created_at[:10], question=h.episode.question, sql=h.episode.sql or None,
                          answer=h.episode.answer or None, score=h.score) for h in found.hits]
    facts = memory.users.relevant(text, user_id=user, k=RECALLED) if askdb.settings.memory_user_memory else []
    memories = [RememberedFact(id=m.item.id, type=m.item.type, text=m.item.text, score=round(m.score, 4))
                for m in facts]
    return RecallResult(turns=turns, memories=memories, ranking=found.mode)


def feedback(caller: Caller, conversation_id: str, *, turn: int, rating: str, note: str,
             sql: str | None = None) -> FeedbackPublic:
    """The page's thumbs (`POST /api/conversations/{id}/feedback`): up keeps the turn's question and SQL
    as a verified example of its source; down with `sql` keeps the question with that SQL.

    Raises:
        ConversationNotFound, AnswerNotFound, FeedbackError, NothingToVerify, SQLDoesNotFit.
    """
    body = FeedbackCreate(rating=rating, note=note, turn=turn, sql=sql)
    return FeedbackPublic.of(give_verdict(caller.askdb, conversation_id, caller.user_id, body))
