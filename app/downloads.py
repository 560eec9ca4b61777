"""Query results as files: CSV with a BOM (so Excel reads UTF-8), or JSON, with readable names.

One place for the page's and the API's downloads of a stored result, and the SQL page's CSV.
"""

from __future__ import annotations

import json
from typing import Any, Literal, Sequence
from urllib.parse import quote

from fastapi.responses import Response

from app.formatting import to_csv
from app.views import file_stem
from storage.base import Store
from storage.errors import ResultNotFound


def csv_response(columns: Sequence[str], rows: Sequence[Sequence[Any]], name: str) -> Response:
    return Response("\ufeff" + to_csv(columns, rows), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": _disposition(name)})


def stored_result(store: Store, thread_id: str, result_id: int, *, user_id: str,
                  fmt: Literal["csv", "json"]) -> Response:
    """A stored result, named after the conversation and the turn ("payload-mass-by-orbit-turn-2.csv").

    Raises:
        ResultNotFound, ConversationNotFound (another user's conversation is not found either).
    """
    if fmt not in ("csv", "json"):
        raise ResultNotFound(f"no result {result_id}.{fmt} in conversation {thread_id}")
    conversation = store.get(thread_id, user_id=user_id)
    result = store.load_result(thread_id, result_id, user_id=user_id)
    turn = next((s.data.get("turn_index", 0) for s in store.steps(thread_id, user_id=user_id)
                 if s.data.get("result_id") == result_id), result_id - 1)
    name = f"{file_stem(conversation.title, turn)}.{fmt}"
    if fmt == "csv":
        return csv_response(result.columns, result.rows, name)
    body = json.dumps({"sql": result.sql, "columns": result.columns, "rows": result.rows,
                       "row_count": result.row_count, "truncated": result.truncated}, ensure_ascii=False, default=str)
    return Response(body, media_type="application/json", headers={"Content-Disposition": _disposition(name)})


def _disposition(name: str) -> str:
    """An ASCII file name for old clients and the UTF-8 one (RFC 6266) for the rest."""
    return (f"attachment; filename=\"{name.encode('ascii', 'replace').decode().replace('?', '_')}\"; "
            f"filename*=UTF-8''{quote(name)}")
