"""Feedback and verified examples: thumbs up/down on answers, the /examples page, the JSON API.

Examples belong to the analytics database (everyone who asks about it shares them, and may
edit or remove them here); feedback belongs to the user who gave it (each sees only their
own, and deleting a conversation deletes its feedback). Everything works without
JavaScript: the forms post and redirect.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Body, File, Form, Query, Request, Response, UploadFile
from fastapi.responses import JSONResponse, RedirectResponse
from pydantic import BaseModel, Field, model_validator

from agent.examples import (
    CorrectionRefused, ExampleRetriever, ImportReport, confirm_example, database_key, edit_example, export_examples,
    import_examples, record_feedback, remove_example,
)
from agent.sources.base import DataSource
from app.auth import is_operator
from app.core import AskDB
from app.deps import AskDBDep, SourceDep, UserDep
from app.pages import conversation_page
from app.templating import templates
from storage.examples import Example, Feedback
from storage.validity import InvalidText, loads

router = APIRouter()
PER_PAGE = 50


def _examples(askdb: AskDB, source: str, user: str) -> tuple[ExampleRetriever, DataSource]:
    """The verified examples of the data source `source`, and the source."""
    database = askdb.database(source, user_id=user)
    retriever = ExampleRetriever(askdb.examples_store, database_key(database), embedder=askdb.embedder(),
                                 top_k=askdb.settings.examples_top_k)
    return retriever, database


# -- models -------------------------------------------------------------------------

class FeedbackCreate(BaseModel):
    rating: Literal["up", "down"]
    note: str = Field("", max_length=2000, description="Optional: what was right or wrong.")
    turn: int | None = Field(None, ge=0, description="The turn's number in the conversation, from 0.")
    result_id: int | None = Field(None, ge=1, description="Or the number of the result the answer rests on.")
    sql: str | None = Field(None, max_length=20_000, description=(
        "Optional, with rating down: the right SQL for the question. Checked by the guard and against the "
        "schema, then kept as a verified example of the question (a refusal keeps nothing, not even the "
        "verdict)."))

    @model_validator(mode="after")
    def _one_target(self) -> FeedbackCreate:
        if (self.turn is None) == (self.result_id is None):
            raise ValueError("give exactly one of turn and result_id")
        return self


class FeedbackPublic(BaseModel):
    id: int
    thread_id: str
    turn: int
    rating: str
    note: str
    question: str
    sql: str | None
    example_id: int | None = Field(description="The verified example an up-vote, or a down-vote's right SQL, "
                                               "made or updated.")
    updated_at: str

    @classmethod
    def of(cls, f: Feedback) -> FeedbackPublic:
        return cls(id=f.id, thread_id=f.thread_id, turn=f.turn_index, rating=f.rating, note=f.note,
                   question=f.question, sql=f.sql, example_id=f.example_id, updated_at=f.updated_at)


class FeedbackList(BaseModel):
    data: list[FeedbackPublic]
    count: int


class ExamplePublic(BaseModel):
    id: int
    question: str
    sql: str
    note: str
    source: str
    created_by: str
    edited_by: str | None = Field(None, description="The last user other than the author who changed it.")
    unconfirmed: bool = Field(False, description="Changed by someone other than its author and not yet "
                                                 "confirmed: not used as verified until its author or an "
                                                 "operator confirms it (POST .../confirm).")
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, e: Example) -> ExamplePublic:
        return cls.model_validate(e.model_dump())


class ExampleList(BaseModel):
    data: list[ExamplePublic]
    count: int
    database: str = Field(description="The key the examples are kept under: the database's label and schema hash.")


class ExampleUpdate(BaseModel):
    question: str | None = Field(None, min_length=1, max_length=4000)
    sql: str | None = Field(None, min_length=1, max_length=20_000)
    note: str | None = Field(None, max_length=2000)


def give_verdict(askdb: AskDB, thread_id: str, user: str, body: FeedbackCreate) -> Feedback:
    """Record a user's thumbs on one answer of their conversation: the page, the API and MCP's `feedback`."""
    retriever, database = _examples(askdb, askdb.conversation_source(thread_id, user_id=user), user)
    return record_feedback(askdb.store, retriever, database, thread_id=thread_id, user_id=user, rating=body.rating,
                           note=body.note.strip(), turn_index=body.turn, result_id=body.result_id,
                           right_sql=body.sql)


def _update(askdb: AskDB, source: str, user: str, example_id: int, body: ExampleUpdate) -> Example:
    retriever, database = _examples(askdb, source, user)
    return edit_example(retriever, database, example_id, user_id=user, operator=is_operator(askdb.settings, user),
                        question=body.question, sql=body.sql, note=body.note)


# -- JSON ---------------------------------------------------------------------------

@router.post("/api/conversations/{thread_id}/feedback", response_model=FeedbackPublic, status_code=201)
def give_feedback(thread_id: str, body: FeedbackCreate, askdb: AskDBDep, user: UserDep):
    """Thumbs up or down on one answer (by turn or result number), with an optional note; up keeps
    the question and its SQL as a verified example of this database, down with `sql` keeps the
    question with that SQL instead."""
    return FeedbackPublic.of(give_verdict(askdb, thread_id, user, body))


@router.get("/api/conversations/{thread_id}/feedback", response_model=FeedbackList)
def list_feedback(thread_id: str, askdb: AskDBDep, user: UserDep):
    """The user's verdicts on a conversation's answers."""
    askdb.store.get(thread_id, user_id=user)
    found = askdb.examples_store.feedback_for_thread(thread_id, user_id=user)
    return FeedbackList(data=[FeedbackPublic.of(f) for _, f in sorted(found.items())], count=len(found))


@router.get("/api/examples", response_model=ExampleList)
def list_examples(askdb: AskDBDep, user: UserDep, source: SourceDep, q: str | None = Query(None, max_length=200),
                  limit: int = Query(50, ge=1, le=500), offset: int = Query(0, ge=0)):
    """The verified examples of a data source (`source`; omit for the default), newest first."""
    retriever, _ = _examples(askdb, source, user)
    page = retriever.store.list(database_key=retriever.key, search=q, limit=limit, offset=offset)
    return ExampleList(data=[ExamplePublic.of(e) for e in page.items], count=page.total, database=retriever.key)


@router.patch("/api/examples/{example_id}", response_model=ExamplePublic)
def update_example(example_id: int, body: ExampleUpdate, askdb: AskDBDep, user: UserDep, source: SourceDep):
    """Edit an example's question, SQL or note."""
    return ExamplePublic.of(_update(askdb, source, user, example_id, body))


