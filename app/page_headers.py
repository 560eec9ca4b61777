"""Headers every reply carries so a page cannot be framed or made to load what it does not (issue 39, item 5).

A page framed at near-zero opacity by another site deleted a table with one click (auth none or
proxy). So every reply says `X-Frame-Options: DENY` and a Content-Security-Policy whose
`frame-ancestors` is `'none'`, unless an operator who embeds askdb names the sites that may
(`ASKDB_FRAME_ANCESTORS`; X-Frame-Options, which cannot list sites, is then left out). The policy
matches what the pages load: scripts, styles, fonts and fetches from askdb itself only, images also
from data: and blob: (a chart's PNG download), no plugins, forms only to askdb. The vendored API
docs page (/docs) runs Swagger UI's inline start-up script, so it alone allows inline scripts.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
          "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'")
DOCS_POLICY = POLICY.replace("script-src 'self'", "script-src 'self' 'unsafe-inline'")
INLINE_SCRIPT_PATHS = frozenset({"/docs"})


class PageHeadersMiddleware:
    """Adds the framing, content and sniffing headers to every HTTP reply.

    Args:
        frame_ancestors: the sites allowed to frame askdb, as CSP sources; empty: none.
    """

    def __init__(self, app: ASGIApp, *, frame_ancestors: list[str]) -> None:
        self.app = app
        ancestors = " ".join(frame_ancestors) or "'none'"
        common = [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"same-origin")]
        if not frame_ancestors:
            common.append((b"x-frame-options", b"DENY"))
        self.headers = {
            inline: common + [(b"content-security-policy",
                               f"{DOCS_POLICY if inline else POLICY}; frame-ancestors {ancestors}".encode())]
            for inline in (False, True)}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        added = self.headers[scope["path"] in INLINE_SCRIPT_PATHS]

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                message["headers"] = list(message.get("headers", [])) + [h for h in added if h[0] not in present]
            await send(message)

        await self.app(scope, receive, with_headers)
