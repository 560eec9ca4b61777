"""One table from domain error to HTTP status, and one handler that renders them.

Under /api/ the body is always `{"detail": "...", "error": "<ErrorName>"}`; pages get
`error.html`. Nothing below app/ knows a status code.
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from agent.database import (
    DatabaseUnavailable, QueryBusy, QueryFailed, QueryTimeout, SQLRejected, UnknownColumn, UnknownTable,
)
from agent.examples import AnswerNotFound, FeedbackError, NothingToVerify, SQLDoesNotFit
from agent.llm import ModelError
from app.auth import NotAuthenticated
from app.core import BadQuestion
from app.quotas import TooManyRequests
from app.turns import TurnInProgress
from storage.errors import (
    ConversationNotFound, CorruptState, InvalidExport, InvalidThreadId, ResultNotFound, StoreUnavailable,
    VersionConflict,
)
from storage.examples import DuplicateQuestion, ExampleNotFound
from storage.memory_items import DuplicateMemory, MemoryItemNotFound

RETRY_AFTER_S = 5
STATUS: dict[type[Exception], int] = {
    NotAuthenticated: 401,
    ConversationNotFound: 404,
    InvalidThreadId: 404,
    ResultNotFound: 404,
    MemoryItemNotFound: 404,
    ExampleNotFound: 404,
    AnswerNotFound: 404,
    VersionConflict: 409,
    TurnInProgress: 409,
    DuplicateMemory: 409,
    DuplicateQuestion: 409,
    SQLDoesNotFit: 409,  # the database changed under the answer's SQL
    BadQuestion: 422,
    NothingToVerify: 422,
    FeedbackError: 422,
    InvalidExport: 422,
    SQLRejected: 400,
    QueryFailed: 400,
    QueryTimeout: 400,
    UnknownTable: 400,
    UnknownColumn: 400,
    TooManyRequests: 429,
    ModelError: 502,
    QueryBusy: 503,  # a QueryTimeout that never ran: status_of finds the class before its base
    DatabaseUnavailable: 503,
    StoreUnavailable: 503,
    CorruptState: 500,
}


def status_of(exc: Exception) -> int:
    for cls in type(exc).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return 500


def error_body(exc: Exception, status: int) -> dict:
    detail = getattr(exc, "reason", None) or str(exc) or type(exc).__name__
    if isinstance(exc, SQLRejected):
        detail = f"query rejected: {detail}"
    return {"detail": detail, "error": type(exc).__name__, "status": status}


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api/") or "application/json" in request.headers.get("accept", "")


def render_error(request: Request, status: int, body: dict):
    from app.pages import templates  # pages import this module; import late to avoid a cycle

    if _wants_json(request):
        return _with_retry_after(JSONResponse({"detail": body["detail"], "error": body["error"]},
                                              status_code=status), status)
    context = {"status": status, **body, "settings": request.app.state.askdb.settings, "user": None}
    response = templates.TemplateResponse(request, "error.html", context, status_code=status)
    if status == 401:
        response.headers["WWW-Authenticate"] = "Bearer"
    return _with_retry_after(response, status)


def _with_retry_after(response, status: int):
    # Full (429) or busy (503): say when to come back instead of leaving clients to hammer.
    if status in (429, 503):
        response.headers["Retry-After"] = str(RETRY_AFTER_S)
    return response


def install(app: FastAPI) -> None:
    """Register the handlers for domain errors, HTTP errors and validation errors."""

    async def domain_error(request: Request, exc: Exception):
        status = status_of(exc)
        return render_error(request, status, error_body(exc, status))

    async def http_error(request: Request, exc: StarletteHTTPException):
        return render_error(request, exc.status_code, {"detail": exc.detail, "error": "HTTPError",
                                                       "status": exc.status_code})

    async def validation_error(request: Request, exc: RequestValidationError):
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'] if p != 'body') or 'body'}: {e['msg']}"
                             for e in exc.errors())
        return render_error(request, 422, {"detail": problems or "invalid request", "error": "ValidationError",
                                           "status": 422})

    for cls in STATUS:
        app.add_exception_handler(cls, domain_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, validation_error)
