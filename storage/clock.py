"""The one timestamp format askdb writes: ISO 8601 in UTC, microseconds, a trailing `Z`.

Microseconds, so that "newest first" orders rows written in the same millisecond; the `Z`
form is what PostgreSQL's columns are read back as (`PostgresDialect.timestamp` in
storage/postgres/backend.py), so both backends hand out the same strings and they sort as text.
"""

from __future__ import annotations

from datetime import datetime, timezone


def utc_now() -> str:
    """Now, as `2026-11-24T05:03:51.123456Z`."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")
