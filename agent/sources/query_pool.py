"""Analytics queries of the file engines (SQLite, DuckDB) in worker processes that can be stopped
whatever the engine is doing.

SQLite's progress handler stops a query between VM steps, but one step can run for minutes
(``instr`` or ``replace`` over multi-megabyte strings, issue 18); DuckDB's interrupt waits for the
running function, and its ``memory_limit`` does not bound a single value (``repeat('a', 1.5e9)``
reached 2.9 GB and ran 6.9 s against a 2 s limit, in the app's own process). So model-written SQL
runs in a small pool of worker processes (``python -m agent.sources.query_worker``), each with:

- an address-space limit (RLIMIT_AS) and the engine's own memory limit below it (SQLite's
  ``hard_heap_limit``, DuckDB's ``memory_limit``), so a memory bomb fails inside the engine with a
  clear error instead of growing the server;
- a private temporary directory (TMPDIR, SQLITE_TMPDIR, DuckDB's spill directory) and a file-size
  limit (RLIMIT_FSIZE), so a huge sort or DISTINCT fails with "temporary disk" instead of filling
  the store's disk;
- a wall-clock kill: a worker that has not answered ``GRACE_S`` after the query's time limit
  is killed (SIGKILL) and replaced. A worker that crashed, sent a reply that is not a JSON object,
  or died while idle is discarded too: its pipes closed, its process reaped, its directory removed.

Workers are started on first use and reused; a pool is shared by every source with the same
limits, so tests and the app start a few processes, not one per query. Requests and replies are
JSON lines over the worker's pipes: nothing the worker sends is unpickled.

Short queries are not starved by long ones. A query still running after ``SLOW_AFTER_S`` moves
to a second lane of as many slots: its worker drops to the lowest CPU priority and its first-lane
slot is freed, so the next query starts at once in a fresh worker and wins the CPU (issue 18:
five users sending bombs without pause held every worker, and the others' answers waited for
them). A worker that ran a slow query is retired afterwards (a process cannot raise its priority
back), so the pool holds at most twice ``workers`` processes, half of them slow.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol

from agent.sources.base import QueryResult
from agent.sources.errors import (
    QueryBusy, QueryFailed, QueryOutOfMemory, QueryTimeout, SQLRejected, SourceUnavailable, UnknownColumn,
    UnknownTable, timed_out,
)
from agent.sources.scratch import scratch_directory
from storage.errors import AskdbError

# A worker that has not answered this long after its query's own deadline (which the engine
# normally enforces) is stuck in one step: it is killed.
GRACE_S = 1.0
# A query running longer than this is a slow one: it gives its slot to the next query (above).
SLOW_AFTER_S = 0.5
SLOW_NICENESS = 19
# Starting a worker (Python, the source modules, the engine) takes 0.3 s on an idle machine and
# holds a query slot meanwhile; past this the machine is too loaded to answer anyway: the caller
# is told to retry (QueryBusy) and the slot is freed.
START_TIMEOUT_S = 15.0
_PACKAGE_ROOT = Path(__file__).resolve().parents[2]
_WORKER_MODULE = "agent.sources.query_worker"


class PoolBusy(AskdbError):
    """Every worker stayed busy for the whole wait; the query was not run."""


class WorkerNotStarted(PoolBusy):
    """A new worker did not say it was ready within START_TIMEOUT_S; the query was not run."""


class WorkerDied(AskdbError):
    """The worker gave no usable answer: killed at the deadline (``timed_out``), crashed, or sent a
    reply that is not a JSON object. It has been discarded."""

    def __init__(self, what: str, *, timed_out: bool = False) -> None:
        super().__init__(what)
        self.timed_out = timed_out


@dataclass(frozen=True)
class PoolLimits:
    """How many workers, and the hard limits each one runs under."""

    workers: int = 4
    max_memory_mb: int = 1024
    max_temp_mb: int = 512
    queue_wait_s: float = 5.0

    @property
    def engine_memory_mb(self) -> int:
        """The engine's own memory limit (SQLite's heap, DuckDB's memory_limit): three quarters of the
        worker's address space, so a bomb fails inside the engine with a clear error while Python
        still has room to report it."""
        return int(self.max_memory_mb * 0.75)


class _Worker:
    def __init__(self, limits: PoolLimits) -> None:
        self.tmpdir = scratch_directory("askdb-sql-")
        env = {**os.environ, "SQLITE_TMPDIR": self.tmpdir, "TMPDIR": self.tmpdir,
               "PYTHONPATH": os.pathsep.join(filter(None, [str(_PACKAGE_ROOT), os.environ.get("PYTHONPATH")]))}
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", _WORKER_MODULE, str(limits.max_memory_mb), str(limits.max_temp_mb)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=self.tmpdir)
        except OSError:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            raise
        self._buffer = b""
        self.ready = False

    def call(self, request: dict[str, Any], timeout_s: float,
             on_slow: Callable[[], None] | None = None) -> dict[str, Any]:
        """Send one request and wait for its reply; `on_slow` runs once it has taken SLOW_AFTER_S;
        the worker is killed at the timeout, or when its reply is not a JSON object."""
        if not self.ready:
            try:
                ready = self._read_object(time.monotonic() + START_TIMEOUT_S)
            except WorkerDied as died:
                if died.timed_out:
                    raise WorkerNotStarted() from None
                raise
            if ready != {"ready": True}:
                self.kill()
                raise WorkerDied("sent a start-up line that is not its ready signal")
            self.ready = True
        try:
            self.process.stdin.write(json.dumps(request).encode() + b"\n")
            self.process.stdin.flush()
        except OSError:
            self.kill()
            raise WorkerDied("ended before it read the query") from None
        sent = time.monotonic()
        return self._read_object(sent + timeout_s, (sent + SLOW_AFTER_S, on_slow) if on_slow else None)

    def _read_object(self, deadline: float, slow: tuple[float, Callable[[], None]] | None = None) -> dict[str, Any]:
        line = self._read_line(deadline, slow)
        try:
            reply = json.loads(line)
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            self.kill()  # whatever it sends next cannot be trusted to answer the next query
            raise WorkerDied("sent a reply that is not a JSON object")
        return reply

    def _read_line(self, deadline: float, slow: tuple[float, Callable[[], None]] | None = None) -> bytes:
        stdout = self.process.stdout
        while b"\n" not in self._buffer:
            now = time.monotonic()
            remaining = deadline - now
            wait = min(remaining, slow[0] - now) if slow else remaining
            if remaining <= 0 or not select.select([stdout], [], [], max(0.0, wait))[0]:
                if slow and time.monotonic() < deadline:
                    slow[1]()
                    slow = None
                    continue
                self.kill()
                raise WorkerDied("did not answer in time", timed_out=True)
            chunk = os.read(stdout.fileno(), 1 << 20)
            if not chunk:
                self.kill()
                raise WorkerDied("ended without answering")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def alive(self) -> bool:
        return self.process.poll() is None

    def deprioritise(self) -> None:
        try:
            os.setpriority(os.PRIO_PROCESS, self.process.pid, SLOW_NICENESS)
        except OSError:  # it has just ended: nothing to slow down
            pass

    def kill(self) -> None:
        """End the process (if it still runs), reap it, close its pipes and remove its directory."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            try:
                pipe.close()
            except OSError:
                pass
        shutil.rmtree(self.tmpdir, ignore_errors=True)


