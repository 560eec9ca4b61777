"""What an OpenAI-compatible server says about its context window.

Guessing the window from the model's name went wrong (issue 16: "qwen2.5" read as 32,768
tokens against a llama.cpp server started with 2,048, a 400 every turn). Servers say:
llama.cpp `GET /props` (`default_generation_settings.n_ctx`), vLLM `GET /v1/models`
(`max_model_len`; OpenRouter's `context_length`), Ollama `POST /api/show` (`num_ctx` in its
parameters when set). And when a
request is too long, the error usually names the real window; `window_in_error` reads it.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

PROBE_TIMEOUT_S = 3.0
#: The window assumed for a self-hosted model whose server does not say, when MEMORY_CONTEXT_WINDOW is unset:
#: llama.cpp's and Ollama's usual default, not a number read into the model's name.
CONSERVATIVE_WINDOW = 4_096

_TOO_LONG = re.compile(
    r"context (?:length|size|window)|maximum context|too many tokens|exceeds? (?:the )?(?:available )?context|"
    r"n_ctx|prompt is too long|input is too long|maximum (?:input|prompt) length", re.I)
_WINDOW_NUMBERS = (
    re.compile(r"maximum context length is (\d+)", re.I),
    re.compile(r"\bn_ctx\b\D{0,6}(\d+)", re.I),
    re.compile(r"context (?:length|size|window) (?:of|is) (\d+)", re.I),
)


def server_window(base_url: str, model: str, *, api_key: str | None = None) -> int | None:
    """The window the server reports for `model`, or None when it says nothing we can read."""
    root = _root(base_url)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    with httpx.Client(timeout=PROBE_TIMEOUT_S, headers=headers) as client:
        for probe in (_llama_cpp, _vllm, _ollama):
            try:
                window = probe(client, base_url.rstrip("/"), root, model)
            except (httpx.HTTPError, ValueError, TypeError, AttributeError):
                window = None
            if window:
                return window
    return None


def is_context_error(message: str) -> bool:
    return bool(_TOO_LONG.search(message))


def window_in_error(body: Any) -> int | None:
    """The window a too-long error names (llama.cpp's `n_ctx` field, "maximum context length is N")."""
    if isinstance(body, dict):
        for value in (body, body.get("error")):
            if isinstance(value, dict) and isinstance(value.get("n_ctx"), int):
                return value["n_ctx"]
    text = body if isinstance(body, str) else json.dumps(body, default=str)
    for pattern in _WINDOW_NUMBERS:
        match = pattern.search(text)
        if match:
            return int(match.group(1))
    return None


def _root(base_url: str) -> str:
    parts = urlsplit(base_url.rstrip("/"))
    path = parts.path[: -len("/v1")] if parts.path.endswith("/v1") else parts.path
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _llama_cpp(client: httpx.Client, base: str, root: str, model: str) -> int | None:
    response = client.get(f"{root}/props")
    if response.status_code != 200:
        return None
    props = response.json()
    settings = props.get("default_generation_settings") or {}
    return _positive(settings.get("n_ctx") or props.get("n_ctx"))


def _vllm(client: httpx.Client, base: str, root: str, model: str) -> int | None:
    response = client.get(f"{base}/models")
    if response.status_code != 200:
        return None
    entries = response.json().get("data") or []
    named = [e for e in entries if e.get("id") == model] or entries[:1]
    # vLLM's `max_model_len`; OpenRouter and Together list `context_length`.
    return _positive(named[0].get("max_model_len") or named[0].get("context_length")) if named else None


def _ollama(client: httpx.Client, base: str, root: str, model: str) -> int | None:
    response = client.post(f"{root}/api/show", json={"model": model})
    if response.status_code != 200:
        return None
    match = re.search(r"^\s*num_ctx\s+(\d+)", response.json().get("parameters") or "", re.M)
    return int(match.group(1)) if match else None


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and value > 0 else None
