"""Dependencies named once, so a route's signature reads as the list of what it needs."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.auth import resolve_user
from app.core import AskDB


def get_askdb(request: Request) -> AskDB:
    return request.app.state.askdb


def get_user(request: Request) -> str:
    askdb: AskDB = request.app.state.askdb
    return resolve_user(askdb.settings, headers=dict(request.headers), cookies=dict(request.cookies))


AskDBDep = Annotated[AskDB, Depends(get_askdb)]
UserDep = Annotated[str, Depends(get_user)]
