"""SQLite analytics queries in worker processes that can be stopped whatever SQLite is doing.

The progress handler (agent/sources/sqlite.py) stops a query between VM steps, but one step can
run for minutes (``instr`` or ``replace`` over multi-megabyte strings, issue 18), and memory
and temporary disk were bounded only by the machine. So model-written SQL runs in a small
pool of worker processes (``python -m agent.sources.sqlite_worker``), each with:

- an address-space limit (RLIMIT_AS) and SQLite's ``hard_heap_limit`` below it, so a memory
  bomb fails inside SQLite with a clear error instead of growing the server;
- a private temporary directory (SQLITE_TMPDIR) and a file-size limit (RLIMIT_FSIZE), so a
  huge sort or DISTINCT fails with "temporary disk" instead of filling the store's disk;
- a wall-clock kill: a worker that has not answered ``GRACE_S`` after the query's time limit
  is killed (SIGKILL) and replaced.

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
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from storage.errors import AskdbError

# A worker that has not answered this long after its query's own deadline (which the progress
# handler normally enforces) is stuck in one VM step: it is killed.
GRACE_S = 1.0
# A query running longer than this is a slow one: it gives its slot to the next query (above).
SLOW_AFTER_S = 0.5
SLOW_NICENESS = 19
# Importing the worker (sqlite3, pydantic, the guard) takes about 0.7 s on an idle machine;
# a busy one can take many times that.
START_TIMEOUT_S = 60.0
_PACKAGE_ROOT = Path(__file__).resolve().parents[2]


class PoolBusy(AskdbError):
    """Every worker stayed busy for the whole wait; the query was not run."""


class WorkerDied(AskdbError):
    """The worker process ended without answering (killed at the deadline, or crashed)."""


@dataclass(frozen=True)
class PoolLimits:
    """How many workers, and the hard limits each one runs under."""

    workers: int = 4
    max_memory_mb: int = 1024
    max_temp_mb: int = 512
    queue_wait_s: float = 5.0


class _Worker:
    def __init__(self, limits: PoolLimits) -> None:
        self.tmpdir = tempfile.mkdtemp(prefix="askdb-sql-")
        env = {**os.environ, "SQLITE_TMPDIR": self.tmpdir, "TMPDIR": self.tmpdir,
               "PYTHONPATH": os.pathsep.join(filter(None, [str(_PACKAGE_ROOT), os.environ.get("PYTHONPATH")]))}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "agent.sources.sqlite_worker", str(limits.max_memory_mb), str(limits.max_temp_mb)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=self.tmpdir)
        self._buffer = b""
        self.ready = False

    def call(self, request: dict[str, Any], timeout_s: float,
             on_slow: Callable[[], None] | None = None) -> dict[str, Any]:
        """Send one request and wait for its reply; `on_slow` runs once it has taken SLOW_AFTER_S;
        the worker is killed at the timeout."""
        if not self.ready:
            self._read_line(time.monotonic() + START_TIMEOUT_S)  # the worker says it is ready
            self.ready = True
        try:
            self.process.stdin.write(json.dumps(request).encode() + b"\n")
            self.process.stdin.flush()
        except OSError:
            raise WorkerDied() from None
        sent = time.monotonic()
        return json.loads(self._read_line(sent + timeout_s, (sent + SLOW_AFTER_S, on_slow) if on_slow else None))

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
                raise WorkerDied()
            chunk = os.read(stdout.fileno(), 1 << 20)
            if not chunk:
                self.kill()
                raise WorkerDied()
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
            PoolBusy: no slot became free within ``queue_wait_s``.
            WorkerDied: the worker was killed at ``timeout_s`` or crashed; it is replaced.
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
            if reply.get("exit") or slow:  # it chose to end (out of memory), or runs at the lowest priority
                self._retire(worker)
                worker = None
            return reply
        except WorkerDied:
            self._retire(worker)
            worker = None
            raise
        finally:
            if worker is not None:
                with self._lock:
                    self._idle.append(worker)
            (self._slow if slow else self._fast).release()

    def _take_idle(self) -> _Worker | None:
        with self._lock:
            while self._idle:
                worker = self._idle.pop()
                if worker.alive():
                    return worker
                self._all.discard(worker)
        return None

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
            workers, self._all = list(self._all), set()
        for worker in workers:
            worker.kill()


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
