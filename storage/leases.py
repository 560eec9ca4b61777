"""Turn leases: at most one running turn per conversation, across every process sharing the store.

A lease is a row per thread with an owner (`host:pid:token`), an expiry on the store's own
clock (PostgreSQL's, which every app server shares), and whether a stop was asked of the turn
(from any server). The turn renews it as it goes, and confirms it in each of its writes (a turn
whose lease was taken over writes nothing more); a lease
left by a killed process is taken over when it expires, or at once when its owner is a process
on this host that no longer exists. Taking one locks the conversation's row (PostgreSQL; SQLite
has one writer), so of two processes asking at once exactly one gets it.
"""

from __future__ import annotations

import os
import socket
import uuid

from storage.errors import ConversationNotFound, LeaseLost
from storage.sql import Database
from storage.threads import require_conversation

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
    """Acquire, renew and release turn leases in the store `db`."""

    def __init__(self, db: Database, *, seconds: float = LEASE_SECONDS):
        self.db, self.seconds = db, seconds

    def acquire(self, thread_id: str, owner: str) -> str | None:
        """Take the lease; return None on success, or the owner who holds it.

        Raises:
            ConversationNotFound: no such conversation.
        """
        d = self.db.dialect
        with self.db.write() as tx:
            require_conversation(tx, thread_id, lock=True)
            held = tx.row(f"SELECT owner, CASE WHEN expires_at > {d.epoch_now} THEN 1 ELSE 0 END AS live"
                          " FROM turn_leases WHERE thread_id = ?", (thread_id,))
            if held is not None and held["owner"] != owner and held["live"] and not _owner_is_gone(held["owner"]):
                return held["owner"]
            tx.execute(
                f"INSERT INTO turn_leases (thread_id, owner, acquired_at, expires_at) VALUES (?, ?, {d.now},"
                f" {d.epoch_now} + ?) ON CONFLICT (thread_id) DO UPDATE SET owner = excluded.owner,"
                " acquired_at = excluded.acquired_at, expires_at = excluded.expires_at, stop_requested = 0",
                (thread_id, owner, self.seconds))
        return None

    def confirm(self, thread_id: str, owner: str) -> bool:
        """Check, in the caller's write transaction, that `owner` still holds the lease, and keep it so
        until that transaction ends: the conversation's row is locked, as `acquire` locks it first (on
        PostgreSQL a takeover waits, in the same order, so the two never deadlock). Returns whether a
        stop was asked of the turn (`request_stop`): read here, in a query each step makes anyway.

        Raises:
            LeaseLost: the lease is another's, or gone (released by whoever took it over).
            ConversationNotFound: the conversation was deleted.
        """
        with self.db.write() as tx:
            found = tx.row("SELECT (SELECT owner FROM turn_leases l WHERE l.thread_id = c.thread_id) AS owner,"
                           " (SELECT stop_requested FROM turn_leases l WHERE l.thread_id = c.thread_id) AS stop_requested"
                           f" FROM conversations c WHERE c.thread_id = ?{self.db.dialect.for_update}", (thread_id,))
            if found is None:
                raise ConversationNotFound(thread_id)
            if found["owner"] != owner:
                raise LeaseLost(thread_id)
            return bool(found["stop_requested"])

    def renew(self, thread_id: str, owner: str) -> None:
        with self.db.write() as tx:
            tx.execute(f"UPDATE turn_leases SET expires_at = {self.db.dialect.epoch_now} + ?"
                       " WHERE thread_id = ? AND owner = ?", (self.seconds, thread_id, owner))

    def release(self, thread_id: str, owner: str) -> None:
        with self.db.write() as tx:
            tx.execute("DELETE FROM turn_leases WHERE thread_id = ? AND owner = ?", (thread_id, owner))

    def request_stop(self, thread_id: str) -> bool:
        """Ask the live turn holding this conversation, in whichever process, to stop before its next
        model call (it reads the flag as it `confirm`s its lease); False when no live turn holds it.
        `is_held` first: whether the owner process is gone is asked of the OS, not the store."""
        if not self.is_held(thread_id):
            return False
        with self.db.write() as tx:
            cursor = tx.execute(f"UPDATE turn_leases SET stop_requested = 1 WHERE thread_id = ?"
                                f" AND expires_at > {self.db.dialect.epoch_now}", (thread_id,))
        return cursor.rowcount > 0

    def is_held(self, thread_id: str) -> bool:
        """Whether a live turn (in any process) holds this conversation."""
        held = self.db.row(f"SELECT owner, CASE WHEN expires_at > {self.db.dialect.epoch_now} THEN 1 ELSE 0 END"
                           " AS live FROM turn_leases WHERE thread_id = ?", (thread_id,))
        return held is not None and bool(held["live"]) and not _owner_is_gone(held["owner"])
