"""The scripted OpenAI-compatible server itself, spoken to with plain httpx."""

from __future__ import annotations

import contextlib
import json
import math
import subprocess
import sys
import threading
from pathlib import Path
from typing import Iterator

import httpx
import pytest

from bench.scripted_llm import (
    ScriptedLLMServer,
    cut_stream,
    delay,
    error,
    fake_embedding,
    hang,
    reply_from_json,
    text,
    tool_call,
    tool_calls,
)

ROOT = Path(__file__).resolve().parents[2]
QUESTION = {"model": "m", "messages": [{"role": "user", "content": "How many customers?"}]}


def chat(server: ScriptedLLMServer, body: dict | None = None, **kwargs) -> httpx.Response:
    return httpx.post(f"{server.base_url}/chat/completions", json=body or QUESTION, timeout=5, **kwargs)


def content_of(response: httpx.Response) -> str:
    return response.json()["choices"][0]["message"]["content"]


def sse_events(response: httpx.Response) -> list[str]:
    return [line.removeprefix("data: ") for line in response.text.split("\n\n") if line.startswith("data: ")]


def test_queue_is_consumed_in_order_then_exhausted(scripted_llm):
    scripted_llm.enqueue(text("first"), text("second"))
    assert content_of(chat(scripted_llm)) == "first"
    assert scripted_llm.pending == 1
    assert content_of(chat(scripted_llm)) == "second"
    exhausted = chat(scripted_llm)
    assert exhausted.status_code == 500
    assert exhausted.json() == {"error": {"message": "script exhausted", "type": "server_error", "code": None}}


def test_responder_answers_when_the_queue_is_empty(scripted_llm):
    scripted_llm.responder(lambda request: text(f"echo {request['messages'][-1]['content']}"))
    scripted_llm.enqueue(text("queued first"))
    assert content_of(chat(scripted_llm)) == "queued first"
    assert content_of(chat(scripted_llm)) == "echo How many customers?"


def test_a_failing_responder_answers_500(scripted_llm):
    scripted_llm.responder(lambda request: 1 / 0)
    response = chat(scripted_llm)
    assert response.status_code == 500
    assert "ZeroDivisionError" in response.json()["error"]["message"]


def test_requests_are_recorded_with_headers(scripted_llm):
    scripted_llm.enqueue(text("ok"))
    chat(scripted_llm, headers={"X-Test": "yes"})
    httpx.get(f"{scripted_llm.base_url}/models", timeout=5)
    first, second = scripted_llm.requests
    assert first == QUESTION and first.path == "/v1/chat/completions" and first.headers["x-test"] == "yes"
    assert second.method == "GET" and second == {}
    assert scripted_llm.chat_requests == [first]


def test_tool_call_completion_shape(scripted_llm):
    scripted_llm.enqueue(tool_calls([tool_call("list_tables", {}, id="c1"), ("run_sql", "{broken")], usage=(10, 3)))
    body = chat(scripted_llm).json()
    choice = body["choices"][0]
    assert body["object"] == "chat.completion" and choice["finish_reason"] == "tool_calls"
    calls = choice["message"]["tool_calls"]
    assert [c["id"] for c in calls][0] == "c1"
    assert [c["function"]["arguments"] for c in calls] == ["{}", "{broken"]
    assert body["usage"] == {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}


def test_stream_chunks_carry_indexed_tool_deltas_usage_and_done(scripted_llm):
    scripted_llm.enqueue(tool_call("run_sql", {"sql": "SELECT count(*) FROM customers"}, id="c1"))
    body = {**QUESTION, "stream": True, "stream_options": {"include_usage": True}}
    response = chat(scripted_llm, body)
    assert response.headers["content-type"] == "text/event-stream"
    events = sse_events(response)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    deltas = [d for c in chunks for choice in c["choices"] for d in choice["delta"].get("tool_calls", [])]
    assert {d["index"] for d in deltas} == {0} and deltas[0]["id"] == "c1"
    assert json.loads("".join(d["function"]["arguments"] for d in deltas)) == {"sql": "SELECT count(*) FROM customers"}
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0


def test_cut_stream_closes_mid_body(scripted_llm):
    scripted_llm.enqueue(cut_stream(text("a reply long enough to be cut in pieces"), after_chunks=2))
    with pytest.raises(httpx.RemoteProtocolError):
        chat(scripted_llm, {**QUESTION, "stream": True})


