"""The FastAPI application: pages and the JSON API over one AskDB core."""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.staticfiles import StaticFiles

from agent.sources.pending_uploads import expire_pending
from app import api, data_pages, errors, examples, memories, pages
from app.auth import NotAuthenticated
from app.core import AskDB
from app.deps import UserDep, get_user
from app.limits import BodyLimitMiddleware, ValidJSONMiddleware
from app.mcp.http import METHODS as MCP_METHODS, PATH as MCP_PATH, McpEndpoint
from app.origin import OriginMiddleware
from app.page_headers import PageHeadersMiddleware
from app.settings import ROOT, Settings

log = logging.getLogger(__name__)


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app around one AskDB core (the CLI builds the same core)."""
    askdb = AskDB(settings or Settings())
    askdb.recover()
    try:
        expire_pending(askdb.settings.uploads_dir)  # uploads a stopped server left waiting
    except OSError:  # an unreadable uploads folder: the pages that use it say so; the app still starts
        log.warning("pending uploads not swept", exc_info=True)

    mcp = McpEndpoint(askdb)  # the MCP face (app/mcp/): its requests run in its task group

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        async with mcp.running():
            yield
        askdb.close()

    # docs_url=None: the default /docs page loads Swagger UI from a CDN; ours serves it vendored.
    app = FastAPI(title="askdb", summary="Ask questions about a SQL database; every conversation remembered.",
                  lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.askdb = askdb
    app.mount("/static", StaticFiles(directory=ROOT / "app" / "static"), name="static")
    app.include_router(api.router)
    app.include_router(pages.router)
    app.include_router(memories.router)
    app.include_router(examples.router)
    app.include_router(data_pages.router)
    app.add_route(MCP_PATH, mcp, methods=MCP_METHODS, include_in_schema=False)
    errors.install(app)
    app.add_middleware(ValidJSONMiddleware)  # inside the size cap: the body it holds is bounded
    app.add_middleware(BodyLimitMiddleware, max_bytes=askdb.settings.max_body_bytes,
                       own_limit_paths=frozenset({data_pages.UPLOAD_PATH}))
    app.add_middleware(OriginMiddleware, allowed_hosts=askdb.settings.allowed_hosts)
    app.add_middleware(PageHeadersMiddleware, frame_ancestors=askdb.settings.frame_ancestors)
    app.add_middleware(errors.IntegerRangeMiddleware)
    app.add_middleware(errors.RequestIdMiddleware)  # outermost: every reply, refusals included, has an id

    # The API's description is for signed-in users only (ASKDB_AUTH=token or proxy), like the API.
    @app.get("/openapi.json", include_in_schema=False)
    def openapi_schema(user: UserDep) -> dict:
        return app.openapi()

    @app.get("/docs", include_in_schema=False)
    def api_docs(user: UserDep):
        return get_swagger_ui_html(openapi_url="/openapi.json", title="askdb API",
                                   swagger_js_url="/static/vendor/swagger-ui-bundle.js",
                                   swagger_css_url="/static/vendor/swagger-ui.css",
                                   swagger_favicon_url="/static/vendor/favicon.png")

    @app.get("/healthz")
    async def healthz(request: Request) -> dict:
        """Liveness: the store answers. Which database and model are configured only to a signed-in
        user (ASKDB_AUTH=token or proxy). Async: it answers even when every worker thread is busy."""
        askdb.store.ping()
        if askdb.settings.auth == "none" or not _signed_in(request):
            return {"status": "ok"}
        location = askdb.settings.database
        on_file = not isinstance(location, str)  # a postgresql:// URL is checked per query, not here
        return {"status": "ok", "database": location.name if on_file else askdb.database().label,
                "database_exists": location.exists() if on_file else None, "llm": askdb.settings.llm}

    def _signed_in(request: Request) -> bool:
        try:
            get_user(request)
            return True
        except NotAuthenticated:
            return False

    return app
