"""What every store that writes to a conversation's rows shares: the thread id rule, short titles,
the owner check and the optimistic version check of a state save (the conversation store's
`save` and the archive's `archive` both save a state under it).
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from storage.errors import ConversationNotFound, InvalidThreadId, VersionConflict
from storage.sql import Transaction

THREAD_ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
TITLE_LENGTH = 50


def check_thread_id(thread_id: str) -> str:
    if not isinstance(thread_id, str) or not THREAD_ID_PATTERN.match(thread_id):
        raise InvalidThreadId(str(thread_id))
    return thread_id


def short_title(text: str) -> str:
    """`text` on one line, at most TITLE_LENGTH characters: a longer one is cut at a word boundary
    (anywhere, for scripts without spaces) and ends with an ellipsis, so a list never shows "sinc"."""
    text = " ".join(text.split())
    if len(text) <= TITLE_LENGTH:
        return text
    cut = text[:TITLE_LENGTH - 1]
    space = cut.rfind(" ")
    if space >= TITLE_LENGTH // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-") + "…"


def require_conversation(tx: Transaction, thread_id: str, *, user_id: str | None = None, lock: bool = False) -> None:
    """Raise ConversationNotFound unless the conversation exists (and is `user_id`'s when given);
    `lock`: hold its row until the transaction ends (PostgreSQL; SQLite's writer is alone)."""
    check_thread_id(thread_id)
    owner = "" if user_id is None else " AND user_id = ?"
    found = tx.row(f"SELECT 1 AS found FROM conversations WHERE thread_id = ?{owner}"
                   f"{tx.dialect.for_update if lock else ''}", (thread_id, *([] if user_id is None else [user_id])))
    if found is None:
        raise ConversationNotFound(thread_id)


def state_columns(state: BaseModel) -> tuple[int, int, str | None]:
    """(messages, the user's questions, the data source) of a state, kept beside it as live_messages,
    live_questions and live_source (migration 9) so that no read parses state_data for them."""
    messages = getattr(state, "messages", None) or []
    return (len(messages), sum(1 for m in messages if getattr(m, "role", None) == "user"),
            getattr(state, "source", None))


def write_state(tx: Transaction, thread_id: str, *, user_id: str, state: BaseModel, expected_version: int,
                title: str | None = None) -> int:
    """Replace a conversation's state (and the columns kept beside it, `state_columns`) if nobody saved since
    `expected_version` (and name it `title` if it has no title yet); return the new version.

    Raises:
        VersionConflict: someone else saved first (in any process); nothing was written.
        ConversationNotFound: no such conversation of this user.
    """
    d = tx.dialect
    cursor = tx.execute(
        f"UPDATE conversations SET state_data = {d.json_in}, live_messages = ?, live_questions = ?, live_source = ?,"
        f" version = version + 1, updated_at = {d.now},"
        " title = CASE WHEN title = '' AND CAST(? AS TEXT) IS NOT NULL THEN ? ELSE title END"
        " WHERE thread_id = ? AND user_id = ? AND version = ?",
        (d.json_param(state.model_dump_json()), *state_columns(state), title, short_title(title or ""), thread_id,
         user_id, expected_version))
    if cursor.rowcount == 0:
        current = tx.value("SELECT version FROM conversations WHERE thread_id = ? AND user_id = ?",
                           (thread_id, user_id))
        if current is None:
            raise ConversationNotFound(thread_id)
        raise VersionConflict(thread_id, expected_version, current)
    return expected_version + 1
