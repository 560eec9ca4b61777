"""A scripted OpenAI-compatible server on loopback, and the `scripted_llm` fixture.

Tests script the wire, not the client: the real `openai` client (its retries, its
stream decoder) talks HTTP to this server, which answers each
`POST /v1/chat/completions` with the next scripted reply.

    scripted_llm.enqueue(tool_call("list_tables", {}), error(500), text("done"))
    model = OpenAIChatModel(base_url=scripted_llm.base_url, api_key=None, model="m")

With an empty queue the `responder` (if any) answers; with neither, the server
answers 500 "script exhausted" so a test fails loudly. Also serves
`GET /v1/models` and `POST /v1/embeddings` (deterministic hashed vectors), and, when
started with `n_ctx=N`, llama.cpp's `GET /props` reporting that window (`max_model_len`:
vLLM's field on each model of `GET /v1/models`).

Standalone, for crash tests:
    python -m bench.scripted_llm --port 8099 [--script replies.json] [--delay 0.2]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import signal
import socket
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator, Union


# --- scripted replies ---------------------------------------------------------


@dataclass(frozen=True)
class ScriptedToolCall:
    name: str
    arguments: str  # sent verbatim, so malformed JSON can be scripted
    id: str | None = None


@dataclass(frozen=True)
class MessageReply:
    """A 200 chat completion: text and/or tool calls (streamed when the request asks)."""

    content: str | None = None
    tool_calls: tuple[ScriptedToolCall, ...] = ()
    reasoning: str | None = None  # sent as `reasoning_content`, as vLLM and DeepSeek do
    usage: tuple[int, int] | None = None  # (prompt, completion); None = a rough count
    finish_reason: str | None = None  # None: "tool_calls" with calls, else "stop"
    cached: int | None = None  # cached prompt tokens, sent as OpenAI's and llama.cpp's fields


@dataclass(frozen=True)
class ErrorReply:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RawReply:
    """A body sent verbatim (for unparseable or oddly shaped replies)."""

    body: str
    status: int = 200
    content_type: str = "application/json"


@dataclass(frozen=True)
class DelayedReply:
    seconds: float
    reply: Reply


@dataclass(frozen=True)
class CutStreamReply:
    """Send `after_chunks` SSE chunks, then close the connection mid-body."""

    reply: MessageReply
    after_chunks: int


@dataclass(frozen=True)
class SlowStreamReply:
    """Streaming: each chunk `seconds` after the one before (a model writing its reply)."""

    reply: MessageReply
    seconds: float


@dataclass(frozen=True)
class HangReply:
    """Never answer; the connection is dropped when the server stops."""


Reply = Union[MessageReply, ErrorReply, RawReply, DelayedReply, CutStreamReply, SlowStreamReply, HangReply]
Responder = Callable[["RecordedRequest"], Reply]


def tool_call(
    name: str, arguments: dict[str, Any] | str, *, id: str | None = None, usage: tuple[int, int] | None = None
) -> MessageReply:
    """A reply asking for one tool; a str `arguments` is sent verbatim."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return MessageReply(tool_calls=(ScriptedToolCall(name, args, id),), usage=usage)


def tool_calls(
    calls: list[MessageReply | ScriptedToolCall | tuple[str, dict[str, Any] | str]],
    *,
    content: str | None = None,
    usage: tuple[int, int] | None = None,
) -> MessageReply:
    """A reply asking for several tools at once: `tool_calls([tool_call("a", {}), ("b", {"x": 1})])`."""
    merged: list[ScriptedToolCall] = []
    for call in calls:
        if isinstance(call, MessageReply):
            merged.extend(call.tool_calls)
        elif isinstance(call, ScriptedToolCall):
            merged.append(call)
        else:
            merged.extend(tool_call(call[0], call[1]).tool_calls)
    return MessageReply(content=content, tool_calls=tuple(merged), usage=usage)


def text(content: str, *, reasoning: str | None = None, usage: tuple[int, int] | None = None,
         finish_reason: str | None = None, cached: int | None = None) -> MessageReply:
    return MessageReply(content=content, reasoning=reasoning, usage=usage, finish_reason=finish_reason, cached=cached)


def error(
    status: int, *, body: Any = None, headers: dict[str, str] | None = None, message: str | None = None
) -> ErrorReply:
    """An HTTP error; `body` (dict or str) defaults to OpenAI's `{"error": {"message": ...}}` shape."""
    if body is None:
        kind = "server_error" if status >= 500 else "invalid_request_error"
        body = {"error": {"message": message or f"scripted error {status}", "type": kind, "code": None}}
    return ErrorReply(status, body, dict(headers or {}))


