"""Link a question word that matches no name, value or lexicon entry to a table or column name
of close meaning, through the embedder the app already has (MEMORY_EMBEDDER; multilingual), and,
for a schema named in Chinese (an upload with Chinese headers), through a small bilingual glossary.

A link by the embedder alone is a guess, never a fact: small embedders place words by spelling as
much as by meaning (multilingual-e5-small scores "altitude" nearer `latitude` than `height`), so an
answer that rests on one names it in its caveat and is not marked ok. A word is linked only when
its best name is close (cosine at least `THRESHOLD`) and clearly ahead of the next (`MARGIN`).

Across scripts (an English word, Chinese names) cosines run lower, so the bar is lower too
(`CROSS_THRESHOLD`, `CROSS_MARGIN`), and the word is compared with the names in the other script
only. There the embedder ranks the right header first ("sales" 0.888 to 销售额, "product" 0.901 to
产品) but by thin margins, and not always ("price" is nearer 成本 than 单价): a link the glossary
(`agent/planner/glossary_zh.toml`) confirms, or makes where the embedder cannot, is a translation,
stated in the answer ("I read 'sales' as 销售额 (matched by meaning).") but not a guess.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from agent.memory.embeddings import Embedder, EmbeddingError
from agent.planner.schema_index import SchemaIndex
from storage.text import has_cjk, singular

#: Cosine (unit vectors, passage to passage) a name must reach; e5 places unrelated words near 0.86.
THRESHOLD = 0.92
#: How far ahead of the next name the best one must be.
MARGIN = 0.01
#: The same for an English word and Chinese names (multilingual-e5-small, 4-bit, measured on a
#: 20-header sales and staff table: 23 English words with a Chinese twin score 0.864 to 0.915 to it,
#: 19 of them 0.02 ahead of the next header; 20 unrelated words at most 0.890, 0.038 ahead ("year"
#: to 日期) and mostly under 0.012 ahead).
CROSS_THRESHOLD = 0.875
CROSS_MARGIN = 0.02
GLOSSARY = Path(__file__).with_name("glossary_zh.toml")


@dataclass(frozen=True)
class Link:
    """A question word read as a schema name it does not spell."""

    words: tuple[str, ...]  # the words of the name it is linked to
    name: str  # that name as the schema writes it
    how: str  # "meaning": the embedder, confirmed by the glossary or not; "glossary": the glossary alone
    confirmed: bool  # the glossary gives the name's word for it: a translation, not a guess
    score: float | None = None  # the embedder's cosine, when it linked the word

    @property
    def shown(self) -> str:
        """The name as the answer states it: a Chinese one as written, an English one in words."""
        return self.name if has_cjk(self.name) else " ".join(self.words)


@lru_cache(maxsize=1)
def glossary() -> dict[str, tuple[str, ...]]:
    """English word (singular, lower case) -> its usual Chinese header words, most usual first."""
    with GLOSSARY.open("rb") as f:
        return {k: tuple(v) for k, v in tomllib.load(f)["words"].items()}


class MeaningLinker:
    """Embeds a schema's table and column names once, then links words to them.

    Args:
        embedder: None: only the glossary links, and only to Chinese names.
    """

    def __init__(self, embedder: Embedder | None):
        self.embedder = embedder
        self._names: dict[int, tuple[list[tuple[str, ...]], list[str], np.ndarray | None]] = {}  # per schema index

    def _schema_names(self, schema: SchemaIndex) -> tuple[list[tuple[str, ...]], list[str], np.ndarray | None]:
        if id(schema) not in self._names:
            named = {t.words: t.name for t in schema.tables.values()}
            named |= {c.words: c.name for t in schema.tables.values() for c in t.columns.values() if not c.is_key}
            words = sorted(p for p in named if p)
            vectors = None
            if self.embedder is not None:
                try:
                    vectors = self.embedder.embed_passages([" ".join(n) for n in words])
                except EmbeddingError:
                    vectors = None  # no embedder at hand: only the glossary links
            self._names = {id(schema): (words, [named[w] for w in words], vectors)}
        return self._names[id(schema)]

    def links(self, words: list[str], schema: SchemaIndex) -> dict[str, Link]:
        """word -> its link; words without a clear match are left out."""
        words = list(dict.fromkeys(w.lower() for w in words))
        if not words:
            return {}
        names, spelled, vectors = self._schema_names(schema)
        scores = None
        if vectors is not None and len(names):
            try:
                scores = self.embedder.embed_passages(words) @ vectors.T
            except EmbeddingError:
                scores = None
        cjk = np.array([has_cjk(n) for n in spelled], dtype=bool)
        found: dict[str, Link] = {}
        for i, word in enumerate(words):
            row = scores[i] if scores is not None else None
            meant = _best(row, ~cjk, THRESHOLD, MARGIN) if row is not None else None
            if meant is not None:
                found[word] = Link(names[meant], spelled[meant], "meaning", False, float(row[meant]))
                continue
            across = _best(row, cjk, CROSS_THRESHOLD, CROSS_MARGIN) if row is not None else None
            translated = _translated(word, spelled, row)
            if translated is not None:
                how = "meaning" if across == translated else "glossary"
                found[word] = Link(names[translated], spelled[translated], how, True,
                                   float(row[translated]) if row is not None else None)
            elif across is not None:
                found[word] = Link(names[across], spelled[across], "meaning", False, float(row[across]))
        return found


def _best(row: np.ndarray, among: np.ndarray, threshold: float, margin: float) -> int | None:
    """The index of the name `row` scores best among those `among` marks, when it clears the bar."""
    indices = np.flatnonzero(among)
    if not len(indices):
        return None
    ranked = indices[np.argsort(-row[indices])]
    best = ranked[0]
    if row[best] < threshold or (len(ranked) > 1 and row[best] - row[ranked[1]] < margin):
        return None
    return int(best)


def _translated(word: str, spelled: list[str], row: np.ndarray | None) -> int | None:
    """The Chinese name the glossary gives for `word`: one equal to one of its words (the most usual
    first), else the shortest holding one; among names tied so, the one the embedder ranks first, and
    none when there is no embedder to choose."""
    entries = glossary().get(word) or glossary().get(singular(word)) or ()
    for entry in entries:
        equal = [i for i, n in enumerate(spelled) if n == entry]
        if equal:
            return equal[0]
    holding = [i for i, n in enumerate(spelled) for e in entries if e in n]
    if not holding:
        return None
    shortest = min(len(spelled[i]) for i in holding)
    tied = sorted({i for i in holding if len(spelled[i]) == shortest})
    if len(tied) == 1:
        return tied[0]
    return max(tied, key=lambda i: row[i]) if row is not None else None
