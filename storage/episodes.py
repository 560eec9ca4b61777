"""EpisodeStore: one row per finished turn, a keyword index over it, and its embedding.

The schema is each backend's migration 3. An episode's id is a hash of (thread, turn), so
indexing a turn again updates it. Rows cascade from `conversations`, and their keyword index
with them (SQLite's FTS rows through a trigger; PostgreSQL's `terms` is in the row). The store
keeps embeddings as float32 bytes (real[] on PostgreSQL) with the name of the model that made
them and knows nothing else of models: `agent.memory.recall` embeds and ranks. Keyword scores
are bm25 on SQLite and minus ts_rank on PostgreSQL: lower is better on both; only the order
compares across backends, not the numbers.

Keyword terms are made by `storage.text.search_terms`, for the index and for queries alike:
words lower-cased with stopwords dropped, CJK runs cut into overlapping character
bigrams (FTS5's unicode61 would keep a whole Chinese phrase as one token).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple, TypeVar

from pydantic import BaseModel, Field

from storage.errors import ConversationNotFound, StoreError
from storage.sql import Dialect, Row, TextIndex, Transaction
from storage.tables import Tables
from storage.text import STOPWORDS, is_cjk_char, search_terms

SQL_WORDS = frozenset("""
select from where group by order having limit offset join left right inner outer cross on as and or not
null is in like between case when then else end distinct asc desc union all with count sum avg min max
cast strftime coalesce ifnull round substr lower upper over partition
""".split())
# bm25 weights for question, sql, answer, topics, context: the question and answer say
# what a turn was about; SQL repeats table names; context is a neighbour's words (0.5 was
# best of 0.2-0.8 on LoCoMo, docs/recall.md).
COLUMN_WEIGHTS = (1.0, 0.4, 0.8, 0.8, 0.5)
T = TypeVar("T")
# BM25 is computed for every matching row: at 100k episodes of one user a question's common
# words match most of them (40-60 ms a search). Past this many, the commonest words are dropped
# (at 100k: 18 ms a keyword search at 10,000, 12 ms at 5,000, 9 ms at 2,500; docs/recall.md).
SCORED_ROWS = 5_000


class EpisodeStoreError(StoreError):
    """Base of the episode store's errors."""


class EpisodeNotFound(EpisodeStoreError):
    """No episode with this id belongs to this user."""


def episode_id(thread_id: str, turn_index: int) -> str:
    """The deterministic id of a turn's episode (thread ids never contain ':')."""
    return hashlib.sha256(f"{thread_id}:{int(turn_index)}".encode()).hexdigest()[:32]


def query_terms(terms: Iterable[str], *, prefix_min: int = 0) -> list[tuple[str, bool]]:
    """The distinct non-empty `terms`, each with whether it also matches as a prefix: those of at
    least `prefix_min` characters (0: none), never a CJK bigram. Both backends' queries use it."""
    seen: dict[str, None] = dict.fromkeys(t for t in terms if t)
    return [(t, bool(prefix_min) and len(t) >= prefix_min and not is_cjk_char(t[0])) for t in seen]


def fewest_matches(terms: list[T], matches: Callable[[list[T], int], int]) -> list[T]:
    """The query terms worth scoring: all of them, unless together they match more than
    `SCORED_ROWS` rows (`matches(terms, cap)` counts rows, up to `cap`); then the rarest first while their matches add
    up to at most that many (their BM25 weight is the largest). A lone term is always kept."""
    cap = SCORED_ROWS + 1  # a count walks the postings: no further than needed
    if len(terms) < 2 or matches(terms, cap) <= SCORED_ROWS:
        return terms
    counts = [matches([term], cap) for term in terms]
    kept, total = [], 0
    for count, term in sorted(zip(counts, terms), key=lambda pair: pair[0]):
        total += count
        if kept and total > SCORED_ROWS:
            break
        kept.append(term)
    return kept


class EpisodeIn(BaseModel):
    """What a finished turn contributes to the index."""

    thread_id: str
    user_id: str
    turn_index: int = Field(ge=0)
    question: str
    sql: str = ""
    answer: str = ""
    topics: list[str] = Field(default_factory=list)
    context: str = Field("", description="Neighbouring words (the previous question), indexed at low weight.")


