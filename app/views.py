"""Typed contexts for the pages: what each template receives, built from the store."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import sqlglot
from pydantic import BaseModel

from agent.examples import corrected_turn
from agent.memory.hooks import NOTE_ACTION
from agent.planner.answer_text import column_head
from agent.planner.followup import leans_on_previous
from agent.planner.lexicon import GENERIC, Lexicon
from agent.planner.words import human_header
from agent.state import AgentState, Confidence, Message, Step, confidence_of
from app.charts import ChartSpec, suggest_chart
from storage.conversations import Conversation, ConversationStore
from storage.steps import StoredResult
from storage.text import has_cjk
from storage.errors import ResultNotFound

PAGE_ROWS = 50


def format_sql(sql: str | None, dialect: str = "sqlite") -> str:
    """The SQL laid out for reading, in the analytics database's dialect (display only; what ran
    is kept as written)."""
    if not sql:
        return ""
    try:
        return sqlglot.transpile(sql, read=dialect, write=dialect, pretty=True)[0]
    except Exception:  # any parse problem: show it as written
        return sql


def file_stem(title: str | None, turn_index: int) -> str:
    """A download's name: the conversation title's words joined by hyphens (any script kept) and
    the turn, e.g. "payload-mass-by-orbit-turn-2"."""
    stem = re.sub(r"[^\w]+", "-", (title or "").lower()).strip("-")[:60].strip("-") or "askdb"
    return f"{stem}-turn-{turn_index + 1}"


class ResultOptions(BaseModel):
    """How a stored result is shown: its page, and the column the whole result is sorted by."""

    page: int = 1
    sort: str | None = None
    descending: bool = False

    def query(self) -> str:
        """These options as URL parameters for the pager (the page left out), "" when unsorted."""
        if not self.sort:
            return ""
        return f"sort={quote(self.sort)}&order={'desc' if self.descending else 'asc'}&"


def sort_order(rows: list[list[Any]], index: int, *, descending: bool) -> list[int]:
    """The rows' positions ordered by one column: numbers by value, text by text, NULLs last either way."""
    def key(value: Any) -> tuple:
        return (isinstance(value, str), value) if isinstance(value, (int, float, str)) else (True, str(value))

    present = sorted((i for i, r in enumerate(rows) if r[index] is not None), key=lambda i: key(rows[i][index]),
                     reverse=descending)
    return present + [i for i, r in enumerate(rows) if r[index] is None]


