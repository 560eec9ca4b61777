"""Steps and query results: what a conversation did, beside its state, mixed into the conversation store.

A step is appended the moment it finishes, so an interrupted turn keeps what it did; a query
result is kept whole (within the caps, storage/result_caps.py) and numbered in its
conversation, so the state holds only its number. `record_step` writes a step with the result
it shows in one transaction (issue 19: a turn that writes once per step).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from storage.errors import ConversationNotFound, ResultNotFound
from storage.result_caps import ResultCaps
from storage.sql import Database, ForeignKeyViolation, Row, Transaction
from storage.threads import check_thread_id, require_conversation


class StoredStep(BaseModel):
    id: int
    thread_id: str
    step_index: int
    data: dict[str, Any]
    created_at: str


class StoredResult(BaseModel):
    thread_id: str
    result_id: int
    sql: str
    columns: list[str]
    rows: list[list[Any]]
    row_count: int
    truncated: bool
    created_at: str


class NewResult(BaseModel):
    """A query result to keep, numbered by the caller (a turn knows its conversation's last number
    from `Loaded.last_result_id` and holds the turn lease)."""

    result_id: int
    sql: str
    columns: list[str]
    rows: list[list[Any]]
    truncated: bool


class StepsAndResults(ResultCaps):
    """The steps and results of the conversations in the store `self.db`."""

    db: Database

    # -- steps --------------------------------------------------------------------

    def append_step(self, thread_id: str, *, step_index: int, step: BaseModel) -> int:
        """Append one step the moment it finishes; return its row id.

        Raises:
            ConversationNotFound: the conversation was deleted.
        """
        d = self.db.dialect
        with self.db.write() as tx:
            try:
                return tx.value(
                    "INSERT INTO conversation_steps (thread_id, step_index, step_data, created_at)"
                    f" VALUES (?, ?, {d.json_in}, {d.now}) RETURNING id",
                    (check_thread_id(thread_id), step_index, d.json_param(step.model_dump_json())))
            except ForeignKeyViolation as exc:
                raise ConversationNotFound(thread_id) from exc

    def record_step(self, thread_id: str, *, step_index: int, step: BaseModel,
                    result: NewResult | None = None) -> StoredResult | None:
        """Append a step and the query result it shows in one transaction; return the result as kept
        (within the caps), so the caller never reads back what it wrote.

        Raises:
            ConversationNotFound: the conversation was deleted; nothing was written.
        """
        with self.db.write() as tx:
            kept = None if result is None else self._insert_result(tx, thread_id, result)
            self.append_step(thread_id, step_index=step_index, step=step)
        return kept

    def steps(self, thread_id: str, *, user_id: str, after_id: int = 0) -> list[StoredStep]:
        """The steps of a conversation in the order they happened (optionally only newer ones)."""
        d = self.db.dialect
        rows = self._rows_of(thread_id, user_id, f"SELECT id, thread_id, step_index, {d.json_out('step_data')}"
                             f" AS step_data, {d.timestamp('created_at')} AS created_at FROM conversation_steps"
                             " WHERE thread_id = ? AND id > ? ORDER BY id", (thread_id, after_id))
        return [StoredStep(id=r["id"], thread_id=r["thread_id"], step_index=r["step_index"],
                           data=json.loads(r["step_data"]), created_at=r["created_at"]) for r in rows]

    # -- query results ------------------------------------------------------------

    def save_result(self, thread_id: str, *, sql: str, columns: list[str], rows: list[list[Any]], truncated: bool) -> int:
        """Keep a query result beside the state, within the result caps (`ResultCaps`); return its
        number in the conversation (1, 2, ...)."""
        with self.db.write() as tx:
            # The conversation's row lock numbers results one at a time, whichever server saves them.
            require_conversation(tx, thread_id, lock=True)
            result_id = tx.value("SELECT coalesce(max(result_id), 0) + 1 AS next FROM query_results"
                                 " WHERE thread_id = ?", (thread_id,))
            new = NewResult(result_id=result_id, sql=sql, columns=columns, rows=rows, truncated=truncated)
            return self._insert_result(tx, thread_id, new).result_id

    def _insert_result(self, tx: Transaction, thread_id: str, result: NewResult) -> StoredResult:
        """Write `result` within the caps; return it as kept.

        Raises:
            ConversationNotFound: no such conversation; nothing was written.
        """
        d = tx.dialect
        stored = tx.value(f"SELECT coalesce(sum({d.json_bytes('rows')}), 0) AS stored FROM query_results"
                          " WHERE thread_id = ?", (check_thread_id(thread_id),))
        rows_json, kept, cut = self._rows_within_caps(result.rows, stored_bytes=stored)
        rows_json = d.json_param(rows_json)
        try:
            created_at = tx.value(
                "INSERT INTO query_results (thread_id, result_id, sql, columns, rows, row_count, truncated, created_at)"
                f" VALUES (?, ?, ?, {d.json_in}, {d.json_in}, ?, ?, {d.now}) RETURNING {d.timestamp('created_at')}"
                " AS created_at",
                (thread_id, result.result_id, result.sql, json.dumps(result.columns), rows_json, kept,
                 bool(result.truncated or cut)))
        except ForeignKeyViolation as exc:
            raise ConversationNotFound(thread_id) from exc
        return StoredResult(thread_id=thread_id, result_id=result.result_id, sql=result.sql, columns=result.columns,
                            rows=json.loads(rows_json), row_count=kept, truncated=result.truncated or cut,
                            created_at=created_at)

    def load_result(self, thread_id: str, result_id: int, *, user_id: str) -> StoredResult:
        d = self.db.dialect
        found = self._rows_of(thread_id, user_id, f"SELECT thread_id, result_id, sql, {d.json_out('columns')}"
                              f" AS columns, {d.json_out('rows')} AS rows, row_count, truncated,"
                              f" {d.timestamp('created_at')} AS created_at FROM query_results"
                              " WHERE thread_id = ? AND result_id = ?", (thread_id, result_id))
        if not found:
            raise ResultNotFound(f"no result {result_id} in conversation {thread_id!r}")
        row = found[0]
        return StoredResult(thread_id=row["thread_id"], result_id=row["result_id"], sql=row["sql"],
                            columns=json.loads(row["columns"]), rows=json.loads(row["rows"]),
                            row_count=row["row_count"], truncated=bool(row["truncated"]),
                            created_at=row["created_at"])

    def _rows_of(self, thread_id: str, user_id: str, sql: str, params: tuple[Any, ...]) -> list[Row]:
        """The rows of a query about one conversation, once it is found to be this user's.

        Raises:
            ConversationNotFound: no such conversation of this user.
        """
        with self.db.read() as tx:
            require_conversation(tx, thread_id, user_id=user_id)
            return tx.rows(sql, params)

    def _result_ids(self, thread_id: str) -> list[int]:
        return [r["result_id"] for r in self.db.rows(
            "SELECT result_id FROM query_results WHERE thread_id = ? ORDER BY result_id", (thread_id,))]
