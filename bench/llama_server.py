"""Run llama.cpp's `llama-server` on loopback for the length of a `with` block.

One thread each for prompt and generation: on this shared 2-core machine two threads made
generation collapse (docs/shared LOCAL_MODEL.md measured 0.3 tokens/s against 16-20).
The server is stopped on leaving the block, whatever happened inside it, and dies with the
process that started it.
"""

from __future__ import annotations

import ctypes
import json
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

CONTEXT = 8192
MODEL_ALIAS = "qwen2.5-coder-1.5b-instruct"


def _die_with_parent() -> None:
    """In the child before exec: on Linux, the server gets SIGTERM when the bench process dies,
    even killed, so no server is left behind (`with` covers every other way out)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LlamaServer:
    """`llama-server -m MODEL --jinja -c 8192 -np 1 -t 1 -tb 1` on 127.0.0.1 and a free port."""

    def __init__(self, binary: Path, model: Path, *, context: int = CONTEXT, load_timeout_s: float = 300.0):
        self.binary, self.model, self.context = binary, model, context
        self.load_timeout_s = load_timeout_s
        self.port = free_port()
        self._process: subprocess.Popen[bytes] | None = None
        self._log_dir = tempfile.TemporaryDirectory(prefix="askdb-llama-server-")
        self.log_path = Path(self._log_dir.name) / "server.log"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        return [str(self.binary), "-m", str(self.model), "--alias", MODEL_ALIAS, "--host", "127.0.0.1",
                "--port", str(self.port), "-c", str(self.context), "-np", "1", "--jinja", "-t", "1", "-tb", "1"]

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.base_url + path, timeout=10) as reply:
            return json.loads(reply.read())

    def __enter__(self) -> LlamaServer:
        log = self.log_path.open("wb")
        self._process = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT,
                                         preexec_fn=_die_with_parent)
        log.close()
        deadline = time.monotonic() + self.load_timeout_s
        try:
            while True:
                if self._process.poll() is not None:
                    raise RuntimeError(f"llama-server exited with {self._process.returncode}: {self.log_tail()}")
                try:
                    if self.get("/health").get("status") == "ok":
                        return self
                except (urllib.error.URLError, ConnectionError, TimeoutError, ValueError):
                    pass  # still loading (503) or not listening yet
                if time.monotonic() > deadline:
                    raise RuntimeError(f"llama-server not healthy after {self.load_timeout_s:.0f} s: {self.log_tail()}")
                time.sleep(0.5)
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._log_dir.cleanup()

    def log_tail(self, chars: int = 1500) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""
