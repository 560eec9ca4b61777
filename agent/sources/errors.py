"""The errors of every data source, under one root, so a caller catches `SourceError` once.

Each engine translates its driver's errors into these (by result code or SQLSTATE, never by
message words); the messages are written for the model and the analyst to act on. No status
codes here: app/errors.py maps these classes to HTTP statuses.
"""

from __future__ import annotations

from storage.errors import AskdbError


class SourceError(AskdbError):
    """Base class of every data-source error."""


class SourceUnavailable(SourceError):
    """The source cannot be reached or read: a missing, corrupt or locked file, a server that is down,
    a role that is refused."""


class SQLRejected(SourceError):
    """The SQL is not one read-only query; ``reason`` tells the model what to change."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class QueryFailed(SourceError):
    """The engine raised an error for the query; the message is the engine's."""


class QueryOutOfMemory(QueryFailed):
    """The query needed more memory than its limit (`out_of_memory` words it)."""


def out_of_memory(max_memory_mb: int) -> QueryOutOfMemory:
    """The error of a query past ``max_memory_mb`` (ASKDB_SQL_MAX_MEMORY_MB), worded the same on every engine."""
    return QueryOutOfMemory(f"the query needed more than {max_memory_mb} MB of memory (ASKDB_SQL_MAX_MEMORY_MB); "
                            "select fewer or smaller values, or add LIMIT")


class QueryTimeout(SourceError):
    """The query ran past the wall-clock limit and was stopped."""


def timed_out(time_limit_s: float) -> QueryTimeout:
    """The error of a query stopped at its time limit (ASKDB_SQL_TIMEOUT), worded the same on every engine."""
    return QueryTimeout(f"query stopped after {time_limit_s} s; add filters or LIMIT")


class QueryBusy(QueryTimeout):
    """Every query worker stayed busy for the whole wait; nothing ran. Retry in a moment."""


class UnknownTable(SourceError):
    """No table or view of that name; the message lists close names."""


class UnknownColumn(SourceError):
    """The table has no column of that name; the message lists close names."""
