"""PostgresExampleStore: `storage.examples.ExampleStore` on the PostgreSQL store.

The same methods, models and errors; schema in `migrations/0004_examples.sql`. An example's
keyword index is the `terms` tsvector of its own row (storage/postgres/text_search.py);
`keyword_search` scores are minus ts_rank, lower is better, as bm25 on SQLite.
"""

from __future__ import annotations

from collections.abc import Iterable

import psycopg

from storage.episodes import query_terms
from storage.examples import (
    COLUMN_WEIGHTS, DuplicateQuestion, Example, ExampleNotFound, ExamplePage, Feedback, FeedbackIn, Source,
    index_terms, question_key,
)
from storage.postgres.tables import PostgresTables, iso, to_real_array
from storage.postgres.text_search import (
    QUERY_SQL, SCORE_SQL, document_params, document_sql, query_text, score_params, weights,
)
from storage.text import search_terms

_WEIGHTS = weights(COLUMN_WEIGHTS)
_DOCUMENT = document_sql(len(COLUMN_WEIGHTS))
_EXAMPLE_COLUMNS = ("id, database_key, question, sql, note, source, created_by, embedding_model,"
                    f" {iso('created_at')} AS created_at, {iso('updated_at')} AS updated_at")
_FEEDBACK_COLUMNS = ("id, thread_id, user_id, turn_index, result_id, rating, note, question, sql, database_key,"
                     f" example_id, {iso('created_at')} AS created_at, {iso('updated_at')} AS updated_at")


