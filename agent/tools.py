"""The agent's tools: small typed functions with docstrings, arguments validated by pydantic.

A tool's name, its docstring and its argument model make its OpenAI schema. A bad
argument, an unknown table or a rejected query comes back as an error observation
the model can read and correct; only infrastructure failures (the analytics
database gone) propagate.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from agent.database import (
    AnalyticsDatabase,
    DatabaseUnavailable,
    QueryFailed,
    QueryResult,
    QueryTimeout,
    SQLRejected,
    UnknownColumn,
    UnknownTable,
)
from agent.memory.recall_tool import RecallArgs, recall_memory
from agent.state import AgentState

# Bounds on what goes back to the model; the full result is kept for the page.
OBSERVATION_ROWS = 20
OBSERVATION_CHARS = 4000


@dataclass
class ToolOutcome:
    """What a tool did: an observation for the model, and the full data for the page."""

    observation: dict[str, Any]
    ok: bool = True
    error_kind: str | None = None
    result: QueryResult | None = None
    final: bool = False

    def observation_text(self) -> str:
        return bound_text(json.dumps(self.observation, ensure_ascii=False, default=str))


def bound_text(text: str, limit: int = OBSERVATION_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + " ... (truncated)"


def error(kind: str, message: str) -> ToolOutcome:
    return ToolOutcome({"ok": False, "error": message}, ok=False, error_kind=kind)


@dataclass
class ToolContext:
    database: AnalyticsDatabase
    state: AgentState


# -- argument models ----------------------------------------------------------------

class NoArgs(BaseModel):
    pass


class TableArgs(BaseModel):
    table: str = Field(description="Table name, exactly as list_tables gives it.")


class SampleArgs(TableArgs):
    limit: int = Field(3, ge=1, le=5, description="How many rows (1-5).")


class FindValuesArgs(TableArgs):
    column: str = Field(description="Column whose distinct values you want.")
    term: str = Field(min_length=1, max_length=200, description="Word or phrase to look for, in any language.")


class SQLArgs(BaseModel):
    sql: str = Field(min_length=1, max_length=20_000, description="One read-only SQLite query (SELECT or WITH).")


class AnswerArgs(BaseModel):
    text: str = Field(min_length=1, max_length=20_000, description="The answer for the analyst, in their language.")
    sql: str | None = Field(None, description="The SQL the answer rests on, if any.")


# -- tools ------------------------------------------------------------------------

def list_tables(ctx: ToolContext, args: NoArgs) -> ToolOutcome:
    """List the tables of the analytics database with their row counts."""
    tables = []
    for name in ctx.database.list_tables():
        tables.append({"table": name, "rows": ctx.database.describe_table(name).row_count})
    ctx.state.known_tables = [t["table"] for t in tables]
    return ToolOutcome({"ok": True, "tables": tables})


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


def find_values(ctx: ToolContext, args: FindValuesArgs) -> ToolOutcome:
    """Find distinct values of a column in rows where any text column matches a term
    (so "Long March 2D" finds the Chinese name of that vehicle)."""
    values = ctx.database.find_values(args.table, args.column, args.term)
    return ToolOutcome({"ok": True, "table": args.table, "column": args.column, "term": args.term, "values": values})


def run_sql(ctx: ToolContext, args: SQLArgs) -> ToolOutcome:
    """Run one read-only SQLite query and see its first rows."""
    result = ctx.database.execute(args.sql)
    return ToolOutcome(result_observation(result), result=result)


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


@dataclass
class Tool:
    name: str
    function: Callable[[ToolContext, Any], ToolOutcome]
    args_model: type[BaseModel]
    description: str = field(init=False)

    def __post_init__(self) -> None:
        self.description = " ".join(inspect.getdoc(self.function).split())

    def schema(self) -> dict[str, Any]:
        parameters = self.args_model.model_json_schema()
        parameters.pop("title", None)
        for prop in parameters.get("properties", {}).values():
            prop.pop("title", None)
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": parameters}}


TOOLS: dict[str, Tool] = {
    tool.name: tool
    for tool in (
        Tool("list_tables", list_tables, NoArgs),
        Tool("describe_table", describe_table, TableArgs),
        Tool("sample_rows", sample_rows, SampleArgs),
        Tool("find_values", find_values, FindValuesArgs),
        Tool("run_sql", run_sql, SQLArgs),
        Tool("recall_memory", recall_memory, RecallArgs),
        Tool("answer", answer, AnswerArgs),
    )
}


def tool_schemas() -> list[dict[str, Any]]:
    return [tool.schema() for tool in TOOLS.values()]


def parse_arguments(name: str, arguments: str) -> tuple[Tool | None, BaseModel | None, ToolOutcome | None]:
    """Find the tool and validate its arguments; on failure, the error observation to send back."""
    tool = TOOLS.get(name)
    if tool is None:
        return None, None, error("unknown_tool", f"there is no tool {name!r}; use one of: {', '.join(TOOLS)}")
    try:
        raw = json.loads(arguments or "{}")
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
        DatabaseUnavailable: the analytics database cannot be read at all.
    """
    try:
        return tool.function(ctx, args)
    except DatabaseUnavailable:
        raise
    except SQLRejected as exc:
        return error("sql_rejected", f"query rejected: {exc.reason}")
    except QueryTimeout as exc:
        return error("sql_timeout", str(exc))
    except (UnknownTable, UnknownColumn) as exc:
        return error("unknown_name", str(exc))
    except QueryFailed as exc:
        return error("sql_error", f"SQLite error: {exc}; check table and column names with describe_table")
