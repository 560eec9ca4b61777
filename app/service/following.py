"""Following a running turn: directly when it runs in this process, else through the steps it stores."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from agent.loop import TurnEvent
from agent.state import AgentState, Step
from app.turns import TurnRegistry
from storage.base import Store


async def follow_turn(turns: TurnRegistry, leases, store: Store[AgentState], thread_id: str, *, user_id: str,
                      after_step: int, poll_s: float) -> AsyncIterator[TurnEvent | None]:
    """The events of the conversation's running turn after `after_step`; None is a heartbeat.

    A turn running in this process is followed directly; one running in another process
    (several workers on one store) is followed through the steps it stores, until its
    lease is released. Nothing when no turn runs. A follower holds no thread while it
    waits: only the store reads run in one, briefly.
    """
    running = turns.get(thread_id)
    if running is not None:
        async for event in running.follow():
            if event is None or not (event.step and event.step.step_index <= after_step):
                yield event
        return
    seen_id = 0
    while True:
        held, steps = await asyncio.to_thread(
            lambda: (leases.is_held(thread_id), store.steps(thread_id, user_id=user_id, after_id=seen_id)))
        for stored in steps:
            seen_id = stored.id
            step = Step.model_validate(stored.data)
            if step.step_index > after_step:
                yield TurnEvent(type="step", thread_id=thread_id, turn_index=step.turn_index, step=step)
        if not held:
            return
        yield None
        await asyncio.sleep(poll_s)