def index_terms(e: EpisodeIn) -> tuple[str, str, str, str, str]:
    """The indexed text of question, sql, answer, topics and context (`COLUMN_WEIGHTS`' order):
    each column's keyword terms, space-separated. Both backends index these."""
    return (" ".join(search_terms(e.question)), " ".join(search_terms(e.sql, drop=STOPWORDS | SQL_WORDS)),
            " ".join(search_terms(e.answer)), " ".join(search_terms(" ".join(e.topics))),
            " ".join(search_terms(e.context)))


class Episode(EpisodeIn):
    id: str
    seq: int
    embedding_model: str | None = None
    created_at: str
    updated_at: str


class StoredVector(NamedTuple):
    # A tuple, not a model: a cache loads 100k of these at once.
    seq: int
    thread_id: str
    vec_version: int
    embedding: bytes


def versioned(items: Iterable[tuple[EpisodeIn, bytes | None, str | None]], *, owner: Callable[[str], str | None],
              newest_version: Callable[[str], int]) -> Iterator[tuple[EpisodeIn, bytes | None, str | None, int | None]]:
    """Each item of an upsert with the vec_version its embedding gets (None without one), once its
    thread is found to be its user's. Both backends call it inside their write transaction.

    Args:
        owner: a thread's user (None: no such thread), asked once per thread.
        newest_version: a user's highest vec_version so far, asked once per user.
    Raises:
        ConversationNotFound: a thread is not its episode's user's.
    """
    owners: dict[str, str | None] = {}
    versions: dict[str, int] = {}
    for episode, embedding, model in items:
        if episode.thread_id not in owners:
            owners[episode.thread_id] = owner(episode.thread_id)
        if owners[episode.thread_id] != episode.user_id:
            raise ConversationNotFound(episode.thread_id)
        version = None
        if embedding is not None:
            if episode.user_id not in versions:
                versions[episode.user_id] = newest_version(episode.user_id)
            versions[episode.user_id] += 1
            version = versions[episode.user_id]
        yield episode, embedding, model, version


INDEX = TextIndex("episodes", "seq", ("question", "sql", "answer", "topics", "context"), COLUMN_WEIGHTS,
                  scope_tokens=(("user_id", "u"), ("thread_id", "t")))
# A write to a user's episodes holds this lock (with the user's hash) until it commits, as
# SQLite's single writer does: vec_versions then become visible in the order they are
# numbered, so a vector cache that has read version n never misses a later-committed n - 1,
# and two servers indexing the same turn at once update one row instead of both inserting it.
_USER_LOCK = 0x65706973  # "epis"


def _columns(d: Dialect) -> str:
    return ("seq, id, thread_id, user_id, turn_index, question, sql, answer, "
            f"{d.json_out('topics')} AS topics, context, embedding_model, {d.timestamp('created_at')} AS created_at,"
            f" {d.timestamp('updated_at')} AS updated_at")


