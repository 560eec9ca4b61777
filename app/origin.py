"""Only configured hosts are served, and state changes come from this origin (issue 18, item 4).

- The `Host` header must name one of ASKDB_ALLOWED_HOSTS (default: the loopback names), so a
  DNS-rebound name pointing at 127.0.0.1 gets 400 instead of the app (Django's ALLOWED_HOSTS).
- A POST, PUT, PATCH or DELETE from a browser must come from this very origin: a
  `Sec-Fetch-Site` other than `same-origin` (or `none`, typed by the user) is refused, and so is
  an `Origin` whose host and port differ from the request's. `same-site` covers another port of
  the same host, so a page on :9000 cannot post to askdb on :8000. Every current browser sends
  one of them on such requests; a client that sends neither (curl, a script) is not a page
  acting with a user's cookie or a loopback-only trust.
- A state change under /api/ must send JSON (`Content-Type: application/json`): an HTML form
  cannot, so a cross-site form never reaches the JSON API.
- A read another site's page makes the browser send (an `<img>`, `<script>` or `fetch` whose
  `Sec-Fetch-Site` is `cross-site` or `same-site` and whose `Sec-Fetch-Mode` is not `navigate`) is
  refused too: `<img src=".../sql?sql=...">` ran a 10 s query in a worker each time (issue 39, item
  11). A link the user follows is a navigation and still works; askdb's static files are exempt.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from app.errors import render_error

UNSAFE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


def host_name(host: str) -> str:
    """The name of a Host header or URL netloc, without port or IPv6 brackets, lowercased."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class OriginMiddleware:
    """Refuse unknown hosts (400), cross-origin state changes (403) and non-JSON API writes (415)."""

    def __init__(self, app: ASGIApp, *, allowed_hosts: list[str]) -> None:
        self.app = app
        self.any_host = "*" in allowed_hosts
        self.allowed = {host_name(h) for h in allowed_hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        host = headers.get("host", "")
        if not self.any_host and host_name(host) not in self.allowed:
            return await _refuse(scope, receive, send, 400, "HostNotAllowed",
                                 "this host name is not served; add it to ASKDB_ALLOWED_HOSTS")
        if scope["method"] not in UNSAFE_METHODS and _foreign_subresource(headers, scope["path"]):
            return await _refuse(scope, receive, send, 403, "CrossSiteRequest",
                                 "another site's page may not load askdb's pages or data; open askdb itself")
        if scope["method"] in UNSAFE_METHODS:
            problem = _cross_origin(headers, host)
            if problem:
                return await _refuse(scope, receive, send, 403, "CrossOriginRequest", problem)
            content_type = headers.get("content-type", "").split(";")[0].strip().lower()
            has_body = headers.get("content-length", "0") != "0" or "transfer-encoding" in headers
            if scope["path"].startswith("/api/") and has_body and content_type != "application/json":
                return await _refuse(scope, receive, send, 415, "UnsupportedMediaType",
                                     "the API takes JSON: send Content-Type: application/json")
        await self.app(scope, receive, send)


def _foreign_subresource(headers: dict[str, str], path: str) -> bool:
    """A read another site's page made the browser send without the user navigating."""
    return (headers.get("sec-fetch-site") in ("cross-site", "same-site")
            and headers.get("sec-fetch-mode", "navigate") != "navigate"
            and not path.startswith("/static/") and path != "/favicon.ico")


def _cross_origin(headers: dict[str, str], host: str) -> str | None:
    """Why a state-changing request did not come from this origin, or None when it did."""
    site = headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return f"a {site} request may not change anything here; use askdb's own pages"
    origin = headers.get("origin")
    if origin is not None and (origin == "null" or urlsplit(origin).netloc.lower() != host.lower()):
        return "a request from another origin may not change anything here; use askdb's own pages"
    return None


async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, error: str, detail: str) -> None:
    """The refusal in the shape of every other error: JSON for the API, the error page for a browser."""
    response = render_error(Request(scope, receive), status, {"detail": detail, "error": error, "status": status})
    await response(scope, receive, send)
