"""One worker process of agent.sources.query_pool: runs analytics queries under hard limits.

Usage (by the pool only): ``python -m agent.sources.sqlite_worker MAX_MEMORY_MB MAX_TEMP_MB``, with
SQLITE_TMPDIR set to a private directory. Reads one JSON request per line on stdin, writes one
JSON reply per line on stdout: ``{"result": {...}}`` or ``{"error": "<ErrorName>", "message": ...}``.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sqlite3
import sys
import threading
import time

MB = 1 << 20
# SQLite's own heap stops below the address-space limit, so a memory bomb fails inside SQLite
# with SQLITE_NOMEM (a clear error) while Python still has room to report it.
HEAP_SHARE = 0.75
WORKER_NICENESS = 10


def apply_limits(max_memory_mb: int, max_temp_mb: int) -> None:
    """Hard limits of this process: address space, size of any file it writes, no core dumps, and a
    lower CPU priority."""
    resource.setrlimit(resource.RLIMIT_AS, (max_memory_mb * MB, max_memory_mb * MB))
    # A temp file past the limit fails its write with EFBIG (SQLITE_FULL) instead of a signal.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (max_temp_mb * MB, max_temp_mb * MB))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # Below the app's CPU priority: a query that burns a core until it is killed slows its own
    # kind, not the server answering everyone else.
    os.nice(WORKER_NICENESS)
    sqlite3.connect(":memory:").execute(f"PRAGMA hard_heap_limit = {int(max_memory_mb * MB * HEAP_SHARE)}")


def exit_with_parent() -> None:
    """End when the app that started this worker is gone, even in the middle of a long step."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def serve(max_memory_mb: int, max_temp_mb: int) -> None:
    from agent.sources.errors import QueryFailed, SourceError
    from agent.sources.sqlite import SQLiteSource

    out = sys.stdout.buffer
    out.write(b'{"ready": true}\n')
    out.flush()
    for line in sys.stdin.buffer:
        request = json.loads(line)
        reply: dict = {}
        try:
            database = SQLiteSource(request["path"], time_limit_s=request["time_limit_s"],
                                    max_rows=request["max_rows"], max_cell_bytes=request["max_cell_bytes"],
                                    trusted=request["trusted"])
            result = database.run_here(request["sql"], max_rows=request["limit"])
            reply = {"result": result.model_dump(mode="json")}
        except MemoryError:
            # Python's sqlite3 raises MemoryError for SQLITE_NOMEM. Start afresh after it.
            failed = QueryFailed(f"the query needed more than {max_memory_mb} MB of memory "
                                 "(ASKDB_SQL_MAX_MEMORY_MB); select fewer or smaller values, or add LIMIT")
            reply = {"error": "QueryFailed", "message": str(failed), "exit": True}
        except SourceError as exc:
            reply = {"error": type(exc).__name__, "message": str(exc)}
        except Exception as exc:  # report, never die silently: the parent would wait for nothing
            reply = {"error": "QueryFailed", "message": f"the query failed: {type(exc).__name__}"}
        out.write(json.dumps(reply).encode() + b"\n")
        out.flush()
        if reply.get("exit"):
            return


if __name__ == "__main__":
    memory_mb, temp_mb = int(sys.argv[1]), int(sys.argv[2])
    apply_limits(memory_mb, temp_mb)
    exit_with_parent()
    serve(memory_mb, temp_mb)
