"""Keyword search on PostgreSQL, tokenised as on SQLite: weighted tsvectors over the same terms.

Both backends index the terms Python makes (`storage.text.search_terms`: lower case,
stopwords dropped, CJK runs as overlapping bigrams), joined by spaces. PostgreSQL reads
them with the `askdb_terms` configuration (migration 3): its parser splits on the spaces,
English words are stemmed by Snowball, the rest is kept as it is. That matches SQLite's FTS5
index (`porter unicode61`): Porter and Snowball agree on plurals and common suffixes, and
accents on Latin letters are folded here as unicode61 folds them. Each column's terms carry
a tsvector weight (A-D) chosen by its bm25 weight on SQLite, and ts_rank uses those numbers.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import NamedTuple


# Latin letters (Basic Latin, Latin-1, Extended A/B and Additional): the ones unicode61 folds.
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f\u1e00-\u1eff]")
_VECTOR = "setweight(to_tsvector('askdb_terms', ?), CAST(? AS \"char\"))"
# ts_rank without length normalization (0). Keyword-only recall on LoCoMo (bench/recall.py's
# setup): 65.3 / 72.6 at k = 5 / 10, SQLite's bm25 65.9 / 74.2; dividing by 1 + log(length)
# gave 64.5 / 73.1, other normalizations 37-65; weighting each term by its idf gained under
# half a point for nearly twice the time.
_NORMALIZATION = 0
# The FROM item and score of a keyword search over a table's `terms`: a query `q` (one parameter,
# `query_text`'s) and minus ts_rank, so lower is better as with SQLite's bm25 (`score_params`).
QUERY_SQL = "to_tsquery('askdb_terms', ?) AS q"
SCORE_SQL = "-ts_rank(CAST(? AS real[]), terms, q, ?)"


class Weights(NamedTuple):
    """tsvector weights for a table's indexed columns."""

    labels: tuple[str, ...]  # per column: "A" (heaviest) to "D"
    rank: list[float]  # ts_rank's weights array, in its order {D, C, B, A}


def weights(column_weights: Sequence[float]) -> Weights:
    """The columns' bm25 weights as tsvector labels: equal weights share a label, at most four."""
    distinct = sorted(set(column_weights), reverse=True)
    if len(distinct) > 4:
        raise ValueError("a tsvector has four weights (A-D); give at most four distinct column weights")
    label = dict(zip(distinct, "ABCD"))
    by_label = {label[w]: float(w) for w in distinct}
    return Weights(tuple(label[w] for w in column_weights), [by_label.get(name, 0.0) for name in "DCBA"])


def fold(text: str) -> str:
    """Latin letters without their accents ("café" -> "cafe"), as FTS5's unicode61 indexes them."""
    if text.isascii():
        return text
    kept: list[str] = []
    for char in unicodedata.normalize("NFD", text):
        if not (unicodedata.combining(char) and kept and _LATIN.match(kept[-1])):
            kept.append(char)
    return unicodedata.normalize("NFC", "".join(kept))


def document_sql(columns: int) -> str:
    """SQL for one weighted tsvector over `columns` texts: two parameters each (`document_params`)."""
    return " || ".join([_VECTOR] * columns)


def document_params(texts: Sequence[str], w: Weights) -> list[str]:
    """The parameters of `document_sql`: each column's terms, then its weight label."""
    return [value for text, label in zip(texts, w.labels, strict=True) for value in (fold(text), label)]


def score_params(w: Weights) -> tuple[list[float], int]:
    """The parameters of `SCORE_SQL`: the weights of labels D, C, B, A and the normalization."""
    return w.rank, _NORMALIZATION


def query_text(terms: Iterable[tuple[str, bool]]) -> str:
    """A tsquery (for `to_tsquery('askdb_terms', ...)`) matching any of `terms` ((term, as a prefix)
    pairs, `storage.episodes.query_terms`), each quoted, so no term is read as syntax."""
    return " | ".join("'" + fold(term).replace("\\", "\\\\").replace("'", "''") + "'" + (":*" if prefix else "")
                      for term, prefix in terms)
