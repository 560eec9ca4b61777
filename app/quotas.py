"""A bound on the analytics work one user may have running at once (issue 18, item 10).

Questions being answered and SQL page queries each hold one of the user's slots; the worker
pool (agent/sources/query_pool.py) bounds the total. A user over the bound gets 429 with Retry-After,
so one user's bombs cannot take every worker from the others. With ASKDB_AUTH=none every
request is the one local user, `default`, so there is no per-user bound, only the pool's.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from storage.errors import AskdbError


class TooManyRequests(AskdbError):
    """The user already has as many questions and queries running as allowed; retry in a moment."""


class UserSlots:
    """At most ``per_user`` slots held by one user at a time (None: no bound)."""

    def __init__(self, per_user: int | None) -> None:
        self.per_user = per_user
        self._held: dict[str, int] = {}
        self._lock = threading.Lock()

    def acquire(self, user_id: str) -> None:
        """Take a slot, or raise TooManyRequests at once (never waits)."""
        with self._lock:
            held = self._held.get(user_id, 0)
            if self.per_user is not None and held >= self.per_user:
                raise TooManyRequests(f"you have {held} questions or queries running (ASKDB_MAX_RUNNING_PER_USER); "
                                      "wait for one to finish, then retry")
            self._held[user_id] = held + 1

    def release(self, user_id: str) -> None:
        with self._lock:
            held = self._held.get(user_id, 0) - 1
            if held > 0:
                self._held[user_id] = held
            else:
                self._held.pop(user_id, None)

    @contextmanager
    def hold(self, user_id: str) -> Iterator[None]:
        self.acquire(user_id)
        try:
            yield
        finally:
            self.release(user_id)
