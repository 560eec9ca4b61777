"""ExampleStore: verified (question, SQL) pairs per analytics database, and users' feedback.

The schema is each backend's migration 4. An example belongs to
a database (`database_key`), not to a user: promoting an answer shares its question and
SQL with everyone who asks about that database. Feedback belongs to the user who gave it
and to the conversation (deleting the conversation deletes it). The store keeps
embeddings as float32 bytes with the name of the model that made them and knows nothing
else of models: `agent.examples` embeds and ranks. Keyword scores are bm25 on SQLite and
minus ts_rank on PostgreSQL: lower is better on both.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field

from storage.episodes import SQL_WORDS, query_terms
from storage.errors import StoreError
from storage.sql import Dialect, TextIndex, UniqueViolation
from storage.tables import Tables
from storage.text import search_terms

Source = Literal["feedback", "import", "edit"]
Rating = Literal["up", "down"]
# bm25 weights for question, sql (PostgreSQL's ts_rank weighs them alike).
COLUMN_WEIGHTS = (1.0, 0.3)
INDEX = TextIndex("examples", "id", ("question", "sql"), COLUMN_WEIGHTS)
_FEEDBACK_FIELDS = ("thread_id, user_id, turn_index, result_id, rating, note, question, sql, database_key, "
                    "example_id")


def _example_columns(d: Dialect) -> str:
    return ("id, database_key, question, sql, note, source, created_by, edited_by, unconfirmed, embedding_model,"
            f" {d.timestamp('created_at')} AS created_at, {d.timestamp('updated_at')} AS updated_at")


def _feedback_columns(d: Dialect) -> str:
    return (f"id, {_FEEDBACK_FIELDS}, {d.timestamp('created_at')} AS created_at,"
            f" {d.timestamp('updated_at')} AS updated_at")


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
    edited_by: str | None = None  # the last user other than the author who changed it
    unconfirmed: bool = False  # changed by someone else and not yet confirmed: not used as verified
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


class ExampleStore(Tables):
    """Examples (per database) and feedback (per user) in the store."""

    # -- examples -------------------------------------------------------------------

    def upsert(self, *, database_key: str, question: str, sql: str, source: Source, created_by: str,
               note: str = "", embedding: bytes | None = None, embedding_model: str | None = None) -> Example:
        """Keep a verified pair; the same question (folded) for the same database replaces its SQL. A
        replacement by someone other than the example's author keeps the author, records the change's
        author in `edited_by` and leaves it unconfirmed (not used as verified until confirmed)."""
        d = self.db.dialect
        texts = index_terms(question, sql)
        document = d.terms_document(INDEX, texts)
        with self.db.write() as tx:
            example_id = tx.value(
                "INSERT INTO examples (database_key, question, question_key, sql, note, source, created_by,"
                f" embedding, embedding_model, created_at, updated_at{document.columns})"
                f" VALUES (?, ?, ?, ?, ?, ?, ?, {d.vector_in}, ?, {d.now}, {d.now}{document.values})"
                " ON CONFLICT (database_key, question_key) DO UPDATE SET question = excluded.question,"
                " sql = excluded.sql, note = CASE WHEN excluded.note <> '' THEN excluded.note ELSE examples.note END,"
                " source = excluded.source, embedding = excluded.embedding,"
                " edited_by = CASE WHEN examples.created_by = excluded.created_by THEN examples.edited_by"
                " ELSE excluded.created_by END,"
                " unconfirmed = CASE WHEN examples.created_by = excluded.created_by THEN 0 ELSE 1 END,"
                f" embedding_model = excluded.embedding_model, updated_at = excluded.updated_at{document.from_excluded}"
                " RETURNING id",
                (database_key, question, question_key(question), sql, note, source, created_by,
                 d.vector_param(embedding), embedding_model, *document.params))
            d.write_text_index(tx, INDEX, example_id, texts, {})
        return self.get(example_id, database_key=database_key)

    def update(self, example_id: int, *, database_key: str, edited_by: str, question: str | None = None,
               sql: str | None = None, note: str | None = None, embedding: bytes | None = None,
               embedding_model: str | None = None) -> Example:
        """Edit an example; a changed question drops its embedding unless a new one is given. An edit by
        anyone but the author is recorded (`edited_by`) and leaves the example unconfirmed; the
        author's own edit confirms it.

        Raises:
            ExampleNotFound: no such example for this database.
            DuplicateQuestion: another example of the database has the new question.
        """
        current = self.get(example_id, database_key=database_key)
        question = current.question if question is None else question
        sql = current.sql if sql is None else sql
        keep_vector = question == current.question and embedding is None
        d = self.db.dialect
        texts = index_terms(question, sql)
        document = d.terms_document(INDEX, texts)
        with self.db.write() as tx:
            try:
                tx.execute(
                    "UPDATE examples SET question = ?, question_key = ?, sql = ?, note = ?, source = 'edit',"
                    " edited_by = CASE WHEN created_by = ? THEN edited_by ELSE ? END,"
                    " unconfirmed = CASE WHEN created_by = ? THEN 0 ELSE 1 END,"
                    f" embedding = CASE WHEN ? THEN embedding ELSE {d.vector_in} END,"
                    f" embedding_model = CASE WHEN ? THEN embedding_model ELSE ? END, updated_at = {d.now}"
                    f"{document.assignment} WHERE id = ? AND database_key = ?",
                    (question, question_key(question), sql, current.note if note is None else note,
                     edited_by, edited_by, edited_by, keep_vector,
                     d.vector_param(embedding), keep_vector, embedding_model, *document.params, example_id,
                     database_key))
            except UniqueViolation:
                raise DuplicateQuestion(question) from None
            d.write_text_index(tx, INDEX, example_id, texts, {})
        return self.get(example_id, database_key=database_key)

    def confirm(self, example_id: int, *, database_key: str) -> Example:
        """Mark an example changed by someone else as verified again.

        Raises:
            ExampleNotFound: no such example for this database.
        """
        self._change_one("UPDATE examples SET unconfirmed = 0 WHERE id = ? AND database_key = ?", example_id,
                         database_key)
        return self.get(example_id, database_key=database_key)

    def delete(self, example_id: int, *, database_key: str) -> None:
        """Remove an example (its feedback rows keep their verdicts, unlinked).

        Raises:
            ExampleNotFound: no such example for this database.
        """
        self._change_one("DELETE FROM examples WHERE id = ? AND database_key = ?", example_id, database_key)

    def _change_one(self, sql: str, example_id: int, database_key: str) -> None:
        """Run `sql` (bound to the id and the database's key) on exactly one example, or raise ExampleNotFound."""
        with self.db.write() as tx:
            if tx.execute(sql, (example_id, database_key)).rowcount == 0:
                raise ExampleNotFound(example_id)

    def get(self, example_id: int, *, database_key: str) -> Example:
        row = self.db.row(f"SELECT {_example_columns(self.db.dialect)} FROM examples WHERE id = ? AND database_key = ?",
                          (example_id, database_key))
        if row is None:
            raise ExampleNotFound(example_id)
        return Example.model_validate(dict(row))

    def list(self, *, database_key: str, search: str | None = None, limit: int = 50, offset: int = 0) -> ExamplePage:
        """The database's examples, newest first; `search` matches question or SQL text (in any case)."""
        d = self.db.dialect
        where, params = "database_key = ?", [database_key]
        if search:
            escaped = search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            where += f" AND (question {d.like} ? ESCAPE '\\' OR sql {d.like} ? ESCAPE '\\')"
            params += [f"%{escaped}%"] * 2
        with self.db.read() as tx:
            total = tx.value(f"SELECT count(*) AS n FROM examples WHERE {where}", params)
            rows = tx.rows(f"SELECT {_example_columns(d)} FROM examples WHERE {where}"
                           " ORDER BY examples.updated_at DESC, id DESC LIMIT ? OFFSET ?", [*params, limit, offset])
        return ExamplePage(items=[Example.model_validate(dict(r)) for r in rows], total=total)

    def by_ids(self, ids: Iterable[int], *, database_key: str) -> dict[int, Example]:
        ids = list(dict.fromkeys(int(i) for i in ids))
        if not ids:
            return {}
        d = self.db.dialect
        among, params = d.in_list("id", ids)
        rows = self.db.rows(f"SELECT {_example_columns(d)} FROM examples WHERE database_key = ? AND {among}",
                            (database_key, *params))
        return {r["id"]: Example.model_validate(dict(r)) for r in rows}

    def count(self, *, database_key: str) -> int:
        return self.db.value("SELECT count(*) AS n FROM examples WHERE database_key = ?", (database_key,))

    def keyword_search(self, question: str, *, database_key: str, limit: int = 20) -> list[tuple[int, float]]:
        """(id, score: lower is better) of the examples whose question or SQL shares words with `question`."""
        terms = query_terms(search_terms(question))
        if not terms:
            return []
        with self.db.read() as tx:
            return self.db.dialect.text_search(tx, INDEX, terms, {"database_key": database_key}, limit)

    def vectors(self, *, database_key: str, model: str) -> list[tuple[int, bytes]]:
        """(id, embedding) of the database's examples embedded by `model`."""
        rows = self.db.rows("SELECT id, embedding FROM examples WHERE database_key = ? AND embedding_model = ?"
                            " AND embedding IS NOT NULL", (database_key, model), vectors=True)
        return [(r["id"], r["embedding"]) for r in rows]

    def missing_vectors(self, *, database_key: str, model: str, limit: int = 64) -> list[Example]:
        """Examples without an embedding by `model` (none yet, edited, or another model's)."""
        rows = self.db.rows(f"SELECT {_example_columns(self.db.dialect)} FROM examples WHERE database_key = ?"
                            " AND (embedding_model IS NULL OR embedding_model <> ?) ORDER BY id LIMIT ?",
                            (database_key, model, limit))
        return [Example.model_validate(dict(r)) for r in rows]

    def set_embedding(self, example_id: int, embedding: bytes, *, model: str) -> None:
        d = self.db.dialect
        with self.db.write() as tx:
            tx.execute(f"UPDATE examples SET embedding = {d.vector_in}, embedding_model = ? WHERE id = ?",
                       (d.vector_param(embedding), model, example_id))

    # -- feedback -------------------------------------------------------------------

    def record_feedback(self, feedback: FeedbackIn) -> Feedback:
        """Keep one user's verdict on one answer; a second verdict on the same answer replaces the first."""
        d = self.db.dialect
        with self.db.write() as tx:
            feedback_id = tx.value(
                f"INSERT INTO feedback ({_FEEDBACK_FIELDS}, created_at, updated_at) VALUES"
                f" (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {d.now}, {d.now}) ON CONFLICT (thread_id, user_id, turn_index)"
                " DO UPDATE SET result_id = excluded.result_id, rating = excluded.rating, note = excluded.note,"
                " question = excluded.question, sql = excluded.sql, database_key = excluded.database_key,"
                " example_id = excluded.example_id, updated_at = excluded.updated_at RETURNING id",
                (feedback.thread_id, feedback.user_id, feedback.turn_index, feedback.result_id, feedback.rating,
                 feedback.note, feedback.question, feedback.sql, feedback.database_key, feedback.example_id))
        return self._feedback("id = ?", (feedback_id,))[0]

    def feedback_for_thread(self, thread_id: str, *, user_id: str) -> dict[int, Feedback]:
        """This user's verdicts on a conversation, by turn."""
        return {f.turn_index: f for f in self._feedback("thread_id = ? AND user_id = ?", (thread_id, user_id))}

    def feedback_for_user(self, user_id: str, *, database_key: str | None = None, limit: int = 100) -> list[Feedback]:
        """This user's verdicts, newest first (one database's when given)."""
        where, params = ("user_id = ? AND database_key = ?", (user_id, database_key)) if database_key \
            else ("user_id = ?", (user_id,))
        return self._feedback(where + " ORDER BY feedback.updated_at DESC, id DESC LIMIT ?", (*params, limit))

    def _feedback(self, where: str, params: tuple[Any, ...]) -> list[Feedback]:
        rows = self.db.rows(f"SELECT {_feedback_columns(self.db.dialect)} FROM feedback WHERE {where}", params)
        return [Feedback.model_validate(dict(r)) for r in rows]