class QueryPool:
    """At most ``limits.workers`` queries starting at once, and as many slow ones beside them; a caller
    waits at most ``queue_wait_s`` for a slot."""

    def __init__(self, limits: PoolLimits) -> None:
        self.limits = limits
        self._fast = threading.BoundedSemaphore(limits.workers)
        self._slow = threading.BoundedSemaphore(limits.workers)
        self._idle: list[_Worker] = []
        self._all: set[_Worker] = set()
        self._lock = threading.Lock()

    def run(self, request: dict[str, Any], *, timeout_s: float) -> dict[str, Any]:
        """Run one request in a worker; the reply is the worker's JSON object.

        Raises:
            PoolBusy: no slot became free within ``queue_wait_s``; WorkerNotStarted, a new worker
                did not start within START_TIMEOUT_S.
            WorkerDied: the worker was killed at ``timeout_s``, crashed or sent a broken reply; it
                is replaced.
        """
        if not self._fast.acquire(timeout=self.limits.queue_wait_s):
            raise PoolBusy()
        worker: _Worker | None = None
        slow = False

        def to_slow_lane() -> None:
            nonlocal slow
            if self._slow.acquire(blocking=False):  # else it keeps its slot: both lanes are full
                worker.deprioritise()
                slow = True
                self._fast.release()

        try:
            worker = self._take_idle() or self._start()
            reply = worker.call(request, timeout_s, on_slow=to_slow_lane)
        except BaseException:  # killed, crashed, garbled or interrupted: its state is unknown
            self._retire(worker)
            raise
        else:
            if reply.get("exit") or slow:  # it chose to end (out of memory), or runs at the lowest priority
                self._retire(worker)
            else:
                with self._lock:
                    self._idle.append(worker)
            return reply
        finally:
            (self._slow if slow else self._fast).release()

    def _take_idle(self) -> _Worker | None:
        with self._lock:
            idle, dead = None, []
            while self._idle and idle is None:
                worker = self._idle.pop()
                if worker.alive():
                    idle = worker
                else:
                    dead.append(worker)
        for worker in dead:  # died while idle (killed from outside, out of memory later): clean up after it
            self._retire(worker)
        return idle

    def _start(self) -> _Worker:
        worker = _Worker(self.limits)
        with self._lock:
            self._all.add(worker)
        return worker

    def _retire(self, worker: _Worker | None) -> None:
        if worker is not None:
            worker.kill()
            with self._lock:
                self._all.discard(worker)

    def close(self) -> None:
        with self._lock:
            workers, self._all, self._idle = list(self._all), set(), []
        for worker in workers:
            worker.kill()


