"""A recording HTTP proxy on loopback, between askdb and a real OpenAI-compatible server.

Every request is forwarded as it came; each `POST .../chat/completions` is kept with the raw
JSON reply (finish_reason, usage, llama.cpp's timings) and the seconds it took, so a real
model's replies can be measured afterwards and replayed through the scripted server in tests.

    with RecordingProxy("http://127.0.0.1:8080") as proxy:
        ... point the client at proxy.base_url + "/v1" ...
        proxy.exchanges  # [{"request": {...}, "response": {...}, "status": 200, "seconds": 4.2}]
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: Headers not passed on: the proxy sets its own length and connection handling.
_HOP_HEADERS = {"host", "content-length", "connection", "transfer-encoding", "keep-alive"}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _ProxyServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the bench reads `exchanges`
        pass

    def do_GET(self) -> None:
        self._forward(None)

    def do_POST(self) -> None:
        self._forward(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

    def _forward(self, body: bytes | None) -> None:
        owner = self.server.owner
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_HEADERS}
        upstream = urllib.request.Request(owner.upstream + self.path, data=body, headers=headers,
                                          method=self.command)
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(upstream, timeout=owner.timeout_s) as reply:
                status, reply_headers, payload = reply.status, reply.headers, reply.read()
        except urllib.error.HTTPError as err:
            status, reply_headers, payload = err.code, err.headers, err.read()
        except (urllib.error.URLError, TimeoutError, ConnectionError) as err:
            status, reply_headers, payload = 502, {}, json.dumps({"error": {"message": f"proxy: {err}"}}).encode()
        seconds = time.perf_counter() - started
        if body is not None and self.path.rstrip("/").endswith("/chat/completions"):
            owner.record(body, status, payload, seconds)
        self.send_response(status)
        self.send_header("Content-Type", reply_headers.get("Content-Type", "application/json"))
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class _ProxyServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: RecordingProxy):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.owner = owner


class RecordingProxy:
    """Forwards to `upstream` (e.g. "http://127.0.0.1:8080") and records chat completions."""

    def __init__(self, upstream: str, *, timeout_s: float = 900.0):
        self.upstream = upstream.rstrip("/")
        self.timeout_s = timeout_s
        self.exchanges: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: _ProxyServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "the proxy is not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def record(self, body: bytes, status: int, payload: bytes, seconds: float) -> None:
        def parsed(raw: bytes) -> Any:
            try:
                return json.loads(raw)
            except ValueError:
                return raw.decode("utf-8", "replace")

        with self._lock:
            self.exchanges.append({"request": parsed(body), "status": status, "response": parsed(payload),
                                   "seconds": round(seconds, 3)})

    def __enter__(self) -> RecordingProxy:
        self._server = _ProxyServer(self)
        threading.Thread(target=self._server.serve_forever, name="recording-proxy", daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