def raw(body: str, *, status: int = 200, content_type: str = "application/json") -> RawReply:
    return RawReply(body, status, content_type)


def delay(seconds: float, reply: Reply) -> DelayedReply:
    return DelayedReply(seconds, reply)


def slow_stream(reply: MessageReply, seconds_per_chunk: float) -> SlowStreamReply:
    return SlowStreamReply(reply, seconds_per_chunk)


def cut_stream(reply: MessageReply, after_chunks: int = 1) -> CutStreamReply:
    """Streaming: N chunks then an abrupt close. Non-streaming: half the body then a close."""
    return CutStreamReply(reply, after_chunks)


def hang() -> HangReply:
    return HangReply()


def reply_from_json(obj: dict[str, Any]) -> Reply:
    """One reply of a `--script` file: {"type": "tool_call", "name": ..., "arguments": {...}}, etc."""
    kind = obj.get("type")
    usage = tuple(obj["usage"]) if obj.get("usage") else None
    if kind == "tool_call":
        return tool_call(obj["name"], obj.get("arguments", {}), id=obj.get("id"), usage=usage)  # type: ignore[arg-type]
    if kind == "tool_calls":
        calls = [(c["name"], c.get("arguments", {})) for c in obj["calls"]]
        return tool_calls(calls, content=obj.get("content"), usage=usage)  # type: ignore[arg-type]
    if kind == "text":
        return text(obj["content"], reasoning=obj.get("reasoning"), usage=usage,  # type: ignore[arg-type]
                    finish_reason=obj.get("finish_reason"), cached=obj.get("cached"))
    if kind == "error":
        return error(obj["status"], body=obj.get("body"), headers=obj.get("headers"), message=obj.get("message"))
    if kind == "raw":
        return raw(obj["body"], status=obj.get("status", 200), content_type=obj.get("content_type", "application/json"))
    if kind == "delay":
        return delay(obj["seconds"], reply_from_json(obj["reply"]))
    if kind == "cut_stream":
        inner = reply_from_json(obj["reply"])
        assert isinstance(inner, MessageReply), "cut_stream wraps a text or tool_call reply"
        return cut_stream(inner, obj.get("after_chunks", 1))
    if kind == "hang":
        return hang()
    raise ValueError(f"unknown scripted reply type: {kind!r}")


# --- wire shapes --------------------------------------------------------------


def fake_embedding(text: str, dim: int) -> list[float]:
    """A unit vector of hashed word counts: deterministic, and texts sharing words are close."""
    vec = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()) or [text]:
        digest = hashlib.sha256(word.encode()).digest()
        vec[int.from_bytes(digest[:4], "big") % dim] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


def _rough_tokens(value: Any) -> int:
    return max(1, len(json.dumps(value)) // 4)


def _usage(reply: MessageReply, request: dict[str, Any]) -> dict[str, Any]:
    if reply.usage is not None:
        prompt, completion = reply.usage
    else:
        prompt = _rough_tokens(request.get("messages", []))
        completion = _rough_tokens([reply.content, [(c.name, c.arguments) for c in reply.tool_calls]])
    usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion,
                             "total_tokens": prompt + completion}
    if reply.cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": reply.cached}
    return usage


def _finish(reply: MessageReply) -> str:
    return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")


def _call_ids(reply: MessageReply, serial: int) -> list[str]:
    return [c.id or f"call_{serial}_{i}" for i, c in enumerate(reply.tool_calls)]


def _completion(reply: MessageReply, request: dict[str, Any], serial: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.reasoning is not None:
        message["reasoning_content"] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for cid, c in zip(_call_ids(reply, serial), reply.tool_calls)
        ]
    finish = _finish(reply)
    return {
        "id": f"chatcmpl-{serial}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "scripted"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": _usage(reply, request),
    }


def _pieces(value: str, size: int = 8) -> list[str]:
    return [value[i : i + size] for i in range(0, len(value), size)]