def test_error_reply_sends_status_body_and_headers(scripted_llm):
    scripted_llm.enqueue(error(429, headers={"Retry-After": "1"}), error(400, body="plain words"))
    limited = chat(scripted_llm)
    assert (limited.status_code, limited.headers["retry-after"]) == (429, "1")
    assert limited.json()["error"]["message"] == "scripted error 429"
    assert chat(scripted_llm).text == "plain words"


def test_delay_then_reply(scripted_llm):
    scripted_llm.enqueue(delay(0.05, text("late")))
    assert content_of(chat(scripted_llm)) == "late"


def test_stop_releases_a_hung_request():
    server = ScriptedLLMServer().start()
    server.enqueue(hang())
    outcome: list[object] = []
    worker = threading.Thread(target=lambda: outcome.append(_try_chat(server)))
    worker.start()
    for _ in range(500):  # until the request has arrived (at most ~5 s)
        if server.requests:
            break
        threading.Event().wait(0.01)
    server.stop()
    worker.join(timeout=10)
    assert not worker.is_alive()
    assert isinstance(outcome[0], httpx.HTTPError)


def _try_chat(server: ScriptedLLMServer) -> object:
    try:
        return httpx.post(f"{server.base_url}/chat/completions", json=QUESTION, timeout=30)
    except httpx.HTTPError as exc:
        return exc


def test_embeddings_are_deterministic_unit_vectors(scripted_llm):
    url = f"{scripted_llm.base_url}/embeddings"
    body = {"model": "e", "input": ["monthly revenue by region", "revenue by region per month", "cat pictures"]}
    first = httpx.post(url, json=body, timeout=5).json()
    again = httpx.post(url, json=body, timeout=5).json()
    vectors = [d["embedding"] for d in first["data"]]
    assert vectors == [d["embedding"] for d in again["data"]]
    assert vectors[0] == fake_embedding("monthly revenue by region", 64)
    assert all(math.isclose(sum(v * v for v in vec), 1.0) for vec in vectors)
    similar = sum(a * b for a, b in zip(vectors[0], vectors[1]))
    unrelated = sum(a * b for a, b in zip(vectors[0], vectors[2]))
    assert similar > unrelated
    sized = httpx.post(url, json={"input": "x", "dimensions": 16}, timeout=5).json()
    assert len(sized["data"][0]["embedding"]) == 16


def test_models_lists_the_configured_names():
    with ScriptedLLMServer(models=("llama3", "qwen")) as server:
        body = httpx.get(f"{server.base_url}/models", timeout=5).json()
    assert [m["id"] for m in body["data"]] == ["llama3", "qwen"]


def test_reply_from_json_builds_each_kind():
    assert reply_from_json({"type": "text", "content": "hi"}) == text("hi")
    assert reply_from_json({"type": "tool_call", "name": "a", "arguments": {"x": 1}}) == tool_call("a", {"x": 1})
    assert reply_from_json({"type": "delay", "seconds": 1, "reply": {"type": "hang"}}) == delay(1, hang())
    with pytest.raises(ValueError):
        reply_from_json({"type": "nonsense"})


@contextlib.contextmanager
def running_cli(*args: str) -> Iterator[str]:
    """Run `python -m bench.scripted_llm` on a free port; yield its base URL."""
    command = [sys.executable, "-m", "bench.scripted_llm", "--port", "0", *args]
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert "listening on" in line, line
            yield line.rsplit(" ", 1)[-1].strip()
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def test_cli_default_responder_runs_a_turn():
    with running_cli() as base_url:
        tools = [{"type": "function", "function": {"name": "answer", "parameters": {
            "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}}]  # fmt: skip
        asked = httpx.post(f"{base_url}/chat/completions", json={**QUESTION, "tools": tools}, timeout=5).json()
        call = asked["choices"][0]["message"]["tool_calls"][0]["function"]
        assert call["name"] == "list_tables"
        messages = [*QUESTION["messages"], {"role": "tool", "tool_call_id": "c", "content": "customers"}]
        answered = httpx.post(f"{base_url}/chat/completions", json={"model": "m", "messages": messages, "tools": tools})
        call = answered.json()["choices"][0]["message"]["tool_calls"][0]["function"]
        assert (call["name"], json.loads(call["arguments"])) == ("answer", {"text": "done"})


def test_cli_plays_a_script_file(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"type": "text", "content": "scripted"}, {"type": "error", "status": 503}]))
    with running_cli("--script", str(script), "--delay", "0.01") as base_url:
        replies = [httpx.post(f"{base_url}/chat/completions", json=QUESTION, timeout=5) for _ in range(3)]
        assert content_of(replies[0]) == "scripted"
        assert [r.status_code for r in replies[1:]] == [503, 500]
