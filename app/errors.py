"""One table from domain error to HTTP status, and one handler that renders them.

Under /api/ the body is always `{"detail": "...", "error": "<ErrorName>"}`; pages get
`error.html`. Every reply carries an `X-Request-ID`, and every error is logged under it
(logger `askdb`), a 500 with its traceback; the user sees the id, never the traceback.
Nothing below app/ knows a status code.
"""

from __future__ import annotations

import logging
import uuid
from urllib.parse import parse_qsl

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agent.sources.errors import (
    QueryBusy, QueryFailed, QueryTimeout, SourceUnavailable, SQLRejected, UnknownColumn, UnknownTable,
)
from agent.examples import AnswerNotFound, FeedbackError, NothingToVerify, NotTheAuthor, SQLDoesNotFit
from agent.models.llm import ModelError
from app.auth import NotAuthenticated
from app.core import BadQuestion
from app.quotas import TooManyRequests
from app.sources import SourceMismatch, UnknownSource
from app.templating import templates
from app.turns import TurnInProgress
from storage.errors import (
    AskdbError, ConversationNotFound, CorruptState, InvalidExport, InvalidThreadId, ResultNotFound, StoreCorrupt,
    StoreConflict, StoreUnavailable, VersionConflict,
)
from storage.examples import DuplicateQuestion, ExampleNotFound
from storage.memory_items import DuplicateMemory, MemoryItemNotFound
from storage.validity import InvalidText

log = logging.getLogger("askdb")
RETRY_AFTER_S = 5
#: From `AskdbError`s to statuses; one not listed, nor any of its bases, is our bug: a plain 500.
STATUS: dict[type[AskdbError], int] = {
    NotAuthenticated: 401,
    ConversationNotFound: 404,
    InvalidThreadId: 404,
    ResultNotFound: 404,
    MemoryItemNotFound: 404,
    ExampleNotFound: 404,
    AnswerNotFound: 404,
    NotTheAuthor: 403,  # a shared example changed by someone other than its author or an operator
    VersionConflict: 409,
    StoreConflict: 409,  # a write PostgreSQL rolled back for a concurrent one (a deadlock): try again
    TurnInProgress: 409,
    DuplicateMemory: 409,
    DuplicateQuestion: 409,
    SQLDoesNotFit: 409,  # the database changed under the answer's SQL
    BadQuestion: 422,
    UnknownSource: 422,  # or `uploads` for a user with no uploaded table
    SourceMismatch: 422,  # a follow-up naming another source than its conversation's
    NothingToVerify: 422,
    FeedbackError: 422,
    InvalidExport: 422,
    InvalidText: 422,  # a lone surrogate or a non-finite number (storage/validity.py)
    SQLRejected: 400,
    QueryFailed: 400,
    QueryTimeout: 400,
    UnknownTable: 400,
    UnknownColumn: 400,
    TooManyRequests: 429,
    ModelError: 502,
    QueryBusy: 503,  # a QueryTimeout that never ran: status_of finds the class before its base
    SourceUnavailable: 503,
    StoreUnavailable: 503,
    StoreCorrupt: 503,
    CorruptState: 500,
}


def status_of(exc: Exception) -> int | None:
    """The status of the nearest class in `exc`'s ancestry that the table lists; None when none is."""
    return next((STATUS[cls] for cls in type(exc).__mro__ if cls in STATUS), None)


def error_body(exc: Exception, status: int) -> dict:
    detail = getattr(exc, "reason", None) or str(exc) or type(exc).__name__
    if isinstance(exc, SQLRejected):
        detail = f"query rejected: {detail}"
    return {"detail": detail, "error": type(exc).__name__, "status": status}


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api/") or "application/json" in request.headers.get("accept", "")


def request_id(request: Request) -> str:
    return request.scope.get("state", {}).get("request_id", "-")


def render_error(request: Request, status: int, body: dict):
    if status < 500:
        log.info("request %s: %s %s -> %d %s: %s", request_id(request), request.method, request.url.path, status,
                 body["error"], body["detail"])
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

    async def domain_error(request: Request, exc: AskdbError):
        status = status_of(exc)
        if status is None:  # no row for it: our bug, logged with its traceback, never shown
            return await unexpected_error(request, exc)
        return render_error(request, status, error_body(exc, status))

    async def http_error(request: Request, exc: StarletteHTTPException):
        if isinstance(exc.__cause__, RecursionError):  # FastAPI's 400 for a body it could not parse
            return await out_of_range(request, exc.__cause__)
        return render_error(request, exc.status_code, {"detail": exc.detail, "error": "HTTPError",
                                                       "status": exc.status_code})

    async def validation_error(request: Request, exc: RequestValidationError):
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'] if p != 'body') or 'body'}: {e['msg']}"
                             for e in exc.errors())
        return render_error(request, 422, {"detail": problems or "invalid request", "error": "ValidationError",
                                           "status": 422})

    async def out_of_range(request: Request, exc: Exception):
        # A number past what the store holds (SQLite and PostgreSQL integers are 64-bit), or JSON
        # nested deeper than the parser recurses: the request's fault, said without the internals.
        detail = ("a number is out of range (integers must be below 2^63)" if isinstance(exc, OverflowError)
                  else "the JSON is nested too deeply")
        return render_error(request, 422, {"detail": detail, "error": "ValidationError", "status": 422})

    async def unexpected_error(request: Request, exc: Exception):
        rid = request_id(request)
        log.error("request %s: %s %s failed", rid, request.method, request.url.path, exc_info=exc)
        response = render_error(request, 500, {"detail": f"internal error; the server log has the details "
                                                         f"under request id {rid}", "error": "InternalError",
                                               "status": 500})
        response.headers["x-request-id"] = rid  # this handler runs outside RequestIdMiddleware
        return response

    app.add_exception_handler(AskdbError, domain_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(OverflowError, out_of_range)
    app.add_exception_handler(RecursionError, out_of_range)
    app.add_exception_handler(Exception, unexpected_error)


class IntegerRangeMiddleware:
    """A paging or id query parameter past 64 bits is 422 before any route runs (the store's
    integers are 64-bit; a path id past it fails in the store as OverflowError, also 422)."""

    NAMES = {"limit", "offset", "page", "after_id", "after_step", "result", "turn"}

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            for name, value in parse_qsl(scope.get("query_string", b"").decode("latin-1")):
                if name in self.NAMES and value.lstrip("-").isdigit() and abs(int(value)) >= 2**63:
                    request = Request(scope, receive)
                    response = render_error(request, 422, {
                        "detail": f"{name}: a number is out of range (integers must be below 2^63)",
                        "error": "ValidationError", "status": 422})
                    return await response(scope, receive, send)
        await self.app(scope, receive, send)


class RequestIdMiddleware:
    """Give every request an id (`X-Request-ID` on the reply), which the error log names."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        rid = uuid.uuid4().hex[:16]
        scope.setdefault("state", {})["request_id"] = rid

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (b"x-request-id", rid.encode())]}
            await send(message)

        await self.app(scope, receive, send_with_id)
