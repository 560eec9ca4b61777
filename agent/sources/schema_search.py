"""Schema retrieval: the tables of a large database ranked by relevance to a question.

When a database has more tables than fit comfortably, `list_tables` shows the ones most
relevant to the question instead of all of them (issue 8). Each table becomes a small
document (its name, its columns, declared comments, its most frequent text values) in an
in-memory FTS5 index, built once per database file and cached; the analytics file is only
read. Three signals, each scaled to its best match, are summed: BM25 over the documents;
stored values the question names verbatim ("Kabul" finds `city`); and, when an embedder is
given, cosine similarity of the documents' vectors. Then the foreign-key graph adjusts them:
the tables of one query are connected, and questions rarely name the link table.
docs/evaluation.md has the measured recall.
"""

from __future__ import annotations

import math
import re
import sqlite3
import threading
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from agent.sources.base import DataSource, TableSchema, quote_identifier
from agent.sources.errors import SourceError, SourceUnavailable
from storage.text import CJK, REQUEST_WORDS, STOPWORDS, bigrams, has_cjk, singular

#: Distinct text values read per column, most frequent first (the value matcher's sample).
VALUES_PER_COLUMN = 2000
#: Of those, how many go into the table's keyword document (more would drown its names).
DOC_VALUES_PER_COLUMN = 15
#: Rows read per column, so a huge table costs a bounded scan.
SCANNED_ROWS = 20_000
MAX_VALUE_CHARS = 60
#: Values kept for phrase matching in all (about 100 MB at most): past it, later tables keep none.
MAX_PHRASES = 1_000_000
#: BM25 weights of the document's fields: name, columns, comments, values. Large weights saturate
#: BM25's term frequency, so a table scores by how many of the question's rarer words it has
#: anywhere in its names: 93% of Spider questions covered at 1,000 tables, against 83% with
#: weights (4, 1, 1, 0.05) (bench/schema_retrieval.py). Values count mostly through phrases.
FIELD_WEIGHTS = (48.0, 12.0, 12.0, 0.5)
#: Weight of the value and vector signals against the keyword one (each scaled to its best match).
VALUE_WEIGHT = 1.0
VECTOR_WEIGHT = 0.5
#: Candidates whose neighbours are searched for a table linking two of them.
BRIDGE_FROM = 4
#: Share of the best neighbour's score a matching table gains (tuned on bench/schema_retrieval.py).
NEIGHBOUR_SHARE = 0.5
BRIDGE_SHARE = 0.999
#: The best candidates whose unmatched neighbours are also offered, and at what share of their score.
EXPAND_FROM = 2
EXPAND_SHARE = 0.7
MAX_CACHED = 8

