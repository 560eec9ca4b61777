"""Sources benchmark (issue 21): the offline planner on four engines, and a user's file as a table.

Engines: the sample database built afresh, copied into a throwaway PostgreSQL and MariaDB server
(bench/pg_server.py, mariadb_server.py) and a DuckDB file, each read through its
read-only role; the planner's documented sample questions (tests/data/planner_questions.json)
played as the loop plays them, each answer's rows compared with the gold SQL's on the SQLite
file (tests/agent/test_offline_planner.py). Accuracy per engine, and its gap to SQLite's.

Upload: 100,000 rows (an id, a region, a date, an amount) written as CSV and as Parquet, each
loaded with `agent.sources.uploads.add_table` (what `python -m app data add` does), then the
first answer on it through the whole turn (offline planner, a fresh store).
"""

from __future__ import annotations

import csv
import random
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import duckdb

from agent.offline_planner import OfflinePlanner
from agent.sources.factory import open_source
from agent.sources.uploads import add_table
from app.core import AskDB
from app.settings import Settings
from sample_db.build import build
from bench.planner_questions import QUESTIONS, Conversation, check_question

UPLOAD_ROWS = 100_000
UPLOAD_QUESTION = "How many sales are there?"


def engine_locations(stack: ExitStack, sample: Path, scratch: Path) -> dict[str, Any]:
    """The sample database's location on each engine that can run here, or why it cannot."""
    from sample_db import to_duckdb, to_mysql, to_postgres
    from bench.mariadb_server import MariaDBServer, MariaDBUnavailable
    from bench.pg_server import PostgresServer, PostgresUnavailable

    locations: dict[str, Any] = {"SQLite": sample}
    for engine, server_class, unavailable, copy in (
            ("PostgreSQL", PostgresServer, PostgresUnavailable, to_postgres.copy_database),
            ("MariaDB", MariaDBServer, MariaDBUnavailable, to_mysql.copy_database)):
        try:
            server = server_class().start()
        except unavailable as e:
            locations[engine] = f"skipped: {e}"
            continue
        stack.callback(server.stop)
        copy(sample, server.create_database("askdb_sample"))
        locations[engine] = server.create_reader("askdb_sample")
    to_duckdb.copy_database(sample, scratch / "aerospace.duckdb")
    locations["DuckDB"] = scratch / "aerospace.duckdb"
    return locations


def accuracy(location: Path | str, sample: Path) -> dict[str, Any]:
    """The documented sample questions on one engine: how many give the gold rows."""
    questions = [q for q in QUESTIONS if q["db"] == "sample"]
    source = open_source(location)
    started = time.perf_counter()
    try:
        planner = OfflinePlanner(source)
        wrong = [q["id"] for q in questions if not check_question(q, Conversation(planner, source), sample)[0]]
    finally:
        source.close()
    correct = len(questions) - len(wrong)
    return {"questions": len(questions), "correct": correct, "accuracy": round(100 * correct / len(questions), 1),
            "wrong": wrong, "seconds": round(time.perf_counter() - started, 1)}


def write_sales(folder: Path) -> tuple[Path, Path]:
    """The same 100,000 rows as sales.csv and sales.parquet."""
    rng = random.Random(21)
    regions = ["North", "South", "East", "West", "华东", "华南"]
    csv_path = folder / "sales.csv"
    with csv_path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["id", "region", "sold_on", "amount"])
        for i in range(UPLOAD_ROWS):
            writer.writerow([i, rng.choice(regions), f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                             round(rng.uniform(1, 1000), 2)])
    parquet_path = folder / "sales.parquet"
    with duckdb.connect() as duck:
        duck.execute("COPY (SELECT * FROM read_csv(?)) TO '" + str(parquet_path).replace("'", "''")
                     + "' (FORMAT parquet)", [str(csv_path)])
    return csv_path, parquet_path


def upload(file: Path, scratch: Path) -> dict[str, Any]:
    """Seconds to load `file` as a table, then to the first answer on it."""
    target = scratch / f"{file.suffix.lstrip('.')}.duckdb"
    started = time.perf_counter()
    loaded = add_table(target, file, table="sales", max_bytes=1 << 30)
    load_s = time.perf_counter() - started
    settings = Settings(database=target, store=scratch / f"{target.stem}-store.db", llm="offline",
                        memory_embedder="none")
    askdb = AskDB(settings)
    try:
        started = time.perf_counter()
        events = list(askdb.ask(UPLOAD_QUESTION, user_id="bench"))
        answer_s = time.perf_counter() - started
    finally:
        askdb.close()
    answer = events[-1].answer
    return {"bytes": file.stat().st_size, "rows": loaded.rows, "load_s": round(load_s, 2),
            "first_answer_s": round(answer_s, 2), "answer_ok": answer.ok, "answer": answer.data.text}


def run() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="askdb-bench-sources-") as tmp, ExitStack() as stack:
        scratch = Path(tmp)
        sample = scratch / "aerospace.db"
        build(sample)
        engines = {}
        for engine, location in engine_locations(stack, sample, scratch).items():
            engines[engine] = location if isinstance(location, str) and location.startswith("skipped") \
                else accuracy(location, sample)
        base = engines["SQLite"]["accuracy"]
        for figures in engines.values():
            if isinstance(figures, dict):
                figures["points_below_sqlite"] = round(base - figures["accuracy"], 1)
        csv_path, parquet_path = write_sales(scratch)
        uploads = {"csv": upload(csv_path, scratch), "parquet": upload(parquet_path, scratch)}
    return {"engines": engines, "upload": uploads}


def markdown(figures: dict) -> str:
    lines = ["The offline planner's documented sample questions on each engine (the sample database copied "
             "in, read through a read-only role):", "",
             "| engine | correct | accuracy | points below SQLite | seconds | wrong |", "|---|---|---|---|---|---|"]
    for engine, row in figures["engines"].items():
        if isinstance(row, str):
            lines.append(f"| {engine} | {row} | | | | |")
        else:
            lines.append(f"| {engine} | {row['correct']}/{row['questions']} | {row['accuracy']}% | "
                         f"{row['points_below_sqlite']} | {row['seconds']} | {', '.join(row['wrong']) or '-'} |")
    lines += ["", f"A file of {UPLOAD_ROWS:,} rows as a table (`python -m app data add`), then the first answer "
              f"on it (\"{UPLOAD_QUESTION}\", offline planner, a fresh store):", "",
              "| file | bytes | load (s) | first answer (s) |", "|---|---|---|---|"]
    for kind, row in figures["upload"].items():
        lines.append(f"| {kind} | {row['bytes']:,} | {row['load_s']} | {row['first_answer_s']} |")
    return "\n".join(lines)