def _stream_chunks(reply: MessageReply, request: dict[str, Any], serial: int) -> list[dict[str, Any]]:
    """The `chat.completion.chunk` sequence for `reply`, tool-call deltas keyed by index."""
    base = {"id": f"chatcmpl-{serial}", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": request.get("model", "scripted")}  # fmt: skip
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [{"reasoning_content": p} for p in _pieces(reply.reasoning or "")]
    deltas += [{"content": p} for p in _pieces(reply.content or "")]
    for index, (cid, call) in enumerate(zip(_call_ids(reply, serial), reply.tool_calls)):
        head = {"index": index, "id": cid, "type": "function", "function": {"name": call.name, "arguments": ""}}
        deltas.append({"tool_calls": [head]})
        deltas += [{"tool_calls": [{"index": index, "function": {"arguments": p}}]} for p in _pieces(call.arguments)]
    chunks = [{**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    finish = _finish(reply)
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    if (request.get("stream_options") or {}).get("include_usage"):
        chunks.append({**base, "choices": [], "usage": _usage(reply, request)})
    return chunks


# --- the server ---------------------------------------------------------------


class RecordedRequest(dict):  # type: ignore[type-arg]
    """The parsed JSON body of one request (a dict), plus `.method`, `.path` and `.headers` (lower-case keys)."""

    def __init__(self, body: dict[str, Any], *, method: str, path: str, headers: dict[str, str]):
        super().__init__(body)
        self.method = method
        self.path = path
        self.headers = headers


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read `.requests`
        pass

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in separate writes; without this, Nagle's algorithm and
        # the client's delayed ACK add ~40 ms to every reply.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.owner._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.owner._track(self.connection, add=False)

    def handle(self) -> None:
        try:
            super().handle()
        except (ConnectionError, TimeoutError, OSError):
            pass  # the client went away (timeouts, cut tests): nothing to answer

    def do_GET(self) -> None:
        owner = self.server.owner
        owner._record(self._recorded({}))
        if self.path.rstrip("/") == "/v1/models":
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "scripted",
                     **({"max_model_len": owner.max_model_len} if owner.max_model_len else {})} for m in owner.models]
            self._send_json(200, {"object": "list", "data": data})
        elif self.path.rstrip("/") == "/props" and owner.n_ctx:
            self._send_json(200, {"default_generation_settings": {"n_ctx": owner.n_ctx}, "total_slots": 1})
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            return self._send_json(400, {"error": {"message": "request body is not JSON"}})
        request = self._recorded(body if isinstance(body, dict) else {"_body": body})
        owner = self.server.owner
        owner._record(request)
        path = self.path.rstrip("/")
        if path == "/v1/chat/completions":
            try:
                reply = owner._next_reply(request)
            except Exception as exc:  # a broken responder should fail the test loudly
                reply = error(500, message=f"responder failed: {exc!r}")
            self._send_reply(reply, request, owner._next_serial())
        elif path == "/v1/embeddings":
            self._send_embeddings(request)
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})

    def _recorded(self, body: dict[str, Any]) -> RecordedRequest:
        headers = {k.lower(): v for k, v in self.headers.items()}
        return RecordedRequest(body, method=self.command, path=self.path, headers=headers)

    def _send_reply(self, reply: Reply, request: dict[str, Any], serial: int) -> None:
        stopping = self.server.owner._stopping
        while isinstance(reply, DelayedReply):
            if stopping.wait(reply.seconds):
                return self._drop()
            reply = reply.reply
        if isinstance(reply, HangReply):
            stopping.wait()
            return self._drop()
        if isinstance(reply, ErrorReply):
            return self._send_json(reply.status, reply.body, reply.headers)
        if isinstance(reply, RawReply):
            return self._send_bytes(reply.status, reply.body.encode(), reply.content_type)
        cut = reply.after_chunks if isinstance(reply, CutStreamReply) else None
        pause = reply.seconds if isinstance(reply, SlowStreamReply) else 0.0
        message = reply.reply if isinstance(reply, (CutStreamReply, SlowStreamReply)) else reply
        if request.get("stream"):
            return self._send_stream(_stream_chunks(message, request, serial), cut, pause)
        payload = json.dumps(_completion(message, request, serial)).encode()
        if cut is None:
            return self._send_bytes(200, payload, "application/json")
        self._send_bytes(200, payload[: len(payload) // 2], "application/json", length=len(payload))
        self._drop()

    def _send_stream(self, chunks: list[dict[str, Any]], cut_after: int | None, pause: float = 0.0) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        events = [f"data: {json.dumps(c)}\n\n" for c in chunks] + ["data: [DONE]\n\n"]
        for i, event in enumerate(events):
            if cut_after is not None and i >= cut_after:
                return self._drop()
            if pause and i and self.server.owner._stopping.wait(pause):
                return self._drop()
            data = event.encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        if cut_after is not None:
            return self._drop()  # all events sent, but never the chunked terminator
        self.wfile.write(b"0\r\n\r\n")

    def _send_embeddings(self, request: dict[str, Any]) -> None:
        inputs = request.get("input", "")
        texts = [inputs] if isinstance(inputs, str) else [str(i) for i in inputs]
        dim = int(request.get("dimensions") or self.server.owner.embedding_dim)
        data = [{"object": "embedding", "index": i, "embedding": fake_embedding(t, dim)} for i, t in enumerate(texts)]
        tokens = sum(_rough_tokens(t) for t in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        model = request.get("model", "scripted")
        self._send_json(200, {"object": "list", "data": data, "model": model, "usage": usage})

    def _send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        payload = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self._send_bytes(status, payload, "application/json", headers=headers)

    def _send_bytes(
        self, status: int, payload: bytes, content_type: str, *, headers: dict[str, str] | None = None,
        length: int | None = None,
    ) -> None:  # fmt: skip
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload) if length is None else length))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def _drop(self) -> None:
        """Close the connection abruptly, mid-reply if one was started."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], owner: ScriptedLLMServer):
        self.owner = owner
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # dropped connections are part of the script


class ScriptedLLMServer:
    """An OpenAI-compatible HTTP server on 127.0.0.1 that answers from a script."""

    def __init__(
        self, *, port: int = 0, embedding_dim: int = 64, models: tuple[str, ...] = ("scripted-model",),
        n_ctx: int | None = None,
    ) -> None:
        self.port = port
        self.n_ctx = n_ctx  # the window GET /props reports, as llama.cpp's server does; None: no /props
        self.max_model_len: int | None = None  # the window GET /v1/models reports, as vLLM does
        self.embedding_dim = embedding_dim
        self.models = models
        self._queue: deque[Reply] = deque()
        self._responder: Responder | None = None
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._serial = 0
        self._connections: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> ScriptedLLMServer:
        self._stopping.clear()
        self._httpd = httpd = _HTTPServer(("127.0.0.1", self.port), self)
        self.port = httpd.server_address[1]
        # A short poll keeps stop() (one per test) from waiting the default 0.5 s.
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="scripted-llm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; hung and delayed replies are dropped, open connections closed."""
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def enqueue(self, *replies: Reply) -> None:
        """Add replies to the FIFO; each chat-completion request consumes one."""
        with self._lock:
            self._queue.extend(replies)

    def responder(self, fn: Responder | None) -> None:
        """Answer with `fn(request)` whenever the queue is empty (None removes it)."""
        with self._lock:
            self._responder = fn

    @property
    def pending(self) -> int:
        """Replies still queued."""
        with self._lock:
            return len(self._queue)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request so far, oldest first (a snapshot)."""
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.rstrip("/") == "/v1/chat/completions"]

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
            responder = self._responder
        if responder is None:
            return error(500, message="script exhausted")
        return responder(request)

    def _next_serial(self) -> int:
        with self._lock:
            self._serial += 1
            return self._serial

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            (self._connections.add if add else self._connections.discard)(conn)




# --- standalone ---------------------------------------------------------------


def _answer_argument(request: dict[str, Any]) -> str:
    """The first required parameter of the request's `answer` tool ("text" when unknown)."""
    for tool in request.get("tools") or []:
        fn = tool.get("function") or {}
        if fn.get("name") == "answer":
            params = fn.get("parameters") or {}
            names = list(params.get("required") or []) + list(params.get("properties") or {})
            if names:
                return str(names[0])
    return "text"


