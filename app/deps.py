"""Dependencies named once, so a route's signature reads as the list of what it needs."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query, Request

from app.auth import resolve_user
from app.core import AskDB


def get_askdb(request: Request) -> AskDB:
    return request.app.state.askdb


def get_user(request: Request) -> str:
    askdb: AskDB = request.app.state.askdb
    return resolve_user(askdb.settings, headers=dict(request.headers), cookies=dict(request.cookies))


AskDBDep = Annotated[AskDB, Depends(get_askdb)]
UserDep = Annotated[str, Depends(get_user)]


def get_source(askdb: AskDBDep, user: UserDep,
               source: Annotated[str, Query(max_length=64, description="The data source: `default`, a name "
                                            "from ASKDB_SOURCES, or `uploads`; omit for the default.")] = "") -> str:
    """The data source a page or call names (`?source=`), checked for this user (422 when unknown)."""
    return askdb.sources.choose(source or None, user_id=user)


SourceDep = Annotated[str, Depends(get_source)]
