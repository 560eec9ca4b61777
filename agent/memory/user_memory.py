"""Long-term memory about a user: remember candidates, read the relevant ones before a turn.

Writing (`remember`): below the importance threshold a candidate is dropped; the same
normalized text merges into the existing memory; the same `key` with another value
supersedes the old memory (archived with `valid_to`, never deleted); a near duplicate
(cosine >= 0.92) updates the existing memory; anything else is added.
Reading (`relevant`): active memories ranked by similarity x importance x recency.
"""

from __future__ import annotations

import hashlib
import logging
import re
import unicodedata
from datetime import datetime, timezone
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from agent.memory.embeddings import Embedder, EmbeddingError, from_bytes, to_bytes
from storage.base import MemoryItems
from storage.memory_items import MemoryItem, MemoryItemIn, MemoryType
from storage.text import search_terms

log = logging.getLogger(__name__)

NEAR_DUPLICATE = 0.92  # issue 6; e5-small puts paraphrases of one statement above it
HALF_LIFE_DAYS = 90.0
BLOCK_HEADING = "What askdb knows about you (the user), from earlier conversations:"


class MemoryCandidate(BaseModel):
    """Something worth remembering, as an extractor proposes it."""

    type: MemoryType = "FACT"
    text: str = Field(min_length=1, max_length=500)
    importance: float = Field(0.5, ge=0, le=1)
    key: str | None = Field(None, max_length=80, description="A slot such as preferred_name: one value at a time.")
    value: str | None = Field(None, max_length=300)
    tags: list[str] = Field(default_factory=list, max_length=10)


class MemoryChange(BaseModel):
    """What `remember` did with one candidate."""

    action: Literal["added", "merged", "updated", "superseded", "dropped"]
    candidate: MemoryCandidate
    item: MemoryItem | None = None
    replaced: MemoryItem | None = None


class ScoredMemory(BaseModel):
    item: MemoryItem
    score: float
    similarity: float


