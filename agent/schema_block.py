"""The whole schema, written into the system prompt, when it is small enough.

A small model given only `list_tables` and `describe_table` writes SQL at once against tables
it invents (`vehicles`, `rocket_launches`; issue 16). For a schema that fits the budget
(ASKDB_SCHEMA_MAX_TABLES, ASKDB_SCHEMA_TOKEN_BUDGET), every table goes into the system
prompt from the first call: its columns with types and keys, what each foreign key points
at, and the most frequent values of its text columns. Large schemas keep the exploration
tools (agent.tools.registry.list_tables ranks them).

Tables are in name order, not ranked by the question: the block is the same for every turn
on the same database file, so it stays in the cached prompt prefix (issue 16).
"""

from __future__ import annotations

import threading

from agent.sources.base import DataSource, TableSchema
from agent.sources.errors import SourceError
from agent.sources.schema_search import SchemaOptions, TableIndex

VALUES_SHOWN = 3
VALUE_CHARS = 30
CHARS_PER_TOKEN = 4  # the budget is in tokens; the block's words and names run about 4 characters a token
MAX_CACHED = 16

# Blocks already written, by the database's version (`cache_key`: a file's path, time and size; a server's
# location and time bucket) and the options: the same key always gives the same text, so the cache is a
# memo, not something learnt, and nothing is cleared between tests. Bounded, as a server's key moves on
# every INDEX_TTL_S and an upload's with each change; the oldest entry goes first.
_cache: dict[tuple, str] = {}
_lock = threading.Lock()


def schema_block(database: DataSource, options: SchemaOptions) -> str:
    """The schema as prompt text, or "" when it is too large for the prompt or cannot be read
    (a database that is gone fails the turn at its first tool, with the tools' own message)."""
    try:
        key = (database.cache_key(), options.max_tables, options.token_budget)
        with _lock:
            if key in _cache:
                return _cache[key]
        block = _build(database, options)
    except SourceError:
        return ""
    with _lock:
        if key not in _cache and len(_cache) >= MAX_CACHED:
            _cache.pop(next(iter(_cache)))
        _cache[key] = block
    return block


def _build(database: DataSource, options: SchemaOptions) -> str:
    docs = TableIndex.for_database(database).docs
    if not docs or len(docs) > options.max_tables:
        return ""
    budget = options.token_budget * CHARS_PER_TOKEN
    schemas = {schema.name: schema for schema in database.catalogue()}
    for values in (VALUES_SHOWN, 0):  # without sample values when they would not fit
        lines = [_table_line(schemas[doc.name], doc, values) for doc in sorted(docs, key=lambda d: d.name.lower())
                 if doc.name in schemas]  # a table dropped since the index was built is left out
        text = "\n".join(lines)
        if len(text) <= budget:
            return text
    return ""


def _table_line(schema: TableSchema, doc, values: int) -> str:
    refs = {fk.column: f"{fk.ref_table}.{fk.ref_column or 'id'}" for fk in schema.foreign_keys}
    columns = []
    for column in schema.columns:
        part = f"{column.name} {column.type}".strip()
        if column.primary_key:
            part += " primary key"
        if column.name in refs:
            part += f" -> {refs[column.name]}"
        shown = [v if len(v) <= VALUE_CHARS else v[: VALUE_CHARS - 1] + "…" for v in doc.values.get(column.name, [])]
        if values and shown:
            part += " (e.g. " + ", ".join(repr(v) for v in shown[:values]) + ")"
        columns.append(part)
    return f"- {schema.name} ({schema.row_count} rows): " + ", ".join(columns)
