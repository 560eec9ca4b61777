"""The JSON API (OpenAPI at /docs). Thin: parse, call the core, shape the reply."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.concurrency import run_in_threadpool

from agent.loop import TurnEvent
from agent.state import AgentState, Message
from app.deps import AskDBDep, UserDep
from app.downloads import stored_result
from app.schemas import (
    ChatReply, ChatRequest, ConversationCreate, ConversationList, ConversationPublic, ConversationUpdate,
    HistoryPage, StepList,
)
from app.turns import RunningTurn

router = APIRouter(prefix="/api")


@router.get("/conversations", response_model=ConversationList)
def list_conversations(askdb: AskDBDep, user: UserDep, q: str | None = None,
                       limit: int = Query(50, ge=1, le=500), offset: int = Query(0, ge=0)):
    """List the user's conversations, newest first."""
    page = askdb.store.list(user_id=user, search=q, limit=limit, offset=offset)
    return ConversationList(data=[ConversationPublic.of(c) for c in page.items], count=page.total)


@router.post("/conversations", response_model=ConversationPublic, status_code=201)
def create_conversation(body: ConversationCreate, askdb: AskDBDep, user: UserDep):
    """Start an empty conversation, bound to a data source (`source`; omit for the default)."""
    state = AgentState(max_steps=askdb.settings.max_steps, source=askdb.sources.choose(body.source, user_id=user))
    created = askdb.store.create(user_id=user, state=state, title=body.title, tags=body.tags)
    return ConversationPublic.of(created)


@router.post("/conversations/import", response_model=ConversationPublic, status_code=201)
def import_conversation(document: Annotated[Any, Body()], askdb: AskDBDep, user: UserDep):
    """Add a conversation from an export (`GET /api/conversations/{id}/export`) as a new one of yours."""
    return ConversationPublic.of(askdb.import_conversation(document, user_id=user))


@router.get("/conversations/{thread_id}/export")
def export_conversation(thread_id: str, askdb: AskDBDep, user: UserDep):
    """The whole conversation (metadata, state, steps, results, archived messages) as a JSON file."""
    document = askdb.store.export_conversation(thread_id, user_id=user)
    return JSONResponse(document, headers={
        "Content-Disposition": f'attachment; filename="askdb-conversation-{thread_id}.json"'})


@router.get("/conversations/{thread_id}", response_model=ConversationPublic)
def get_conversation(thread_id: str, askdb: AskDBDep, user: UserDep):
    """One conversation's metadata."""
    return ConversationPublic.of(askdb.store.get(thread_id, user_id=user))


@router.patch("/conversations/{thread_id}", response_model=ConversationPublic)
def update_conversation(thread_id: str, body: ConversationUpdate, askdb: AskDBDep, user: UserDep):
    """Rename or retag a conversation."""
    return ConversationPublic.of(askdb.store.update(thread_id, user_id=user, title=body.title, tags=body.tags))


@router.delete("/conversations/{thread_id}", status_code=204)
def delete_conversation(thread_id: str, askdb: AskDBDep, user: UserDep):
    """Delete a conversation and everything that belongs to it."""
    askdb.store.delete(thread_id, user_id=user)
    return Response(status_code=204)


@router.get("/conversations/{thread_id}/state")
def get_state(thread_id: str, askdb: AskDBDep, user: UserDep):
    """The raw AgentState of a conversation."""
    return JSONResponse(askdb.store.load(thread_id, user_id=user).state.model_dump(mode="json"))


@router.get("/conversations/{thread_id}/steps", response_model=StepList)
def get_steps(thread_id: str, askdb: AskDBDep, user: UserDep, after_id: int = Query(0, ge=0)):
    """Every step of a conversation as stored the moment it happened."""
    steps = askdb.store.steps(thread_id, user_id=user, after_id=after_id)
    return StepList(data=[{"id": s.id, **s.data} for s in steps], count=len(steps))


@router.get("/conversations/{thread_id}/results/{result_id}.{fmt}")
def download_result(thread_id: str, result_id: int, fmt: str, askdb: AskDBDep, user: UserDep):
    """A stored query result as CSV (with a BOM, so Excel reads UTF-8) or JSON, named after the conversation."""
    return stored_result(askdb.store, thread_id, result_id, user_id=user, fmt=fmt)


@router.get("/conversations/{thread_id}/events")
def follow_events(thread_id: str, askdb: AskDBDep, user: UserDep, after_step: int = Query(-1, ge=-1)):
    """Server-Sent Events of a running turn (for a page reloaded mid-turn); ends at once if none runs."""
    return _event_stream(askdb.follow(thread_id, user_id=user, after_step=after_step))


@router.get("/chat/history", response_model=HistoryPage)
def chat_history(thread_id: str, askdb: AskDBDep, user: UserDep, limit: int = Query(100, ge=1, le=1000),
                 offset: int = Query(0, ge=0)):
    """The messages of a conversation, oldest first, paged (archived messages included)."""
    page = askdb.store.archive(Message).history(thread_id, user_id=user, offset=offset, limit=limit)
    return HistoryPage(thread_id=thread_id, data=page.items, count=page.total)


@router.post("/chat", responses={200: {"content": {"text/event-stream": {}, "application/json": {}}}})
async def chat(body: ChatRequest, request: Request, askdb: AskDBDep, user: UserDep):
    """Ask a question. Streams each step and the answer as Server-Sent Events, or returns one
    JSON reply when the client sends `Accept: application/json`."""
    turn = await run_in_threadpool(askdb.start_turn, body.question, user_id=user, thread_id=body.thread_id,
                                   source=body.source)
    if "text/event-stream" not in request.headers.get("accept", "") and \
            "application/json" in request.headers.get("accept", ""):
        return await _json_reply(turn)
    return _event_stream(turn.follow())


async def _json_reply(turn: RunningTurn) -> ChatReply:
    events = [e async for e in turn.follow() if e is not None]
    answer = next((e.answer for e in reversed(events) if e.type == "answer"), None)
    error = next((e.message for e in events if e.type == "error"), None)
    return ChatReply(thread_id=turn.thread_id, answer=answer, steps=[e.step for e in events if e.step], error=error)


def _event_stream(events: AsyncIterator[TurnEvent | None]) -> StreamingResponse:
    """Server-Sent Events from an async iterator: a follower waits without holding a thread."""
    async def stream() -> AsyncIterator[str]:
        async for event in events:
            yield ": keepalive\n\n" if event is None else _sse(event)
        yield "event: done\ndata: {}\n\n"

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


def _sse(event: TurnEvent) -> str:
    return f"event: {event.type}\ndata: {event.model_dump_json(exclude_none=True)}\n\n"

