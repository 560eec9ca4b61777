"""The FastAPI application: pages and the JSON API over one AskDB core."""

from __future__ import annotations

from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.staticfiles import StaticFiles

from app import api, errors, examples, memories, pages
from app.core import AskDB
from app.limits import BodyLimitMiddleware
from app.settings import ROOT, Settings


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app around one AskDB core (the CLI builds the same core)."""
    askdb = AskDB(settings or Settings())
    askdb.recover()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        yield
        askdb.close()

    # docs_url=None: the default /docs page loads Swagger UI from a CDN; ours serves it vendored.
    app = FastAPI(title="askdb", summary="Ask questions about a SQL database; every conversation remembered.",
                  lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.askdb = askdb
    app.mount("/static", StaticFiles(directory=ROOT / "app" / "static"), name="static")
    app.include_router(api.router)
    app.include_router(pages.router)
    app.include_router(memories.router)
    app.include_router(examples.router)
    errors.install(app)
    app.add_middleware(BodyLimitMiddleware, max_bytes=askdb.settings.max_body_bytes)

    @app.get("/docs", include_in_schema=False)
    def api_docs():
        return get_swagger_ui_html(openapi_url="/openapi.json", title="askdb API",
                                   swagger_js_url="/static/vendor/swagger-ui-bundle.js",
                                   swagger_css_url="/static/vendor/swagger-ui.css",
                                   swagger_favicon_url="/static/vendor/favicon.png")

    @app.get("/healthz")
    def healthz() -> dict:
        """Liveness: the store answers; says which database and model are configured."""
        askdb.store.ping()
        location = askdb.settings.database
        on_file = not isinstance(location, str)  # a postgresql:// URL is checked per query, not here
        return {"status": "ok", "database": location.name if on_file else askdb.database().label,
                "database_exists": location.exists() if on_file else None, "llm": askdb.settings.llm}

    return app
