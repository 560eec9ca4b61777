"""Token counting works offline, from the encodings shipped in a registry package."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys

import pytest

from agent.memory import encodings, tokens
from agent.memory.tokens import TokenCounter, context_window_for, counter_for, encoding_name_for
from app.settings import ROOT

OFFLINE_SCRIPT = """
import json, socket, sys
def refuse(*args, **kwargs):
    raise OSError("network disabled in this test")
socket.socket.connect = refuse
socket.create_connection = refuse
from agent.memory.tokens import counter_for
out = {}
for model in ("gpt-4o-mini", "gpt-4"):
    counter = counter_for(model)
    out[model] = [counter.encoding_name, counter.approximate, counter.text("hello world, 你好")]
print(json.dumps(out))
"""


def test_encodings_load_with_no_network_and_an_empty_cache(tmp_path):
    env = {**os.environ, "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9",
           "https_proxy": "http://127.0.0.1:9", "TIKTOKEN_CACHE_DIR": str(tmp_path / "empty-cache")}
    done = subprocess.run([sys.executable, "-c", OFFLINE_SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    counts = json.loads(done.stdout)
    assert counts["gpt-4o-mini"][:2] == ["o200k_base", False]
    assert counts["gpt-4"][:2] == ["cl100k_base", False]
    assert all(c[2] > 0 for c in counts.values())
    assert not (tmp_path / "empty-cache").exists()  # nothing was downloaded into tiktoken's cache


def test_bundled_encodings_are_openais_and_count_exactly():
    o200k = encodings.get_encoding("o200k_base")
    cl100k = encodings.get_encoding("cl100k_base")
    # Reference ids from OpenAI's tokenizer for these encodings.
    assert o200k.encode("hello world") == [24912, 2375]
    assert cl100k.encode("hello world") == [15339, 1917]
    assert o200k.decode(o200k.encode("你好，世界 SELECT count(*)")) == "你好，世界 SELECT count(*)"


@pytest.mark.parametrize("model, encoding, window", [
    ("gpt-4o-mini", "o200k_base", 128_000), ("gpt-4o", "o200k_base", 128_000), ("gpt-4", "cl100k_base", 8_192),
    ("gpt-4-turbo", "cl100k_base", 128_000), ("gpt-3.5-turbo", "cl100k_base", 16_385),
    ("gpt-4.1-mini", "o200k_base", 1_047_576), ("o3-mini", "o200k_base", 200_000),
    ("gpt-4o-mini @ 127.0.0.1:8080", "o200k_base", 128_000), ("qwen2.5:7b", "o200k_base", 32_768),
    ("llama3.1:8b", "o200k_base", 131_072), ("some-unknown-model", "o200k_base", 8_192),
])
def test_model_table(model, encoding, window):
    assert encoding_name_for(model) == encoding
    assert context_window_for(model) == window


def test_window_override_and_offline():
    assert context_window_for("gpt-4o-mini", 4096) == 4096
    assert context_window_for("") == tokens.OFFLINE_WINDOW


def test_message_counting_includes_overhead_and_tool_calls():
    counter = counter_for("gpt-4o-mini")
    plain = counter.message({"role": "user", "content": "hello world"})
    assert plain == 2 + TokenCounter.PER_MESSAGE
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "run_sql", "arguments": '{"sql": "SELECT 1"}'}}]}
    assert counter.message(call) > TokenCounter.PER_MESSAGE + 5
    assert counter.messages([call]) == counter.message(call) + TokenCounter.PER_REPLY


def test_an_unavailable_encoding_falls_back_to_an_approximate_count(monkeypatch, caplog):
    def unavailable(name):
        raise encodings.EncodingUnavailable("no bundled file for test")

    monkeypatch.setattr(tokens, "get_encoding", unavailable)
    with caplog.at_level(logging.WARNING, logger="agent.memory.tokens"):
        counter = TokenCounter("o200k_base")
    assert counter.approximate
    assert "approximate" in caplog.text
    assert counter.text("abcdefgh") == 2  # about four characters a token
    assert counter.text("你好世界") == 4  # a CJK character about one token
