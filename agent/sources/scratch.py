"""Per-process scratch directories in the system's temporary folder.

A directory is named after the process that made it (``askdb-sql-<pid>-…``), so the empty ones a
process stopped by a signal leaves behind (it runs no exit handler) can be told from those of
processes still running, and are swept when the next one of the same kind is made.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def scratch_directory(prefix: str) -> str:
    """A new directory named ``<prefix><pid>-…``, after sweeping the empty ones of processes gone."""
    sweep(prefix)
    return tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-")


def sweep(prefix: str) -> None:
    """Remove the empty ``<prefix><pid>-…`` directories of processes that no longer run, and the empty
    directories inside them (a query worker's own spill directory, made inside its parent's); a
    directory that still holds files is left alone."""
    for path in Path(tempfile.gettempdir()).glob(f"{prefix}*-*"):
        pid = path.name[len(prefix):].split("-", 1)[0]
        if not pid.isdigit() or _running(int(pid)):
            continue
        for inner in sorted((p for p in path.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
            try:
                inner.rmdir()
            except OSError:
                pass
        try:
            path.rmdir()
        except OSError:
            pass


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
