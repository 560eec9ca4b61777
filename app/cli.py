"""The command line: `python -m app serve|ask|sql|store query`, over the same core as the web app.

Domain errors become one line on stderr and a non-zero exit status.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from app.settings import Settings


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
        parser.add_argument("--db", metavar="PATH", help="analytics database (default: ASKDB_DATABASE or the sample)")
    if store:
        parser.add_argument("--store", metavar="PATH", help="conversation store (default: ASKDB_STORE or data/conversations.db)")


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the web app with uvicorn."""
    import uvicorn

    from app.web import create_app

    uvicorn.run(create_app(_settings(args)), host=args.host, port=args.port, log_level="info")
    return 0


def cmd_store_query(args: argparse.Namespace) -> int:
    """Run one read-only query over the conversation store and print the result."""
    from agent.database import AnalyticsDatabase, DatabaseError, SQLRejected
    from app.formatting import format_result

    settings = _settings(args)
    try:
        result = AnalyticsDatabase(settings.store, time_limit_s=settings.sql_timeout,
                                   max_rows=args.limit).execute(args.query)
    except SQLRejected as exc:
        print(f"error: query rejected: {exc.reason}", file=sys.stderr)
        return 2
    except DatabaseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(format_result(result, args.format))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m app", description="askdb: ask questions about a SQL database.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="serve the web app",
                                description="Serve the web app. Example: python -m app serve --port 8000")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    _add_paths(serve)
    serve.set_defaults(func=cmd_serve)

    store = commands.add_parser("store", help="operate on the conversation store")
    store_commands = store.add_subparsers(dest="store_command", required=True, metavar="COMMAND")
    query = store_commands.add_parser(
        "query", help="run a read-only SQL query over the store",
        description="Run a read-only query over the store (opened read-only). "
                    "Example: python -m app store query \"SELECT thread_id, title FROM conversations\"")
    query.add_argument("query")
    query.add_argument("--format", choices=["table", "json", "csv"], default="table")
    query.add_argument("--limit", type=int, default=1000, help="rows to print at most (default 1000)")
    _add_paths(query, db=False)
    query.set_defaults(func=cmd_store_query)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)
