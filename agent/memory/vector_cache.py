"""Exact cosine search over a user's episode vectors, kept in memory between recalls.

Reading 100k embeddings out of SQLite takes far longer than the 50 ms a recall may
spend (issue 6), so each (user, model) gets a matrix that is refreshed incrementally:
the store bumps a per-user `vec_version` on every embedding it writes, and counts
deletions and cleared vectors; a newer version loads only the newer rows, an
invalidation reloads the user in full. Several processes stay correct because the
check reads the store each time (two indexed lookups).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np

from storage.base import Episodes
from storage.episodes import StoredVector

# Rows kept across all users before the least recently used are dropped
# (400k x 384 float32 is ~600 MB at most; most users have far fewer episodes).
MAX_ROWS = 400_000


@dataclass
class _Matrix:
    dim: int
    version: int = 0
    invalidations: int = 0
    n: int = 0
    seqs: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    threads: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    rows: np.ndarray | None = None
    position: dict[int, int] = field(default_factory=dict)
    thread_codes: dict[str, int] = field(default_factory=dict)
    used: float = 0.0

    def add(self, seq: int, thread_id: str, vector: np.ndarray) -> None:
        at = self.position.get(seq)
        if at is None:
            if self.rows is None or self.n == len(self.rows):
                self._grow(max(64, self.n * 2))
            at, self.n = self.n, self.n + 1
            self.position[seq] = at
            self.seqs[at] = seq
        self.threads[at] = self.thread_codes.setdefault(thread_id, len(self.thread_codes))
        self.rows[at] = vector

    def load(self, stored: list[StoredVector]) -> None:
        """Fill an empty matrix in one go (a cold start at 100k rows: one join, one copy)."""
        latest = {v.seq: v for v in stored}  # a seq re-embedded twice: its newest vector
        self._grow(max(64, len(latest)))
        self.rows[:len(latest)] = np.frombuffer(b"".join(v.embedding for v in latest.values()),
                                                dtype="<f4").reshape(-1, self.dim)
        for at, v in enumerate(latest.values()):
            self.seqs[at] = v.seq
            self.threads[at] = self.thread_codes.setdefault(v.thread_id, len(self.thread_codes))
        self.position = {seq: at for at, seq in enumerate(latest)}
        self.n = len(latest)

    def _grow(self, capacity: int) -> None:
        rows = np.zeros((capacity, self.dim), np.float32)
        seqs, threads = np.zeros(capacity, np.int64), np.zeros(capacity, np.int32)
        if self.rows is not None:
            rows[:self.n], seqs[:self.n], threads[:self.n] = self.rows[:self.n], self.seqs[:self.n], self.threads[:self.n]
        self.rows, self.seqs, self.threads = rows, seqs, threads


def _dot(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """rows @ query on the calling thread. numpy's `@` hands a matrix-vector product to
    OpenBLAS, whose threads then spin on the second core for a while and slow the keyword
    query that a hybrid recall runs there (recall p50 at 100k episodes: 44.8 -> 37.8 ms);
    einsum's own SIMD loop is as fast for this memory-bound product (6.5 ms against 6.4)."""
    return np.einsum("ij,j->i", rows, query)


class VectorCache:
    """Per-(user, model) matrices of episode vectors; safe to share between threads."""

    def __init__(self, episodes: Episodes, *, max_rows: int = MAX_ROWS):
        self.episodes = episodes
        self.max_rows = max_rows
        self._matrices: dict[tuple[str, str], _Matrix] = {}
        self._lock = threading.Lock()

    def search(self, query: np.ndarray, *, user_id: str, model: str, thread_id: str | None = None,
               limit: int = 50) -> list[tuple[int, float]]:
        """(seq, cosine) of the `limit` nearest episodes of this user (in one thread if given), best first."""
        query = np.asarray(query, np.float32)
        with self._lock:
            matrix = self._refresh(user_id, model, query.shape[-1])
            if matrix.n == 0:
                return []
            if thread_id is None:
                index = None
                scores = _dot(matrix.rows[:matrix.n], query)
            else:
                code = matrix.thread_codes.get(thread_id)
                if code is None:
                    return []
                index = np.flatnonzero(matrix.threads[:matrix.n] == code)
                scores = _dot(matrix.rows[index], query)
            seqs = matrix.seqs[:matrix.n] if index is None else matrix.seqs[index]
        limit = min(limit, len(scores))
        if limit <= 0:
            return []
        top = np.argpartition(-scores, limit - 1)[:limit]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(seqs[i]), float(scores[i])) for i in top]

    def _refresh(self, user_id: str, model: str, dim: int) -> _Matrix:
        key = (user_id, model)
        newest, invalidations = self.episodes.vector_state(user_id=user_id)
        matrix = self._matrices.get(key)
        if matrix is None or matrix.invalidations != invalidations or matrix.dim != dim or newest < matrix.version:
            matrix = self._matrices[key] = _Matrix(dim=dim, invalidations=invalidations)
        if newest > matrix.version:
            # Another model's width is skipped: lazy re-embedding replaces it.
            fresh = [v for v in self.episodes.vectors(user_id=user_id, model=model, after_version=matrix.version)
                     if len(v.embedding) == dim * 4]
            if matrix.n == 0 and fresh:
                matrix.load(fresh)
            else:
                for stored in fresh:
                    matrix.add(stored.seq, stored.thread_id, np.frombuffer(stored.embedding, dtype="<f4"))
            matrix.version = newest
        matrix.used = time.monotonic()
        self._evict(keep=key)
        return matrix

    def _evict(self, *, keep: tuple[str, str]) -> None:
        total = sum(m.n for m in self._matrices.values())
        for key, matrix in sorted(self._matrices.items(), key=lambda kv: kv[1].used):
            if total <= self.max_rows:
                break
            if key != keep:
                total -= matrix.n
                del self._matrices[key]

    def clear(self, user_id: str | None = None) -> None:
        """Forget cached matrices (of one user, or all)."""
        with self._lock:
            for key in [k for k in self._matrices if user_id is None or k[0] == user_id]:
                del self._matrices[key]