class EpisodeStore(Tables):
    """Episodes of many users in the store; every read filters by `user_id`."""

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
        with self.db.write() as tx:
            def owner(thread_id: str) -> str | None:
                user_id = tx.value("SELECT user_id FROM conversations WHERE thread_id = ?", (thread_id,))
                if user_id is not None:
                    tx.dialect.lock(tx, _USER_LOCK, user_id)
                return user_id

            for episode, embedding, model, version in versioned(
                    items, owner=owner, newest_version=lambda user_id: _max_vec_version(tx, user_id)):
                _upsert_one(tx, episode, embedding, model, version)
                count += 1
        return count

    def set_embeddings(self, vectors: Iterable[tuple[int, bytes]], *, user_id: str, model: str) -> int:
        """Store (seq, embedding) pairs of this user's episodes made by `model`; return how many."""
        count = 0
        with self.db.write() as tx:
            tx.dialect.lock(tx, _USER_LOCK, user_id)
            version = _max_vec_version(tx, user_id)
            for seq, embedding in vectors:
                version += 1
                count += tx.execute(
                    f"UPDATE episodes SET embedding = {tx.dialect.vector_in}, embedding_model = ?, vec_version = ?"
                    " WHERE seq = ? AND user_id = ?",
                    (tx.dialect.vector_param(embedding), model, version, seq, user_id)).rowcount
        return count

    def delete_for_user(self, user_id: str) -> int:
        """Erase every episode of this user (their keyword index follows); return how many."""
        with self.db.write() as tx:
            return tx.execute("DELETE FROM episodes WHERE user_id = ?", (user_id,)).rowcount

    # -- reading ------------------------------------------------------------------

    def get(self, id: str, *, user_id: str) -> Episode:
        row = self.db.row(f"SELECT {_columns(self.db.dialect)} FROM episodes WHERE id = ? AND user_id = ?",
                          (id, user_id))
        if row is None:
            raise EpisodeNotFound(f"episode {id!r} not found")
        return _episode(row)

    def list(self, *, user_id: str, thread_id: str | None = None, limit: int = 100, offset: int = 0) -> list[Episode]:
        """This user's episodes (of one thread if given), newest first."""
        where, params = _scope(user_id, thread_id)
        rows = self.db.rows(f"SELECT {_columns(self.db.dialect)} FROM episodes WHERE {where}"
                            " ORDER BY seq DESC LIMIT ? OFFSET ?", (*params, max(0, limit), max(0, offset)))
        return [_episode(r) for r in rows]

    def count(self, *, user_id: str, thread_id: str | None = None) -> int:
        where, params = _scope(user_id, thread_id)
        return self.db.value(f"SELECT count(*) AS n FROM episodes WHERE {where}", params)

    def by_seq(self, seqs: Iterable[int], *, user_id: str) -> dict[int, Episode]:
        """The episodes with these row numbers that belong to this user."""
        seqs = list(dict.fromkeys(int(s) for s in seqs))
        if not seqs:
            return {}
        d = self.db.dialect
        among, params = d.in_list("seq", seqs)
        rows = self.db.rows(f"SELECT {_columns(d)} FROM episodes WHERE {d.unindexed('user_id')} = ? AND {among}",
                            (user_id, *params))
        return {r["seq"]: _episode(r) for r in rows}

    def keyword_search(self, terms: Iterable[str], *, user_id: str, thread_id: str | None = None, limit: int = 50,
                       prefix_min: int = 0) -> list[tuple[int, float]]:
        """(seq, score: lower is better) of the best matches of any of `terms`, best first.

        Every matching row is scored, so when more than `SCORED_ROWS` of the scope's rows would
        match, the terms found in the most rows are left out (rarest kept first; their weight
        in BM25 is the smallest anyway) until the rest match at most that many.
        """
        chosen = query_terms(terms, prefix_min=prefix_min)
        if not chosen:
            return []
        scope = {"user_id": user_id, **({} if thread_id is None else {"thread_id": thread_id})}
        d = self.db.dialect
        with self.db.read() as tx:
            chosen = fewest_matches(chosen, lambda some, cap: d.count_matches(tx, INDEX, some, scope, cap))
            return d.text_search(tx, INDEX, chosen, scope, limit)

    def vectors(self, *, user_id: str, model: str, after_version: int = 0) -> list[StoredVector]:
        """Embeddings by `model` of this user's episodes written after `after_version`."""
        rows = self.db.rows("SELECT seq, thread_id, vec_version, embedding FROM episodes"
                            " WHERE user_id = ? AND vec_version > ? AND embedding_model = ? ORDER BY vec_version",
                            (user_id, after_version, model), vectors=True)
        return [StoredVector(r["seq"], r["thread_id"], r["vec_version"], r["embedding"]) for r in rows]

    def vector_state(self, *, user_id: str) -> tuple[int, int]:
        """(newest vec_version, invalidations so far) for this user: what a cache compares."""
        row = self.db.row(
            "SELECT (SELECT coalesce(max(vec_version), 0) FROM episodes WHERE user_id = ?) AS newest,"
            " coalesce((SELECT count FROM episode_invalidations WHERE user_id = ?), 0) AS deleted",
            (user_id, user_id))
        return row["newest"], row["deleted"]

    def stale(self, *, user_id: str, model: str, limit: int = 64) -> list[Episode]:
        """Episodes without an embedding by `model` (none yet, or another model's), oldest first."""
        # Three ranges of the (user_id, embedding_model) index: "IS DISTINCT FROM" would read
        # every row of the user (50 ms at 100k episodes on PostgreSQL) on every recall.
        columns = _columns(self.db.dialect)
        rows = self.db.rows(
            f"SELECT {columns} FROM episodes WHERE user_id = ? AND embedding_model IS NULL"
            f" UNION ALL SELECT {columns} FROM episodes WHERE user_id = ? AND embedding_model < ?"
            f" UNION ALL SELECT {columns} FROM episodes WHERE user_id = ? AND embedding_model > ?"
            " ORDER BY seq LIMIT ?", (user_id, user_id, model, user_id, model, max(1, limit)))
        return [_episode(r) for r in rows]


