"""Turn leases: at most one running turn per conversation, across every process sharing the store.

A lease is a row per thread with an owner (`node:pid:start:token`, `new_owner`), an expiry on the store's own
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
from pathlib import Path

from storage.errors import ConversationNotFound, LeaseLost
from storage.sql import Database
from storage.threads import require_conversation

LEASE_SECONDS = 30.0


def _node() -> str:
    """This machine and process namespace. A host name alone is shared by containers (two on one
    host, or the same image elsewhere), and a pid means nothing in another namespace: judged by
    host:pid, one container took over another's live turn because that pid did not exist in its own."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()[:8]
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        boot, namespace = uuid.uuid4().hex[:8], 0  # unknown: never judged gone from here
    return f"{socket.gethostname()}/{boot}/{namespace}"


def _started(pid: int) -> str | None:
    """When process `pid` started (clock ticks since boot), or None when there is none: with the pid it
    names one process, even after the pid is reused."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


NODE = _node()


def new_owner() -> str:
    """A lease owner, unique across processes and containers: `node:pid:start:token`."""
    return f"{NODE}:{os.getpid()}:{_started(os.getpid())}:{uuid.uuid4().hex[:8]}"


def _owner_is_gone(owner: str) -> bool:
    """True when the owner was a process of this very node (machine and pid namespace) that has ended;
    an owner elsewhere, or written in an older form, keeps its lease until it expires."""
    parts = owner.split(":")
    if len(parts) != 4 or parts[0] != NODE or not parts[1].isdigit():
        return False
    return _started(int(parts[1])) != parts[2]


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