def default_responder(request: dict[str, Any]) -> Reply:
    """list_tables after a user question, then `answer` "done" after a tool result (native or text ReAct)."""
    messages = request.get("messages") or []
    last = messages[-1] if messages else {}
    content = last.get("content") if isinstance(last.get("content"), str) else ""
    observed = last.get("role") == "tool" or (last.get("role") == "user" and content.startswith("Observation:"))
    name, args = ("answer", {_answer_argument(request): "done"}) if observed else ("list_tables", {})
    if request.get("tools"):
        return tool_call(name, args)
    return text(f"Thought: next step\nAction: {name}\nAction Input: {json.dumps(args)}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Run the scripted OpenAI-compatible server.")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (printed on start)")
    parser.add_argument("--script", help="JSON file: a list of replies, see reply_from_json")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds to wait before every reply")
    args = parser.parse_args(argv)

    server = ScriptedLLMServer(port=args.port)
    wrap: Callable[[Reply], Reply] = (lambda r: delay(args.delay, r)) if args.delay > 0 else (lambda r: r)
    if args.script:
        with open(args.script, encoding="utf-8") as fh:
            server.enqueue(*(wrap(reply_from_json(obj)) for obj in json.load(fh)))
    else:
        server.responder(lambda request: wrap(default_responder(request)))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with server:
        print(f"scripted LLM listening on {server.base_url}", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
