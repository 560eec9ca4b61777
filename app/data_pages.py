"""The "Your data" pages: a user's own files as tables (agent/sources/uploads.py), in two steps.

`/data` lists the user's tables to rename, replace or delete, and takes a file; the file waits
as a pending upload (agent/sources/pending_uploads.py) while `/data/pending/{token}` shows what
it would become (encoding, header, column types, first rows, a name to edit); confirming loads
it, cancelling drops it. Every route reads and changes only the signed-in user's file. State
changes are POSTs, so the origin checks of app/origin.py apply as on every other form.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Annotated, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser

from agent.sources.pending_uploads import PENDING_TTL_S, PendingUpload, PendingUploads, expire_pending
from agent.sources.uploads import (
    TablesUnreadable, UploadNotFound, UploadRejected, UploadTooLarge, list_tables, remove_table, rename_table,
    set_tables_aside, uploads_path,
)
from agent.sources.upload_worker import run_upload_job
from app.deps import UserDep
from app.templating import templates

router = APIRouter()
UPLOAD_PATH = "/data/upload"
# The form's own bytes around the file (boundaries, part headers, the other fields).
FORM_OVERHEAD_BYTES = 64 * 1024
CHUNK_BYTES = 1 << 20
DISCONNECT_POLL_S = 0.2  # how often a running upload job looks for a client that left
#: What a redirect back to /data may announce; anything else is ignored.
NOTICES = {"added": "Table {name} is ready.", "renamed": "Table renamed to {name}.",
           "deleted": "Table {name} deleted.", "cancelled": "Upload cancelled; nothing was loaded.",
           "set-aside": "Your damaged tables were set aside; add your files again."}


def _settings(request: Request):
    return request.app.state.askdb.settings


def _pending(request: Request, user: str) -> PendingUploads:
    return PendingUploads(_settings(request).uploads_dir, user)


def _data_page(request: Request, user: str, *, error: UploadRejected | None = None, status: int = 200,
               notice: str = "", notice_table: str = "") -> Response:
    settings = _settings(request)
    try:
        tables = list_tables(uploads_path(settings.uploads_dir, user))
    except TablesUnreadable as damaged:  # the page still opens, with the way out
        tables, error, status = [], damaged, 409
    context = {"settings": settings, "user": user, "error": error, "max_bytes": settings.max_upload_bytes,
               "tables": tables, "damaged": isinstance(error, TablesUnreadable),
               "pending": _pending(request, user).list(), "notice": NOTICES.get(notice), "notice_table": notice_table}
    return templates.TemplateResponse(request, "data.html", context, status_code=status)


def _preview_page(request: Request, user: str, pending: PendingUpload, *, error: UploadRejected | None = None,
                  table: str | None = None, status: int = 200) -> Response:
    context = {"settings": _settings(request), "user": user, "upload": pending, "preview": pending.preview,
               "error": error, "table": table or pending.preview.table.name, "ttl_minutes": PENDING_TTL_S // 60}
    return templates.TemplateResponse(request, "data_preview.html", context, status_code=status)


def _refused(request: Request, user: str, error: UploadRejected) -> Response:
    """The data page saying why: 413 for a file too large, 404 for a table or upload not found."""
    status = (413 if isinstance(error, UploadTooLarge) else 404 if isinstance(error, UploadNotFound)
              else 409 if isinstance(error, TablesUnreadable) else 400)
    return _data_page(request, user, error=error, status=status)


def _done(notice: str, table: str = "") -> RedirectResponse:
    """Back to /data, announcing what was done."""
    query = {k: v for k, v in {"notice": notice, "table": table}.items() if v}
    return RedirectResponse(f"/data?{urlencode(query)}", status_code=303)


@router.get("/data")
def data_page(request: Request, user: UserDep, notice: str = "", table: str = ""):
    """Your tables, each to rename, replace or delete, and the form that adds a file."""
    expire_pending(_settings(request).uploads_dir)
    return _data_page(request, user, notice=notice, notice_table=table[:200])


@router.post(UPLOAD_PATH)
async def upload(request: Request, user: UserDep):
    """Keep an uploaded file as pending and show its preview; a file over ASKDB_MAX_UPLOAD_BYTES is
    refused from its Content-Length before the body is read, or as soon as the body passes it."""
    limit = _settings(request).max_upload_bytes
    pending = _pending(request, user)
    await run_in_threadpool(expire_pending, _settings(request).uploads_dir)
    try:
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit + FORM_OVERHEAD_BYTES:
            raise UploadTooLarge("the file is larger than the limit of {limit} bytes (ASKDB_MAX_UPLOAD_BYTES)",
                                 limit=limit)
        form = await _form(request, max_bytes=limit + FORM_OVERHEAD_BYTES)
        file, replace = form.get("file"), str(form.get("replace") or "") or None
        if not isinstance(file, UploadFile) or not file.filename:
            raise UploadRejected("choose a file to upload")
        with request.app.state.askdb.slots.hold(user):  # one of the user's running slots, as a question's
            staged = await _stage(request, pending, file, limit, replace)
    except UploadRejected as e:
        return await run_in_threadpool(_refused, request, user, e)
    return RedirectResponse(f"/data/pending/{staged.token}", status_code=303)


async def _stage(request: Request, pending: PendingUploads, file: UploadFile, limit: int,
                 replace: str | None) -> PendingUpload:
    """Write the upload to a pending directory and preview it in a worker; a file that cannot be read is
    not kept."""
    staged = await run_in_threadpool(pending.stage, file.filename, iter(lambda: file.file.read(CHUNK_BYTES), b""),
                                     max_bytes=limit, replace=replace)
    try:
        staged.preview = await _in_worker(request, "preview", file=staged.file, max_bytes=limit, table=replace)
    except BaseException:
        await run_in_threadpool(pending.discard, staged.token)
        raise
    await run_in_threadpool(pending.save, staged)
    return staged


async def _in_worker(request: Request, op: str, **arguments):
    """Read an uploaded file in a process of its own under the upload limits (agent/sources/upload_worker.py),
    killed if the client leaves before it ends."""
    left, done = threading.Event(), threading.Event()

    async def watch() -> None:
        while not done.is_set():
            if await request.is_disconnected():
                left.set()
                return
            await asyncio.sleep(DISCONNECT_POLL_S)

    watcher = asyncio.create_task(watch())
    try:
        return await run_in_threadpool(run_upload_job, op, arguments, limits=_settings(request).upload_limits(),
                                       cancelled=left.is_set)
    finally:
        done.set()
        watcher.cancel()


async def _form(request: Request, *, max_bytes: int):
    """The multipart form, its body read no further than `max_bytes`."""
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise UploadRejected("send the file from the page's form (multipart/form-data)")

    async def capped() -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in request.stream():
            seen += len(chunk)
            if seen > max_bytes:
                raise UploadTooLarge("the file is larger than the limit of {limit} bytes (ASKDB_MAX_UPLOAD_BYTES)",
                                     limit=max_bytes - FORM_OVERHEAD_BYTES)
            yield chunk

    try:
        return await MultiPartParser(request.headers, capped(), max_files=1, max_fields=4).parse()
    except MultiPartException as e:
        raise UploadRejected("the upload could not be read: {reason}", reason=e.message) from None


@router.get("/data/pending/{token}")
async def pending_page(request: Request, token: str, user: UserDep, header: Literal["yes", "no", ""] = ""):
    """Step 2: what the file would become; `header` reads it again with or without a header line."""
    uploads = _pending(request, user)
    try:
        pending = await run_in_threadpool(uploads.get, token)
        if header and (header == "yes") != pending.preview.header:
            pending.preview = await _in_worker(request, "preview", file=pending.file,
                                               max_bytes=_settings(request).max_upload_bytes,
                                               table=pending.preview.table.name, header=header == "yes")
            await run_in_threadpool(uploads.save, pending)
    except UploadRejected as e:
        return await run_in_threadpool(_refused, request, user, e)
    return await run_in_threadpool(_preview_page, request, user, pending)


@router.post("/data/pending/{token}/confirm")
async def confirm_upload(request: Request, token: str, user: UserDep,
                         table: Annotated[str, Form(max_length=200)] = "", replace: Annotated[bool, Form()] = False):
    """Load the pending file as a table under the name chosen, in a worker; then it is no longer pending."""
    settings, uploads = _settings(request), _pending(request, user)
    try:
        pending = await run_in_threadpool(uploads.get, token)
    except UploadRejected as e:
        return await run_in_threadpool(_refused, request, user, e)
    try:
        with request.app.state.askdb.slots.hold(user):  # one of the user's running slots, as a question's
            loaded = await _in_worker(request, "add", target=uploads_path(settings.uploads_dir, user),
                                      file=pending.file, table=table, max_bytes=settings.max_upload_bytes,
                                      replace=replace, header=pending.preview.header,
                                      quota_bytes=settings.upload_quota_mb << 20)
    except UploadRejected as e:
        return await run_in_threadpool(_preview_page, request, user, pending, error=e, table=table,
                                       status=413 if isinstance(e, UploadTooLarge) else 400)
    await run_in_threadpool(uploads.discard, token)
    return _done("added", loaded.name)


@router.post("/data/pending/{token}/cancel")
def cancel_upload(request: Request, token: str, user: UserDep):
    """Drop a pending file; nothing is loaded."""
    _pending(request, user).discard(token)
    return _done("cancelled")


@router.post("/data/rename")
def rename(request: Request, user: UserDep, table: Annotated[str, Form(max_length=200)],
           new_name: Annotated[str, Form(max_length=200)]):
    """Give one of your tables another name."""
    try:
        renamed = rename_table(uploads_path(_settings(request).uploads_dir, user), table, new_name)
    except UploadRejected as e:
        return _refused(request, user, e)
    return _done("renamed", renamed.name)


@router.post("/data/set-aside")
def set_aside(request: Request, user: UserDep):
    """The way out of a damaged tables file: it is moved aside (kept for an operator), and the user
    starts again with no tables."""
    set_tables_aside(uploads_path(_settings(request).uploads_dir, user))
    return _done("set-aside")


@router.get("/data/delete")
def confirm_delete(request: Request, user: UserDep, table: str):
    """Ask before deleting a table (the page without JavaScript; askdb.js asks with confirm())."""
    try:
        found = [t for t in list_tables(uploads_path(_settings(request).uploads_dir, user)) if t.name == table]
    except TablesUnreadable as e:
        return _refused(request, user, e)
    if not found:
        return _refused(request, user, UploadNotFound("no table named {name}", name=table))
    context = {"settings": _settings(request), "user": user, "table": found[0]}
    return templates.TemplateResponse(request, "data_delete.html", context)


@router.post("/data/delete")
def delete(request: Request, user: UserDep, table: str):
    """Delete one of your tables."""
    try:
        remove_table(uploads_path(_settings(request).uploads_dir, user), table)
    except UploadRejected as e:
        return _refused(request, user, e)
    return _done("deleted", table)
