"""askdb's error root and the store's errors: each names a condition; none knows about HTTP."""


class AskdbError(Exception):
    """Root of every error askdb raises on purpose: the store's, the data sources' and the SQL
    guard's, the model's, memory's, feedback's and the web's own. `app/errors.py` maps them to
    statuses. It lives here, in the lowest layer, so that every layer can subclass it."""


class StoreError(AskdbError):
    """Base of every error the store raises."""


class ConversationNotFound(StoreError):
    """No conversation with this thread id belongs to this user (another user's counts as missing)."""

    def __init__(self, thread_id: str):
        super().__init__(f"conversation {thread_id!r} not found")
        self.thread_id = thread_id


class VersionConflict(StoreError):
    """The conversation changed since it was loaded; the save was refused, nothing was overwritten."""

    def __init__(self, thread_id: str, expected: int, actual: int):
        super().__init__(
            f"conversation {thread_id!r} was changed elsewhere (expected version {expected}, "
            f"found {actual}); reload it and try again"
        )
        self.thread_id, self.expected, self.actual = thread_id, expected, actual


class CorruptState(StoreError):
    """A row's state_data is not a valid state; other conversations are unaffected."""

    def __init__(self, thread_id: str, detail: str):
        super().__init__(f"conversation {thread_id!r} has an unreadable state: {detail}")
        self.thread_id, self.detail = thread_id, detail


class InvalidThreadId(StoreError):
    """A thread id that is empty, too long or has characters outside [A-Za-z0-9_-]."""

    def __init__(self, thread_id: str):
        super().__init__(f"invalid thread id {thread_id[:80]!r}: use 1-64 letters, digits, '-' or '_'")
        self.thread_id = thread_id


class ResultNotFound(StoreError):
    """No stored query result with this number in this conversation."""


class BackupFailed(StoreError):
    """A backup could not be written (the message says why: pg_dump missing or failing)."""


class StoreUnavailable(StoreError):
    """The store cannot be reached or written (PostgreSQL down, a full or read-only disk); nothing
    was written by the failed call, and what was saved before is intact."""


class UnsupportedStore(StoreError, ValueError):
    """The store setting names something askdb cannot keep conversations in (a mysql:// URL)."""


class StoreConflict(StoreError):
    """The store rolled a write back because a concurrent one met it (PostgreSQL found a deadlock or
    could not serialize the two); nothing was written, and trying again is safe."""


class LeaseLost(StoreConflict):
    """A turn's lease on its conversation is no longer its own: it expired (its renewals failed) and another
    turn, or a recovery, took the conversation. The turn's write was refused; nothing of it was written."""

    def __init__(self, thread_id: str):
        super().__init__(f"this turn no longer holds conversation {thread_id!r}: its lease expired and was taken "
                         "over, so what it did since is not saved; ask again")
        self.thread_id = thread_id


class StoreTimeout(StoreUnavailable):
    """The store stopped a statement before it finished (PostgreSQL's statement_timeout or lock_timeout);
    nothing was written. The message keeps the server's reason."""


class StoreCorrupt(StoreError):
    """The store's file fails SQLite's integrity check; it is not served (restore a backup)."""


class InvalidExport(StoreError, ValueError):
    """A document given to import is not a conversation export, or part of it is not valid;
    nothing was written."""
