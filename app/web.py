"""The FastAPI application: pages and the JSON API over one AskDB core."""

from __future__ import annotations

from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from app.core import AskDB
from app.settings import ROOT, Settings

templates = Jinja2Templates(directory=ROOT / "templates")


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    askdb = AskDB(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        yield
        askdb.close()

    app = FastAPI(title="askdb", summary="Ask questions about a SQL database.", lifespan=lifespan)
    app.state.askdb = askdb
    app.mount("/static", StaticFiles(directory=ROOT / "app" / "static"), name="static")

    @app.get("/healthz")
    def healthz() -> dict:
        """Liveness: the store answers and the analytics database file is there."""
        askdb.store.conn.execute("SELECT 1")
        return {"status": "ok", "database": str(settings.database), "database_exists": settings.database.exists(),
                "llm": settings.llm}

    @app.get("/")
    def index(request: Request, q: str | None = None, page: int = 1):
        """The user's conversations, newest first."""
        page = max(1, page)
        per_page = 50
        listing = askdb.store.list(user_id="default", search=q, limit=per_page, offset=(page - 1) * per_page)
        return templates.TemplateResponse(request, "index.html", {
            "conversations": listing.items, "total": listing.total, "q": q or "", "page": page,
            "pages": max(1, -(-listing.total // per_page)),
        })

    return app
