"""Token counting: model name -> encoding and context window, and a counter for chat messages.

Counts are exact for OpenAI's models (their own encodings, bundled) and close for
others; an approximate counter stands in, with a logged warning, only if an
encoding cannot be loaded at all. The budget's 10% margin covers the difference.
"""

from __future__ import annotations

import json
import logging
from functools import lru_cache
from typing import Any

from agent.memory.encodings import EncodingUnavailable, get_encoding
from storage.text import count_cjk

log = logging.getLogger(__name__)

DEFAULT_ENCODING = "o200k_base"
DEFAULT_WINDOW = 8_192  # an unknown model: assume a small window; MEMORY_CONTEXT_WINDOW overrides
OFFLINE_WINDOW = 128_000  # the offline planner reads only the question; the cost cap decides

# Longest prefix wins. Encodings from tiktoken's model table; windows from the providers' model pages.
_ENCODINGS = [
    ("gpt-3.5", "cl100k_base"), ("gpt-35", "cl100k_base"), ("gpt-4", "cl100k_base"),
    ("gpt-4o", "o200k_base"), ("chatgpt-4o", "o200k_base"), ("gpt-4.1", "o200k_base"), ("gpt-4.5", "o200k_base"),
    ("gpt-5", "o200k_base"), ("o1", "o200k_base"), ("o3", "o200k_base"), ("o4", "o200k_base"),
    ("gpt-oss", "o200k_base"), ("text-embedding", "cl100k_base"),
]
_WINDOWS = [
    ("gpt-3.5-turbo", 16_385), ("gpt-35-turbo", 16_385), ("gpt-4", 8_192), ("gpt-4-32k", 32_768),
    ("gpt-4-turbo", 128_000), ("gpt-4-1106", 128_000), ("gpt-4-0125", 128_000), ("gpt-4o", 128_000),
    ("chatgpt-4o", 128_000), ("gpt-4.1", 1_047_576), ("gpt-4.5", 128_000), ("gpt-5", 400_000),
    ("o1", 200_000), ("o1-mini", 128_000), ("o3", 200_000), ("o4-mini", 200_000), ("gpt-oss", 131_072),
    # Common open models behind vLLM / Ollama / llama.cpp (the server may be configured smaller).
    ("qwen2", 32_768), ("qwen2.5", 32_768), ("qwen3", 32_768), ("llama3", 8_192), ("llama3.1", 131_072),
    ("llama3.2", 131_072), ("llama3.3", 131_072), ("mistral", 32_768), ("mixtral", 32_768),
    ("gemma2", 8_192), ("gemma3", 131_072), ("phi3", 4_096), ("phi4", 16_384), ("deepseek", 65_536),
]


def _base_name(model: str) -> str:
    # "gpt-4o-mini @ host", "openai/gpt-4o", "ft:gpt-4o:org" -> "gpt-4o-mini", "gpt-4o", "gpt-4o"
    name = model.split(" @ ")[0].strip().lower()
    name = name.removeprefix("ft:").split(":")[0] if name.startswith("ft:") else name
    return name.rsplit("/", 1)[-1]


def _lookup(table: list[tuple[str, Any]], model: str) -> Any | None:
    name = _base_name(model)
    matches = [(prefix, value) for prefix, value in table if name.startswith(prefix)]
    return max(matches, key=lambda m: len(m[0]))[1] if matches else None


def encoding_name_for(model: str) -> str:
    """The encoding of `model`; o200k_base (the current OpenAI one) for models we do not know."""
    return _lookup(_ENCODINGS, model) or DEFAULT_ENCODING


def context_window_for(model: str, override: int = 0) -> int:
    """The model's context window in tokens: `override` when set, else the table, else a safe default."""
    if override > 0:
        return override
    if not model:
        return OFFLINE_WINDOW
    return _lookup(_WINDOWS, model) or DEFAULT_WINDOW


class TokenCounter:
    """Counts tokens of text and of chat messages (OpenAI's per-message overhead included)."""

    PER_MESSAGE = 3  # <|start|>role ... <|end|>, as in OpenAI's cookbook
    PER_REPLY = 3  # every reply is primed with <|start|>assistant<|message|>

    def __init__(self, encoding_name: str):
        self.encoding_name = encoding_name
        try:
            self._encoding = get_encoding(encoding_name)
        except EncodingUnavailable as exc:
            log.warning("token counts are approximate (about 4 characters a token): %s", exc)
            self._encoding = None
        self.text = lru_cache(maxsize=16_384)(self._count)  # the same messages are counted every call

    @property
    def approximate(self) -> bool:
        return self._encoding is None

    def _count(self, text: str) -> int:
        if not text:
            return 0
        if self._encoding is not None:
            return len(self._encoding.encode(text, disallowed_special=()))
        cjk = count_cjk(text)  # a CJK character is about one token, not a quarter
        return cjk + -(-(len(text) - cjk) // 4)

    def message(self, message: dict[str, Any]) -> int:
        """Tokens of one message in the chat completions shape."""
        total = self.PER_MESSAGE + self.text(str(message.get("content") or ""))
        if message.get("name"):
            total += 1 + self.text(message["name"])
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            total += 3 + self.text(function.get("name", "")) + self.text(function.get("arguments", ""))
        if message.get("tool_call_id"):
            total += self.text(message["tool_call_id"])
        return total

    def messages(self, messages: list[dict[str, Any]]) -> int:
        return sum(self.message(m) for m in messages) + self.PER_REPLY

    def tools(self, tools: list[dict[str, Any]] | None) -> int:
        """An estimate of what the tool schemas cost (providers render them into the prompt)."""
        return self.text(json.dumps(tools, separators=(",", ":"), sort_keys=True)) if tools else 0


@lru_cache(maxsize=8)
def counter_for(model: str) -> TokenCounter:
    """The shared counter for a model's encoding."""
    return _counter(encoding_name_for(model))


@lru_cache(maxsize=8)
def _counter(encoding_name: str) -> TokenCounter:
    return TokenCounter(encoding_name)
