"""PostgresTurnLeases: `storage.leases.TurnLeases` shared by every app server on one PostgreSQL store.

Taking a lease locks the conversation's row (SELECT ... FOR UPDATE), so two servers asking
for the same thread at once are served one after the other: exactly one gets it. Expiry
uses the server's clock, which every app server shares.
"""

from __future__ import annotations


from storage.conversations import check_thread_id
from storage.errors import ConversationNotFound
from storage.leases import LEASE_SECONDS, _owner_is_gone
from storage.postgres.conversations import PostgresConversationStore

_NOW = "extract(epoch FROM clock_timestamp())"


class PostgresTurnLeases:
    """Acquire, renew and release turn leases in the PostgreSQL store."""

    def __init__(self, store: PostgresConversationStore, *, seconds: float = LEASE_SECONDS):
        self.store, self.seconds = store, seconds

    def acquire(self, thread_id: str, owner: str) -> str | None:
        """Take the lease; return None on success, or the owner who holds it.

        Raises:
            ConversationNotFound: no such conversation.
        """
        check_thread_id(thread_id)
        with self.store._write() as conn:
            if conn.execute("SELECT 1 FROM conversations WHERE thread_id = %s FOR UPDATE", (thread_id,)).fetchone() is None:
                raise ConversationNotFound(thread_id)
            row = conn.execute(f"SELECT owner, expires_at > {_NOW} FROM turn_leases WHERE thread_id = %s",
                               (thread_id,)).fetchone()
            if row is not None and row[0] != owner and row[1] and not _owner_is_gone(row[0]):
                return row[0]
            conn.execute(
                f"INSERT INTO turn_leases (thread_id, owner, expires_at) VALUES (%s, %s, {_NOW} + %s)"
                " ON CONFLICT (thread_id) DO UPDATE SET owner = excluded.owner, acquired_at = clock_timestamp(),"
                " expires_at = excluded.expires_at", (thread_id, owner, self.seconds))
        return None

    def renew(self, thread_id: str, owner: str) -> None:
        with self.store._write() as conn:
            conn.execute(f"UPDATE turn_leases SET expires_at = {_NOW} + %s WHERE thread_id = %s AND owner = %s",
                         (self.seconds, thread_id, owner))

    def release(self, thread_id: str, owner: str) -> None:
        with self.store._write() as conn:
            conn.execute("DELETE FROM turn_leases WHERE thread_id = %s AND owner = %s", (thread_id, owner))

    def is_held(self, thread_id: str) -> bool:
        """Whether a live turn (on any server) holds this conversation."""
        rows = self.store._read(f"SELECT owner, expires_at > {_NOW} AS live FROM turn_leases WHERE thread_id = %s",
                                (thread_id,))
        return bool(rows) and rows[0]["live"] and not _owner_is_gone(rows[0]["owner"])


__all__ = ["PostgresTurnLeases"]