class IsolatedSource(Protocol):
    """What `run_isolated` needs of a file engine (SQLiteSource, DuckDBSource)."""

    dialect: str
    time_limit_s: float
    limits: PoolLimits

    def worker_arguments(self) -> dict[str, Any]: ...

    def run_here(self, sql: str, *, max_rows: int) -> QueryResult: ...


_WORKER_ERRORS: dict[str, Callable[[str], Exception]] = {
    cls.__name__: cls for cls in (SQLRejected, QueryTimeout, QueryFailed, QueryOutOfMemory, SourceUnavailable,
                                  UnknownTable, UnknownColumn)}


def run_isolated(source: IsolatedSource, sql: str, *, limit: int) -> QueryResult:
    """Run ``sql`` (already guarded) on ``source`` in a worker of its limits' pool, or in this
    process when ``limits.workers`` is 0; the worker builds the same source from
    ``source.worker_arguments()`` and calls its ``run_here``.

    Raises:
        QueryBusy: no worker became free or started in time (nothing ran).
        QueryTimeout: the worker was killed at the deadline.
        QueryFailed: the worker crashed or answered nonsense; or the engine's own error, as
            `run_here` raises it (every `SourceError` crosses the pipe by name).
    """
    if source.limits.workers == 0:
        return source.run_here(sql, max_rows=limit)
    request = {"engine": source.dialect, "source": source.worker_arguments(), "sql": sql, "limit": limit}
    try:
        reply = pool_for(source.limits).run(request, timeout_s=source.time_limit_s + GRACE_S)
    except WorkerNotStarted:
        raise QueryBusy(f"no query worker started within {START_TIMEOUT_S:g} s (the server is overloaded); "
                        "retry in a moment") from None
    except PoolBusy:
        raise QueryBusy(f"all {source.limits.workers} query workers are busy; retry in a moment") from None
    except WorkerDied as died:
        if died.timed_out:
            raise timed_out(source.time_limit_s) from None
        raise QueryFailed(f"the query's worker process {died} (a crash, most likely out of memory: "
                          "ASKDB_SQL_MAX_MEMORY_MB); select fewer or smaller values, or add LIMIT") from None
    if "error" in reply:
        raise _WORKER_ERRORS.get(reply["error"], QueryFailed)(str(reply.get("message")))
    try:
        return QueryResult.model_validate(reply["result"])
    except (KeyError, ValueError):
        raise QueryFailed("the query's worker process sent a reply without a result") from None


_pools: dict[PoolLimits, QueryPool] = {}
_pools_lock = threading.Lock()


def pool_for(limits: PoolLimits) -> QueryPool:
    """The process's pool for these limits, created on first use (never at import)."""
    with _pools_lock:
        if limits not in _pools:
            _pools[limits] = QueryPool(limits)
        return _pools[limits]


@atexit.register
def _close_pools() -> None:
    with _pools_lock:
        pools = list(_pools.values())
    for pool in pools:
        pool.close()
