"""Sources benchmark (issue 21): a user's file as a table.

100,000 rows (an id, a region, a date, an amount) written as CSV and as Parquet, each loaded with
`agent.sources.uploads.add_table` (what `python -m app data add` does), then the first answer on
it through the whole turn (offline planner, a fresh store). The offline planner on each engine
is measured by `make bench BENCH=eval` (bench/eval_engines.py).
"""

from __future__ import annotations

import csv
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb

from agent.sources.uploads import add_table
from app.core import AskDB
from app.settings import Settings

UPLOAD_ROWS = 100_000
UPLOAD_QUESTION = "How many sales are there?"


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
    with tempfile.TemporaryDirectory(prefix="askdb-bench-sources-") as tmp:
        scratch = Path(tmp)
        csv_path, parquet_path = write_sales(scratch)
        return {"upload": {"csv": upload(csv_path, scratch), "parquet": upload(parquet_path, scratch)}}


def markdown(figures: dict) -> str:
    lines = [f"A file of {UPLOAD_ROWS:,} rows as a table (`python -m app data add`), then the first answer "
             f"on it (\"{UPLOAD_QUESTION}\", offline planner, a fresh store):", "",
             "| file | bytes | load (s) | first answer (s) |", "|---|---|---|---|"]
    for kind, row in figures["upload"].items():
        lines.append(f"| {kind} | {row['bytes']:,} | {row['load_s']} | {row['first_answer_s']} |")
    return "\n".join(lines)
