"""askdb's MCP server (issue 37): the tools, resources and prompt an MCP client (a desktop
assistant, an IDE agent) uses to ask the database through askdb, built on the official SDK.

The same server runs over stdio (`python -m app mcp`, as the local user or `--user`) and over
Streamable HTTP on the web app (`/mcp`, app/mcp/http.py, as the user the request's credentials
name). Each tool calls what the matching route calls (app/mcp/tools.py); a refusal the API would
answer with a 4xx or 5xx (app/errors.py) is a tool error (`isError`) carrying the same reason, and
so are arguments the tool does not take. Anything else is our bug: the SDK logs it and tells the
client only that the tool failed.

No `from __future__ import annotations` here: the SDK reads the tools' annotations at runtime
(`typing.get_type_hints`) for their input schemas and to find the `Context` parameter.
"""

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.mcpserver.resources import FunctionResource
from mcp.server.mcpserver.tools import Tool
from mcp_types import ToolAnnotations
from pydantic import Field

from agent.state import Step
from app.auth import DEFAULT_USER, NotAuthenticated
from app.core import AskDB
from app.errors import error_body, status_of
from app.examples import FeedbackPublic
from app.mcp import tools
from app.mcp.results import (
    AskResult, ConversationDetail, ConversationList, QueryResult, RecallResult, SchemaDescription, SchemaMatches,
    SourceList,
)
from app.mcp.tools import Caller, ToolRefusal
from storage.errors import AskdbError

#: Where app/mcp/http.py leaves the user it authenticated, in the request's ASGI scope state.
USER_KEY = "askdb_user"
#: The page links of a stdio server point here unless `--url` says otherwise (`make run`'s address).
DEFAULT_SITE = "http://127.0.0.1:8000"
INSTRUCTIONS = (
    "askdb answers questions about a SQL database. Prefer `ask` for a question in words: askdb writes the SQL "
    "through a guard that allows only reads, checks the answer (`ok` false with a `caveat` when it doubts it) and "
    "saves the conversation, which the analyst can open at the returned `url`; pass the returned "
    "`conversation_id` to ask a follow-up. Use `describe` and `search_schema` to see the tables, `run_sql` for "
    "one read-only query of your own, `list_conversations`, `get_conversation` and `recall` for earlier work, "
    "and `feedback` to mark an answer right (it becomes a verified example) or wrong.")

Source = Annotated[str | None, Field(max_length=64, description=(
    "The data source: a name from `list_sources` (`default`, a configured name, or `uploads` for the user's own "
    "uploaded tables); omit for the default."))]
ConversationId = Annotated[str, Field(max_length=64, description="A conversation id from `ask` or "
                                                                 "`list_conversations`.")]


