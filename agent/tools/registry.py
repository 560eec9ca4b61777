"""The agent's tools: small typed functions with docstrings, arguments validated by pydantic.

A tool's name, its docstring and its argument model make its OpenAI schema. A bad
argument, an unknown table or a rejected query comes back as an error observation
the model can read and correct; only infrastructure failures (the analytics
database gone) propagate. `tools_for_turn` is the registry: the tools a turn offers,
from what is on (no `recall_memory` without memory).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import sqlglot
from pydantic import BaseModel, Field, ValidationError
from sqlglot import exp
from sqlglot.errors import SqlglotError

from agent.tools.lookup_words import ranking_or_computation
from agent.memory.recall_tool import RecallArgs, recall_memory
from agent.sources.base import DataSource, QueryResult, finds_nothing, may_hold_text
from agent.sources.column_check import ambiguous_columns, schema_columns, unknown_columns, with_qualifiers
from agent.sources.errors import (
    QueryFailed, QueryTimeout, SourceError, SourceUnavailable, SQLRejected, UnknownColumn, UnknownTable,
)
from agent.sources.schema_search import TableIndex
from agent.sources.sql_guard import check_sql
from agent.sources.subquery_check import one_value_subqueries, outer_row_columns
from agent.tools.base import Tool, ToolContext, ToolOutcome, error
from agent.checks.turn import table_in_question

# Bounds on what goes back to the model; the full result is kept for the page.
OBSERVATION_ROWS = 20


# -- argument models ----------------------------------------------------------------

class NoArgs(BaseModel):
    pass


class ListTablesArgs(BaseModel):
    query: str | None = Field(None, min_length=1, max_length=500,
                              description="Large databases: words to rank the tables by, instead of the question.")
    page: int | None = Field(None, ge=1, description="Large databases: a page of the full list in name order.")


class TableArgs(BaseModel):
    table: str = Field(description="Table name, exactly as list_tables gives it.")


class SampleArgs(TableArgs):
    limit: int = Field(3, ge=1, le=5, description="How many rows (1-5).")


class FindValuesArgs(TableArgs):
    column: str = Field(description="Column whose distinct values you want.")
    term: str = Field(min_length=1, max_length=200, description="Word or phrase to look for, in any language.")


class SQLArgs(BaseModel):
    sql: str = Field(min_length=1, max_length=20_000,
                     description="One read-only query (SELECT or WITH) in the database's dialect (see the system prompt).")


class AnswerArgs(BaseModel):
    text: str = Field(min_length=1, max_length=20_000, description="The answer for the analyst, in their language.")
    sql: str | None = Field(None, description="The SQL the answer rests on, if any.")
    caveat: str | None = Field(None, max_length=2_000, description=(
        "Only when the query could not use a part of the question: which part, in the analyst's language. "
        "Leave it out when the query used every part of the question."))


# -- tools ------------------------------------------------------------------------

def list_tables(ctx: ToolContext, args: ListTablesArgs) -> ToolOutcome:
    """List the tables of the analytics database with their row counts. On a large database,
    the tables most relevant to the question (or to `query`), each with a one-line
    description; `page` walks the full list."""
    names = ctx.database.list_tables()
    options = ctx.schema
    if args.query is None and args.page is None and len(names) <= options.max_tables and \
            _schema_tokens(ctx.database) <= options.token_budget:
        tables = [{"table": schema.name, "rows": schema.row_count} for schema in ctx.database.catalogue()]
        ctx.state.known_tables = names
        return ToolOutcome({"ok": True, "tables": tables})
    index = TableIndex.for_database(ctx.database, embedder=options.embedder)
    pages = index.page(1, options.page_size)[1]
    if args.page is not None:
        docs, _ = index.page(args.page, options.page_size)
        shown = [{"table": d.name, "rows": d.row_count, "about": d.summary(100)} for d in docs]
        observation = {"ok": True, "tables_total": len(index.docs), "page": min(args.page, pages), "pages": pages,
                       "tables": shown}
    else:
        ranked = index.rank(args.query or ctx.state.question, k=options.top_k)
        shown = [{"table": r.table, "rows": r.rows, "about": r.about} for r in ranked]
        ctx.state.candidate_tables = list(dict.fromkeys([r.table for r in ranked] + ctx.state.candidate_tables))
        observation = {"ok": True, "tables_total": len(index.docs), "ranked_for": args.query or ctx.state.question,
                       "tables": shown,
                       "note": f"the {len(shown)} of {len(index.docs)} tables most relevant to this; call list_tables "
                               f"with other words as query, or with page (1-{pages}) for the full list"}
    ctx.state.known_tables = list(dict.fromkeys(ctx.state.known_tables + [t["table"] for t in shown]))
    return ToolOutcome(observation)


def _schema_tokens(database: DataSource) -> int:
    """About how many tokens the whole schema takes to describe (names and columns; ~4 characters a token)."""
    return sum(len(table) + 2 + sum(len(c) + 2 for c in columns)
               for table, columns in schema_columns(database).items()) // 4


def describe_table(ctx: ToolContext, args: TableArgs) -> ToolOutcome:
    """Describe a table: columns with types and keys, foreign keys, and row count."""
    schema = ctx.database.describe_table(args.table)
    described = schema.model_dump()
    ctx.state.known_schemas[schema.name] = described
    if schema.name not in ctx.state.candidate_tables:
        ctx.state.candidate_tables.append(schema.name)
    return ToolOutcome({"ok": True, **described})


def sample_rows(ctx: ToolContext, args: SampleArgs) -> ToolOutcome:
    """Show a few rows of a table (at most 5) to see what its values look like."""
    cached = ctx.state.known_samples.get(args.table)
    if cached and len(cached["rows"]) >= args.limit:
        return ToolOutcome({"ok": True, "cached": True, "columns": cached["columns"], "rows": cached["rows"][: args.limit]})
    result = ctx.database.sample_rows(args.table, args.limit)
    ctx.state.known_samples[args.table] = {"columns": result.columns, "rows": result.rows}
    return ToolOutcome({"ok": True, "columns": result.columns, "rows": result.rows})


FIND_VALUES_SHOWN = 20
ELSEWHERE_COLUMNS = 8  # the other text columns searched for where a term is (`_matched_elsewhere`)


def find_values(ctx: ToolContext, args: FindValuesArgs) -> ToolOutcome:
    """Find distinct values of a column in rows where any text column matches a term
    (so "Long March 2D" finds the Chinese name of that vehicle)."""
    values, note, cut = _matching_values(ctx.database, args)
    observation = {"ok": True, "table": args.table, "column": args.column, "term": args.term, "values": values}
    if note:
        observation["note"] = note
    if cut:  # a model counted 2020's launches with an IN list of these 20 (issue 16)
        observation["more"] = (f"only the first {FIND_VALUES_SHOWN} values are shown: filter or count in SQL "
                               "(LIKE, a range) rather than listing them")
    return ToolOutcome(observation)


def _matching_values(database: DataSource, args: FindValuesArgs) -> tuple[list[Any], str | None, bool]:
    """The values, how they were found when the column itself matched nothing, and whether more
    matched than were read. Values holding the term come alone: 'CVO' searched in
    flights.SourceAirport also found the airports of flights *to* CVO, and a model filtered on all 19. A name searched in a foreign key ("China" in launch_sites.country_id)
    finds the ids it refers to: the model found nothing there and searched again and again (issue 16);
    a key is followed when it names a table that can be read. A ranking word ("max") on a number column
    is computed first: the model searched aircraft.max_speed_kmh for "max", was shown the speed of the
    'Boeing 737 MAX 8' (its model holds "MAX"), and answered with it (issue 16)."""
    ranked = ranking_or_computation(database, args.table, args.column, args.term)
    if ranked is not None and ranked[0]:
        return ranked[0], ranked[1], False
    values = database.find_values(args.table, args.column, args.term, limit=FIND_VALUES_SHOWN)
    cut = len(values) >= FIND_VALUES_SHOWN
    if values:
        own = [v for v in values if args.term.casefold() in str(v).casefold()]
        return (own, None, cut) if own else (values, _matched_elsewhere(database, args), cut)
    key = next((fk for fk in database.describe_table(args.table).foreign_keys
                if fk.column.lower() == args.column.lower()), None)
    if key is not None:
        try:
            referenced = key.ref_column or next(
                (c.name for c in database.describe_table(key.ref_table).columns if c.primary_key), None)
            ids = database.find_values(key.ref_table, referenced, args.term, limit=FIND_VALUES_SHOWN) \
                if referenced else []
        except SourceUnavailable:
            raise
        except SourceError:  # a key to a table that is gone or cannot be read (SQLite does not check keys)
            ids = []
        if ids:
            return ids, (f"{args.table}.{args.column} holds ids of {key.ref_table}.{referenced}; these are the ids "
                         f"of the {key.ref_table} rows matching {args.term!r}: join {key.ref_table} on them"), \
                len(ids) >= FIND_VALUES_SHOWN
    if ranked is not None:  # a ranking word on text: what to do instead
        return [], ranked[1], False
    return [], (f"no row of {args.table} matches {args.term!r}; write the query with what you know, or try another "
                "word"), False


def _matched_elsewhere(database: DataSource, args: FindValuesArgs) -> str | None:
    """Where the term is, when the values found do not hold it: a model that searched
    launch_vehicles.name for 长征二号丁 and was shown 'Long March 2D' still wrote
    `name = '长征二号丁'` (issue 16). None when no other text column holds it."""
    term = args.term.casefold()
    schema = database.describe_table(args.table)
    others = [c for c in schema.columns if c.name.lower() != args.column.lower() and may_hold_text(c.type)]
    for column in others[:ELSEWHERE_COLUMNS]:  # one lookup each: bounded on a wide table
        held = [v for v in database.find_values(schema.name, column.name, args.term, limit=3)
                if term in str(v).casefold()]
        if held:
            return (f"{args.term!r} is in {schema.name}.{column.name} ({held[0]!r}), not in {args.column}: the "
                    f"values shown are the {args.column} of the rows whose {column.name} holds it")
    return None


def run_sql(ctx: ToolContext, args: SQLArgs) -> ToolOutcome:
    """Run one read-only SQL query and see its first rows."""
    if ctx.schema.check_columns:
        dialect = ctx.database.dialect
        check_sql(args.sql, dialect=dialect)  # the guard's reason comes first
        columns = _columns_or_empty(ctx.database)
        unknown = unknown_columns(args.sql, columns, dialect=dialect)
        if unknown:  # again, with the stored values, so the hints put the column holding a compared value first
            unknown = unknown_columns(args.sql, columns, dialect=dialect, values=_stored_values(ctx))
            return error("unknown_column", "unknown column, caught before running the query: "
                         + "; ".join(u.describe() for u in unknown) + _what_to_do(ctx))
        outer = outer_row_columns(args.sql, columns, dialect=dialect)
        if outer:  # `x NOT IN (SELECT Orchestra FROM performance)`: 0 rows answered as "none"
            return error("outer_column", "a subquery selects a column of the outer query, caught before running "
                         "the query: " + "; ".join(o.describe() for o in outer) + _what_to_do(ctx))
    try:
        result = ctx.database.execute(args.sql)
    except QueryFailed as exc:
        if "ambiguous" not in str(exc).lower():
            raise
        return _disambiguated(ctx, args.sql, exc)
    several = several_rows(ctx.database, args.sql)
    if several:
        return _engine_error(ctx, "a subquery compared as one value gives several rows, and only the first is "
                                  f"compared: {several}; compare with IN, or pick the one row meant")
    observation = result_observation(result)
    if finds_nothing(result.row_count, result.rows):  # a value spelled otherwise than stored finds no row: say which
        unmatched = unmatched_filters(ctx.database, args.sql)
        if unmatched:
            observation = {"unmatched": unmatched, **observation}
    return ToolOutcome(observation, result=result)


def _disambiguated(ctx: ToolContext, sql: str, failure: QueryFailed) -> ToolOutcome:
    """A query that failed on an ambiguous column: run again with it qualified by the table the question
    groups by, or names alone, when the column is only shown, grouped or ordered by (never compared or
    joined on: there a guess changes which rows count), and the result is not empty; the result comes
    with a note saying so. Else the error, naming the tables that have it: a model told only
    "ambiguous column name: name" searched for values until it was stopped (issue 16)."""
    found = ambiguous_columns(sql, _columns_or_empty(ctx.database), dialect=ctx.database.dialect)
    explained = "; ".join(a.describe() for a in found)
    chosen = {}
    for name in found:
        tables = list(name.sources.values())
        table = table_in_question(ctx.state.question or "", tables, grouped=name.grouped) \
            if name.only_shown and None not in tables else None
        aliases = [a for a, t in name.sources.items() if t == table]
        if len(aliases) == 1:  # a self-join's two aliases of one table: the question cannot tell
            chosen[name.column] = aliases[0]
    qualified = with_qualifiers(sql, chosen, dialect=ctx.database.dialect) \
        if found and len(chosen) == len(found) else None
    try:
        result = ctx.database.execute(qualified) if qualified else None
    except SourceUnavailable:
        raise
    except SourceError:  # askdb's rewrite failing is not the model's error to read
        result = None
    if result is None or finds_nothing(result.row_count, result.rows):
        return _engine_error(ctx, f"{failure} ({explained})" if explained else str(failure))
    said = ", ".join(f"{alias}.{column}" for column, alias in chosen.items())
    outcome = ToolOutcome(result_observation(result), result=result)
    outcome.add_note(f"{explained}. askdb ran it with {said}, the table the question names: check that this "
                     "answers the question", ran_as=qualified)
    return outcome


def several_rows(database: DataSource, sql: str) -> str | None:
    """The first subquery `sql` compares as one value that gives more than one row, run alone
    (`subquery_check.one_value_subqueries`); None when each gives at most one, or runs only inside the query (a
    correlated one)."""
    for subquery in one_value_subqueries(sql, dialect=database.dialect):
        try:
            rows = database.execute(subquery, max_rows=2).rows
        except SourceUnavailable:
            raise
        except SourceError:
            continue
        if len(rows) > 1:
            return subquery
    return None


def unmatched_filters(database: DataSource, sql: str) -> list[str]:
    """The `column = 'text'` conditions of a query that no row meets, each with the values rows holding
    that text do have: a model counted `launch_vehicles.name = '长征二号丁'` (0), where the
    name is 'Long March 2D' and 长征二号丁 its name_zh, and answered 0 (issue 16)."""
    try:
        tree = sqlglot.parse_one(sql, read=database.dialect)
    except (SqlglotError, RecursionError, ValueError):
        return []
    tables = {t.alias_or_name.lower(): t.name for t in tree.find_all(exp.Table)}
    found = []
    for condition in tree.find_all(exp.EQ):
        column, value = condition.this, condition.expression
        if isinstance(column, exp.Literal):
            column, value = value, column
        if not (isinstance(column, exp.Column) and isinstance(value, exp.Literal) and value.is_string):
            continue
        table = tables.get(column.table.lower()) if column.table else \
            (next(iter(tables.values())) if len(set(tables.values())) == 1 else None)
        if table is None:
            continue
        try:
            held = database.find_values(table, column.name, value.this, limit=3)
        except SourceUnavailable:
            raise
        except SourceError:
            continue
        if value.this not in map(str, held):
            found.append(f"no row has {table}.{column.name} = '{value.this}'"
                         + (f"; rows containing '{value.this}' have {column.name} "
                            + ", ".join(repr(v) for v in held) if held else ""))
    return found[:3]


def _engine_error(ctx: ToolContext, message: str) -> ToolOutcome:
    return error("sql_error", f"{ctx.database.engine} error: {message}{_what_to_do(ctx)}")


def _what_to_do(ctx: ToolContext) -> str:
    """The end of a query's error: what to do next. Not describe_table when the schema is in the prompt: a
    small model told of it there called it three times instead of using the column the error suggested."""
    return "; correct the query and run it again" + ("" if ctx.schema_in_prompt else
                                                      " (describe_table gives a table's columns)")


def _columns_or_empty(database: DataSource) -> dict[str, list[str]]:
    """The schema for the column check; empty (no check) when reading it fails short of the database being gone."""
    try:
        return schema_columns(database)
    except SourceUnavailable:
        raise
    except (QueryFailed, QueryTimeout, UnknownTable, UnknownColumn):
        return {}


def _stored_values(ctx: ToolContext) -> dict[str, dict[str, list[str]]]:
    """table -> column -> its most frequent text values (the schema index's, cached per file); {} if unreadable."""
    try:
        return {d.name: d.values for d in TableIndex.for_database(ctx.database, embedder=ctx.schema.embedder).docs}
    except SourceUnavailable:
        raise
    except SourceError:
        return {}


def answer(ctx: ToolContext, args: AnswerArgs) -> ToolOutcome:
    """Give the final answer to the analyst, with the SQL it rests on. Call this last."""
    return ToolOutcome({"ok": True}, final=True)


def result_observation(result: QueryResult) -> dict[str, Any]:
    shown = result.rows[:OBSERVATION_ROWS]
    observation = {"ok": True, "columns": result.columns, "rows": shown, "row_count": result.row_count,
                   "truncated": result.truncated}
    if len(shown) < result.row_count:
        observation["note"] = f"showing {len(shown)} of {result.row_count} rows"
    return observation


_DATABASE_TOOLS = (
    Tool("list_tables", list_tables, ListTablesArgs),
    Tool("describe_table", describe_table, TableArgs),
    Tool("sample_rows", sample_rows, SampleArgs),
    Tool("find_values", find_values, FindValuesArgs),
    Tool("run_sql", run_sql, SQLArgs),
)
_RECALL_TOOL = Tool("recall_memory", recall_memory, RecallArgs)
_ANSWER_TOOL = Tool("answer", answer, AnswerArgs)


def tools_for_turn(*, memory: bool) -> Mapping[str, Tool]:
    """The tools a turn offers, by name, in the order the model sees them: the database's,
    `recall_memory` when memory is on (the loop gave the turn a `ToolContext.memory`), `answer` last."""
    tools = (*_DATABASE_TOOLS, *((_RECALL_TOOL,) if memory else ()), _ANSWER_TOOL)
    return MappingProxyType({tool.name: tool for tool in tools})


#: Tools not offered while the whole schema is in the system prompt: what they tell is already there,
#: and a small model given them wanders through them instead of writing SQL (issue 16). A call to
#: one still runs: a model's habit is not an error.
SCHEMA_TOOLS = frozenset({"list_tables", "describe_table"})


def offered_schemas(schemas: list[dict[str, Any]], *, schema_shown: bool) -> list[dict[str, Any]]:
    """The tool definitions sent to the model: without `SCHEMA_TOOLS` when the schema is in the prompt."""
    return [s for s in schemas if s["function"]["name"] not in SCHEMA_TOOLS] if schema_shown else schemas


#: The tools of a turn without memory: what callers that name no tools get.
NO_MEMORY_TOOLS = tools_for_turn(memory=False)


def tool_schemas(tools: Mapping[str, Tool] = NO_MEMORY_TOOLS) -> list[dict[str, Any]]:
    return [tool.schema() for tool in tools.values()]


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's schema for a small window (issue 22): the description's first sentence, and the
    parameters' names, types and limits without their descriptions."""
    function = schema["function"]
    description = function.get("description", "")
    first = description.split(". ")[0].rstrip(".") + "."
    parameters = dict(function.get("parameters", {}))
    parameters["properties"] = {name: {k: v for k, v in spec.items() if k != "description"}
                                for name, spec in parameters.get("properties", {}).items()}
    return {**schema, "function": {**function, "description": first, "parameters": parameters}}


def parse_arguments(name: str, arguments: str, tools: Mapping[str, Tool] = NO_MEMORY_TOOLS,
                    ) -> tuple[Tool | None, BaseModel | None, ToolOutcome | None]:
    """Find the tool among those offered and validate its arguments; on failure, the error
    observation to send back."""
    tool = tools.get(name)
    if tool is None:
        return None, None, error("unknown_tool", f"there is no tool {name!r}; use one of: {', '.join(tools)}")
    try:
        # A lone surrogate ("\ud800") cannot be stored or sent back: it becomes "?" (issue 18).
        raw = json.loads(json.dumps(json.loads(arguments or "{}"), ensure_ascii=False).encode("utf-8", "replace"))
    except ValueError as exc:
        return tool, None, error("bad_arguments", f"arguments are not valid JSON ({exc.msg}); "
                                                  f"send one JSON object matching the parameters of {name}")
    if not isinstance(raw, dict):
        return tool, None, error("bad_arguments", f"arguments must be a JSON object for {name}")
    try:
        return tool, tool.args_model.model_validate(raw), None
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors())
        return tool, None, error("bad_arguments", f"invalid arguments for {name}: {problems}")


def run_tool(ctx: ToolContext, tool: Tool, args: BaseModel) -> ToolOutcome:
    """Run a validated tool call; the model's mistakes become error observations.

    Raises:
        SourceUnavailable: the analytics database cannot be read at all.
    """
    try:
        return tool.function(ctx, args)
    except SourceUnavailable:
        raise
    except SQLRejected as exc:
        return error("sql_rejected", f"query rejected: {exc.reason}")
    except QueryTimeout as exc:
        return error("sql_timeout", str(exc))
    except (UnknownTable, UnknownColumn) as exc:
        return error("unknown_name", str(exc))
    except QueryFailed as exc:
        return _engine_error(ctx, str(exc))