class ResultView(BaseModel):
    result_id: int | None
    sql: str
    columns: list[str]
    headers: list[str]  # the columns as an analyst reads them (sum_mass_kg: "Sum mass (kg)")
    numeric: list[bool]  # columns holding only numbers (and NULLs): aligned right
    rows: list[list[Any]]
    row_ids: list[int] = []  # each shown row's position in the result (the chart's points name them)
    row_count: int
    truncated: bool
    page: int
    pages: int
    first_row: int
    chart: ChartSpec | None
    csv_url: str | None
    json_url: str | None = None
    chart_key: str | None = None  # the chosen chart type is remembered under this key
    file_stem: str = "askdb-result"
    options: ResultOptions = ResultOptions()

    @classmethod
    def of(cls, result: Any, *, options: ResultOptions | None = None, csv_url: str | None = None,
           json_url: str | None = None, chart_key: str | None = None, file_stem: str = "askdb-result",
           head: Callable[[str], str] = human_header) -> ResultView:
        """The page's view of a stored result; `head` names its columns (in the answer's language)."""
        options = options or ResultOptions()
        rows = result.rows
        order = list(range(len(rows)))
        if options.sort in result.columns:  # the whole stored result, not just the page shown
            order = sort_order(rows, result.columns.index(options.sort), descending=options.descending)
        else:
            options = ResultOptions(page=options.page)
        pages = max(1, -(-len(rows) // PAGE_ROWS))
        page = min(max(1, options.page), pages)
        start = (page - 1) * PAGE_ROWS
        shown = order[start: start + PAGE_ROWS]
        return cls(result_id=getattr(result, "result_id", None), sql=result.sql, columns=result.columns,
                   headers=[head(c) for c in result.columns], options=options,
                   numeric=[all(isinstance(r[i], (int, float)) for r in rows if r[i] is not None) and
                            any(r[i] is not None for r in rows) for i in range(len(result.columns))],
                   rows=[rows[i] for i in shown], row_ids=shown, row_count=result.row_count,
                   truncated=result.truncated, page=page, pages=pages, first_row=start + 1,
                   chart=suggest_chart(result.columns, result.rows, head=head), csv_url=csv_url, json_url=json_url,
                   chart_key=chart_key, file_stem=file_stem)


class AnswerView(BaseModel):
    text: str
    ok: bool
    confidence: Confidence = "not_answered"
    caveat: str | None = None  # partly answered: what the result leaves out of the question
    note: bool = False  # the turn only stated things for memory: acknowledged, nothing to check
    sql: str
    model: str | None
    result: ResultView | None
    stopped: bool = False

    @property
    def rest(self) -> str:
        """The text after its caveat, which the page says first, on its own (issue 38)."""
        if self.caveat and self.text.startswith(self.caveat):
            return self.text[len(self.caveat):].lstrip()
        return self.text


class ContextView(BaseModel):
    """What the turn's last model call was sent, against the whole history."""

    tokens_sent: int
    history_tokens: int
    tiers: list[str]
    messages_full: int
    messages_condensed: int
    messages_omitted: int
    calls: int

    @property
    def share(self) -> int:
        return round(100 * self.tokens_sent / self.history_tokens) if self.history_tokens else 100


class TurnView(BaseModel):
    index: int
    question: str
    corrects: str | None = None  # an edited re-run: the question of the turn it corrects
    #: The question builds on the previous answer ("按运载火箭分呢？"): its words are no title for a chart.
    follows: bool = False
    asked_at: str
    steps: list[Step]
    answer: AnswerView | None
    tokens: int
    running: bool
    context: ContextView | None = None


class ConversationView(BaseModel):
    conversation: Conversation
    turns: list[TurnView]
    running: bool
    last_step_index: int
    models: list[str]


def conversation_view(store: ConversationStore[AgentState], conversation: Conversation, state: AgentState, *,
                      user_id: str, running: bool, result_options: dict[int, ResultOptions],
                      dialect: str = "sqlite", lexicon: Lexicon = GENERIC) -> ConversationView:
    """Group the conversation into turns: each question, its steps, and the answer that ended it. A result's
    columns are named in its question's language (`lexicon`: the source's own words)."""
    stored = store.steps(conversation.thread_id, user_id=user_id)
    steps = [Step.model_validate(s.data) for s in stored]
    # Archived questions first: turn numbers (steps' turn_index) count them.
    archived = store.archive(Message).messages(conversation.thread_id, user_id=user_id, role="user")
    questions = archived + [m for m in state.messages if m.role == "user"]
    answers = {s.turn_index: s for s in steps if s.step_type == "answer"}
    turns = []
    for index, question in enumerate(questions):
        turn_steps = [s for s in steps if s.turn_index == index]
        final = next((s for s in reversed(turn_steps) if s.step_type in ("answer", "error")), None)
        asked = corrected_turn(answers, index)
        turns.append(TurnView(
            index=index, question=question.content or "", asked_at=question.timestamp, steps=turn_steps,
            corrects=(questions[asked].content or "") if asked != index else None,
            follows=index > 0 and leans_on_previous(question.content or ""),
            answer=_answer_view(store, conversation, final, user_id=user_id, dialect=dialect,
                                options=result_options.get(final.result_id) if final and final.result_id else None,
                                head=functools.partial(column_head, zh=has_cjk(question.content or ""),
                                                       lexicon=lexicon)),
            tokens=sum((s.tokens or {}).get("total_tokens", 0) for s in turn_steps),
            running=running and index == len(questions) - 1, context=_context_view(turn_steps),
        ))
    return ConversationView(conversation=conversation, turns=turns, running=running,
                            last_step_index=steps[-1].step_index if steps else -1,
                            models=sorted({s.model for s in steps if s.model}))


def _context_view(steps: list[Step]) -> ContextView | None:
    reports = [s.context for s in steps if s.context]
    if not reports:
        return None
    last = reports[-1]
    return ContextView(tokens_sent=last.get("tokens_sent", 0), history_tokens=last.get("history_tokens", 0),
                       tiers=last.get("tiers", []), messages_full=last.get("messages_full", 0),
                       messages_condensed=last.get("messages_condensed", 0),
                       messages_omitted=last.get("messages_omitted", 0), calls=len(reports))


def _answer_view(store: ConversationStore[AgentState], conversation: Conversation, final: Step | None, *,
                 user_id: str, options: ResultOptions | None, dialect: str = "sqlite",
                 head: Callable[[str], str] = human_header) -> AnswerView | None:
    if final is None:
        return None
    thread_id = conversation.thread_id
    result: StoredResult | None = None
    if final.result_id is not None:
        try:
            result = store.load_result(thread_id, final.result_id, user_id=user_id)
        except ResultNotFound:
            result = None
    base = f"/c/{thread_id}/results/{final.result_id}"
    ok = bool(final.ok) and final.step_type == "answer"
    text = final.content or final.observation or ""
    confidence = confidence_of(ok=ok, sql=final.sql, has_result=final.result_id is not None) \
        if final.step_type == "answer" else "not_answered"
    return AnswerView(
        text=text, ok=ok, confidence=confidence, caveat=final.caveat if confidence == "partly_answered" else None,
        note=final.action == NOTE_ACTION,
        sql=format_sql(final.sql or (result.sql if result else None), dialect), model=final.model,
        result=ResultView.of(result, options=options, csv_url=base + ".csv", json_url=base + ".json",
                             chart_key=f"{thread_id}-{final.result_id}",
                             file_stem=file_stem(conversation.title, final.turn_index), head=head) if result else None,
        stopped=final.action == "stopped",
    )