def build_server(askdb: AskDB, *, local_user: str = DEFAULT_USER, site: str = DEFAULT_SITE) -> MCPServer:
    """The MCP server over `askdb`: a stdio request is `local_user`'s, an HTTP one the authenticated
    user's; page links point at `site` (stdio) or at the request's own address (HTTP)."""

    def caller(ctx: Context) -> Caller:
        return _caller(ctx, askdb, local_user=local_user, site=site)

    async def ask(ctx: Context, question: Annotated[str, Field(description="The question, in any language.")],
                  conversation_id: Annotated[str | None, Field(max_length=64, description=(
                      "Continue this conversation (a follow-up such as 'and in 2021?'); omit to start a new "
                      "one."))] = None,
                  source: Source = None) -> AskResult:
        """Ask askdb a question about the data, as the analyst would on askdb's page: askdb finds the tables,
        writes and runs read-only SQL, checks the result and answers. Returns the answer, `ok` (false with a
        `caveat` when askdb doubts it), the SQL, the columns and first rows (with the total and whether more
        exist), and the `conversation_id` and `url` of the saved conversation. A new conversation asks
        `source`; a follow-up keeps its conversation's."""
        with _reasons(ToolError):
            return await tools.ask(caller(ctx), question, conversation_id=conversation_id, source=source,
                                   on_step=_progress(ctx, askdb.settings.max_steps))

    def run_sql(ctx: Context, sql: Annotated[str, Field(max_length=100_000, description=(
                    "One SELECT (or WITH) statement in the source's dialect; writes, ATTACH and most PRAGMAs are "
                    "refused."))],
                source: Source = None) -> QueryResult:
        """Run one read-only SQL query through askdb's guard and limits (time, rows, memory), as askdb's SQL
        page does; nothing is saved. A refused query is an error whose text says why. Returns the columns,
        the first rows, the total and whether more exist."""
        with _reasons(ToolError):
            return tools.run_sql(caller(ctx), sql, source=source)

    def list_sources(ctx: Context) -> SourceList:
        """The data sources this user may ask, with their engine (the SQL dialect) and which is the default."""
        with _reasons(ToolError):
            return tools.list_sources(caller(ctx))

    def describe(ctx: Context, source: Source = None,
                 table: Annotated[str | None, Field(max_length=200, description=(
                     "One table to describe; omit for all of them (up to 100)."))] = None) -> SchemaDescription:
        """The source's tables: row counts, columns with their types, primary and foreign keys, and frequent
        values of text columns (for WHERE clauses). For a large database, `search_schema` first."""
        with _reasons(ToolError):
            return tools.describe(caller(ctx), source=source, table=table)

    def search_schema(ctx: Context, text: Annotated[str, Field(min_length=1, max_length=1000, description=(
                          "What the tables should hold: a question or a few words, in any language."))],
                      source: Source = None) -> SchemaMatches:
        """The tables most relevant to `text`, best first, each with its size, a summary of its columns and
        why it ranked: askdb's own schema retrieval for databases with many tables."""
        with _reasons(ToolError):
            return tools.search_schema(caller(ctx), text, source=source)

    def list_conversations(ctx: Context, query: Annotated[str | None, Field(max_length=200, description=(
                               "Only conversations whose title or a tag contains this."))] = None) -> ConversationList:
        """This user's conversations with askdb (from any client: the page, the API, MCP), newest first."""
        with _reasons(ToolError):
            return tools.list_conversations(caller(ctx), query=query)

    def get_conversation(ctx: Context, conversation_id: ConversationId) -> ConversationDetail:
        """One of this user's conversations, turn by turn: each question, its answer, `ok`, the SQL and the
        first rows; and the conversation's page `url`."""
        with _reasons(ToolError):
            return tools.get_conversation(caller(ctx), conversation_id)

    def recall(ctx: Context, text: Annotated[str, Field(min_length=1, max_length=1000, description=(
                   "What to look for, in any language."))]) -> RecallResult:
        """Search what askdb remembers of this user: earlier questions with their SQL and answers, across all
        conversations, and remembered preferences and facts. An error when memory is off."""
        with _reasons(ToolError):
            return tools.recall(caller(ctx), text)

    def feedback(ctx: Context, conversation_id: ConversationId,
                 turn: Annotated[int, Field(ge=0, description="The turn's number, from 0 (`turn` of `ask`).")],
                 rating: Annotated[Literal["up", "down"], Field(description="`up`: the answer is right; `down`: "
                                                                          "it is wrong.")],
                 note: Annotated[str, Field(max_length=2000, description="What was right or wrong.")] = "",
                 sql: Annotated[str | None, Field(max_length=20_000, description=(
                     "With `down`, optionally: the right SQL for the question, kept as its verified example once "
                     "it passes the guard and names only real columns."))] = None
                 ) -> FeedbackPublic:
        """Mark an answer right or wrong, as the thumbs on askdb's page do. `up` keeps the question and its SQL
        as a verified example that askdb shows the model for similar questions later; `down` with `sql` keeps
        the question with that SQL instead."""
        with _reasons(ToolError):
            return tools.feedback(caller(ctx), conversation_id, turn=turn, rating=rating, note=note, sql=sql)

    reads = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
    registered = [_tool(ask, "Ask askdb", writes), _tool(run_sql, "Run a read-only SQL query", reads),
                  _tool(list_sources, "List the data sources", reads),
                  _tool(describe, "Describe tables", reads), _tool(search_schema, "Find the relevant tables", reads),
                  _tool(list_conversations, "List conversations", reads),
                  _tool(get_conversation, "Read a conversation", reads),
                  _tool(recall, "Search what askdb remembers", reads),
                  _tool(feedback, "Mark an answer right or wrong", writes)]
    server = _quietly_built(registered)
    _add_schemas(server, askdb, local_user=local_user, site=site)
    _add_prompt(server)
    return server


