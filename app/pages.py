"""Server-rendered pages. Browsing works without JavaScript; askdb.js adds live steps and charts."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, File, Form, Query, Request, UploadFile
from fastapi.responses import RedirectResponse, Response

from agent.examples import database_key
from agent.planner.lexicon import Lexicon
from agent.sources.base import DataSource
from agent.sources.errors import QueryBusy, SourceError, SourceUnavailable
from app.auth import TOKEN_COOKIE, NotAuthenticated, resolve_user
from app.deps import AskDBDep, SourceDep, UserDep
from app.errors import error_body
from app.downloads import csv_response, stored_result
from app.i18n import LANG_COOKIE, LANGUAGES, language_of
from app.schema_panel import schema_panel
from app.templating import templates
from app.views import ResultOptions, ResultView, conversation_view, format_sql
from storage.errors import InvalidExport
from storage.validity import InvalidText, loads

router = APIRouter()
PER_PAGE = 50


def _page(request: Request, name: str, **context) -> Response:
    askdb = request.app.state.askdb
    context.setdefault("settings", askdb.settings)
    return templates.TemplateResponse(request, name, context)


@router.get("/")
def index(request: Request, askdb: AskDBDep, user: UserDep, q: str = "", page: int = Query(1, ge=1)):
    """The user's conversations, newest first."""
    listing = askdb.store.list(user_id=user, search=q or None, limit=PER_PAGE, offset=(page - 1) * PER_PAGE)
    return _page(request, "index.html", conversations=listing.items, total=listing.total, q=q, page=page,
                 pages=max(1, -(-listing.total // PER_PAGE)), user=user)


@router.get("/new")
def new_conversation(request: Request, askdb: AskDBDep, user: UserDep, source: SourceDep):
    """An empty conversation: the ask box (with the data source to ask, when there is a choice), the
    schema panel and questions to start from. `?source=` preselects a source (422 when unknown)."""
    return _page(request, "conversation.html", view=None, user=user, source=source,
                 choices=askdb.sources.choices(user_id=user), source_label=askdb.sources.label(source, user_id=user),
                 panel=_panel(request, askdb, askdb.database(source, user_id=user), source=source))


def _panel(request: Request, askdb, database: DataSource, *, source: str | None):
    """The schema panel of `database` (the source named `source`), its suggestions led by a few of its
    verified examples and named in Chinese with its own words too; None when its schema cannot be read."""
    try:
        examples = [e.question for e in askdb.examples_store.list(database_key=database_key(database), limit=2).items]
    except SourceError:
        examples = []
    return schema_panel(database, language=language_of(request), examples=examples,
                        lexicon=Lexicon.of(askdb.sources.vocabulary(source)))


@router.post("/ask")
def ask(request: Request, askdb: AskDBDep, user: UserDep, question: Annotated[str, Form()] = "",
        thread_id: Annotated[str, Form()] = "", source: Annotated[str, Form(max_length=64)] = ""):
    """Ask from a plain form (no JavaScript): run the turn, then show the conversation. A new
    conversation is bound to `source` (default: the default source)."""
    turn = askdb.start_turn(question, user_id=user, thread_id=thread_id or None, source=source or None)
    turn.wait()
    return RedirectResponse(f"/c/{turn.thread_id}#turn-last", status_code=303)


@router.get("/c/{thread_id}")
def conversation(request: Request, thread_id: str, askdb: AskDBDep, user: UserDep, result: int | None = None,
                 page: int = Query(1, ge=1), sort: str | None = Query(None, max_length=200),
                 order: Literal["asc", "desc"] = "asc"):
    """A conversation: each question, its steps, its answer with SQL, table, chart and CSV; `result`
    with `page`, `sort` and `order` pages or sorts that stored result as a whole."""
    options = {result: ResultOptions(page=page, sort=sort, descending=order == "desc")} if result else {}
    return conversation_page(request, thread_id, askdb, user, result_options=options)


def conversation_page(request: Request, thread_id: str, askdb, user: str, *,
                      result_options: dict[int, ResultOptions] | None = None, sql_error: dict | None = None,
                      feedback_error: dict | None = None) -> Response:
    """The conversation page; `sql_error` or `feedback_error` ({"turn", "sql", "message"}, and the
    verdict's "note") puts a refused edit or correction back in its turn's box with the reason."""
    loaded = askdb.store.load(thread_id, user_id=user)
    source = loaded.state.source
    database = askdb.sources.bound(source, user_id=user)  # one no longer configured: the page, no panel
    view = conversation_view(askdb.store, loaded.conversation, loaded.state, user_id=user,
                             running=askdb.leases.is_held(thread_id), result_options=result_options or {},
                             dialect=database.dialect, lexicon=Lexicon.of(askdb.sources.vocabulary(source)))
    votes = askdb.examples_store.feedback_for_thread(thread_id, user_id=user)
    return _page(request, "conversation.html", view=view, user=user, votes=votes, source=source,
                 source_label=askdb.sources.label(source, user_id=user), panel=_panel(request, askdb, database, source=source),
                 sql_error=sql_error, feedback_error=feedback_error)


@router.post("/c/{thread_id}/stop")
def stop(thread_id: str, askdb: AskDBDep, user: UserDep):
    """Stop the running turn after its current step: its steps and state are kept, marked stopped."""
    askdb.stop_turn(thread_id, user_id=user)
    return RedirectResponse(f"/c/{thread_id}#turn-last", status_code=303)


@router.post("/c/{thread_id}/sql")
def rerun_sql(request: Request, thread_id: str, askdb: AskDBDep, user: UserDep,
              sql: Annotated[str, Form(max_length=100_000)] = "", turn: Annotated[int, Form()] = -1):
    """Run an edited query through the guard; it becomes a turn of the conversation that corrects
    turn `turn` (a thumbs up on it keeps the SQL under that turn's question). A refused query comes
    back in its box with the reason (400), and nothing is written; the form's action ends in the
    box's anchor, so the page lands on it."""
    try:
        with askdb.slots.hold(user):  # one of the user's running slots, as a question or the SQL page takes
            askdb.run_analyst_sql(thread_id, user_id=user, sql=sql, corrects=turn if turn >= 0 else None)
    except SourceError as exc:
        response = conversation_page(request, thread_id, askdb, user, sql_error={
            "turn": turn, "sql": sql, "message": error_body(exc, 400)["detail"]})
        response.status_code = 400
        return response
    return RedirectResponse(f"/c/{thread_id}#turn-last", status_code=303)


@router.get("/c/{thread_id}/results/{result_id}.{fmt}")
def download_result(thread_id: str, result_id: int, fmt: str, askdb: AskDBDep, user: UserDep):
    """A stored result as CSV or JSON, named after the conversation and the turn."""
    return stored_result(askdb.store, thread_id, result_id, user_id=user, fmt=fmt)


@router.get("/lang/{code}")
def choose_language(request: Request, code: str):
    """The language switch: remember the choice and go back to the page it was made on."""
    back = request.headers.get("referer") or "/"
    response = RedirectResponse(back if back.startswith(str(request.base_url)) else "/", status_code=303)
    if code in LANGUAGES:
        response.set_cookie(LANG_COOKIE, code, max_age=365 * 24 * 3600, samesite="lax")
    return response


@router.get("/favicon.ico", include_in_schema=False)
def favicon():
    return RedirectResponse("/static/favicon.svg", status_code=301)


@router.post("/import")
def import_file(askdb: AskDBDep, user: UserDep, file: Annotated[UploadFile, File()]):
    """A conversation exported from askdb (the page's Export link, or `store export`), as a new one."""
    try:
        document = loads(file.file.read(), "the file")
    except InvalidText as exc:
        raise InvalidExport(str(exc)) from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidExport(f"{file.filename or 'the file'} is not JSON") from exc
    created = askdb.import_conversation(document, user_id=user)
    return RedirectResponse(f"/c/{created.thread_id}", status_code=303)


@router.post("/c/{thread_id}/edit")
def edit(thread_id: str, askdb: AskDBDep, user: UserDep, title: Annotated[str, Form(max_length=200)] = "",
         tags: Annotated[str, Form(max_length=1000)] = ""):
    """Rename and retag (tags comma-separated)."""
    askdb.store.update(thread_id, user_id=user, title=title.strip() or None,
                       tags=[t.strip() for t in tags.split(",") if t.strip()][:20])
    return RedirectResponse(f"/c/{thread_id}", status_code=303)


@router.get("/c/{thread_id}/delete")
def confirm_delete(request: Request, thread_id: str, askdb: AskDBDep, user: UserDep):
    """Ask for confirmation before deleting (the no-JavaScript path)."""
    return _page(request, "delete.html", conversation=askdb.store.get(thread_id, user_id=user), user=user)


@router.post("/c/{thread_id}/delete")
def delete(thread_id: str, askdb: AskDBDep, user: UserDep):
    """Delete the conversation and everything that belongs to it."""
    askdb.store.delete(thread_id, user_id=user)
    return RedirectResponse("/", status_code=303)


@router.get("/c/{thread_id}/state")
def state(request: Request, thread_id: str, askdb: AskDBDep, user: UserDep, download: bool = False):
    """The raw AgentState, pretty-printed, or as a file."""
    loaded = askdb.store.load(thread_id, user_id=user)
    text = loaded.state.model_dump_json(indent=2)
    if download:
        return Response(text, media_type="application/json", headers={
            "Content-Disposition": f'attachment; filename="askdb-state-{thread_id}.json"'})
    return _page(request, "state.html", conversation=loaded.conversation, state_json=text, user=user)


@router.get("/sql")
def sql_page(request: Request, askdb: AskDBDep, user: UserDep, source: SourceDep, sql: str = "",
             page: int = Query(1, ge=1), sort: str | None = Query(None, max_length=200),
             order: Literal["asc", "desc"] = "asc"):
    """A SQL box over a data source (`source`, else the default), through the agent's guard and limits.
    A refused or failing query comes back in the box with the reason (status 400), never as a bare
    error page; an unknown source is a 422."""
    result = error = None
    if sql.strip():
        try:
            with askdb.slots.hold(user):
                result = ResultView.of(askdb.database(source, user_id=user).execute(sql), options=ResultOptions(
                    page=page, sort=sort, descending=order == "desc"))
        except QueryBusy:
            raise  # 503 with Retry-After, not an error about the query
        except SourceError as exc:
            error = error_body(exc, 400)["detail"]
    return _sql_box(request, askdb, user, sql, source, result=result, error=error)


@router.get("/sql.csv")
def sql_csv(request: Request, askdb: AskDBDep, user: UserDep, sql: str, source: SourceDep):
    """The SQL page's result as CSV (with a BOM, so Excel reads UTF-8). A query the guard or the
    database refuses comes back in the SQL page's box with the reason (400), as on /sql."""
    try:
        with askdb.slots.hold(user):
            result = askdb.database(source, user_id=user).execute(sql)
    except (QueryBusy, SourceUnavailable):
        raise  # 503: the server's state, not the query's fault
    except SourceError as exc:
        return _sql_box(request, askdb, user, sql, source, error=error_body(exc, 400)["detail"])
    return csv_response(result.columns, result.rows, "askdb-query.csv")


def _sql_box(request: Request, askdb, user: str, sql: str, source: str, *, result: ResultView | None = None,
             error: str | None = None) -> Response:
    """The SQL page with ``sql`` in its box, on `source`, then its result or why there is none (status 400)."""
    response = _page(request, "sql.html", sql=sql, result=result, error=error, user=user, source=source,
                     choices=askdb.sources.choices(user_id=user),
                     source_label=askdb.sources.label(source, user_id=user),
                     formatted=format_sql(sql, askdb.database(source, user_id=user).dialect) if result else "")
    response.status_code = 400 if error else 200
    return response


@router.get("/login")
def login_page(request: Request):
    return _page(request, "login.html", error=None, user=None)


@router.post("/login")
def login(request: Request, token: Annotated[str, Form(max_length=200)]):
    """Check a token and keep it in a cookie for the pages (ASKDB_AUTH=token)."""
    try:
        resolve_user(request.app.state.askdb.settings, headers={"authorization": f"Bearer {token}"}, cookies={})
    except NotAuthenticated as exc:
        return _page(request, "login.html", error=str(exc), user=None)
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="strict")
    return response
