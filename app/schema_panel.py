"""The schema side panel: tables with row counts, columns with types and sample values, and a few
questions to start from (issue 20). Read from the catalogue the agent's list_tables ranks
(agent.sources.schema_search.TableIndex), so the page and the agent see the same tables."""

from __future__ import annotations

import re
from functools import partial

from pydantic import BaseModel

from agent.planner.human_names import zh_name  # the planner's answers name tables the same way
from agent.planner.lexicon import GENERIC, Lexicon
from agent.planner.words import human_header
from agent.sources.base import DataSource
from agent.sources.column_check import name_words
from agent.sources.errors import SourceError
from agent.sources.schema_search import TableDoc, TableIndex
from agent.vocabulary.names import CHINESE_TAGS

MAX_SUGGESTIONS = 5
SAMPLES_PER_COLUMN = 3
# Columns that name or describe one row rather than group rows: no "by name" questions.
_NOT_CATEGORIES = re.compile(r"(^|_)(id|name|code|notes?|description|title|model|date)$", re.I)
_NOT_MEASURES = re.compile(r"(^|_)(id|latitude|longitude|lat|lon|lng|year)$|_id$", re.I)
_UNIT = re.compile(r"_(kg|km|kmh|m|usd|eur|pct|s|ms)$", re.I)
_QUESTIONS = {
    "count_by": ("How many {table} are there by {category}?", "每个{category}有多少{table}？"),
    "average_by": ("What is the average {measure} by {category}?", "每个{category}的平均{measure}"),
    "per_year": ("How many {table} per year?", "每年有多少{table}？"),
}


class ColumnInfo(BaseModel):
    name: str
    label: str
    type: str
    samples: list[str]


class TableInfo(BaseModel):
    name: str
    rows: int
    columns: list[ColumnInfo]


class SchemaPanel(BaseModel):
    tables: list[TableInfo]
    suggestions: list[str]


def schema_panel(database: DataSource, *, language: str, examples: list[str] = (),
                 lexicon: Lexicon = GENERIC) -> SchemaPanel | None:
    """The panel for `database`, suggestions in `language` ("en" or "zh"), verified examples first,
    its names put in Chinese by `lexicon` (the source's own words too); None when the schema cannot be
    read (the page then shows just the ask box)."""
    try:
        docs = TableIndex.for_database(database).docs
    except SourceError:
        return None
    tables = [TableInfo(name=d.name, rows=d.row_count, columns=[
        ColumnInfo(name=c, label=human_header(c), type=t or "", samples=d.values.get(c, [])[:SAMPLES_PER_COLUMN])
        for c, t in zip(d.columns, d.types or [""] * len(d.columns))]) for d in docs]
    suggestions = list(dict.fromkeys([*examples[:2], *_suggest(docs, language, lexicon)]))[:MAX_SUGGESTIONS]
    return SchemaPanel(tables=tables, suggestions=suggestions)


def _suggest(docs: list[TableDoc], language: str, lexicon: Lexicon = GENERIC) -> list[str]:
    """Questions the schema invites, from the largest tables down: a count by a category, an
    average of a measure by a category, a count per year of a date. In Chinese, only questions
    whose names all have Chinese (`zh_name`); English ones when none has."""
    zh = language == "zh"
    out: list[str] = []
    for doc in sorted(docs, key=lambda d: -d.row_count):
        types = dict(zip(doc.columns, doc.types or [""] * len(doc.columns)))
        categories = [c for c in doc.columns if doc.values.get(c) and not _NOT_CATEGORIES.search(c)
                      and not name_words(c) & CHINESE_TAGS]  # a Chinese twin groups as its column does
        measures = [c for c in doc.columns if "REAL" in types[c].upper() and not _NOT_MEASURES.search(c)]
        dates = [c for c in doc.columns if "date" in c.lower() or "DATE" in types[c].upper()]
        name = partial(zh_name, lexicon=lexicon) if zh else _english_name
        table = name(doc.name)
        if categories:
            out.append(_question("count_by", zh, table=table, category=name(categories[0])))
        if categories and measures:
            out.append(_question("average_by", zh, measure=name(_UNIT.sub("", measures[0])),
                                 category=name(categories[min(1, len(categories) - 1)])))
        if dates:
            out.append(_question("per_year", zh, table=table))
        out = [q for q in out if q]
        if len(out) >= MAX_SUGGESTIONS:
            break
    return out or (_suggest(docs, "en", lexicon) if zh else [])


def _english_name(identifier: str) -> str:
    return identifier.replace("_", " ")  # "aircraft hardware": a question, not an identifier


def _question(kind: str, zh: bool, **names: str | None) -> str | None:
    """One suggested question, or None when a name is missing (no Chinese for it)."""
    return None if None in names.values() else _QUESTIONS[kind][zh].format(**names)
