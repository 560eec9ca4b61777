"""PostgresEpisodeStore: `storage.episodes.EpisodeStore` on the PostgreSQL store.

The same methods, models and errors; schema in `migrations/0003_memory.sql`. The keyword
index is the `terms` tsvector of the episode's own row (storage/postgres/text_search.py), so
it is written with the row and goes with it, on the cascade from `conversations` too.
Embeddings are real[]; the store takes and returns float32 bytes, as the SQLite one does.

`keyword_search` scores are minus ts_rank (columns weighted as SQLite's bm25 weights them),
so lower is better on both backends; only the order compares across backends, not the numbers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import psycopg

from storage.episodes import (
    COLUMN_WEIGHTS, Episode, EpisodeIn, EpisodeNotFound, StoredVector, episode_id, fewest_matches, index_terms,
    query_terms, versioned,
)
from storage.postgres.tables import PostgresTables, iso, json_param, to_real_array
from storage.postgres.text_search import (
    QUERY_SQL, SCORE_SQL, document_params, document_sql, query_text, score_params, weights,
)

_WEIGHTS = weights(COLUMN_WEIGHTS)
_DOCUMENT = document_sql(len(COLUMN_WEIGHTS))
# A write to a user's episodes holds this lock (with the user's hash) until it commits, as
# SQLite's single writer does: vec_versions then become visible in the order they are
# numbered, so a vector cache that has read version n never misses a later-committed n - 1,
# and two servers indexing the same turn at once update one row instead of both inserting it.
_USER_LOCK = 0x65706973  # "epis"
_COLUMNS = ("seq, id, thread_id, user_id, turn_index, question, sql, answer, topics, context, embedding_model,"
            f" {iso('created_at')} AS created_at, {iso('updated_at')} AS updated_at")


class PostgresEpisodeStore(PostgresTables):
    """Episodes of many users on the PostgreSQL store; every read filters by `user_id`."""

    # -- writing ------------------------------------------------------------------

    def upsert(self, episode: EpisodeIn, *, embedding: bytes | None = None, embedding_model: str | None = None) -> Episode:
        """Index one turn (again): same (thread, turn), same row. Without a new embedding an
        unchanged text keeps its old one; a changed text loses it until re-embedded.

        Raises:
            ConversationNotFound: the thread is not this user's.
        """
        self.upsert_many([(episode, embedding, embedding_model)])
        return self.get(episode_id(episode.thread_id, episode.turn_index), user_id=episode.user_id)

    def upsert_many(self, items: Iterable[tuple[EpisodeIn, bytes | None, str | None]]) -> int:
        """Index many turns in one transaction; return how many were written."""
        count = 0
        with self._write() as conn:
            def owner(thread_id: str) -> str | None:
                row = conn.execute("SELECT user_id FROM conversations WHERE thread_id = %s", (thread_id,)).fetchone()
                if row is not None:
                    _lock_user(conn, row[0])
                return row[0] if row else None

            for episode, embedding, model, version in versioned(
                    items, owner=owner, newest_version=lambda user_id: _max_vec_version(conn, user_id)):
                _upsert_one(conn, episode, embedding, model, version)
                count += 1
        return count

    def set_embeddings(self, vectors: Iterable[tuple[int, bytes]], *, user_id: str, model: str) -> int:
        """Store (seq, embedding) pairs of this user's episodes made by `model`; return how many."""
        count = 0
        with self._write() as conn:
            _lock_user(conn, user_id)
            version = _max_vec_version(conn, user_id)
            for seq, embedding in vectors:
                version += 1
                count += conn.execute(
                    "UPDATE episodes SET embedding = %s::real[], embedding_model = %s, vec_version = %s"
                    " WHERE seq = %s AND user_id = %s", (to_real_array(embedding), model, version, seq, user_id)).rowcount
        return count

    def delete_for_user(self, user_id: str) -> int:
        """Erase every episode of this user; return how many."""
        with self._write() as conn:
            return conn.execute("DELETE FROM episodes WHERE user_id = %s", (user_id,)).rowcount

    # -- reading ------------------------------------------------------------------

    def get(self, id: str, *, user_id: str) -> Episode:
        rows = self._read(f"SELECT {_COLUMNS} FROM episodes WHERE id = %s AND user_id = %s", (id, user_id))
        if not rows:
            raise EpisodeNotFound(f"episode {id!r} not found")
        return Episode.model_validate(rows[0])

    def list(self, *, user_id: str, thread_id: str | None = None, limit: int = 100, offset: int = 0) -> list[Episode]:
        """This user's episodes (of one thread if given), newest first."""
        where, params = _scope(user_id, thread_id)
        rows = self._read(f"SELECT {_COLUMNS} FROM episodes WHERE {where} ORDER BY seq DESC LIMIT %s OFFSET %s",
                          (*params, max(0, limit), max(0, offset)))
        return [Episode.model_validate(r) for r in rows]

    def count(self, *, user_id: str, thread_id: str | None = None) -> int:
        where, params = _scope(user_id, thread_id)
        return self._read(f"SELECT count(*) AS n FROM episodes WHERE {where}", params)[0]["n"]

    def by_seq(self, seqs: Iterable[int], *, user_id: str) -> dict[int, Episode]:
        """The episodes with these row numbers that belong to this user."""
        seqs = list(dict.fromkeys(int(s) for s in seqs))
        if not seqs:
            return {}
        rows = self._read(f"SELECT {_COLUMNS} FROM episodes WHERE user_id = %s AND seq = ANY(%s)", (user_id, seqs))
        return {r["seq"]: Episode.model_validate(r) for r in rows}

    def keyword_search(self, terms: Iterable[str], *, user_id: str, thread_id: str | None = None, limit: int = 50,
                       prefix_min: int = 0) -> list[tuple[int, float]]:
        """(seq, minus ts_rank: lower is better) of the best matches of any of `terms`, best first;
        past `SCORED_ROWS` matching rows the commonest terms are left out, as on SQLite."""
        chosen = query_terms(terms, prefix_min=prefix_min)
        if not chosen:
            return []
        where, params = _scope(user_id, thread_id)
        with self._connection() as conn, conn.transaction():
            # A capped count looks cheap as a scan of the table that stops at the cap; for a word
            # rarer than ANALYZE's sample suggests it reads every row instead. Which plan wins
            # depends on that random sample: at 100k episodes the counts of one recall took
            # 39 ms p50 after one ANALYZE and 320 ms after another. Bitmap scans only (the GIN
            # index, or the scope's btree when that is narrower) keep every count bounded.
            conn.execute("SET LOCAL enable_seqscan = off")
            conn.execute("SET LOCAL enable_indexscan = off")
            chosen = fewest_matches(chosen, lambda some, cap: conn.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM episodes, {QUERY_SQL} WHERE {where} AND terms @@ q LIMIT %s) m",
                (query_text(some), *params, cap)).fetchone()[0])
        rows = self._read(f"SELECT seq, {SCORE_SQL} AS score FROM episodes, {QUERY_SQL}"
                          f" WHERE {where} AND terms @@ q ORDER BY score, seq LIMIT %s",
                          (*score_params(_WEIGHTS), query_text(chosen), *params, max(1, limit)))
        return [(r["seq"], r["score"]) for r in rows]

    def vectors(self, *, user_id: str, model: str, after_version: int = 0) -> list[StoredVector]:
        """Embeddings by `model` of this user's episodes written after `after_version`."""
        rows = self._read_vectors(
            "SELECT seq, thread_id, vec_version, embedding FROM episodes"
            " WHERE user_id = %s AND vec_version > %s AND embedding_model = %s ORDER BY vec_version",
            (user_id, after_version, model))
        return [StoredVector(r["seq"], r["thread_id"], r["vec_version"], r["embedding"]) for r in rows]

    def vector_state(self, *, user_id: str) -> tuple[int, int]:
        """(newest vec_version, invalidations so far) for this user: what a cache compares."""
        row = self._read(
            "SELECT (SELECT coalesce(max(vec_version), 0) FROM episodes WHERE user_id = %s) AS newest,"
            " coalesce((SELECT count FROM episode_invalidations WHERE user_id = %s), 0) AS deleted",
            (user_id, user_id))[0]
        return row["newest"], row["deleted"]

    def stale(self, *, user_id: str, model: str, limit: int = 64) -> list[Episode]:
        """Episodes without an embedding by `model` (none yet, or another model's), oldest first."""
        # Three ranges of the (user_id, embedding_model) index, as on SQLite: "IS DISTINCT FROM"
        # would read every row of the user (50 ms at 100k episodes) on every recall.
        rows = self._read(
            f"(SELECT {_COLUMNS} FROM episodes WHERE user_id = %s AND embedding_model IS NULL"
            f" UNION ALL SELECT {_COLUMNS} FROM episodes WHERE user_id = %s AND embedding_model < %s"
            f" UNION ALL SELECT {_COLUMNS} FROM episodes WHERE user_id = %s AND embedding_model > %s)"
            " ORDER BY seq LIMIT %s", (user_id, user_id, model, user_id, model, max(1, limit)))
        return [Episode.model_validate(r) for r in rows]


