"""ExampleStore: verified (question, SQL) pairs per analytics database, and users' feedback.

The schema is migration 4 (`storage/migrations/0004_examples.sql`). An example belongs to
a database (`database_key`), not to a user: promoting an answer shares its question and
SQL with everyone who asks about that database. Feedback belongs to the user who gave it
and to the conversation (deleting the conversation deletes it). The store keeps
embeddings as float32 bytes with the name of the model that made them and knows nothing
else of models: `agent.examples` embeds and ranks.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field

from storage.clock import utc_now
from storage.episodes import SQL_WORDS, match_expression
from storage.errors import StoreError
from storage.sqlite_tables import SQLiteTables
from storage.text import search_terms

Source = Literal["feedback", "import", "edit"]
Rating = Literal["up", "down"]
# bm25 weights for question, sql (the PostgreSQL store ranks with the same ones).
COLUMN_WEIGHTS = (1.0, 0.3)
_EXAMPLE_COLUMNS = ("id, database_key, question, sql, note, source, created_by, embedding_model, created_at, "
                    "updated_at")
_FEEDBACK_COLUMNS = ("id, thread_id, user_id, turn_index, result_id, rating, note, question, sql, database_key, "
                     "example_id, created_at, updated_at")


class ExampleNotFound(StoreError):
    """No example with this id for this database."""

    def __init__(self, example_id: int):
        super().__init__(f"example {example_id} not found for this database")
        self.example_id = example_id


class DuplicateQuestion(StoreError):
    """Another example of this database already has this question."""

    def __init__(self, question: str):
        super().__init__(f"another example already has the question {question[:80]!r}; edit that one instead")
        self.question = question


def question_key(question: str) -> str:
    """The question folded for "is this the same question": case, spacing and end punctuation ignored."""
    text = " ".join(unicodedata.normalize("NFKC", question).casefold().split())
    return re.sub(r"[\s?？!！.。]+$", "", text)


def index_terms(question: str, sql: str) -> tuple[str, str]:
    """The indexed text of an example's question and SQL (SQL words dropped); both backends index these."""
    return " ".join(search_terms(question)), " ".join(search_terms(sql, drop=SQL_WORDS))


class Example(BaseModel):
    id: int
    database_key: str
    question: str
    sql: str
    note: str = ""
    source: Source
    created_by: str
    embedding_model: str | None = None
    created_at: str
    updated_at: str


class ExamplePage(BaseModel):
    items: list[Example]
    total: int


class FeedbackIn(BaseModel):
    thread_id: str
    user_id: str
    turn_index: int = Field(ge=0)
    result_id: int | None = None
    rating: Rating
    note: str = Field("", max_length=2000)
    question: str
    sql: str | None = None
    database_key: str
    example_id: int | None = None


class Feedback(FeedbackIn):
    id: int
    created_at: str
    updated_at: str


