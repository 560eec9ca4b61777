"""The command line: `python -m app serve|ask|sql|mcp|store|data|token|eval`, over the same core as the web app.

Domain errors become one line on stderr and a non-zero exit status.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from app.auth import DEFAULT_USER
from app.data_cli import add_data_commands
from app.settings import Settings

if TYPE_CHECKING:
    from agent.state import Answer


def _settings(args: argparse.Namespace) -> Settings:
    """Settings from the environment, overridden by whichever flags were given."""
    overrides = {
        name: value
        for name, value in (("database", getattr(args, "db", None)), ("store", getattr(args, "store", None)))
        if value is not None
    }
    return Settings(**overrides)


def _add_paths(parser: argparse.ArgumentParser, *, db: bool = True, store: bool = True) -> None:
    if db:
        parser.add_argument("--db", metavar="PATH", help="analytics database: a SQLite or .duckdb file, or a "
                                                         "postgresql:// or mysql:// URL (default: ASKDB_DATABASE "
                                                         "or the sample)")
    if store:
        parser.add_argument("--store", metavar="PATH", help="conversation store: a SQLite file or a postgresql:// URL "
                                                            "(default: ASKDB_STORE or data/conversations.db)")


def _add_source(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--source", metavar="NAME", default=None,
                        help=f"{what}: `default` (ASKDB_DATABASE), a name from the ASKDB_SOURCES file, or "
                             "`uploads` (your own uploaded tables); default: the file's default")


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the web app with uvicorn."""
    import uvicorn

    from app.web import create_app

    if args.workers > 1:
        # Several worker processes need an import string; each builds the app from the environment.
        for name, value in (("ASKDB_DATABASE", args.db), ("ASKDB_STORE", args.store)):
            if value:
                os.environ[name] = value
        uvicorn.run("app.web:create_app", factory=True, host=args.host, port=args.port, workers=args.workers,
                    log_level="info")
    else:
        from storage.errors import StoreError

        from app.sources import SourcesFileError

        try:
            app = create_app(_settings(args))
        except (StoreError, SourcesFileError) as exc:  # refused at start-up, with how to recover
            print(f"error: {exc}", file=sys.stderr)
            return 1
        uvicorn.run(app, host=args.host, port=args.port, log_level="info")
    return 0


def _print_step(step) -> None:
    head = f"[{step.step_index}] {step.step_type}"
    if step.action:
        head += f" {step.action} {json.dumps(step.args, ensure_ascii=False)}"
    print(f"{head}  ({step.duration_ms:.0f} ms)", file=sys.stderr)
    if step.thought:
        print(f"    thought: {step.thought}", file=sys.stderr)
    if step.observation and step.step_type != "answer":
        print(f"    -> {step.observation[:300]}", file=sys.stderr)


#: `ask`'s exit status by how far the answer answers the question (issue 38). 1 stays an error (the
#: store, the model endpoint or the database failed) and 2 a refused question or source.
ASK_STATUS = {"answered": 0, "partly_answered": 3, "not_answered": 4}
#: The label `ask` prints first, as the page shows it (app/i18n.py has the Chinese).
ASK_LABEL = {"answered": "Answered", "partly_answered": "Partly answered:", "not_answered": "Not answered"}


def _print_answer(answer: Answer, *, lang: str) -> None:
    """The answer as the page shows it: how far it answers first (a partly answered one with its
    caveat), then its text, its table and its SQL."""
    from app.formatting import render_table
    from app.i18n import phrase

    data, label = answer.data, phrase(ASK_LABEL[answer.confidence], lang)
    text = data.text
    if answer.confidence == "partly_answered":
        caveat = data.caveat or phrase("askdb is not sure the result below answers the whole question.", lang)
        print(label + ("" if lang == "zh" else " ") + caveat)
        text = text[len(caveat):].lstrip() if text.startswith(caveat) else text
    else:
        print(label)
    if text:
        print(text)
    if data.columns:
        print()
        sys.stdout.write(render_table(data.columns, data.rows))
        shown = len(data.rows)
        if shown < data.row_count or data.truncated:
            print(f"({shown} of {data.row_count} rows shown"
                  f"{'; the query hit the row limit' if data.truncated else ''})")
    if data.sql:
        print(f"\nSQL: {data.sql}")