@router.delete("/api/examples/{example_id}", status_code=204)
def delete_example(example_id: int, askdb: AskDBDep, user: UserDep, source: SourceDep):
    """Remove an example (the verdicts that made it stay, unlinked): its author or an operator only."""
    retriever, _ = _examples(askdb, source, user)
    remove_example(retriever, example_id, user_id=user, operator=is_operator(askdb.settings, user))
    return Response(status_code=204)


@router.post("/api/examples/{example_id}/confirm", response_model=ExamplePublic)
def confirm(example_id: int, askdb: AskDBDep, user: UserDep, source: SourceDep):
    """Use an example someone other than its author changed as verified again: its author, or an
    operator other than the one who changed it."""
    retriever, _ = _examples(askdb, source, user)
    return ExamplePublic.of(confirm_example(retriever, example_id, user_id=user,
                                            operator=is_operator(askdb.settings, user)))


@router.get("/api/examples/export")
def export(askdb: AskDBDep, user: UserDep, source: SourceDep):
    """A data source's examples as a JSON file (`POST /api/examples/import` reads it)."""
    retriever, database = _examples(askdb, source, user)
    return JSONResponse(export_examples(retriever, label=database.label), headers={
        "Content-Disposition": f'attachment; filename="askdb-examples-{database.label}.json"'})


@router.post("/api/examples/import", response_model=ImportReport)
def import_(document: Annotated[Any, Body()], askdb: AskDBDep, user: UserDep, source: SourceDep):
    """Add examples from an export (or a list of {"question", "sql"}); each is checked against the
    data source (`source`) and skipped, with the reason, when it does not fit."""
    retriever, database = _examples(askdb, source, user)
    return import_examples(retriever, database, document, user_id=user)


# -- pages --------------------------------------------------------------------------

