"""Request bodies checked before any route reads them: a cap on their size (413), and JSON whose
text or numbers could not be stored and written out again (422; storage/validity.py)."""

from __future__ import annotations

import json

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import render_error
from storage.validity import InvalidText, loads


class BodyLimitMiddleware:
    """Refuse bodies over `max_bytes`: by Content-Length at once, or while streaming in.

    Args:
        own_limit_paths: paths whose route caps its body itself, higher (a file upload, at
            ASKDB_MAX_UPLOAD_BYTES: app/data_pages.py).
    """

    def __init__(self, app: ASGIApp, *, max_bytes: int, own_limit_paths: frozenset[str] = frozenset()):
        self.app, self.max_bytes, self.own_limit_paths = app, max_bytes, own_limit_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.own_limit_paths:
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length", b"0")
        if length.isdigit() and int(length) > self.max_bytes:
            return await self._refuse(send)
        seen, started, refused = 0, False, False

        async def counted_receive() -> Message:
            # A streamed body over the cap: answer 413 now and tell the app the client left.
            nonlocal seen, refused
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes and not started:
                    refused = True
                    await self._refuse(send)
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if refused:
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        await self.app(scope, counted_receive, guarded_send)

    async def _refuse(self, send: Send) -> None:
        await _send_json(send, 413, {"detail": f"request body over {self.max_bytes} bytes (ASKDB_MAX_BODY_BYTES)",
                                     "error": "BodyTooLarge"})


class ValidJSONMiddleware:
    """Refuse a JSON body holding a lone surrogate (`"\\ud800"`) or a non-finite number (`1e999`,
    `NaN`) with 422 before any route sees it: Python reads both, nothing can write them out again,
    and one such tag stored on a conversation once broke every page listing it. Bodies that are not
    JSON at all are left to the route (its own 422). Runs inside BodyLimitMiddleware, so the body it
    holds is already capped."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers") or []) if scope["type"] == "http" else {}
        content_type = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
        if content_type != b"application/json" or scope["method"] not in ("POST", "PUT", "PATCH"):
            return await self.app(scope, receive, send)
        chunks, more = [], True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client left
                return
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        try:
            loads(body, "the request")
        except InvalidText as exc:
            response = render_error(Request(scope), 422, {"detail": str(exc), "error": "InvalidText"})
            return await response(scope, receive, send)
        except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested too deep: the route says so
            pass
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


async def _send_json(send: Send, status: int, content: dict) -> None:
    body = json.dumps(content).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
