"""SQL isolation benchmark: the latency a worker process adds to one analytics query (issue 18).

The same guarded queries on the sample database, run in the app's process
(`ASKDB_SQL_WORKERS=0`) and through the worker pool (the default), alternating so both
see the same machine load. Reports p50 and p95 of each and the p50 added by the pool.
"""

from __future__ import annotations

import os
import statistics
import time

from agent.sources.query_pool import PoolLimits
from agent.sources.sqlite import SQLiteSource
from app.settings import DEFAULT_DATABASE
from bench.traffic import percentile

QUERIES = [
    "SELECT count(*) FROM launches",
    "SELECT * FROM launches LIMIT 50",
    "SELECT strftime('%Y', launch_date) AS year, count(*) FROM launches GROUP BY year ORDER BY year",
]
ROUNDS = 300



def run() -> dict:
    local = SQLiteSource(DEFAULT_DATABASE, limits=PoolLimits(workers=0))
    pooled = SQLiteSource(DEFAULT_DATABASE)
    for sql in QUERIES:  # start the workers and warm the page cache
        assert local.execute(sql).rows == pooled.execute(sql).rows
    times: dict[str, list[float]] = {"in_process": [], "worker_pool": []}
    for n in range(ROUNDS):
        sql = QUERIES[n % len(QUERIES)]
        for name, database in (("in_process", local), ("worker_pool", pooled)):
            started = time.perf_counter()
            database.execute(sql)
            times[name].append((time.perf_counter() - started) * 1000)
    figures = {name: {"p50_ms": round(statistics.median(v), 3), "p95_ms": round(percentile(v, 0.95), 3)}
               for name, v in times.items()}
    added = figures["worker_pool"]["p50_ms"] - figures["in_process"]["p50_ms"]
    return {"queries": len(QUERIES), "rounds": ROUNDS, **figures, "added_p50_ms": round(added, 3),
            "_meta": {"load_average_1m": round(os.getloadavg()[0], 2)}}


def markdown(figures: dict) -> str:
    local, pooled = figures["in_process"], figures["worker_pool"]
    return "\n".join([
        f"{figures['rounds']} guarded queries on the sample database ({figures['queries']} shapes, alternating), "
        f"load average {figures['_meta'].get('load_average_1m')} at the end.", "",
        "| where the query runs | p50 ms | p95 ms |", "|---|---:|---:|",
        f"| the app's process (`ASKDB_SQL_WORKERS=0`) | {local['p50_ms']} | {local['p95_ms']} |",
        f"| a worker process (default) | {pooled['p50_ms']} | {pooled['p95_ms']} |", "",
        f"Added by the worker pool: {figures['added_p50_ms']} ms at the median (target: under 2 ms).",
    ])
