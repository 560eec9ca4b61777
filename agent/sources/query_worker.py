"""One worker process of agent.sources.query_pool: runs the file engines' queries under hard limits.

Usage (by the pool only): ``python -m agent.sources.query_worker MAX_MEMORY_MB MAX_TEMP_MB``, with
TMPDIR and SQLITE_TMPDIR set to a private directory. Reads one JSON request per line on stdin,
``{"engine": "sqlite" | "duckdb", "source": {the source's constructor arguments}, "sql": ..., "limit": N}``,
writes one JSON reply per line on stdout: ``{"result": {...}}`` or ``{"error": "<ErrorName>", "message": ...}``
(with ``"exit": true`` when the worker ends after it: out of memory, it starts afresh).
"""

from __future__ import annotations

import importlib
import json
import os
import resource
import signal
import sqlite3
import sys
import threading
import time
from collections import OrderedDict
from typing import Any

from agent.sources.errors import QueryFailed, QueryOutOfMemory, SourceError, out_of_memory
from agent.sources.query_pool import SLOW_NICENESS, PoolLimits

MB = 1 << 20
WORKER_NICENESS = 10
ENGINES = {"sqlite": ("agent.sources.sqlite", "SQLiteSource"), "duckdb": ("agent.sources.duckdb", "DuckDBSource")}
# Sources kept between requests: opening a DuckDB file costs about 14 ms (a SQLite file 0.15 ms).
KEPT_SOURCES = 8


def hard_limits(max_memory_mb: int, max_file_mb: int) -> None:
    """This process's address space and the size of any file it writes, in MB, and no core dumps; a
    write past the file limit fails with EFBIG (SQLite: SQLITE_FULL) instead of a signal. The query
    workers and the upload workers (upload_worker.py) both start with it."""
    resource.setrlimit(resource.RLIMIT_AS, (max_memory_mb * MB, max_memory_mb * MB))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_mb * MB, max_file_mb * MB))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def apply_limits(limits: PoolLimits) -> None:
    """Hard limits of a query worker: `hard_limits`, SQLite's heap, and a lower CPU priority."""
    hard_limits(limits.max_memory_mb, limits.max_temp_mb)
    # Below the app's CPU priority: a query that burns a core until it is killed slows its own
    # kind, not the server answering everyone else. Short of the slow lane's SLOW_NICENESS, so a slow
    # query still drops below the rest when the app itself runs under `nice`.
    current = os.getpriority(os.PRIO_PROCESS, 0)
    os.setpriority(os.PRIO_PROCESS, 0, max(current, min(current + WORKER_NICENESS, SLOW_NICENESS - 1)))
    sqlite3.connect(":memory:").execute(f"PRAGMA hard_heap_limit = {limits.engine_memory_mb * MB}")


def exit_with_parent() -> None:
    """End when the app that started this worker is gone, even in the middle of a long step."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


class Sources:
    """The sources requests name, built once each with this worker's limits and kept (the least
    recently used one closed past KEPT_SOURCES)."""

    def __init__(self, limits: PoolLimits) -> None:
        self.limits = limits
        self._open: OrderedDict[str, Any] = OrderedDict()

    def get(self, engine: str, arguments: dict[str, Any]) -> Any:
        key = json.dumps([engine, arguments], sort_keys=True)
        if key in self._open:
            self._open.move_to_end(key)
            return self._open[key]
        module, name = ENGINES[engine]
        source = getattr(importlib.import_module(module), name)(**arguments, limits=self.limits)
        self._open[key] = source
        if len(self._open) > KEPT_SOURCES:
            self._open.popitem(last=False)[1].close()
        return source


def answer(sources: Sources, request: dict[str, Any]) -> dict[str, Any]:
    try:
        source = sources.get(request["engine"], request["source"])
        return {"result": source.run_here(request["sql"], max_rows=request["limit"]).model_dump(mode="json")}
    except (MemoryError, QueryOutOfMemory):
        # Python's sqlite3 raises MemoryError for SQLITE_NOMEM; DuckDB's is translated. Start afresh after it.
        return {"error": "QueryOutOfMemory", "message": str(out_of_memory(sources.limits.max_memory_mb)),
                "exit": True}
    except SourceError as exc:
        return {"error": type(exc).__name__, "message": str(exc)}
    except Exception as exc:  # report, never die silently: the parent would wait for nothing
        return {"error": QueryFailed.__name__, "message": f"the query failed: {type(exc).__name__}"}


def reply_channel():
    """The pipe to the pool, moved off file descriptor 1, which then points at /dev/null: an engine
    that prints (DuckDB's profiler and `stdout` logger write there) cannot corrupt the replies."""
    sys.stdout.flush()
    replies = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    return replies


def serve(limits: PoolLimits) -> None:
    # Every engine imported before the worker says it is ready: the pool starts a query's clock when
    # it sends it, and importing DuckDB on a loaded machine took seconds of a 2 s limit.
    for module, _ in ENGINES.values():
        importlib.import_module(module)
    sources = Sources(limits)
    out = reply_channel()
    out.write(b'{"ready": true}\n')
    out.flush()
    for line in sys.stdin.buffer:
        reply = answer(sources, json.loads(line))
        out.write(json.dumps(reply).encode() + b"\n")
        out.flush()
        if reply.get("exit"):
            return


if __name__ == "__main__":
    # workers=0: each source runs its query right here, never in another worker.
    worker_limits = PoolLimits(workers=0, max_memory_mb=int(sys.argv[1]), max_temp_mb=int(sys.argv[2]))
    apply_limits(worker_limits)
    exit_with_parent()
    serve(worker_limits)
