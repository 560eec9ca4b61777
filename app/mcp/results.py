"""What the MCP tools return: one typed model per tool, so a client reads a schema, not prose.

Each becomes the tool's `outputSchema` and its `structuredContent` (the SDK also sends it as JSON
text for clients that read only text). Rows are capped at `MAX_ROWS`, always with the total and a
`truncated` flag; the conversation's page has them all.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from agent.sources.schema_search import RankedTable
from agent.state import Confidence
from app.schemas import ConversationPublic

#: Rows a tool result carries at most: a page of the conversation page (app/views.py PAGE_ROWS).
MAX_ROWS = 50


class Rows(BaseModel):
    """A query's result: its columns and first rows."""

    columns: list[str] = Field(default_factory=list)
    rows: list[list[Any]] = Field(default_factory=list, description=f"The first {MAX_ROWS} rows at most.")
    row_count: int = Field(0, description="Rows the query returned (up to ASKDB_SQL_MAX_ROWS).")
    truncated: bool = Field(False, description="More rows exist than are shown here: the page has them, "
                                               "or the query hit the row limit.")

    @classmethod
    def first(cls, columns: list[str], rows: list[list[Any]], *, row_count: int, truncated: bool) -> Rows:
        shown = rows[:MAX_ROWS]
        return cls(columns=columns, rows=shown, row_count=row_count, truncated=truncated or row_count > len(shown))


class AskResult(Rows):
    """One askdb turn: the answer, whether askdb stands behind it, the SQL and the rows it rests on."""

    answer: str = Field(description="The answer, in the question's language.")
    ok: bool = Field(description="False when askdb doubts the answer; `caveat` says why.")
    confidence: Confidence = Field(description="`answered` (ok), `partly_answered` (not ok, but a query's "
                                               "result is given; `caveat` says what it leaves out) or "
                                               "`not_answered` (no query result).")
    caveat: str | None = None
    sql: str | None = Field(None, description="The query the answer rests on.")
    conversation_id: str = Field(description="Pass it to `ask` again for a follow-up question.")
    turn: int = Field(description="The turn's number in the conversation, from 0 (for `feedback`).")
    url: str = Field(description="The conversation's page in askdb, to open in a browser.")
    answered_by: str | None = Field(None, description="The model that answered, or `offline planner`.")
    note: str | None = Field(None, description="Said when the offline planner answered: no model is configured.")


class QueryResult(Rows):
    """One read-only query, through the guard and limits of askdb's SQL page."""

    sql: str
    source: str


class SourceInfo(BaseModel):
    name: str = Field(description="Pass it as `source`.")
    label: str
    description: str = ""
    engine: str = Field(description="SQLite, PostgreSQL, MySQL or DuckDB: the SQL dialect to write.")
    default: bool = Field(description="The source used when none is named.")


class SourceList(BaseModel):
    data: list[SourceInfo]
    count: int


class ColumnInfo(BaseModel):
    name: str
    type: str
    primary_key: bool = False
    not_null: bool = False
    samples: list[str] = Field(default_factory=list, description="Frequent text values, for WHERE clauses.")


class ForeignKeyInfo(BaseModel):
    column: str
    ref_table: str
    ref_column: str | None


class TableInfo(BaseModel):
    name: str
    rows: int
    columns: list[ColumnInfo]
    foreign_keys: list[ForeignKeyInfo] = Field(default_factory=list)


class SchemaDescription(BaseModel):
    """Tables with their columns, types, keys and sample values (the page's schema panel)."""

    source: str
    engine: str
    tables: list[TableInfo]
    table_count: int = Field(description="Tables in the source; more than are listed: use `search_schema`.")


class SchemaMatches(BaseModel):
    """The tables most relevant to a text, best first (the retrieval askdb's own agent uses)."""

    source: str
    data: list[RankedTable]


class ConversationList(BaseModel):
    data: list[ConversationPublic]
    count: int = Field(description="Conversations matching, more than listed when over 50.")


class TurnSummary(Rows):
    turn: int
    question: str
    answer: str | None = Field(None, description="None while the turn is still running.")
    ok: bool | None = None
    confidence: Confidence | None = Field(None, description="As `ask` says it; None while the turn is still "
                                                            "running.")
    caveat: str | None = Field(None, description="Partly answered: what the result leaves out of the question.")
    sql: str | None = None
    answered_by: str | None = None


class ConversationDetail(BaseModel):
    conversation: ConversationPublic
    url: str
    running: bool = Field(description="A turn is being answered right now.")
    turns: list[TurnSummary]


class RecalledTurn(BaseModel):
    conversation_id: str
    turn: int
    date: str
    question: str
    sql: str | None
    answer: str | None
    score: float


class RememberedFact(BaseModel):
    id: str
    type: str
    text: str
    score: float


class RecallResult(BaseModel):
    """Earlier turns of all the user's conversations, and what askdb remembers about the user."""

    turns: list[RecalledTurn]
    memories: list[RememberedFact]
    ranking: str = Field(description="How the turns were ranked: hybrid, vector or keyword.")
