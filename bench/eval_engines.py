"""Eval per engine (issue 21): the offline planner's documented sample questions on SQLite,
PostgreSQL, MariaDB and DuckDB, for `make bench BENCH=eval` (bench/eval.py).

The sample database is built afresh and copied into a throwaway PostgreSQL and MariaDB server
(bench/pg_server.py, mariadb_server.py) and a DuckDB file, each read through its read-only role;
every question in tests/data/planner_questions.json whose database is the sample is played as
the loop plays it (bench/planner_questions.py), its rows compared with the gold SQL's on the
SQLite file. An engine is within bounds when its accuracy is at most `MAX_POINTS_BELOW_SQLITE`
below SQLite's.
"""

from __future__ import annotations

import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from agent.offline_planner import OfflinePlanner
from agent.vocabulary.domain import DomainVocabulary
from agent.sources.factory import open_source
from bench.planner_questions import QUESTIONS, Conversation, check_question
from sample_db.build import build

MAX_POINTS_BELOW_SQLITE = 2.0  # issue 21


def engine_locations(stack: ExitStack, sample: Path, scratch: Path) -> dict[str, Path | str]:
    """The sample database's location on each engine that can run here, or "skipped: why"."""
    from bench.mariadb_server import MariaDBServer, MariaDBUnavailable
    from bench.pg_server import PostgresServer, PostgresUnavailable
    from sample_db import to_duckdb, to_mysql, to_postgres

    locations: dict[str, Path | str] = {"SQLite": sample}
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
        planner = OfflinePlanner(source, vocabulary=DomainVocabulary.beside(sample))
        wrong = [q["id"] for q in questions if not check_question(q, Conversation(planner, source), sample)[0]]
    finally:
        source.close()
    correct = len(questions) - len(wrong)
    return {"questions": len(questions), "correct": correct, "accuracy": round(100 * correct / len(questions), 1),
            "wrong": wrong, "seconds": round(time.perf_counter() - started, 1)}


def run() -> dict[str, Any]:
    """Accuracy per engine, each with its gap to SQLite's and whether it is within bounds."""
    with tempfile.TemporaryDirectory(prefix="askdb-bench-engines-") as tmp, ExitStack() as stack:
        scratch = Path(tmp)
        sample = scratch / "aerospace.db"
        build(sample)
        engines: dict[str, Any] = {
            engine: location if isinstance(location, str) and location.startswith("skipped") else
            accuracy(location, sample) for engine, location in engine_locations(stack, sample, scratch).items()}
    base = engines["SQLite"]["accuracy"]
    for figures in engines.values():
        if isinstance(figures, dict):
            figures["points_below_sqlite"] = round(base - figures["accuracy"], 1)
            figures["within_bounds"] = figures["points_below_sqlite"] <= MAX_POINTS_BELOW_SQLITE
    return engines


def markdown(engines: dict[str, Any]) -> str:
    lines = ["The offline planner's documented sample questions (tests/data/planner_questions.json) on each "
             "engine, the sample database copied in and read through a read-only role; each engine must stay "
             f"within {MAX_POINTS_BELOW_SQLITE:g} points of SQLite:", "",
             "| engine | correct | accuracy | points below SQLite | seconds | wrong |", "|---|---:|---:|---:|---:|---|"]
    for engine, row in engines.items():
        if isinstance(row, str):
            lines.append(f"| {engine} | {row} | | | | |")
        else:
            lines.append(f"| {engine} | {row['correct']}/{row['questions']} | **{row['accuracy']}%** | "
                         f"{row['points_below_sqlite']} | {row['seconds']} | {', '.join(row['wrong']) or '-'} |")
    return "\n".join(lines)