def cmd_ask(args: argparse.Namespace) -> int:
    """Ask one question; print each step as it happens, then how far it is answered, the answer and its table.

    Exits 0 answered, 3 partly answered, 4 not answered (`ASK_STATUS`), 1 when the turn failed.
    """
    from agent.sources.errors import SourceError
    from app.core import AskDB, BadQuestion
    from app.sources import SourceMismatch, SourcesFileError, UnknownSource
    from storage.errors import StoreError, UnsupportedStore
    from storage.text import has_cjk

    try:
        askdb = AskDB(_settings(args))
    except (SourcesFileError, StoreError) as exc:  # a bad settings file, a store that cannot be opened
        print(f"error: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, (SourcesFileError, UnsupportedStore)) else 1
    try:
        answer = thread_id = None
        failed = False
        for event in askdb.ask(args.question, user_id=args.user, thread_id=args.thread, source=args.source):
            thread_id = event.thread_id
            if event.type == "start":
                print(f"thread {event.thread_id} · {event.model}", file=sys.stderr)
            elif event.type == "step":
                _print_step(event.step)
            elif event.type == "answer":
                answer = event.answer
            elif event.type == "error":  # the model endpoint or the database failed: said as the answer
                failed = True
        if args.json:
            print(askdb.store.load(thread_id, user_id=args.user).state.model_dump_json(indent=2))
        elif answer is not None:
            _print_answer(answer, lang="zh" if has_cjk(args.question) else "en")
        return 1 if failed or answer is None else ASK_STATUS[answer.confidence]
    except (BadQuestion, UnknownSource, SourceMismatch, StoreError, SourceError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, (BadQuestion, UnknownSource, SourceMismatch)) else 1
    finally:
        askdb.close()


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve askdb's MCP tools over stdio (stdin and stdout), as --user, until the client closes stdin."""
    import anyio

    from app.auth import USER_ID_PATTERN
    from app.core import AskDB
    from app.mcp.server import build_server
    from app.sources import SourcesFileError
    from storage.errors import StoreError, UnsupportedStore

    if not USER_ID_PATTERN.match(args.user):
        print("error: user ids are 1-128 letters, digits, '_', '.', '@' or '-'", file=sys.stderr)
        return 2
    try:
        askdb = AskDB(_settings(args))
    except (SourcesFileError, StoreError) as exc:  # said on stderr: stdout is the protocol's
        print(f"error: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, (SourcesFileError, UnsupportedStore)) else 1
    try:
        server = build_server(askdb, local_user=args.user, **({"site": args.url} if args.url else {}))
        anyio.run(server.run_stdio_async)
    except KeyboardInterrupt:
        pass
    finally:
        askdb.close()
    return 0


def _source_location(settings: Settings, source: str | None, *, user_id: str) -> Path | str | None:
    """Where a named source is (`--source`, else the default); None, said on stderr, when there is no such source."""
    from app.sources import Sources, SourcesFileError, UnknownSource

    try:
        sources = Sources(settings)
        try:
            return sources.location(sources.choose(source, user_id=user_id), user_id=user_id)
        finally:
            sources.close()
    except (SourcesFileError, UnknownSource) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def cmd_sql(args: argparse.Namespace) -> int:
    """Run one query on a data source (`--source`, else the default) through the agent's guard and limits."""
    location = _source_location(_settings(args), args.source, user_id=args.user)
    return 2 if location is None else _run_query(location, args, trusted=False)


def cmd_store_query(args: argparse.Namespace) -> int:
    """Run one read-only query over the conversation store and print the result."""
    # The store is ours and so is the query: on SQLite its views (JSON1 over the blob) are
    # trusted; on PostgreSQL any role holding the store's URL may run it (README, "Querying the store").
    from storage.backends import check_store_location
    from storage.errors import UnsupportedStore

    try:
        store = check_store_location(_settings(args).store)  # never a mysql:// "store" queried as MySQL
    except UnsupportedStore as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return _run_query(store, args, trusted=True)


def _run_query(location, args: argparse.Namespace, *, trusted: bool) -> int:
    from agent.sources.errors import SourceError, SQLRejected
    from agent.sources.factory import open_source
    from app.formatting import format_result

    settings = _settings(args)
    database = open_source(location, time_limit_s=settings.sql_timeout, max_rows=args.limit or settings.sql_max_rows,
                           max_cell_bytes=settings.sql_max_cell_bytes, limits=settings.query_limits(), trusted=trusted)
    try:
        result = database.execute(args.query)
    except SQLRejected as exc:
        print(f"error: query rejected: {exc.reason}", file=sys.stderr)
        return 2
    except SourceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        database.close()
    sys.stdout.write(format_result(result, args.format))
    return 0


def _no_store(settings: Settings) -> bool:
    """Whether the store is a SQLite file that does not exist (said on stderr): opening it would
    create an empty one, and a command reading from it would then fail for a misleading reason."""
    if isinstance(settings.store, str) or settings.store.exists():  # a URL: opening it says what is wrong
        return False
    print(f"error: no store at {settings.store}", file=sys.stderr)
    return True


def _on_existing_store(settings: Settings, call):
    """`call(store)` on the existing store, as (exit status, its result); a missing store or a
    store error is said on stderr in one line, with status 1."""
    from agent.state import AgentState
    from storage.base import opened_store
    from storage.errors import StoreError

    if _no_store(settings):
        return 1, None
    try:
        with opened_store(settings.store, AgentState) as store:
            return 0, call(store)
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1, None


def cmd_store_backup(args: argparse.Namespace) -> int:
    """Copy the store while the app keeps serving: SQLite's online backup, or pg_dump."""
    from storage.backends import is_postgres_url

    settings = _settings(args)
    status, _ = _on_existing_store(settings, lambda store: store.backup(args.destination))
    if status:
        return status
    how = " (pg_dump custom format; restore with pg_restore)" if is_postgres_url(settings.store) else ""
    print(f"backed up the store to {args.destination}{how}", file=sys.stderr)
    return 0


def cmd_store_export(args: argparse.Namespace) -> int:
    """Write one conversation, its archive included, as one JSON document (stdout, or --output)."""
    status, document = _on_existing_store(
        _settings(args), lambda store: store.export_conversation(args.thread_id, user_id=args.user))
    if status:
        return status
    text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    if args.output is None:
        sys.stdout.write(text)
        return 0
    try:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"error: cannot write {args.output}: {exc.strerror}", file=sys.stderr)
        return 1
    print(f"exported conversation {args.thread_id} to {args.output}", file=sys.stderr)
    return 0


def cmd_store_import(args: argparse.Namespace) -> int:
    """Add a `store export` document to the store as a new conversation of --user (its turns indexed
    for recall when memory is on); print its thread id."""
    from app.core import AskDB
    from storage.errors import InvalidExport, StoreError

    try:
        document = json.loads(args.file.read_text(encoding="utf-8"))
    except OSError as exc:
        print(f"error: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 1
    except ValueError as exc:  # not JSON, or not UTF-8
        print(f"error: {args.file} is not valid JSON: {exc}", file=sys.stderr)
        return 2
    try:
        # No `_no_store` check: importing into a new SQLite store (moving a conversation) creates it.
        askdb = AskDB(_settings(args))
        try:
            created = askdb.import_conversation(document, user_id=args.user)
        finally:
            askdb.close()
    except InvalidExport as exc:  # JSON, but not a (valid) export: nothing was written
        print(f"error: {args.file}: {exc}", file=sys.stderr)
        return 2
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(created.thread_id)
    return 0


def cmd_token_add(args: argparse.Namespace) -> int:
    """Create a token for a user; its hash goes to the tokens file and the token is printed once."""
    from app.auth import add_token

    settings = Settings()
    path = args.tokens_file or settings.tokens_file
    try:
        token = add_token(path, args.user)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"token for {args.user} (shown once; its hash is in {path}):", file=sys.stderr)
    print(token)
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    """Run a question suite through the full agent and write the report (JSON and Markdown)."""
    import time
    from datetime import datetime

    from agent.sources.errors import SourceError
    from app.eval.harness import DATASETS, SuiteError, load_suite, run_suite, suite_databases, summarise, write_report

    updates: dict = {"max_steps": args.max_steps} if args.max_steps else {}
    if args.model == "offline":
        updates["llm"] = "offline"
    elif args.model:
        updates.update(llm="openai", model=args.model)
    # `--db` alone means ASKDB_DATABASE; with a value, that database; `--source NAME`, that named source's.
    settings = Settings(**({"database": args.db} if args.db else {})).model_copy(update=updates)
    if args.source is not None:
        location = _source_location(settings, args.source, user_id=DEFAULT_USER)
        if location is None:
            return 2
        settings = settings.model_copy(update={"database": location})
    if settings.llm == "openai" and not (settings.openai_base_url or settings.openai_api_key):
        print("error: --model needs an endpoint: set OPENAI_BASE_URL and/or OPENAI_API_KEY "
              "(or use --model offline)", file=sys.stderr)
        return 2
    try:
        questions, db_dir = load_suite(args.suite, datasets=args.datasets or DATASETS, db_dir=args.db_dir)
    except SuiteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    questions = questions[: args.limit] if args.limit else questions
    label = "offline planner" if settings.llm == "offline" else settings.model

    def progress(n: int, total: int, r) -> None:
        print(f"[{n}/{total}] {r.db_id} {r.outcome} · {r.steps} steps · {r.latency_ms:.0f} ms", file=sys.stderr)

    started = time.perf_counter()
    try:
        one = settings.database if args.db is not None or args.source is not None else None
        with suite_databases(questions, db_dir, settings, one=one,
                             load_into=args.load_into) as (questions, databases, where):
            results, skipped = run_suite(questions, databases, settings, on_result=progress)
    except SourceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    report = summarise(results, suite=args.suite, model=label, skipped=skipped, settings=settings,
                       seconds=time.perf_counter() - started, database=where)
    name = Path(args.suite).stem if args.suite.endswith(".json") else args.suite
    out = args.out or Path("data") / "eval" / f"{name}-{datetime.now():%Y%m%d-%H%M%S}"
    json_path, md_path = write_report(report, out)
    overall = report["overall"]
    print(f"execution accuracy {overall['accuracy']}% ({overall['correct']}/{overall['questions']}); "
          f"report: {md_path} and {json_path}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m app", description="askdb: ask questions about a SQL database.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="serve the web app",
                                description="Serve the web app. Example: python -m app serve --port 8000")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=1, help="worker processes sharing the store (default 1)")
    _add_paths(serve)
    serve.set_defaults(func=cmd_serve)

    ask = commands.add_parser(
        "ask", help="ask a question and print the steps and the answer",
        description="Ask one question. Each step is printed (on stderr) as it happens, then how far the "
                    "question is answered (Answered; Partly answered: and what the result leaves out; Not "
                    "answered), the answer, its table and its SQL. Exits 0 answered, 3 partly answered, 4 not "
                    "answered, 1 when the turn failed (the model endpoint or the database), 2 for a refused "
                    "question or source. Example: python -m app ask \"How many launches were there in 2020?\"")
    ask.add_argument("question")
    ask.add_argument("--thread", metavar="ID", help="continue this conversation (default: start a new one)")
    ask.add_argument("--user", default=DEFAULT_USER, help=f"user id (default: {DEFAULT_USER})")
    ask.add_argument("--json", action="store_true", help="print the final AgentState as JSON")
    _add_source(ask, "start the new conversation on this named source")
    _add_paths(ask)
    ask.set_defaults(func=cmd_ask)

    sql = commands.add_parser(
        "sql", help="run one read-only query on the analytics database",
        description="Run one query through the same guard and limits as the agent. A rejected query exits 2, "
                    "a failing one 1. Example: python -m app sql \"SELECT count(*) FROM launches\"")
    sql.add_argument("query")
    sql.add_argument("--format", choices=["table", "json", "csv"], default="table")
    sql.add_argument("--limit", type=int, default=None, help="rows to return at most (default ASKDB_SQL_MAX_ROWS)")
    _add_source(sql, "run it on this named source")
    sql.add_argument("--user", default=DEFAULT_USER, help=f"whose uploads `--source uploads` reads "
                                                          f"(default: {DEFAULT_USER})")
    _add_paths(sql, store=False)
    sql.set_defaults(func=cmd_sql)

    mcp = commands.add_parser(
        "mcp", help="serve askdb's tools to an MCP client over stdio",
        description="Serve askdb as an MCP server on stdin and stdout, for a client that starts it (a desktop "
                    "assistant, an IDE): the tools ask, run_sql, list_sources, describe, search_schema, "
                    "list_conversations, get_conversation, recall and feedback, as USER. The running web app "
                    "serves the same at /mcp over HTTP. Example: python -m app mcp --user alice")
    mcp.add_argument("--user", default=DEFAULT_USER, help=f"user id the conversations belong to "
                                                          f"(default: {DEFAULT_USER}, the web app's local user)")
    mcp.add_argument("--url", default=None, help="where askdb's pages are served, for the conversations' links "
                                                 "(default: http://127.0.0.1:8000, where `make run` serves them)")
    _add_paths(mcp)
    mcp.set_defaults(func=cmd_mcp)

    store = commands.add_parser("store", help="operate on the conversation store")
    store_commands = store.add_subparsers(dest="store_command", required=True, metavar="COMMAND")
    query = store_commands.add_parser(
        "query", help="run a read-only SQL query over the store",
        description="Run a read-only query over the store (a SQLite file opened read-only, or a PostgreSQL "
                    "store in a READ ONLY transaction), through the same guard and limits as `sql`. "
                    "Example: python -m app store query \"SELECT thread_id, title FROM conversations\"")
    query.add_argument("query")
    query.add_argument("--format", choices=["table", "json", "csv"], default="table")
    query.add_argument("--limit", type=int, default=None, help="rows to return at most (default ASKDB_SQL_MAX_ROWS)")
    _add_paths(query, db=False)
    query.set_defaults(func=cmd_store_query)
    backup = store_commands.add_parser(
        "backup", help="copy the store with SQLite's online backup, or pg_dump",
        description="Copy the whole store to DESTINATION while the app keeps serving: SQLite's online backup, "
                    "or for a postgresql:// store pg_dump's custom format (pg_dump on PATH; restore with "
                    "pg_restore). Example: python -m app store backup backups/conversations-$(date +%%F).db")
    backup.add_argument("destination", type=Path)
    _add_paths(backup, db=False)
    backup.set_defaults(func=cmd_store_backup)
    export = store_commands.add_parser(
        "export", help="write one conversation, its archive included, as JSON",
        description="Write conversation THREAD_ID of USER as one JSON document (metadata, state, steps, "
                    "query results and archived messages and SQL) to stdout or FILE, for `store import`. "
                    "Example: python -m app store export 3f2a9c --user alice -o alice-3f2a9c.json")
    export.add_argument("thread_id", metavar="THREAD_ID")
    export.add_argument("--user", default=DEFAULT_USER, help=f"the conversation's user id (default: {DEFAULT_USER})")
    export.add_argument("-o", "--output", metavar="FILE", type=Path, default=None, help="default: stdout")
    _add_paths(export, db=False)
    export.set_defaults(func=cmd_store_export)
    import_ = store_commands.add_parser(
        "import", help="add an exported conversation under a new thread id",
        description="Add the conversation in FILE (written by `store export`, from either backend) to the store "
                    "as a new conversation of USER, archive included, and print its new thread id. A file that "
                    "is not an export exits 2 and writes nothing. "
                    "Example: python -m app store import alice-3f2a9c.json --user bob")
    import_.add_argument("file", metavar="FILE", type=Path)
    import_.add_argument("--user", default=DEFAULT_USER, help=f"the new conversation's user id "
                                                              f"(default: {DEFAULT_USER})")
    _add_paths(import_, db=False)
    import_.set_defaults(func=cmd_store_import)

    add_data_commands(commands)

    token = commands.add_parser("token", help="manage users' tokens for ASKDB_AUTH=token")
    token_commands = token.add_subparsers(dest="token_command", required=True, metavar="COMMAND")
    add = token_commands.add_parser("add", help="create a token for a user",
                                    description="Create a token for USER and print it once. "
                                                "Example: python -m app token add alice")
    add.add_argument("user")
    add.add_argument("--tokens-file", type=Path, default=None, help="default: ASKDB_TOKENS_FILE")
    add.set_defaults(func=cmd_token_add)

    evaluate = commands.add_parser(
        "eval", help="measure execution accuracy on a question suite",
        description="Ask every question of a suite through the full agent, each against its own database with a "
                    "fresh store, compare the answer's rows with the gold query's, and write report.json and "
                    "report.md. Suites: spider-dev, bird-minidev (from ../shared/datasets or --datasets), or a "
                    "FILE.json. Databases: the suite's SQLite files, one database for every question (--db, "
                    "SQLite or PostgreSQL), or the files copied into PostgreSQL for the run (--load-into). "
                    "Example: python -m app eval --suite spider-dev --limit 50 --model offline")
    evaluate.add_argument("--suite", required=True, help="spider-dev, bird-minidev or FILE.json")
    evaluate.add_argument("--db-dir", type=Path, default=None,
                          help="databases as DIR/<db_id>/<db_id>.sqlite (default: the suite's own)")
    where = evaluate.add_mutually_exclusive_group()
    where.add_argument("--db", nargs="?", const="", default=None, metavar="PATH|URL",
                       help="ask every question about this database, a SQLite file or a postgresql:// URL "
                            "(alone: ASKDB_DATABASE); the gold SQL is written for it")
    where.add_argument("--source", metavar="NAME", default=None,
                       help="ask every question about this named source (ASKDB_SOURCES; `uploads`: the default "
                            "user's tables), as --db does")
    where.add_argument("--load-into", metavar="URL", default=None,
                       help="copy the suite's SQLite databases into throwaway schemas of this PostgreSQL "
                            "database (a role with CREATE there, not a superuser) and ask there")
    evaluate.add_argument("--datasets", type=Path, default=None, help="where the named suites are "
                                                                      "(default: ../shared/datasets)")
    evaluate.add_argument("--limit", type=int, default=None, help="the first N questions only")
    evaluate.add_argument("--model", default=None, help="'offline' for the planner, else a model name for the "
                                                        "endpoint (default: ASKDB_LLM / ASKDB_MODEL)")
    evaluate.add_argument("--max-steps", type=int, default=None, help="default: ASKDB_MAX_STEPS")
    evaluate.add_argument("--out", type=Path, default=None, help="report directory (default: data/eval/SUITE-TIME)")
    evaluate.set_defaults(func=cmd_eval)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)
