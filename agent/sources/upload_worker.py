"""Uploads as untrusted work: each file is previewed or loaded in a process of its own, under hard limits.

A spreadsheet or CSV is data from anyone: a 1 MB .xlsx expanded to 1 GB in openpyxl and took the app
to 3.8 GB, and a parse went on after the client left (issue 39, item 2). The caps in upload_files.py
refuse most bombs early; this is what bounds the rest. `run_upload_job` starts
`python -m agent.sources.upload_worker` for one job (`preview` or `add`, uploads.py's
`preview_file` and `add_table`), with:

- an address-space limit (`UploadLimits.memory_mb`) and DuckDB's memory limit three quarters of it,
- a CPU-time limit (`cpu_s`; SIGXCPU, then SIGKILL),
- a file-size limit (`temp_mb`) on every file it writes (the UTF-8 copy, an Excel sheet's rows, the
  user's tables), in a private temporary directory removed after it,
- the lowest CPU priority (nice 19, the query pool's slow lane's), no core dumps, and its end with
  the app's;

and kills it when `cancelled()` says the client left. The job's reply comes back as JSON on a pipe
off fd 1 (query_worker.reply_channel); nothing is unpickled. A refusal keeps its class, template and
values, so the page says it in the reader's language.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agent.sources.query_pool import SLOW_NICENESS
from agent.sources.upload_files import TablesUnreadable, UploadNotFound, UploadRejected, UploadTooLarge

_PACKAGE_ROOT = Path(__file__).resolve().parents[2]
_ERRORS = {cls.__name__: cls for cls in (UploadRejected, UploadTooLarge, UploadNotFound, TablesUnreadable)}
POLL_S = 0.1


class UploadCancelled(UploadRejected):
    """The client left before the job ended; the job was killed and nothing of it kept."""


@dataclass(frozen=True)
class UploadLimits:
    """One upload job's hard limits (ASKDB_UPLOAD_MAX_MEMORY_MB, ASKDB_UPLOAD_MAX_CPU_S; the files it
    writes: the user's quota plus room for the file's own copies)."""

    memory_mb: int = 2048
    cpu_s: int = 120
    temp_mb: int = 2048

    @property
    def engine_memory_mb(self) -> int:
        return int(self.memory_mb * 0.75)


def run_upload_job(op: str, arguments: dict[str, Any], *, limits: UploadLimits,
                   cancelled: Callable[[], bool] = lambda: False) -> Any:
    """Run uploads.py's `preview_file` (op "preview") or `add_table` ("add") in a worker process.

    Returns:
        the FilePreview or LoadedTable it made.

    Raises:
        UploadRejected (or a subclass) as the function raised it; UploadTooLarge when the worker passed
        a limit; UploadCancelled when `cancelled()` became true.
    """
    scratch = tempfile.mkdtemp(prefix="askdb-upload-job-")
    env = {**os.environ, "TMPDIR": scratch,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(_PACKAGE_ROOT), os.environ.get("PYTHONPATH")]))}
    request = json.dumps({"op": op, "arguments": _jsonable(arguments), "limits": asdict(limits)})
    try:
        process = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, env=env, cwd=scratch)
        try:
            reply = b""
            sending = request.encode() + b"\n"
            while True:  # read the reply as it comes: one past a pipe's buffer would block the worker
                try:
                    reply = process.communicate(sending, timeout=POLL_S)[0]
                    break
                except subprocess.TimeoutExpired:
                    sending = None
                    if cancelled():
                        raise UploadCancelled("the upload was stopped: you left the page") from None
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        return _answer(op, reply, process.returncode, limits, arguments)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _answer(op: str, reply: bytes, returncode: int, limits: UploadLimits, arguments: dict[str, Any]) -> Any:
    from agent.sources.uploads import FilePreview, LoadedTable

    try:
        answer = json.loads(reply)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):  # killed by a limit (SIGXCPU, SIGKILL) or out of memory before it could say
        raise UploadTooLarge("{file}: reading it took more than {mb:,} MB of memory or {s:,} s of CPU; save a "
                             "smaller file, or as CSV", file=Path(str(arguments.get("file", "the file"))).name,
                             mb=limits.memory_mb, s=limits.cpu_s)
    if "error" in answer:
        raise _ERRORS.get(answer["error"], UploadRejected)(answer["template"], **answer["values"])
    result = answer["result"]
    if op == "add":
        return LoadedTable(name=result["name"], columns=[tuple(c) for c in result["columns"]], rows=result["rows"])
    table = result.pop("table")
    return FilePreview(table=LoadedTable(name=table["name"], columns=[tuple(c) for c in table["columns"]],
                                         rows=table["rows"]), **result)


def _jsonable(arguments: dict[str, Any]) -> dict[str, Any]:
    return {k: str(v) if isinstance(v, Path) else v for k, v in arguments.items()}


def _limit_this_process(limits: UploadLimits) -> None:
    from agent.sources.query_worker import hard_limits

    hard_limits(limits.memory_mb, limits.temp_mb)
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 5))
    # The lowest priority, below the query workers (10) beside the slow lane's: reading a file may take
    # a core for a minute, and the analysts asking meanwhile come first.
    os.setpriority(os.PRIO_PROCESS, 0, SLOW_NICENESS)


def _serve() -> None:
    from agent.sources.query_worker import exit_with_parent, reply_channel
    from agent.sources.uploads import add_table, preview_file

    replies = reply_channel()
    request = json.loads(sys.stdin.buffer.readline())
    limits = UploadLimits(**request["limits"])
    _limit_this_process(limits)
    exit_with_parent()
    arguments = {**request["arguments"], "engine_memory_mb": limits.engine_memory_mb}
    for key in ("file", "target"):
        if key in arguments:
            arguments[key] = Path(arguments[key])
    try:
        made = (add_table if request["op"] == "add" else preview_file)(**arguments)
        answer = {"result": asdict(made)}
    except UploadRejected as e:
        answer = {"error": type(e).__name__, "template": e.template, "values": e.values}
    except MemoryError:
        answer = None  # the parent names the limit
    except OSError as e:  # a write past the file-size limit (EFBIG), a full disk
        answer = {"error": "UploadTooLarge", "template": "{file}: loading it needed more disk than allowed ({why})",
                  "values": {"file": Path(str(arguments.get("file"))).name, "why": e.strerror or type(e).__name__}}
    except Exception as e:  # noqa: BLE001 - a reader's own failure: said, never a silent worker
        answer = {"error": "UploadRejected", "template": "{file}: could not be read ({kind})",
                  "values": {"file": Path(str(arguments.get("file"))).name, "kind": type(e).__name__}}
    if answer is not None:
        replies.write(json.dumps(answer, default=str).encode())
    replies.flush()


if __name__ == "__main__":
    _serve()