class PostgresExampleStore(PostgresTables):
    """Examples (per database) and feedback (per user) on the PostgreSQL store."""

    # -- examples -------------------------------------------------------------------

    def upsert(self, *, database_key: str, question: str, sql: str, source: Source, created_by: str,
               note: str = "", embedding: bytes | None = None, embedding_model: str | None = None) -> Example:
        """Keep a verified pair; the same question (folded) for the same database replaces its SQL."""
        with self._write() as conn:
            row = conn.execute(
                "INSERT INTO examples (database_key, question, question_key, sql, note, source, created_by, terms,"
                f" embedding, embedding_model, created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, {_DOCUMENT},"
                " %s::real[], %s, now(), now()) ON CONFLICT (database_key, question_key) DO UPDATE SET"
                " question = excluded.question, sql = excluded.sql,"
                " note = CASE WHEN excluded.note <> '' THEN excluded.note ELSE examples.note END,"
                " source = excluded.source, terms = excluded.terms, embedding = excluded.embedding,"
                " embedding_model = excluded.embedding_model, updated_at = excluded.updated_at RETURNING id",
                (database_key, question, question_key(question), sql, note, source, created_by,
                 *document_params(index_terms(question, sql), _WEIGHTS), to_real_array(embedding),
                 embedding_model)).fetchone()
        return self.get(row[0], database_key=database_key)

    def update(self, example_id: int, *, database_key: str, question: str | None = None, sql: str | None = None,
               note: str | None = None, embedding: bytes | None = None, embedding_model: str | None = None) -> Example:
        """Edit an example; a changed question drops its embedding unless a new one is given.

        Raises:
            ExampleNotFound: no such example for this database.
            DuplicateQuestion: another example of the database has the new question.
        """
        current = self.get(example_id, database_key=database_key)
        question = current.question if question is None else question
        sql = current.sql if sql is None else sql
        keep_vector = question == current.question and embedding is None
        try:
            with self._write() as conn:
                conn.execute(
                    "UPDATE examples SET question = %s, question_key = %s, sql = %s, note = %s, source = 'edit',"
                    f" terms = {_DOCUMENT}, embedding = CASE WHEN %s THEN embedding ELSE %s::real[] END,"
                    " embedding_model = CASE WHEN %s THEN embedding_model ELSE %s END, updated_at = now()"
                    " WHERE id = %s AND database_key = %s",
                    (question, question_key(question), sql, current.note if note is None else note,
                     *document_params(index_terms(question, sql), _WEIGHTS), keep_vector, to_real_array(embedding),
                     keep_vector, embedding_model, example_id, database_key))
        except psycopg.errors.UniqueViolation:
            raise DuplicateQuestion(question) from None
        return self.get(example_id, database_key=database_key)

    def delete(self, example_id: int, *, database_key: str) -> None:
        """Remove an example (its feedback rows keep their verdicts, unlinked).

        Raises:
            ExampleNotFound: no such example for this database.
        """
        with self._write() as conn:
            if conn.execute("DELETE FROM examples WHERE id = %s AND database_key = %s",
                            (example_id, database_key)).rowcount == 0:
                raise ExampleNotFound(example_id)

    def get(self, example_id: int, *, database_key: str) -> Example:
        rows = self._read(f"SELECT {_EXAMPLE_COLUMNS} FROM examples WHERE id = %s AND database_key = %s",
                          (example_id, database_key))
        if not rows:
            raise ExampleNotFound(example_id)
        return Example.model_validate(rows[0])

    def list(self, *, database_key: str, search: str | None = None, limit: int = 50, offset: int = 0) -> ExamplePage:
        """The database's examples, newest first; `search` matches question or SQL text (any case, as SQLite's LIKE)."""
        where, params = "database_key = %s", [database_key]
        if search:
            escaped = search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            where += " AND (question ILIKE %s ESCAPE '\\' OR sql ILIKE %s ESCAPE '\\')"
            params += [f"%{escaped}%"] * 2
        total = self._read(f"SELECT count(*) AS n FROM examples WHERE {where}", params)[0]["n"]
        rows = self._read(f"SELECT {_EXAMPLE_COLUMNS} FROM examples WHERE {where}"
                          " ORDER BY examples.updated_at DESC, id DESC LIMIT %s OFFSET %s", [*params, limit, offset])
        return ExamplePage(items=[Example.model_validate(r) for r in rows], total=total)

    def by_ids(self, ids: Iterable[int], *, database_key: str) -> dict[int, Example]:
        ids = list(dict.fromkeys(int(i) for i in ids))
        if not ids:
            return {}
        rows = self._read(f"SELECT {_EXAMPLE_COLUMNS} FROM examples WHERE database_key = %s AND id = ANY(%s)",
                          (database_key, ids))
        return {r["id"]: Example.model_validate(r) for r in rows}

    def count(self, *, database_key: str) -> int:
        return self._read("SELECT count(*) AS n FROM examples WHERE database_key = %s", (database_key,))[0]["n"]

    def keyword_search(self, question: str, *, database_key: str, limit: int = 20) -> list[tuple[int, float]]:
        """(id, minus ts_rank: lower is better) of the examples whose question or SQL shares words with `question`."""
        query = query_text(query_terms(search_terms(question)))
        if not query:
            return []
        rows = self._read(f"SELECT id, {SCORE_SQL} AS score FROM examples, {QUERY_SQL}"
                          " WHERE database_key = %s AND terms @@ q ORDER BY score, id LIMIT %s",
                          (*score_params(_WEIGHTS), query, database_key, max(1, limit)))
        return [(r["id"], r["score"]) for r in rows]

    def vectors(self, *, database_key: str, model: str) -> list[tuple[int, bytes]]:
        """(id, embedding) of the database's examples embedded by `model`."""
        rows = self._read_vectors("SELECT id, embedding FROM examples WHERE database_key = %s"
                                  " AND embedding_model = %s AND embedding IS NOT NULL", (database_key, model))
        return [(r["id"], r["embedding"]) for r in rows]

    def missing_vectors(self, *, database_key: str, model: str, limit: int = 64) -> list[Example]:
        """Examples without an embedding by `model` (none yet, edited, or another model's)."""
        rows = self._read(f"SELECT {_EXAMPLE_COLUMNS} FROM examples WHERE database_key = %s"
                          " AND embedding_model IS DISTINCT FROM %s ORDER BY id LIMIT %s", (database_key, model, limit))
        return [Example.model_validate(r) for r in rows]

    def set_embedding(self, example_id: int, embedding: bytes, *, model: str) -> None:
        with self._write() as conn:
            conn.execute("UPDATE examples SET embedding = %s::real[], embedding_model = %s WHERE id = %s",
                         (to_real_array(embedding), model, example_id))

    # -- feedback -------------------------------------------------------------------

    def record_feedback(self, feedback: FeedbackIn) -> Feedback:
        """Keep one user's verdict on one answer; a second verdict on the same answer replaces the first."""
        with self._write() as conn:
            row = conn.execute(
                "INSERT INTO feedback (thread_id, user_id, turn_index, result_id, rating, note, question, sql,"
                " database_key, example_id, created_at, updated_at) VALUES"
                " (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, now(), now())"
                " ON CONFLICT (thread_id, user_id, turn_index) DO UPDATE SET result_id = excluded.result_id,"
                " rating = excluded.rating, note = excluded.note, question = excluded.question, sql = excluded.sql,"
                " database_key = excluded.database_key, example_id = excluded.example_id,"
                " updated_at = excluded.updated_at RETURNING id",
                (feedback.thread_id, feedback.user_id, feedback.turn_index, feedback.result_id, feedback.rating,
                 feedback.note, feedback.question, feedback.sql, feedback.database_key,
                 feedback.example_id)).fetchone()
        return self._feedback("id = %s", (row[0],))[0]

    def feedback_for_thread(self, thread_id: str, *, user_id: str) -> dict[int, Feedback]:
        """This user's verdicts on a conversation, by turn."""
        return {f.turn_index: f for f in self._feedback("thread_id = %s AND user_id = %s", (thread_id, user_id))}

    def feedback_for_user(self, user_id: str, *, database_key: str | None = None, limit: int = 100) -> list[Feedback]:
        """This user's verdicts, newest first (one database's when given)."""
        return self._feedback("user_id = %s AND (%s::text IS NULL OR database_key = %s)"
                              " ORDER BY feedback.updated_at DESC, id DESC LIMIT %s",
                              (user_id, database_key or None, database_key or None, limit))

    def _feedback(self, where: str, params: tuple) -> list[Feedback]:
        rows = self._read(f"SELECT {_FEEDBACK_COLUMNS} FROM feedback WHERE {where}", params)
        return [Feedback.model_validate(r) for r in rows]