def _upsert_one(tx: Transaction, e: EpisodeIn, embedding: bytes | None, model: str | None,
                version: int | None) -> None:
    d, eid, texts = tx.dialect, episode_id(e.thread_id, e.turn_index), index_terms(e)
    topics = d.json_param(json.dumps(e.topics, ensure_ascii=False))
    document = d.terms_document(INDEX, texts)
    old = tx.row(f"SELECT seq, question, sql, answer, {d.json_out('topics')} AS topics, context FROM episodes"
                 " WHERE id = ?", (eid,))
    if old is None:
        seq = tx.value(
            "INSERT INTO episodes (id, thread_id, user_id, turn_index, question, sql, answer, topics, context,"
            f" embedding, embedding_model, vec_version, created_at, updated_at{document.columns})"
            f" VALUES (?, ?, ?, ?, ?, ?, ?, {d.json_in}, ?, {d.vector_in}, ?, ?, {d.now}, {d.now}{document.values})"
            " RETURNING seq",
            (eid, e.thread_id, e.user_id, e.turn_index, e.question, e.sql, e.answer, topics, e.context,
             d.vector_param(embedding), model if embedding is not None else None, version, *document.params))
    else:
        seq = old["seq"]
        same_text = ((old["question"], old["sql"], old["answer"], json.loads(old["topics"] or "[]"), old["context"])
                     == (e.question, e.sql, e.answer, e.topics, e.context))
        tx.execute(f"UPDATE episodes SET question = ?, sql = ?, answer = ?, topics = {d.json_in}, context = ?,"
                   f" updated_at = {d.now}{document.assignment} WHERE seq = ?",
                   (e.question, e.sql, e.answer, topics, e.context, *document.params, seq))
        if embedding is not None:
            _set_vector(tx, seq, embedding, model, version)
        elif not same_text:
            _set_vector(tx, seq, None, None, None)
            # A cache may hold the old vector: make it reload.
            tx.execute("INSERT INTO episode_invalidations (user_id, count) VALUES (?, 1)"
                       " ON CONFLICT (user_id) DO UPDATE SET count = episode_invalidations.count + 1", (e.user_id,))
    d.write_text_index(tx, INDEX, seq, texts, {"user_id": e.user_id, "thread_id": e.thread_id})


def _set_vector(tx: Transaction, seq: int, embedding: bytes | None, model: str | None, version: int | None) -> None:
    tx.execute(f"UPDATE episodes SET embedding = {tx.dialect.vector_in}, embedding_model = ?, vec_version = ?"
               " WHERE seq = ?", (tx.dialect.vector_param(embedding), model, version, seq))


def _max_vec_version(tx: Transaction, user_id: str) -> int:
    # Per user (the caches are), so the (user_id, vec_version) index answers it.
    return tx.value("SELECT coalesce(max(vec_version), 0) AS newest FROM episodes WHERE user_id = ?", (user_id,))


def _scope(user_id: str, thread_id: str | None) -> tuple[str, tuple[str, ...]]:
    if thread_id is None:
        return "user_id = ?", (user_id,)
    return "user_id = ? AND thread_id = ?", (user_id, thread_id)


def _episode(row: Row) -> Episode:
    data = dict(row)
    data["topics"] = json.loads(data["topics"] or "[]")
    return Episode.model_validate(data)