def _upsert_one(conn: psycopg.Connection, e: EpisodeIn, embedding: bytes | None, model: str | None,
                version: int | None) -> None:
    eid = episode_id(e.thread_id, e.turn_index)
    text = (e.question, e.sql, e.answer, json_param(e.topics), e.context)
    document = document_params(index_terms(e), _WEIGHTS)
    old = conn.execute("SELECT seq, question, sql, answer, topics, context FROM episodes WHERE id = %s",
                       (eid,)).fetchone()
    if old is None:
        conn.execute(
            "INSERT INTO episodes (id, thread_id, user_id, turn_index, question, sql, answer, topics, context, terms,"
            " embedding, embedding_model, vec_version, created_at, updated_at)"
            f" VALUES (%s, %s, %s, %s, %s, %s, %s, %s::jsonb, %s, {_DOCUMENT}, %s::real[], %s, %s, now(), now())",
            (eid, e.thread_id, e.user_id, e.turn_index, *text, *document, to_real_array(embedding),
             model if embedding is not None else None, version))
        return
    seq = old[0]
    same_text = tuple(old[1:]) == (e.question, e.sql, e.answer, e.topics, e.context)
    conn.execute(
        "UPDATE episodes SET question = %s, sql = %s, answer = %s, topics = %s::jsonb, context = %s,"
        f" terms = {_DOCUMENT}, updated_at = now() WHERE seq = %s", (*text, *document, seq))
    if embedding is not None:
        _set_vector(conn, seq, embedding, model, version)
    elif not same_text:
        _set_vector(conn, seq, None, None, None)
        # A cache may hold the old vector: make it reload.
        conn.execute("INSERT INTO episode_invalidations (user_id, count) VALUES (%s, 1)"
                     " ON CONFLICT (user_id) DO UPDATE SET count = episode_invalidations.count + 1", (e.user_id,))


def _set_vector(conn: psycopg.Connection, seq: int, embedding: bytes | None, model: str | None,
                version: int | None) -> None:
    conn.execute("UPDATE episodes SET embedding = %s::real[], embedding_model = %s, vec_version = %s WHERE seq = %s",
                 (to_real_array(embedding), model, version, seq))


def _lock_user(conn: psycopg.Connection, user_id: str) -> None:
    conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_USER_LOCK, user_id))


def _max_vec_version(conn: psycopg.Connection, user_id: str) -> int:
    return conn.execute("SELECT coalesce(max(vec_version), 0) FROM episodes WHERE user_id = %s",
                        (user_id,)).fetchone()[0]


def _scope(user_id: str, thread_id: str | None) -> tuple[str, tuple[Any, ...]]:
    if thread_id is None:
        return "user_id = %s", (user_id,)
    return "user_id = %s AND thread_id = %s", (user_id, thread_id)
