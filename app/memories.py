"""What askdb remembers about the user: the /memories page and the /api/memories endpoints.

Every call is scoped to the requesting user (`UserDep`); another user's memory is
"not found". `DELETE /api/memories` (and the page's "Erase") removes all of the
user's memories and episodes; conversations are deleted on their own pages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request, Response
from fastapi.responses import RedirectResponse
from pydantic import BaseModel, Field

from agent.memory.user_memory import dedupe_hash
from app.deps import UserDep
from app.templating import templates
from storage.base import Episodes, MemoryItems
from storage.memory_items import DuplicateMemory, MemoryItem

router = APIRouter()


@dataclass
class MemoryStores:
    items: MemoryItems
    episodes: Episodes


def get_memory_stores(request: Request) -> MemoryStores:
    """The core store's memory items and episodes (either backend), made once per app."""
    stores = getattr(request.app.state, "memory_stores", None)
    if stores is None:
        store = request.app.state.askdb.store
        stores = request.app.state.memory_stores = MemoryStores(items=store.memory_items(), episodes=store.episodes())
    return stores


MemoryStoresDep = Annotated[MemoryStores, Depends(get_memory_stores)]


class MemoryPublic(BaseModel):
    id: str
    type: str
    text: str
    importance: float
    tags: list[str]
    status: str
    data: dict
    created_at: str
    updated_at: str
    valid_from: str
    valid_to: str | None

    @classmethod
    def of(cls, item: MemoryItem) -> MemoryPublic:
        return cls.model_validate(item.model_dump())


class MemoryList(BaseModel):
    data: list[MemoryPublic]
    count: int
    episodes: int = Field(description="Earlier turns kept for recall.")


class MemoryUpdate(BaseModel):
    text: str | None = Field(None, min_length=1, max_length=2000)
    importance: float | None = Field(None, ge=0, le=1)


class Erased(BaseModel):
    memories: int
    episodes: int


def _update(stores: MemoryStores, item_id: str, user: str, body: MemoryUpdate) -> MemoryItem:
    text = body.text.strip() if body.text is not None else None
    return stores.items.update(item_id, user_id=user, text=text or None, importance=body.importance,
                               dedupe_hash=dedupe_hash(text) if text else None)


# -- JSON ---------------------------------------------------------------------------

@router.get("/api/memories", response_model=MemoryList)
def list_memories(stores: MemoryStoresDep, user: UserDep):
    """The user's memories (active first) and how many earlier turns are kept for recall."""
    items = stores.items.list(user_id=user)
    return MemoryList(data=[MemoryPublic.of(i) for i in items], count=len(items),
                      episodes=stores.episodes.count(user_id=user))


@router.patch("/api/memories/{item_id}", response_model=MemoryPublic)
def update_memory(item_id: str, body: MemoryUpdate, stores: MemoryStoresDep, user: UserDep):
    """Change a memory's text or importance."""
    return MemoryPublic.of(_update(stores, item_id, user, body))


@router.delete("/api/memories/{item_id}", status_code=204)
def delete_memory(item_id: str, stores: MemoryStoresDep, user: UserDep):
    """Delete one memory."""
    stores.items.delete(item_id, user_id=user)
    return Response(status_code=204)


@router.delete("/api/memories", response_model=Erased)
def erase_memories(stores: MemoryStoresDep, user: UserDep):
    """Erase everything askdb remembers about the user: all memories and all episodes."""
    return Erased(memories=stores.items.delete_for_user(user), episodes=stores.episodes.delete_for_user(user))


# -- pages --------------------------------------------------------------------------

@router.get("/memories")
def memories_page(request: Request, stores: MemoryStoresDep, user: UserDep, notice: str = ""):
    """What askdb remembers about you, to edit or delete."""
    items = stores.items.list(user_id=user)
    context = {"settings": request.app.state.askdb.settings, "user": user, "notice": notice[:200],
               "active": [i for i in items if i.status == "active"],
               "archived": [i for i in items if i.status == "archived"],
               "episodes": stores.episodes.count(user_id=user)}
    return templates.TemplateResponse(request, "memories.html", context)


@router.post("/memories/{item_id}/edit")
def edit_memory(item_id: str, stores: MemoryStoresDep, user: UserDep,
                text: Annotated[str, Form(min_length=1, max_length=2000)],
                importance: Annotated[float, Form(ge=0, le=1)]):
    """Save a memory's new text and importance."""
    try:
        _update(stores, item_id, user, MemoryUpdate(text=text, importance=importance))
    except DuplicateMemory:
        # A notice on the page rather than an error page; the JSON API answers 409 (app/errors.py).
        return RedirectResponse("/memories?notice=another+memory+already+says+this", status_code=303)
    return RedirectResponse("/memories", status_code=303)


@router.post("/memories/{item_id}/delete")
def delete_memory_form(item_id: str, stores: MemoryStoresDep, user: UserDep):
    """Delete one memory."""
    stores.items.delete(item_id, user_id=user)
    return RedirectResponse("/memories", status_code=303)


@router.post("/memories/erase")
def erase_form(stores: MemoryStoresDep, user: UserDep, confirm: Annotated[str, Form()] = ""):
    """Erase all memories and episodes (the form asks to type ERASE)."""
    if confirm.strip().upper() != "ERASE":
        return RedirectResponse("/memories?notice=type+ERASE+to+confirm", status_code=303)
    erased = erase_memories(stores, user)
    return RedirectResponse(f"/memories?notice=erased+{erased.memories}+memories+and+{erased.episodes}+earlier+turns",
                            status_code=303)
