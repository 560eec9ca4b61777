"""The SQL-first prompt: the schema as `CREATE TABLE` statements with example rows, then what
askdb knows that the model does not (values the question names, verified examples, the previous
questions of a follow-up, what it remembers of the analyst), then the question.

The schema part is the prompt small code models are evaluated with (Qwen2.5-Coder, CodeS, DAIL-SQL:
each table's DDL and three example rows, then "-- Using valid SQLite, answer the following question
for the tables provided above."); the benchmark's "model alone" sends exactly that, so askdb's
additions are measured against it (bench/local_model.py). The template is
agent/prompts/sql_first.md; the parts in the middle are left out when empty, so a question with
nothing to add sends the same bytes as the model alone.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from agent.context import render_prompt
from agent.sources.base import DataSource, TableSchema
from agent.sources.errors import SourceError, SourceUnavailable
from storage.text import fold, has_cjk

ROWS_SHOWN = 3
CELL_CHARS = 40
HINTS_SHOWN = 6
MAX_CACHED = 16

_cache: dict[tuple, str] = {}  # a memo by the database's version (as agent.schema_block): never stale
_lock = threading.Lock()


def schema_ddl(database: DataSource, *, rows: int = ROWS_SHOWN) -> str:
    """Each table's CREATE statement (SQLite's own; other engines' written from the catalogue)
    followed by its first `rows` rows, in name order so the text is the same for every question on
    the same database (it stays in the server's prompt cache).

    Raises:
        SourceError: the schema cannot be read.
    """
    key = (database.cache_key(), rows)
    with _lock:
        if key in _cache:
            return _cache[key]
    declared = _declared(database)
    text = "\n\n".join(_table_text(database, schema, declared.get(schema.name) or _written(schema), rows)
                        for schema in sorted(database.catalogue(), key=lambda s: s.name.lower()))
    with _lock:
        if len(_cache) >= MAX_CACHED:
            _cache.pop(next(iter(_cache)))
        _cache[key] = text
    return text


def _table_text(database: DataSource, schema: TableSchema, ddl: str, rows: int) -> str:
    if rows <= 0 or not schema.row_count:
        return ddl
    try:
        sample = database.sample_rows(schema.name, rows)
    except SourceUnavailable:
        raise
    except SourceError:
        return ddl
    lines = [" ".join(sample.columns)] + [" ".join(_cell(v) for v in row) for row in sample.rows]
    return (f"{ddl}\n/*\n{len(sample.rows)} example rows:\nSELECT * FROM {schema.name} LIMIT {rows};\n"
            + "\n".join(lines) + "\n*/")


def _declared(database: DataSource) -> dict[str, str]:
    """SQLite's own CREATE statements, by table (other engines keep none)."""
    if database.dialect != "sqlite":
        return {}
    rows = database.execute("SELECT name, sql FROM sqlite_master WHERE type IN ('table', 'view')",
                            max_rows=1_000_000).rows
    return {name: sql.strip() for name, sql in rows if sql}


def _written(schema: TableSchema) -> str:
    """A CREATE TABLE for engines that keep none: columns, key, foreign keys."""
    parts = [f"  {c.name} {c.type}".rstrip() + (" PRIMARY KEY" if c.primary_key else "") for c in schema.columns]
    parts += [f"  FOREIGN KEY ({fk.column}) REFERENCES {fk.ref_table}({fk.ref_column or 'id'})"
              for fk in schema.foreign_keys]
    return f"CREATE TABLE {schema.name} (\n" + ",\n".join(parts) + "\n)"


def _cell(value: Any) -> str:
    text = "NULL" if value is None else " ".join(str(value).split())
    return text if len(text) <= CELL_CHARS else text[: CELL_CHARS - 1] + "…"


def value_hints(question: str, values: dict[str, list[Any]], *, limit: int = HINTS_SHOWN) -> list[str]:
    """Where the database holds a value the question names, as `table.column = 'Value'` (spelled
    as stored): "Falcon 9" → `launch_vehicles.name = 'Falcon 9'`. `values`: the planner's index
    (folded text → places, `SchemaIndex.values`). Longest phrases first; numbers and one-letter
    values are left out (they match everywhere)."""
    folded = fold(question)
    words = [w.strip(".,;:!?()\"'“”‘’？，。、") for w in folded.split()]
    found: list[tuple[int, str]] = []
    seen: set[str] = set()
    phrases = {" ".join(words[i:i + n]) for n in range(1, 7) for i in range(len(words) - n + 1)}
    keys = [k for k in phrases if k in values]
    if has_cjk(question):
        keys += [k for k in values if has_cjk(k) and len(k) >= 2 and k in folded]
    taken: list[str] = []
    for key in sorted(set(keys), key=len, reverse=True):
        if len(key) < 2 or key.replace(".", "").replace(" ", "").isdigit() or any(key in t for t in taken):
            continue  # "Falcon" within "Falcon 9" is the same mention
        taken.append(key)
        for ref in values[key]:
            hint = f"{ref.table}.{ref.column} = '{ref.value}'"
            if hint not in seen:
                seen.add(hint)
                found.append((len(key), hint))
    return [hint for _, hint in found[:limit]]


@dataclass
class SqlPrompt:
    """What goes into one SQL-first prompt, besides the schema."""

    engine: str
    question: str
    hints: list[str] = field(default_factory=list)
    examples: list[tuple[str, str]] = field(default_factory=list)  # (question, SQL), nearest first
    previous: list[tuple[str, str]] = field(default_factory=list)  # (question, SQL), oldest first
    about_analyst: str = ""

    def messages(self, schema: str) -> list[dict[str, str]]:
        """One user message, as the model alone is asked."""
        return [{"role": "user", "content": render_prompt(
            "sql_first.md", schema=schema, engine=self.engine, question=" ".join(self.question.split()),
            hints=self.hints, examples=self.examples, previous=self.previous,
            about_analyst=self.about_analyst.strip())}]


def repair_messages(first: list[dict[str, str]], sql: str, error: str) -> list[dict[str, str]]:
    """The first prompt, the model's SQL, and the error: asked once for a corrected query."""
    return [*first, {"role": "assistant", "content": f"```sql\n{sql}\n```"},
            {"role": "user", "content": render_prompt("sql_repair.md", error=error)}]


def feedback_messages(first: list[dict[str, str]], sql: str, problem: str) -> list[dict[str, str]]:
    """The first prompt, the model's SQL, and what a check found it leaves out: asked once for a better query."""
    return [*first, {"role": "assistant", "content": f"```sql\n{sql}\n```"},
            {"role": "user", "content": render_prompt("sql_feedback.md", problem=problem)}]
