"""`/mcp`: askdb's MCP server over Streamable HTTP, on the web app (app/web.py mounts it).

Nothing the API refuses gets through here:
- The app's middleware runs first, as for every route: the Host must be one of ASKDB_ALLOWED_HOSTS,
  a POST or DELETE must not come from another origin (app/origin.py), the body must fit
  ASKDB_MAX_BODY_BYTES (app/limits.py).
- Who is asking is resolved here as for the API (app/auth.py): ASKDB_AUTH=token takes the bearer
  token, proxy the trusted header, none is the local user. A request that names nobody is
  refused (401, the API's error body) before the SDK reads it. The pages' cookie is not taken: an
  MCP client sends its credentials itself, and a browser's cookie never speaks for it.
- The tools then act as that user, through the same core (per-user isolation, slots, the guard).

Stateless: no MCP session is kept between requests, so any worker process of
`serve --workers N` answers any request, and a request is only ever the user its own
credentials name.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from app.auth import NotAuthenticated, resolve_user
from app.core import AskDB
from app.errors import error_body, render_error
from app.mcp.server import USER_KEY, build_server

PATH = "/mcp"
METHODS = ["GET", "POST", "DELETE"]


class McpEndpoint:
    """The ASGI app of `/mcp`; `running()` belongs in the web app's lifespan (the SDK's requests run
    in its task group)."""

    def __init__(self, askdb: AskDB):
        self.askdb = askdb
        self.server = build_server(askdb)
        # Only the session manager this builds is used; the route is the app's own. The SDK's Host and
        # Origin checks are off: the app's middleware makes them, with ASKDB_ALLOWED_HOSTS.
        self.server.streamable_http_app(streamable_http_path=PATH, stateless_http=True,
                                        transport_security=TransportSecuritySettings(
                                            enable_dns_rebinding_protection=False))
        self.sessions = self.server.session_manager

    def running(self) -> AbstractAsyncContextManager[None]:
        return self.sessions.run()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        try:
            user = resolve_user(self.askdb.settings, headers=dict(request.headers), cookies={})
        except NotAuthenticated as exc:
            response = render_error(request, 401, error_body(exc, 401))
            response.headers["WWW-Authenticate"] = "Bearer"
            return await response(scope, receive, send)
        scope.setdefault("state", {})[USER_KEY] = user
        await self.sessions.handle_request(scope, receive, send)
