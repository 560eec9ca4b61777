"""Turn leases: at most one running turn per conversation, across processes sharing the store.

A lease is a row per thread with an owner (`host:pid:token`) and an expiry. The
turn renews it as it goes; a lease left by a killed process is taken over when it
expires, or at once when its owner is a process on this host that no longer exists.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import time
import uuid

from storage.clock import utc_now
from storage.conversations import ConversationStore, check_thread_id
from storage.errors import ConversationNotFound

LEASE_SECONDS = 30.0
HOST = socket.gethostname()


def new_owner() -> str:
    return f"{HOST}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _owner_is_gone(owner: str) -> bool:
    """True when the owner was a process on this host that has exited."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != HOST or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


class TurnLeases:
    """Acquire, renew and release turn leases in the store's file."""

    def __init__(self, store: ConversationStore, *, seconds: float = LEASE_SECONDS):
        self.store, self.seconds = store, seconds

    def acquire(self, thread_id: str, owner: str) -> str | None:
        """Take the lease; return None on success, or the owner who holds it."""
        check_thread_id(thread_id)
        now = time.time()
        with self.store._write() as conn:
            row = conn.execute("SELECT owner, expires_at FROM turn_leases WHERE thread_id = ?", (thread_id,)).fetchone()
            if row is not None and row[0] != owner and row[1] > now and not _owner_is_gone(row[0]):
                return row[0]
            try:
                conn.execute(
                    "INSERT INTO turn_leases (thread_id, owner, acquired_at, expires_at) VALUES (?, ?, ?, ?)"
                    " ON CONFLICT (thread_id) DO UPDATE SET owner = excluded.owner, acquired_at = excluded.acquired_at,"
                    " expires_at = excluded.expires_at",
                    (thread_id, owner, utc_now(), now + self.seconds),
                )
            except sqlite3.IntegrityError as exc:
                raise ConversationNotFound(thread_id) from exc
        return None

    def renew(self, thread_id: str, owner: str) -> None:
        with self.store._write() as conn:
            conn.execute("UPDATE turn_leases SET expires_at = ? WHERE thread_id = ? AND owner = ?",
                         (time.time() + self.seconds, thread_id, owner))

    def release(self, thread_id: str, owner: str) -> None:
        with self.store._write() as conn:
            conn.execute("DELETE FROM turn_leases WHERE thread_id = ? AND owner = ?", (thread_id, owner))

    def is_held(self, thread_id: str) -> bool:
        """Whether a live turn (in any process) holds this conversation."""
        rows = self.store._read("SELECT owner, expires_at FROM turn_leases WHERE thread_id = ?", (thread_id,))
        return bool(rows) and rows[0][1] > time.time() and not _owner_is_gone(rows[0][0])
