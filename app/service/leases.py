"""Turn leases as a turn holds them: taken when the turn begins, renewed on a timer, released
with the final state (agent.turn_recorder calls `take` and `release` inside its transactions)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from app.turns import TurnInProgress
from storage.leases import new_owner

log = logging.getLogger(__name__)


class LeaseKeeper:
    """Renews the leases this process holds, from one thread, every third of their length: a turn
    that finishes sooner renews none (it used to renew after every step)."""

    def __init__(self, leases, *, seconds: float):
        self.leases, self.seconds = leases, seconds
        self._held: dict[str, str] = {}  # thread_id -> owner
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def hold(self, *, busy: Callable[[str], bool] = lambda thread_id: False) -> TurnLease:
        """A lease to take for one turn; `busy(thread_id)` true also refuses it (a turn of this process
        still finishing after its lease was released)."""
        return TurnLease(self, busy)

    def _add(self, thread_id: str, owner: str) -> None:
        with self._lock:
            self._held[thread_id] = owner
            if self._thread is None:
                self._thread = threading.Thread(target=self._renew_until_closed, name="lease-keeper", daemon=True)
                self._thread.start()

    def held(self) -> set[str]:
        """The conversations whose leases this process renews."""
        with self._lock:
            return set(self._held)

    def _drop(self, thread_id: str, owner: str) -> None:
        with self._lock:
            if self._held.get(thread_id) == owner:
                del self._held[thread_id]

    def _renew_until_closed(self) -> None:
        while not self._wake.wait(self.seconds / 3):
            with self._lock:
                held = list(self._held.items())
            for thread_id, owner in held:
                try:
                    self.leases.renew(thread_id, owner)
                except Exception:  # noqa: BLE001 - a store hiccup: the next round tries again, before expiry
                    log.warning("lease of %s not renewed", thread_id, exc_info=True)

    def close(self) -> None:
        """Stop renewing, and release the leases of turns a shutdown cuts short: another server may take
        their conversations at once rather than when the leases expire (minutes), the next turn there
        closes their questions as interrupted, and whatever those turns still try to write is refused
        (`LeaseLost`)."""
        self._wake.set()
        with self._lock:
            held, self._held = list(self._held.items()), {}
        for thread_id, owner in held:
            try:
                self.leases.release(thread_id, owner)
            except Exception:  # noqa: BLE001 - the store is going away too: the lease expires on its own
                log.warning("lease of %s not released at shutdown", thread_id, exc_info=True)


class TurnLease:
    """One turn's lease on its conversation (`agent.turn_recorder.Hold`)."""

    def __init__(self, keeper: LeaseKeeper, busy: Callable[[str], bool]):
        self.keeper, self.busy, self.owner = keeper, busy, new_owner()
        self.thread_id: str | None = None
        self.stop_asked = False

    def take(self, thread_id: str) -> None:
        """Raises:
            TurnInProgress: a live turn (in any process) holds the conversation.
        """
        if self.busy(thread_id) or self.keeper.leases.acquire(thread_id, self.owner) is not None:
            raise TurnInProgress(thread_id)
        self.thread_id = thread_id
        self.keeper._add(thread_id, self.owner)

    def confirm(self) -> None:
        """Raises:
            LeaseLost: the lease expired and was taken over (called in the turn's write transactions).
        """
        if self.thread_id is not None:
            self.stop_asked = self.keeper.leases.confirm(self.thread_id, self.owner)

    def stop_requested(self) -> bool:
        """Whether a stop was asked of this turn through the store (Stop pressed on another server), as
        read when the turn last confirmed its lease (each step's write): no query of its own."""
        return self.stop_asked

    def release(self) -> None:
        """Let the conversation take questions again (nothing when not taken; releasing twice is harmless).
        Renewal stops even when the store refuses the release: the lease then expires on its own, where
        renewing it on would keep the conversation refusing questions until this process ends."""
        if self.thread_id is None:
            return
        try:
            self.keeper.leases.release(self.thread_id, self.owner)
        finally:
            self.keeper._drop(self.thread_id, self.owner)
