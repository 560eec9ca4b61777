"""The SQL-first prompt: the schema as `CREATE TABLE` statements with example rows, then what
askdb knows that the model does not (values the question names, verified examples, the conversation's
earlier questions with their SQL, what it remembers of the analyst), then the question.

The earlier turns stay right before the question: put before the value hints (so that a later turn's
prompt would start as the previous one's did), a small model followed the nearer hint instead ("How many
of them failed?" after the 2019 launches counted the failed payloads; docs/strategies.md, session 23).

The schema part is the prompt small code models are evaluated with (Qwen2.5-Coder, CodeS, DAIL-SQL:
each table's DDL and three example rows, then "-- Using valid SQLite, answer the following question
for the tables provided above."); the benchmark's "model alone" sends exactly that, so askdb's
additions are measured against it (bench/local_model.py). The template is
agent/prompts/sql_first.md; the parts in the middle are left out when empty, so a question with
nothing to add sends the same bytes as the model alone.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from agent.context import render_prompt
from agent.sources.base import DataSource, TableSchema, add_row_mates
from agent.sources.errors import SourceError, SourceUnavailable
from storage.text import STOPWORDS, fold, has_cjk

ROWS_SHOWN = 3
CELL_CHARS = 40
HINTS_SHOWN = 6
MAX_CACHED = 16

_cache: dict[tuple, tuple[str, dict[str, set[str]]]] = {}  # a memo by the database's version (as agent.schema_block): never stale
_lock = threading.Lock()


def schema_ddl(database: DataSource, *, rows: int = ROWS_SHOWN) -> str:
    """Each table's CREATE statement (SQLite's own; other engines' written from the catalogue)
    followed by its first `rows` rows, in name order so the text is the same for every question on
    the same database (it stays in the server's prompt cache).

    Raises:
        SourceError: the schema cannot be read.
    """
    return _schema(database, rows)[0]


def example_values(database: DataSource, *, rows: int = ROWS_SHOWN) -> set[str]:
    """The values of the example rows `schema_ddl` shows, as a query would write them (4.0 as 4): what
    the model saw without the question naming it, as the loop's sample_rows shows rows."""
    return set(_schema(database, rows)[1])


def example_rows(database: DataSource, *, rows: int = ROWS_SHOWN) -> dict[str, set[str]]:
    """Each value of the example rows with the other values of its rows ('ABW' → {'Aruba', 'Caribbean', …}):
    a key the model read beside a name the question says is the question's (agent.checks.question)."""
    return _schema(database, rows)[1]


def _schema(database: DataSource, rows: int) -> tuple[str, dict[str, set[str]]]:
    key = (database.cache_key(), rows)
    with _lock:
        if key in _cache:
            return _cache[key]
    declared = _declared(database)
    values: dict[str, set[str]] = {}
    text = "\n\n".join(_table_text(database, schema, declared.get(schema.name) or _written(schema), rows, values)
                        for schema in sorted(database.catalogue(), key=lambda s: s.name.lower()))
    with _lock:
        if len(_cache) >= MAX_CACHED:
            _cache.pop(next(iter(_cache)))
        _cache[key] = (text, values)
    return text, values


def _table_text(database: DataSource, schema: TableSchema, ddl: str, rows: int, values: dict[str, set[str]]) -> str:
    if rows <= 0 or not schema.row_count:
        return ddl
    try:
        sample = database.sample_rows(schema.name, rows)
    except SourceUnavailable:
        raise
    except SourceError:
        return ddl
    add_row_mates(values, sample.rows)
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


class Hint(NamedTuple):
    """A value of the database the question names, where it is stored."""

    table: str
    column: str
    value: str

    def __str__(self) -> str:
        return f"{self.table}.{self.column} = '{self.value}'"


def value_hints(question: str, values: dict[str, list[Any]], *, prefixes: dict[str, Any] | None = None,
                limit: int = HINTS_SHOWN) -> list[Hint]:
    """Where the database holds a value the question names, as `table.column = 'Value'` (spelled
    as stored): "Falcon 9" → `launch_vehicles.name = 'Falcon 9'`. `values`: the planner's index
    (folded text → places, `SchemaIndex.values`); `prefixes`, its first words of one proper name
    (`SchemaIndex.prefixes`: "Baikonur" → 'Baikonur Cosmodrome'), read where the question writes them
    with a capital, and of one Chinese name (`SchemaIndex.cjk_prefixes`: 西昌). Longest phrases first; numbers and one-letter values are left out (they match
    everywhere), and so is a function word unless written in capitals ("spoken in each country" names no 'IN')."""
    folded = fold(question)
    words = [w.strip(".,;:!?()\"'“”‘’？，。、") for w in folded.split()]
    found: list[Hint] = []
    seen: set[Hint] = set()
    phrases = {" ".join(words[i:i + n]) for n in range(1, 7) for i in range(len(words) - n + 1)}
    keys = [k for k in phrases if k in values]
    written = [w.strip(".,;:!?()\"'“”‘’") for w in question.split()]
    capitalised = {" ".join(written[i:i + n]).casefold() for n in range(1, 4) for i in range(1, len(written) - n + 1)
                   if written[i][:1].isupper()}
    values = {**values, **{k: [ref] for k, ref in (prefixes or {}).items() if k in capitalised and k not in values}}
    keys += [k for k in capitalised if k in (prefixes or {}) and k not in keys]
    if has_cjk(question):  # and a Chinese name's own part (西昌 → '西昌卫星发射中心', `SchemaIndex.cjk_prefixes`)
        values = {**values, **{k: [ref] for k, ref in (prefixes or {}).items() if has_cjk(k) and k in folded
                               and k not in values}}
        keys += [k for k in values if has_cjk(k) and len(k) >= 2 and k in folded]
    taken: list[str] = []
    for key in sorted(set(keys), key=len, reverse=True):
        if len(key) < 2 or key.replace(".", "").replace(" ", "").isdigit() or any(key in t for t in taken):
            continue  # "Falcon" within "Falcon 9" is the same mention
        if key in STOPWORDS and not re.search(rf"\b{re.escape(key.upper())}\b", question):
            continue  # "in" is a word of the question, not the code 'IN', unless written so
        taken.append(key)
        for ref in values[key]:
            hint = Hint(ref.table, ref.column, ref.value)
            if hint not in seen:
                seen.add(hint)
                found.append(hint)
    return found[:limit]


@dataclass
class SqlPrompt:
    """What goes into one SQL-first prompt, besides the schema."""

    engine: str
    question: str
    hints: list[Hint] = field(default_factory=list)
    examples: list[tuple[str, str]] = field(default_factory=list)  # (question, SQL), nearest first
    previous: list[tuple[str, str]] = field(default_factory=list)  # earlier (question, SQL), oldest first
    follows: bool = False  # the question's words point back at them ("their names", "how about…")
    about_analyst: str = ""

    def messages(self, schema: str) -> list[dict[str, str]]:
        """One user message, as the model alone is asked."""
        return [{"role": "user", "content": render_prompt(
            "sql_first.md", schema=schema, engine=self.engine, question=" ".join(self.question.split()),
            hints=self.hints, examples=self.examples, previous=self.previous, follows=self.follows,
            about_analyst=self.about_analyst.strip())}]


def repair_messages(first: list[dict[str, str]], sql: str, error: str) -> list[dict[str, str]]:
    """The first prompt, the model's SQL, and the error: asked once for a corrected query."""
    return [*first, {"role": "assistant", "content": f"```sql\n{sql}\n```"},
            {"role": "user", "content": render_prompt("sql_repair.md", error=error)}]


def feedback_messages(first: list[dict[str, str]], sql: str, problem: str) -> list[dict[str, str]]:
    """The first prompt, the model's SQL, and what a check found it leaves out: asked once for a better query."""
    return [*first, {"role": "assistant", "content": f"```sql\n{sql}\n```"},
            {"role": "user", "content": render_prompt("sql_feedback.md", problem=problem)}]