def _caller(ctx: Context, askdb: AskDB, *, local_user: str, site: str) -> Caller:
    """Who sent the request `ctx` belongs to: on stdio `local_user`, over HTTP the user app/mcp/http.py
    authenticated, with page links to `site` or to the request's own address."""
    request = ctx.request_context.request
    if request is None:  # stdio: whoever started the process, with its files
        return Caller(askdb, local_user, site.rstrip("/"))
    user = request.scope.get("state", {}).get(USER_KEY)
    if user is None:  # only reachable if the server were mounted without app/mcp/http.py
        raise NotAuthenticated("no user was authenticated for this request")
    return Caller(askdb, user, str(request.base_url).rstrip("/"))


def _tool(fn, title: str, annotations: ToolAnnotations) -> Tool:
    """A tool whose arguments are only those it declares: an unknown one is an error the client reads,
    not silently dropped (the SDK's argument models ignore extras)."""
    tool = Tool.from_function(fn, title=title, annotations=annotations)
    model = tool.fn_metadata.arg_model
    model.model_config["extra"] = "forbid"
    model.model_rebuild(force=True)
    tool.parameters = model.model_json_schema(by_alias=True)  # says so to the client: additionalProperties false
    return tool


def _quietly_built(registered: list[Tool]) -> MCPServer:
    """The SDK's server, leaving the process's logging as it was: its constructor calls
    `logging.basicConfig` (mcp 2.3.0), and the app's logging is the app's (or uvicorn's) to set."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        return MCPServer("askdb", title="askdb", instructions=INSTRUCTIONS, tools=registered)
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


@contextmanager
def _reasons(error: type[Exception]) -> Iterator[None]:
    """A refusal the API gives with a status (app/errors.py) becomes `error` with its reason and kind."""
    try:
        yield
    except AskdbError as exc:
        status = status_of(exc)
        if status is None and not isinstance(exc, ToolRefusal):
            raise  # our bug: logged by the SDK, never shown
        raise error(f"{type(exc).__name__}: {error_body(exc, status or 400)['detail']}") from exc


def _progress(ctx: Context, max_steps: int):
    """Each step of a turn as a progress notification (sent only when the client asked for progress)."""
    async def report(step: Step) -> None:
        await ctx.report_progress(step.step_index + 1, max_steps, f"{step.step_type} {step.action or ''}".strip())
    return report


def _add_schemas(server: MCPServer, askdb: AskDB, *, local_user: str, site: str) -> None:
    """Each source's schema (`describe`'s JSON) as a resource: the configured sources listed, any
    source (`uploads`: the reader's own tables) through the template."""
    def schema_of(source: str, caller: Caller) -> str:
        with _reasons(ResourceError):
            return tools.describe(caller, source=source, table=None).model_dump_json(indent=1)

    shared = Caller(askdb, local_user, site)  # a configured source is every user's: no identity needed
    for name in askdb.sources.catalog.entries:
        server.add_resource(FunctionResource.from_function(
            lambda name=name: schema_of(name, shared), uri=f"askdb://schema/{name}", name=f"schema-{name}",
            title=f"Schema of the source {name!r}", mime_type="application/json",
            description=f"The tables, columns, types, keys and sample values of the data source {name!r}."))

    @server.resource("askdb://schema/{source}", name="schema", title="Schema of a data source",
                     mime_type="application/json",
                     description="The tables, columns, types, keys and sample values of a data source by name "
                                 "(`uploads`: your own uploaded tables).")
    def any_schema(source: str, ctx: Context) -> str:
        with _reasons(ResourceError):
            reader = _caller(ctx, askdb, local_user=local_user, site=site)
        return schema_of(source, reader)


def _add_prompt(server: MCPServer) -> None:
    @server.prompt(name="analyse_table", title="Analyse a table",
                   description="A starter: describe one table, then ask askdb a few questions that show what it "
                               "holds, and sum up with links to the saved conversation.")
    def analyse_table(table: Annotated[str, Field(description="The table to analyse.")],
                      source: Annotated[str, Field(description="Its data source; empty for the default.")] = ""
                      ) -> str:
        where = f" of the data source {source!r}" if source else ""
        on = f", source={source!r}" if source else ""
        return (f"Analyse the table {table!r}{where} with askdb. First call describe(table={table!r}{on}) to see "
                "its columns, keys and sample values. Then use `ask` for three to five questions that show what "
                "the table holds: how many rows and over what period, how its main categories split, its trend "
                "over time, anything unusual. Ask the later ones as follow-ups, passing the `conversation_id` the "
                "first returned. Check each answer's `ok` and `caveat` before relying on it. End with a short "
                "summary of what you found and the conversation's `url`, so it can be opened in askdb.")
