"""`python -m app data add|list|rename|remove`: a user's own files (CSV, TSV, Parquet, Excel) as
tables of their DuckDB file under ASKDB_UPLOADS_DIR (agent/sources/uploads.py), to ask about with
`--source uploads`. The "Your data" page (app/data_pages.py) does the same in the browser."""

from __future__ import annotations

import argparse
import sys

from agent.sources.uploads import UploadRejected, add_table, list_tables, remove_table, rename_table, uploads_path
from app.auth import DEFAULT_USER
from app.settings import Settings


def cmd_data_add(args: argparse.Namespace) -> int:
    """Load a file as a table of the user's data; print its columns and how to ask about it."""
    settings = Settings()
    target = uploads_path(settings.uploads_dir, args.user)
    try:
        loaded = add_table(target, args.file, table=args.table, max_bytes=settings.max_upload_bytes,
                           replace=args.replace, quota_bytes=settings.upload_quota_mb << 20)
    except (UploadRejected, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    columns = ", ".join(f"{name} {kind}" for name, kind in loaded.columns)
    print(f"table {loaded.name}: {loaded.rows} rows ({columns})")
    print(f"ask about it: python -m app ask QUESTION --source uploads --user {args.user}")
    return 0


def cmd_data_list(args: argparse.Namespace) -> int:
    """Print the user's tables, one a line: name, rows, columns."""
    for table in list_tables(uploads_path(Settings().uploads_dir, args.user)):
        print(f"{table.name}\t{table.rows} rows\t{', '.join(name for name, _ in table.columns)}")
    return 0


def cmd_data_rename(args: argparse.Namespace) -> int:
    """Give one of the user's tables another name."""
    try:
        renamed = rename_table(uploads_path(Settings().uploads_dir, args.user), args.table, args.new_name)
    except UploadRejected as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"renamed {args.table} to {renamed.name}")
    return 0


def cmd_data_remove(args: argparse.Namespace) -> int:
    """Delete one of the user's tables."""
    try:
        remove_table(uploads_path(Settings().uploads_dir, args.user), args.table)
    except UploadRejected as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"removed {args.table}")
    return 0


def add_data_commands(commands: argparse._SubParsersAction) -> None:
    """The `data` command group of `python -m app`."""
    data = commands.add_parser("data", help="add your own files (CSV, TSV, Parquet, Excel) as tables")
    data_commands = data.add_subparsers(dest="data_command", required=True, metavar="COMMAND")
    add = data_commands.add_parser(
        "add", help="load a file as a table of your data",
        description="Load a CSV, TSV, Parquet or Excel (.xlsx) file as one table (types inferred; UTF-8 or GBK "
                    "text; at most ASKDB_MAX_UPLOAD_BYTES). Example: python -m app data add sales.csv --table sales")
    add.add_argument("file")
    add.add_argument("--table", metavar="NAME", help="the table's name (default: the file's name)")
    add.add_argument("--replace", action="store_true", help="replace a table of the same name")
    add.set_defaults(func=cmd_data_add)
    listing = data_commands.add_parser("list", help="list your tables",
                                       description="List your tables. Example: python -m app data list")
    listing.set_defaults(func=cmd_data_list)
    rename = data_commands.add_parser("rename", help="rename one of your tables",
                                      description="Rename a table. Example: python -m app data rename sales sales_2024")
    rename.add_argument("table")
    rename.add_argument("new_name")
    rename.set_defaults(func=cmd_data_rename)
    remove = data_commands.add_parser("remove", help="delete one of your tables",
                                      description="Delete a table. Example: python -m app data remove sales")
    remove.add_argument("table")
    remove.set_defaults(func=cmd_data_remove)
    for command in (add, listing, rename, remove):
        command.add_argument("--user", default=DEFAULT_USER, help=f"whose data (default: {DEFAULT_USER})")