@router.post("/c/{thread_id}/feedback")
def feedback_form(request: Request, thread_id: str, askdb: AskDBDep, user: UserDep, turn: Annotated[int, Form(ge=0)],
                  rating: Annotated[Literal["up", "down"], Form()], note: Annotated[str, Form(max_length=2000)] = "",
                  sql: Annotated[str, Form(max_length=20_000)] = ""):
    """Thumbs up or down from the conversation page (no JavaScript needed); down may give the right
    SQL. A correction that is refused comes back in its turn's box with the reason (422)."""
    try:
        given = give_verdict(askdb, thread_id, user, FeedbackCreate(rating=rating, note=note, turn=turn,
                                                                    sql=sql.strip() or None))
    except CorrectionRefused as exc:
        response = conversation_page(request, thread_id, askdb, user, feedback_error={
            "turn": turn, "sql": sql, "note": note, "message": str(exc)})
        response.status_code = 422
        return response
    outcome = "corrected" if rating == "down" and given.example_id else rating
    if given.example_id and askdb.examples_store.get(given.example_id, database_key=given.database_key).unconfirmed:
        outcome += "-pending"  # another user's example of this question: their confirmation first
    return RedirectResponse(f"/c/{thread_id}?feedback={turn}-{outcome}#feedback-{turn}", status_code=303)


@router.get("/examples")
def examples_page(request: Request, askdb: AskDBDep, user: UserDep, source: SourceDep,
                  q: str = Query("", max_length=200), page: int = Query(1, ge=1), notice: str = ""):
    """The verified examples of a data source, to edit or remove, and the user's own verdicts."""
    retriever, database = _examples(askdb, source, user)
    listing = retriever.store.list(database_key=retriever.key, search=q or None, limit=PER_PAGE,
                                   offset=(page - 1) * PER_PAGE)
    context = {"settings": askdb.settings, "user": user, "examples": listing.items, "total": listing.total, "q": q,
               "page": page, "pages": max(1, -(-listing.total // PER_PAGE)), "notice": notice[:300],
               "database": database.label, "key": retriever.key, "source": source,
               "choices": askdb.sources.choices(user_id=user),
               "feedback": retriever.store.feedback_for_user(user, database_key=retriever.key, limit=50)}
    return templates.TemplateResponse(request, "examples.html", context)


@router.post("/examples/{example_id}/edit")
def edit_form(example_id: int, askdb: AskDBDep, user: UserDep, source: SourceDep,
              question: Annotated[str, Form(min_length=1, max_length=4000)],
              sql: Annotated[str, Form(min_length=1, max_length=20_000)],
              note: Annotated[str, Form(max_length=2000)] = ""):
    """Save an example's question, SQL and note."""
    _update(askdb, source, user, example_id, ExampleUpdate(question=question.strip(), sql=sql.strip(),
                                                           note=note.strip()))
    return RedirectResponse(_page_url(source, anchor=f"example-{example_id}"), status_code=303)


@router.post("/examples/{example_id}/delete")
def delete_form(example_id: int, askdb: AskDBDep, user: UserDep, source: SourceDep):
    """Remove an example."""
    delete_example(example_id, askdb, user, source)
    return RedirectResponse(_page_url(source, notice="example removed"), status_code=303)


@router.post("/examples/{example_id}/confirm")
def confirm_form(example_id: int, askdb: AskDBDep, user: UserDep, source: SourceDep):
    """Confirm a changed example from the page."""
    confirm(example_id, askdb, user, source)
    return RedirectResponse(_page_url(source, anchor=f"example-{example_id}"), status_code=303)


@router.post("/examples/import")
def import_form(askdb: AskDBDep, user: UserDep, source: SourceDep, file: Annotated[UploadFile, File()]):
    """Import an exported file from the page."""
    try:
        document = loads(file.file.read(), "the file")
    except InvalidText as exc:
        return RedirectResponse(_page_url(source, notice=str(exc)), status_code=303)
    except (ValueError, UnicodeDecodeError):
        return RedirectResponse(_page_url(source, notice="that file is not JSON"), status_code=303)
    retriever, database = _examples(askdb, source, user)
    report = import_examples(retriever, database, document, user_id=user)
    notice = f"imported {report.imported}, skipped {len(report.skipped)}"
    if report.skipped:
        notice += f" (first: {report.skipped[0]['reason'][:120]})"
    return RedirectResponse(_page_url(source, notice=notice), status_code=303)


def _page_url(source: str, *, anchor: str = "", **params: str) -> str:
    """The examples page of `source`, with `params` and `anchor`."""
    return f"/examples?{urlencode({'source': source, **params})}" + (f"#{anchor}" if anchor else "")
