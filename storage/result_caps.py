"""Caps on the query results a conversation keeps (issue 18): one turn of large results grew a
store by 119 MB. Rows past a cap are not stored; the stored result says it was truncated."""

from __future__ import annotations

import json
from typing import Any


class ResultCaps:
    """Mixed into both stores; the app sets the two caps from ASKDB_MAX_RESULT_BYTES and
    ASKDB_MAX_CONVERSATION_RESULT_BYTES."""

    max_result_bytes: int = 2_000_000
    max_conversation_result_bytes: int = 20_000_000

    def _rows_within_caps(self, rows: list[list[Any]], *, stored_bytes: int) -> tuple[str, int, bool]:
        """The rows as stored JSON, how many, and whether any were left out to stay within both caps
        (`stored_bytes`: what the conversation's results already hold)."""
        budget = min(self.max_result_bytes, self.max_conversation_result_bytes - stored_bytes)
        encoded = [json.dumps(row, default=str) for row in rows]
        kept, size = 0, 2  # the brackets
        for text in encoded:
            if size + len(text) + 1 > budget:
                break
            size += len(text) + 1
            kept += 1
        return "[" + ",".join(encoded[:kept]) + "]", kept, kept < len(rows)
