"""Running turns in the background, so a turn outlives the request that started it.

The request that asks, and any page reloaded mid-turn, follow the same turn by
reading its events from here; the steps themselves are already in the store.
One turn per conversation at a time: a second one is refused (HTTP 409).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator

from agent.loop import TurnEvent
from storage.errors import AskdbError

# How often a follower looks for new events: following polls instead of waiting on the
# condition, so a follower holds no worker thread (100 followers stalled the server, issue 18).
POLL_S = 0.05


class TurnInProgress(AskdbError):
    """A turn is already running in this conversation; wait for it to finish."""

    def __init__(self, thread_id: str):
        super().__init__(f"a question is already being answered in conversation {thread_id!r}; "
                         "wait for it to finish, then ask again")
        self.thread_id = thread_id


class RunningTurn:
    """The events of one turn so far, and a way to wait for more."""

    def __init__(self, thread_id: str):
        self.thread_id = thread_id
        self.events: list[TurnEvent] = []
        self.finished = False
        self.stop = threading.Event()  # set by the Stop button; the loop checks it between steps
        self._changed = threading.Condition()

    def publish(self, event: TurnEvent) -> None:
        with self._changed:
            self.events.append(event)
            self._changed.notify_all()

    def publish_draft(self, text: str, *, restart: bool = False) -> None:
        """More of the answer's text as the model writes it (`agent.models.answer_draft`); never stored."""
        self.publish(TurnEvent(type="draft", thread_id=self.thread_id, text=text, restart=restart or None))

    def close(self) -> None:
        with self._changed:
            self.finished = True
            self._changed.notify_all()

    def wait(self) -> None:
        """Block until the turn has finished (the no-JavaScript form's path)."""
        with self._changed:
            self._changed.wait_for(lambda: self.finished)

    async def follow(self, *, start: int = 0, heartbeat_s: float = 10.0) -> AsyncIterator[TurnEvent | None]:
        """Every event from `start` on, as it comes; None as a heartbeat while waiting."""
        position, idle = start, 0.0
        while True:
            with self._changed:
                fresh, done = self.events[position:], self.finished
            position += len(fresh)
            for event in fresh:
                yield event
            if done:
                return
            if fresh:
                idle = 0.0
                continue
            if idle >= heartbeat_s:
                idle = 0.0
                yield None
            await asyncio.sleep(POLL_S)
            idle += POLL_S


class TurnRegistry:
    """The turns running in this process, by thread id."""

    def __init__(self) -> None:
        self._running: dict[str, RunningTurn] = {}
        self._lock = threading.Lock()

    def get(self, thread_id: str) -> RunningTurn | None:
        with self._lock:
            return self._running.get(thread_id)

    def start(self, thread_id: str, events: Callable[[RunningTurn], Iterator[TurnEvent]]) -> RunningTurn:
        """Run `events(turn)` in a background thread, publishing each event.

        Raises:
            TurnInProgress: this conversation already has a running turn.
        """
        with self._lock:
            if thread_id in self._running:
                raise TurnInProgress(thread_id)
            turn = self._running[thread_id] = RunningTurn(thread_id)

        def work() -> None:
            try:
                for event in events(turn):
                    turn.publish(event)
            except Exception as exc:  # the turn's failure is reported to its followers
                turn.publish(TurnEvent(type="error", thread_id=thread_id, message=f"{type(exc).__name__}: {exc}"))
            finally:
                with self._lock:
                    self._running.pop(thread_id, None)
                turn.close()

        threading.Thread(target=work, name=f"turn-{thread_id}", daemon=True).start()
        return turn