_WORD = re.compile(rf"[{CJK}]+|[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_TEXT_TYPES = ("CHAR", "CLOB", "TEXT", "STRING", "")
_COMMENT = re.compile(r"--[ \t]*([^\n]*)|/\*(.*?)\*/", re.S)
#: What every question about data says ("the number of", "names") and most schemas have (`name`).
_DATA_WORDS = frozenset("number count total average name names per different distinct many".split())
#: Words no table is found by.
NOT_SEARCHED = STOPWORDS | REQUEST_WORDS | _DATA_WORDS


@dataclass(frozen=True)
class SchemaOptions:
    """When `list_tables` ranks instead of listing, and how much it shows (settings ASKDB_SCHEMA_*)."""

    max_tables: int = 30  # more tables than this: rank
    token_budget: int = 4000  # a schema description (names and columns) over this: rank
    top_k: int = 10
    page_size: int = 50
    embedder: Any = None  # an agent.memory.embeddings.Embedder, or None (keywords and values only)
    check_columns: bool = True  # run_sql checks column names before running


class TableDoc(BaseModel):
    """What the index knows of one table."""

    name: str
    columns: list[str]
    types: list[str] = Field(default_factory=list)
    foreign_keys: list[str] = Field(default_factory=list, description="Tables this one references.")
    row_count: int = 0
    comment: str = ""
    values: dict[str, list[str]] = Field(default_factory=dict, description="Column -> text values, most frequent first.")

    def summary(self, width: int = 160) -> str:
        """One line: columns (some), what it references, its comment."""
        shown, line = [], ""
        for column in self.columns:
            candidate = ", ".join(shown + [column])
            if len(candidate) > width * 0.7 and shown:
                break
            shown, line = shown + [column], candidate
        if len(shown) < len(self.columns):
            line += f", … ({len(self.columns)} columns)"
        if self.foreign_keys:
            line += "; refs " + ", ".join(dict.fromkeys(self.foreign_keys))
        if self.comment:
            line += f"; {self.comment}"
        return line if len(line) <= width else line[: width - 1] + "…"


class RankedTable(BaseModel):
    table: str
    rows: int
    about: str
    score: float
    why: list[str] = Field(default_factory=list)


def words(text: str) -> list[str]:
    """Lower-case singular words of names and questions: `PetType` and "pet types" both give pet, type;
    CJK runs become character bigrams. No vocabulary of the offline planner is added: what a question
    means beyond its words is the embedder's, or the model's `query` words (issue 19)."""
    out: list[str] = []
    for token in _WORD.findall(unicodedata.normalize("NFKC", text or "")):
        out.extend(bigrams(token) if has_cjk(token[0]) else [singular(token.lower())])
    return out


def query_terms(question: str) -> list[str]:
    """The question's search terms: its words minus those no table is found by."""
    return list(dict.fromkeys(w for w in words(question) if w not in NOT_SEARCHED and (len(w) > 1 or w.isdigit())))


def _value_key(value: str) -> str:
    """A value or question as plain singular words, so "volvos" meets the value 'volvo'."""
    return " ".join(singular(w) for w in re.findall(rf"[{CJK}]+|\w+", unicodedata.normalize("NFKC", value).casefold()))


def read_catalog(database: DataSource, *, with_values: bool = True) -> list[TableDoc]:
    """Every table and view of the database as a `TableDoc` (read-only queries only)."""
    ddl: dict[str, str] = {}
    if database.dialect == "sqlite":  # SQLite keeps each CREATE, comments included
        ddl = {r[0]: r[1] or "" for r in database.execute(
            "SELECT name, sql FROM sqlite_master WHERE type IN ('table', 'view')", max_rows=1_000_000).rows}
    docs = []
    for schema in database.catalogue():
        docs.append(TableDoc(
            name=schema.name, columns=[c.name for c in schema.columns], types=[c.type for c in schema.columns],
            foreign_keys=[fk.ref_table for fk in schema.foreign_keys], row_count=schema.row_count,
            comment=declared_comments(ddl.get(schema.name, "")),
            values=_sample_values(database, schema) if with_values and schema.row_count else {}))
    return docs


def declared_comments(create_sql: str) -> str:
    """The comments written in a CREATE statement (SQLite keeps them in sqlite_master)."""
    found = [" ".join((a or b).split()) for a, b in _COMMENT.findall(create_sql)]
    return "; ".join(f for f in found if f)[:300]


def _sample_values(database: DataSource, schema: TableSchema) -> dict[str, list[str]]:
    """The most frequent short text values of each text column, in one bounded query."""
    keys = {fk.column for fk in schema.foreign_keys}
    text = [c.name for c in schema.columns
            if not c.primary_key and c.name not in keys and any(t in c.type.upper() for t in _TEXT_TYPES)]
    if not text:
        return {}
    table = quote_identifier(schema.name)
    sqlite = database.dialect == "sqlite"
    parts = []
    for i, column in enumerate(text):
        col = quote_identifier(column)
        # Written to run on SQLite and PostgreSQL alike; SQLite columns hold any type, so typeof() too.
        value = col if sqlite else f"CAST({col} AS TEXT)"
        is_text = "typeof(v) = 'text' AND " if sqlite else "v IS NOT NULL AND "
        parts.append(f"SELECT * FROM (SELECT {i} AS c, v FROM (SELECT {value} AS v FROM {table} LIMIT {SCANNED_ROWS})"
                     f" AS s{i} WHERE {is_text}length(v) BETWEEN 2 AND {MAX_VALUE_CHARS}"
                     f" GROUP BY v ORDER BY count(*) DESC, v LIMIT {VALUES_PER_COLUMN}) AS t{i}")
    try:
        rows = database.execute(" UNION ALL ".join(parts), max_rows=VALUES_PER_COLUMN * len(text)).rows
    except SourceUnavailable:
        raise
    except SourceError:
        return {}  # a table too slow or odd to sample is still found by its names
    values: dict[str, list[str]] = defaultdict(list)
    for i, value in rows:
        values[text[i]].append(value)
    return dict(values)


class TableIndex:
    """The tables of one database, searchable by relevance to a question.

    Args:
        docs: the tables (from `read_catalog`, or built by hand in tests and benchmarks).
        embedder: an `agent.memory.embeddings.Embedder`, or None for keywords and values only.
    """

    def __init__(self, docs: list[TableDoc], *, embedder=None):
        self.docs = docs
        self.by_name = {d.name.lower(): d for d in docs}
        self._lock = threading.Lock()
        self._fts = sqlite3.connect(":memory:", check_same_thread=False)
        self._fts.execute("CREATE VIRTUAL TABLE docs USING fts5(name, columns, notes, vals, tokenize='porter unicode61')")
        self._fts.executemany("INSERT INTO docs (rowid, name, columns, notes, vals) VALUES (?, ?, ?, ?, ?)", [
            (i, " ".join(words(d.name)), " ".join(w for c in d.columns for w in words(c)), " ".join(words(d.comment)),
             " ".join(w for vs in d.values.values() for v in vs[:DOC_VALUES_PER_COLUMN] for w in words(v)))
            for i, d in enumerate(docs)])
        self._phrases: dict[str, set[int]] = defaultdict(set)
        for i, d in enumerate(docs):
            if len(self._phrases) >= MAX_PHRASES:
                break
            for values in d.values.values():
                for value in values:
                    key = _value_key(value)
                    if len(key) >= 3 and not all(w in NOT_SEARCHED or w.isdigit() for w in key.split()):
                        self._phrases[key].add(i)
        self._cjk_phrases = [k for k in self._phrases if has_cjk(k)]
        positions = {d.name.lower(): i for i, d in enumerate(docs)}
        self._neighbours: dict[int, set[int]] = defaultdict(set)
        for i, d in enumerate(docs):
            for ref in d.foreign_keys:
                j = positions.get(ref.lower())
                if j is not None and j != i:
                    self._neighbours[i].add(j)
                    self._neighbours[j].add(i)
        self.embedder = embedder
        self._vectors: np.ndarray | None = None

    # -- ranking ----------------------------------------------------------------------

    def rank(self, question: str, k: int = 10) -> list[RankedTable]:
        """The `k` tables most relevant to `question`, best first: fewer when fewer match, the largest
        when none does."""
        scores: dict[int, float] = defaultdict(float)
        why: dict[int, list[str]] = defaultdict(list)
        signals = [("words", 1.0, self._keyword_scores(question)), ("values", VALUE_WEIGHT, self._value_scores(question))]
        if self.embedder is not None:
            signals.append(("meaning", VECTOR_WEIGHT, self._vector_scores(question)))
        for label, weight, found in signals:
            top = max(found.values(), default=0.0)
            if top <= 0:
                continue
            for i, score in found.items():
                scores[i] += weight * score / top
                why[i].append(label)
        self._add_neighbour_support(scores, why)
        self._add_bridges(scores, why)
        order = sorted(scores, key=lambda i: (-scores[i], self.docs[i].name.lower()))[:k]
        if not order:  # nothing in the question names anything: the largest tables are the likeliest start
            order = sorted(range(len(self.docs)), key=lambda i: (-self.docs[i].row_count, self.docs[i].name.lower()))[:k]
            for i in order:
                why[i].append("largest")
        return [RankedTable(table=self.docs[i].name, rows=self.docs[i].row_count, about=self.docs[i].summary(),
                            score=round(scores[i], 4), why=why[i]) for i in order]

    def _keyword_scores(self, question: str) -> dict[int, float]:
        """BM25 over the documents (positive: higher is better)."""
        terms = query_terms(question)
        if not terms:
            return {}
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        with self._lock:
            rows = self._fts.execute(f"SELECT rowid, -bm25(docs, {', '.join(map(str, FIELD_WEIGHTS))}) FROM docs "
                                     "WHERE docs MATCH ? ORDER BY 2 DESC LIMIT 200", (match,)).fetchall()
        return dict(rows)

    def _value_scores(self, question: str) -> dict[int, float]:
        """Tables holding a value the question names verbatim; rarer and longer values weigh more."""
        tokens = _value_key(question).split()
        found: dict[str, set[int]] = {}
        for n in range(1, 7):
            for start in range(len(tokens) - n + 1):
                key = " ".join(tokens[start:start + n])
                if key in self._phrases:
                    found[key] = self._phrases[key]
        folded = unicodedata.normalize("NFKC", question).casefold()
        if has_cjk(folded):
            found.update({k: self._phrases[k] for k in self._cjk_phrases if k.replace(" ", "") in folded})
        weight: dict[int, float] = defaultdict(float)
        total = len(self.docs)
        for key, tables in found.items():
            for i in tables:
                weight[i] = max(weight[i], len(key.split()) * math.log(1 + total / len(tables)))
        return dict(weight)

    def _vector_scores(self, question: str, depth: int = 50) -> dict[int, float]:
        """Cosine similarity of the question to each table's description, the `depth` best."""
        from agent.memory.embeddings import EmbeddingError

        try:
            if self._vectors is None:
                self._vectors = self.embedder.embed_passages([f"{d.name}: {d.summary(400)}" for d in self.docs])
            similarity = self._vectors @ self.embedder.embed_query(question)
        except EmbeddingError:
            return {}  # an aid, never a reason to fail: words and values still rank
        best = np.argsort(-similarity)[:depth]
        floor = float(similarity[best[-1]]) if len(best) else 0.0
        return {int(i): float(similarity[i]) - floor for i in best if similarity[i] > floor}

    def _add_neighbour_support(self, scores: dict[int, float], why: dict[int, list[str]]) -> None:
        """A matching table next to another matching table gains part of its neighbour's score:
        the tables of one query are connected, a lone namesake in another schema is not."""
        base = dict(scores)
        for i, own in base.items():
            support = max((base.get(n, 0.0) for n in self._neighbours[i]), default=0.0)
            if support:
                scores[i] = own + NEIGHBOUR_SHARE * support
                why[i].append("next to a match")
        # The entity a top table refers to (likes -> the student liked) joins the candidates.
        for top in sorted(base, key=lambda i: -base[i])[:EXPAND_FROM]:
            for n in self._neighbours[top]:
                if n not in base and scores.get(n, 0.0) < EXPAND_SHARE * base[top]:
                    scores[n] = EXPAND_SHARE * base[top]
                    why[n].append(f"linked to {self.docs[top].name}")

    def _add_bridges(self, scores: dict[int, float], why: dict[int, list[str]]) -> None:
        """A table linked by foreign keys to two of the strongest candidates ranks just below
        the weaker of the two, unless it already ranks higher (Spider: most joins go through one)."""
        top = sorted(scores, key=lambda i: -scores[i])[:BRIDGE_FROM]
        for a_pos, a in enumerate(top):
            for b in top[a_pos + 1:]:
                for c in self._neighbours[a] & self._neighbours[b]:
                    bridged = min(scores[a], scores[b]) * BRIDGE_SHARE
                    if scores.get(c, 0.0) < bridged:
                        scores[c] = bridged
                        why[c].append(f"links {self.docs[a].name} and {self.docs[b].name}")

    # -- paging -----------------------------------------------------------------------

    def page(self, page: int, size: int) -> tuple[list[TableDoc], int]:
        """Page `page` (from 1) of all tables in name order, and the number of pages."""
        pages = max(1, -(-len(self.docs) // size))
        start = (min(max(page, 1), pages) - 1) * size
        return self.docs[start:start + size], pages

    # -- the cache --------------------------------------------------------------------

    _cache: dict[tuple, TableIndex] = {}
    _cache_lock = threading.Lock()

    @classmethod
    def for_database(cls, database: DataSource, *, embedder=None) -> TableIndex:
        """The index of `database`, built on first use and kept while the file is unchanged."""
        key = (*database.cache_key(), getattr(embedder, "model", None))
        with cls._cache_lock:
            cached = cls._cache.get(key)
        if cached is not None:
            return cached
        index = cls(read_catalog(database), embedder=embedder)
        with cls._cache_lock:
            if len(cls._cache) >= MAX_CACHED:
                cls._cache.pop(next(iter(cls._cache)))
            cls._cache[key] = index
        return index