def normalize_text(text: str) -> str:
    """Case, width, punctuation and spacing folded away: what "the same memory" means."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(" " if unicodedata.category(c)[0] in "PSZ" else c for c in text)
    return " ".join(text.split())


def dedupe_hash(text: str) -> str:
    return hashlib.sha256(normalize_text(text).encode()).hexdigest()


def _age_days(timestamp: str, now: datetime) -> float:
    try:
        then = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    return max(0.0, (now - then).total_seconds() / 86400)


class UserMemory:
    """One user's long-term memories over either backend's memory item store; every call names the user."""

    def __init__(self, items: MemoryItems, embedder: Embedder | None, *, min_importance: float = 0.5,
                 near_duplicate: float = NEAR_DUPLICATE, half_life_days: float = HALF_LIFE_DAYS):
        self.items = items
        self.embedder = embedder
        self.min_importance = min_importance
        self.near_duplicate = near_duplicate
        self.half_life_days = half_life_days

    # -- writing ------------------------------------------------------------------

    def remember(self, candidates: list[MemoryCandidate], *, user_id: str,
                 session_id: str | None = None) -> list[MemoryChange]:
        """Merge candidates into this user's memories; return what happened to each."""
        return [self._remember_one(c, user_id=user_id, session_id=session_id) for c in candidates]

    def _remember_one(self, c: MemoryCandidate, *, user_id: str, session_id: str | None) -> MemoryChange:
        if c.importance < self.min_importance:
            return MemoryChange(action="dropped", candidate=c)
        digest = dedupe_hash(c.text)
        data = {k: v for k, v in {"key": c.key, "value": c.value}.items() if v}
        same = self.items.find_active(user_id=user_id, dedupe_hash=digest)
        if same:
            return MemoryChange(action="merged", candidate=c, item=self._touch(same[0], c, data=data))
        vector = self._embed(c.text)
        model = self.embedder.model if vector is not None else None
        if c.key:
            holders = self.items.find_active(user_id=user_id, key=c.key)
            if holders and normalize_text(holders[0].data.get("value") or "") == normalize_text(c.value or ""):
                item = self._touch(holders[0], c, data=data, text=c.text, digest=digest, vector=vector)
                return MemoryChange(action="updated", candidate=c, item=item, replaced=holders[0])
            if holders:
                new = self.items.add(self._item_in(c, user_id, session_id, digest, data), embedding=vector,
                                     embedding_model=model, supersedes=holders[0].id)
                for stale in holders[1:]:  # one value per key: older duplicates go too
                    self.items.archive(stale.id, user_id=user_id)
                return MemoryChange(action="superseded", candidate=c, item=new, replaced=holders[0])
        if vector is not None:
            near = self._nearest(vector, user_id=user_id)
            if near is not None and near[1] >= self.near_duplicate:
                old = self.items.get(near[0], user_id=user_id)
                item = self._touch(old, c, data={**old.data, **data}, text=c.text, digest=digest, vector=vector)
                return MemoryChange(action="updated", candidate=c, item=item, replaced=old)
        item = self.items.add(self._item_in(c, user_id, session_id, digest, data), embedding=vector, embedding_model=model)
        return MemoryChange(action="added", candidate=c, item=item)

    @staticmethod
    def _item_in(c: MemoryCandidate, user_id: str, session_id: str | None, digest: str, data: dict) -> MemoryItemIn:
        return MemoryItemIn(user_id=user_id, type=c.type, text=c.text.strip(), data=data, importance=c.importance,
                            tags=c.tags, source_session_id=session_id, dedupe_hash=digest)

    def _touch(self, old: MemoryItem, c: MemoryCandidate, *, data: dict, text: str | None = None,
               digest: str | None = None, vector: np.ndarray | None = None) -> MemoryItem:
        """Refresh an existing memory with a candidate that restates it."""
        return self.items.update(
            old.id, user_id=old.user_id, text=text, dedupe_hash=digest, importance=max(old.importance, c.importance),
            tags=list(dict.fromkeys([*old.tags, *c.tags])), data={**old.data, **data},
            embedding=to_bytes(vector) if vector is not None else None,
            embedding_model=self.embedder.model if vector is not None else None)

    def _embed(self, text: str) -> np.ndarray | None:
        if self.embedder is None:
            return None
        try:
            return self.embedder.embed_passages([text])[0]
        except EmbeddingError as exc:
            log.warning("memory kept without a vector: %s", exc)
            return None

    def _nearest(self, vector: np.ndarray, *, user_id: str) -> tuple[str, float] | None:
        stored = self.items.vectors(user_id=user_id, model=self.embedder.model)
        stored = [s for s in stored if len(s.embedding) == vector.nbytes]
        if not stored:
            return None
        matrix = np.vstack([from_bytes(s.embedding) for s in stored])
        scores = matrix @ vector
        best = int(np.argmax(scores))
        return stored[best].item_id, float(scores[best])

    # -- reading ------------------------------------------------------------------

    def relevant(self, query: str, *, user_id: str, k: int = 5) -> list[ScoredMemory]:
        """This user's `k` active memories that matter most for `query`.

        score = relevance x importance x recency, where relevance is 0.2 + 0.8 x similarity
        (cosine, or the share of the query's terms a memory contains when there are no
        vectors), at least 0.6 for PROFILE memories (how to address and answer the user
        matters whatever the question), and recency halves every 90 days toward 0.5.
        """
        items = self.items.list(user_id=user_id, status="active")
        if not items or k <= 0:
            return []
        similarities = self._similarities(query, items, user_id=user_id)
        now = datetime.now(timezone.utc)
        scored = []
        for item, similarity in zip(items, similarities):
            relevance = 0.2 + 0.8 * min(max(similarity, 0.0), 1.0)
            if item.type == "PROFILE":
                relevance = max(relevance, 0.6)
            recency = 0.5 + 0.5 * 0.5 ** (_age_days(item.updated_at, now) / self.half_life_days)
            scored.append(ScoredMemory(item=item, similarity=round(similarity, 4),
                                       score=round(relevance * item.importance * recency, 6)))
        scored.sort(key=lambda s: (-s.score, s.item.created_at))
        return scored[:k]

    def _similarities(self, query: str, items: list[MemoryItem], *, user_id: str) -> list[float]:
        if self.embedder is not None:
            try:
                q = self.embedder.embed_query(query)
                vectors = {v.item_id: from_bytes(v.embedding)
                           for v in self.items.vectors(user_id=user_id, model=self.embedder.model)}
                missing = [i for i in items if i.id not in vectors or vectors[i.id].shape != q.shape]
                if missing:  # lazily (re-)embedded: no vector yet, or another model's
                    for item, row in zip(missing, self.embedder.embed_passages([i.text for i in missing])):
                        self.items.set_vector(item.id, user_id=user_id, embedding=to_bytes(row),
                                              embedding_model=self.embedder.model)
                        vectors[item.id] = row
                return [float(vectors[i.id] @ q) for i in items]
            except EmbeddingError as exc:
                log.warning("user memories ranked by keywords: %s", exc)
        terms = set(search_terms(query))
        return [len(terms & set(search_terms(i.text))) / len(terms) if terms else 0.0 for i in items]


def remembered_in(note: str) -> list[str]:
    """The memories a turn note carries, as `memory_text` wrote them, without their kind."""
    if BLOCK_HEADING not in note:
        return []
    lines = note.split(BLOCK_HEADING, 1)[1].splitlines()
    return [re.sub(r"\s*\([a-z_]+\)$", "", line[2:]).strip() for line in lines if line.startswith("- ")]


def memory_text(memories: list[ScoredMemory]) -> str:
    """The block for the system prompt ("" when there is nothing to say)."""
    if not memories:
        return ""
    lines = [BLOCK_HEADING]
    for m in memories:
        text = " ".join(m.item.text.split())
        lines.append(f"- {text} ({m.item.type.lower()})")
    return "\n".join(lines)
