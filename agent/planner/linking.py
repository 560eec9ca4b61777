"""Link a question word that matches no name, value or lexicon entry to a table or column name
of close meaning, through the embedder the app already has (MEMORY_EMBEDDER; multilingual).

A link is a guess, never a fact: small embedders place words by spelling as much as by meaning
(multilingual-e5-small scores "altitude" nearer `latitude` than `height`), so an answer that
rests on a link names it in its caveat and is not marked ok. A word is linked only when its
best name is close (cosine at least `THRESHOLD`) and clearly ahead of the next (`MARGIN`).
"""

from __future__ import annotations

import numpy as np

from agent.memory.embeddings import Embedder, EmbeddingError
from agent.planner.schema_index import SchemaIndex

#: Cosine (unit vectors, passage to passage) a name must reach; e5 places unrelated words near 0.86.
THRESHOLD = 0.92
#: How far ahead of the next name the best one must be.
MARGIN = 0.01


class MeaningLinker:
    """Embeds a schema's table and column names once, then links words to them."""

    def __init__(self, embedder: Embedder):
        self.embedder = embedder
        self._names: dict[int, tuple[list[tuple[str, ...]], np.ndarray]] = {}  # per schema index

    def _schema_names(self, schema: SchemaIndex) -> tuple[list[tuple[str, ...]], np.ndarray]:
        if id(schema) not in self._names:
            phrases = {t.words for t in schema.tables.values()}
            phrases |= {c.words for t in schema.tables.values() for c in t.columns.values() if not c.is_key}
            names = sorted(p for p in phrases if p)
            self._names = {id(schema): (names, self.embedder.embed_passages([" ".join(n) for n in names]))}
        return self._names[id(schema)]

    def links(self, words: list[str], schema: SchemaIndex) -> dict[str, tuple[str, ...]]:
        """word -> the words of the name it is linked to; words without a clear match are left out."""
        words = list(dict.fromkeys(w.lower() for w in words))
        if not words:
            return {}
        try:
            names, vectors = self._schema_names(schema)
            scores = self.embedder.embed_passages(words) @ vectors.T
        except EmbeddingError:
            return {}  # no embedder at hand: the words stay unused, and the caveat says so
        found = {}
        for word, row in zip(words, scores):
            best, second = np.argsort(-row)[:2] if len(names) > 1 else (0, 0)
            if row[best] >= THRESHOLD and (len(names) == 1 or row[best] - row[second] >= MARGIN):
                found[word] = names[best]
        return found
