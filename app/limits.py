"""A cap on request bodies, enforced before any route reads them (413 with the error shape)."""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send


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
        body = json.dumps({"detail": f"request body over {self.max_bytes} bytes (ASKDB_MAX_BODY_BYTES)",
                           "error": "BodyTooLarge"}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