class ExampleStore(SQLiteTables):
    """Examples (per database) and feedback (per user) in the store file."""

    # -- examples -------------------------------------------------------------------

    def upsert(self, *, database_key: str, question: str, sql: str, source: Source, created_by: str,
               note: str = "", embedding: bytes | None = None, embedding_model: str | None = None) -> Example:
        """Keep a verified pair; the same question (folded) for the same database replaces its SQL."""
        now = utc_now()
        with self._write() as conn:
            row = conn.execute(
                "INSERT INTO examples (database_key, question, question_key, sql, note, source, created_by,"
                " embedding, embedding_model, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (database_key, question_key) DO UPDATE SET question = excluded.question,"
                " sql = excluded.sql, note = CASE WHEN excluded.note != '' THEN excluded.note ELSE note END,"
                " source = excluded.source, embedding = excluded.embedding,"
                " embedding_model = excluded.embedding_model, updated_at = excluded.updated_at RETURNING id",
                (database_key, question, question_key(question), sql, note, source, created_by, embedding,
                 embedding_model, now, now)).fetchone()
            self._index(conn, row[0], question, sql)
        return self.get(row[0], database_key=database_key)

    def update(self, example_id: int, *, database_key: str, question: str | None = None, sql: str | None = None,
               note: str | None = None, embedding: bytes | None = None, embedding_model: str | None = None) -> Example:
        """Edit an example; a changed question drops its embedding unless a new one is given.

        Raises:
            ExampleNotFound: no such example for this database.
        """
        current = self.get(example_id, database_key=database_key)
        question = current.question if question is None else question
        sql = current.sql if sql is None else sql
        keep_vector = question == current.question and embedding is None
        with self._write() as conn:
            try:
                conn.execute(
                    "UPDATE examples SET question = ?, question_key = ?, sql = ?, note = ?, source = 'edit',"
                    " embedding = CASE WHEN ? THEN embedding ELSE ? END,"
                    " embedding_model = CASE WHEN ? THEN embedding_model ELSE ? END, updated_at = ?"
                    " WHERE id = ? AND database_key = ?",
                    (question, question_key(question), sql, current.note if note is None else note, keep_vector,
                     embedding, keep_vector, embedding_model, utc_now(), example_id, database_key))
            except sqlite3.IntegrityError:
                raise DuplicateQuestion(question) from None
            self._index(conn, example_id, question, sql)
        return self.get(example_id, database_key=database_key)

    def delete(self, example_id: int, *, database_key: str) -> None:
        """Remove an example (its feedback rows keep their verdicts, unlinked).

        Raises:
            ExampleNotFound: no such example for this database.
        """
        with self._write() as conn:
            if conn.execute("DELETE FROM examples WHERE id = ? AND database_key = ?",
                            (example_id, database_key)).rowcount == 0:
                raise ExampleNotFound(example_id)

    def get(self, example_id: int, *, database_key: str) -> Example:
        rows = self._read(f"SELECT {_EXAMPLE_COLUMNS} FROM examples WHERE id = ? AND database_key = ?",
                          (example_id, database_key))
        if not rows:
            raise ExampleNotFound(example_id)
        return Example.model_validate(dict(rows[0]))

    def list(self, *, database_key: str, search: str | None = None, limit: int = 50, offset: int = 0) -> ExamplePage:
        """The database's examples, newest first; `search` matches question or SQL text."""
        where, params = "database_key = ?", [database_key]
        if search:
            escaped = search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            where += " AND (question LIKE ? ESCAPE '\\' OR sql LIKE ? ESCAPE '\\')"
            params += [f"%{escaped}%"] * 2
        total = self._read(f"SELECT count(*) FROM examples WHERE {where}", params)[0][0]
        rows = self._read(f"SELECT {_EXAMPLE_COLUMNS} FROM examples WHERE {where}"
                          " ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?", [*params, limit, offset])
        return ExamplePage(items=[Example.model_validate(dict(r)) for r in rows], total=total)

    def by_ids(self, ids: Iterable[int], *, database_key: str) -> dict[int, Example]:
        ids = list(dict.fromkeys(int(i) for i in ids))
        if not ids:
            return {}
        rows = self._read(f"SELECT {_EXAMPLE_COLUMNS} FROM examples WHERE database_key = ?"
                          f" AND id IN ({','.join('?' * len(ids))})", (database_key, *ids))
        return {r["id"]: Example.model_validate(dict(r)) for r in rows}

    def count(self, *, database_key: str) -> int:
        return self._read("SELECT count(*) FROM examples WHERE database_key = ?", (database_key,))[0][0]

    def keyword_search(self, question: str, *, database_key: str, limit: int = 20) -> list[tuple[int, float]]:
        """(id, bm25 score, lower is better) of the examples whose question or SQL shares words with `question`."""
        expression = match_expression(search_terms(question))
        if not expression:
            return []
        weights = ", ".join(str(float(w)) for w in COLUMN_WEIGHTS)
        rows = self._read(
            f"SELECT f.rowid, bm25(examples_fts, {weights}) AS score FROM examples_fts f"
            " JOIN examples e ON e.id = f.rowid WHERE examples_fts MATCH ? AND e.database_key = ?"
            " ORDER BY score LIMIT ?", (expression, database_key, max(1, limit)))
        return [(r[0], r[1]) for r in rows]

    def vectors(self, *, database_key: str, model: str) -> list[tuple[int, bytes]]:
        """(id, embedding) of the database's examples embedded by `model`."""
        rows = self._read("SELECT id, embedding FROM examples WHERE database_key = ? AND embedding_model = ?"
                          " AND embedding IS NOT NULL", (database_key, model))
        return [(r[0], r[1]) for r in rows]

    def missing_vectors(self, *, database_key: str, model: str, limit: int = 64) -> list[Example]:
        """Examples without an embedding by `model` (none yet, edited, or another model's)."""
        rows = self._read(f"SELECT {_EXAMPLE_COLUMNS} FROM examples WHERE database_key = ?"
                          " AND (embedding_model IS NULL OR embedding_model != ?) ORDER BY id LIMIT ?",
                          (database_key, model, limit))
        return [Example.model_validate(dict(r)) for r in rows]

    def set_embedding(self, example_id: int, embedding: bytes, *, model: str) -> None:
        with self._write() as conn:
            conn.execute("UPDATE examples SET embedding = ?, embedding_model = ? WHERE id = ?",
                         (embedding, model, example_id))

    @staticmethod
    def _index(conn: sqlite3.Connection, example_id: int, question: str, sql: str) -> None:
        conn.execute("DELETE FROM examples_fts WHERE rowid = ?", (example_id,))
        conn.execute("INSERT INTO examples_fts (rowid, question, sql) VALUES (?, ?, ?)",
                     (example_id, *index_terms(question, sql)))

    # -- feedback -------------------------------------------------------------------

    def record_feedback(self, feedback: FeedbackIn) -> Feedback:
        """Keep one user's verdict on one answer; a second verdict on the same answer replaces the first."""
        now = utc_now()
        with self._write() as conn:
            row = conn.execute(
                f"INSERT INTO feedback ({_FEEDBACK_COLUMNS.removeprefix('id, ')}) VALUES "
                f"({', '.join('?' * 12)}) ON CONFLICT (thread_id, user_id, turn_index) DO UPDATE SET"
                " result_id = excluded.result_id, rating = excluded.rating, note = excluded.note,"
                " question = excluded.question, sql = excluded.sql, database_key = excluded.database_key,"
                " example_id = excluded.example_id, updated_at = excluded.updated_at RETURNING id",
                (feedback.thread_id, feedback.user_id, feedback.turn_index, feedback.result_id, feedback.rating,
                 feedback.note, feedback.question, feedback.sql, feedback.database_key, feedback.example_id,
                 now, now)).fetchone()
        return self._feedback("id = ?", (row[0],))[0]

    def feedback_for_thread(self, thread_id: str, *, user_id: str) -> dict[int, Feedback]:
        """This user's verdicts on a conversation, by turn."""
        return {f.turn_index: f for f in self._feedback("thread_id = ? AND user_id = ?", (thread_id, user_id))}

    def feedback_for_user(self, user_id: str, *, database_key: str | None = None, limit: int = 100) -> list[Feedback]:
        """This user's verdicts, newest first (one database's when given)."""
        where, params = ("user_id = ? AND database_key = ?", (user_id, database_key)) if database_key \
            else ("user_id = ?", (user_id,))
        return self._feedback(where + " ORDER BY updated_at DESC, id DESC LIMIT ?", (*params, limit))

    def _feedback(self, where: str, params: tuple) -> list[Feedback]:
        rows = self._read(f"SELECT {_FEEDBACK_COLUMNS} FROM feedback WHERE {where}", params)
        return [Feedback.model_validate(dict(r)) for r in rows]
