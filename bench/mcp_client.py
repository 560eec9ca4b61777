"""The MCP SDK's own client, driving askdb as an MCP client (a desktop assistant, an IDE) does:
over stdio (`python -m app mcp` started as a subprocess) or Streamable HTTP (the running app's
`/mcp`). Shared by tests/app/test_mcp*.py and `make bench BENCH=mcp` (bench/mcp.py).

`mode="legacy"` speaks the initialize handshake most clients speak today; `"auto"` lets the SDK
negotiate the newest protocol revision (sessionless requests) when the server offers it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

from bench.live_server import ROOT

#: An `ask` through a slow model takes minutes; the SDK's own default read timeout is 300 s too.
READ_TIMEOUT_S = 300.0
T = TypeVar("T")


def run_async(scenario: Callable[..., Awaitable[T]], *args: Any) -> T:
    """`anyio.run(scenario, *args)` in a thread of its own: the calling thread may already run an
    event loop (Playwright's sync API keeps one running for the whole test session)."""
    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(anyio.run, scenario, *args).result()


@asynccontextmanager
async def over_http(url: str, *, headers: dict[str, str] | None = None, mode: str = "legacy") -> AsyncIterator[Client]:
    """A client of the MCP endpoint `url` (the app's address + `/mcp`), sending `headers` (a bearer
    token, a proxy's user header) with every request."""
    async with httpx2.AsyncClient(headers=headers or {}, timeout=httpx2.Timeout(30.0, read=READ_TIMEOUT_S)) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            yield client


@asynccontextmanager
async def over_stdio(*args: str, env: dict[str, str], mode: str = "legacy") -> AsyncIterator[Client]:
    """`python -m app mcp ARGS` started as a client starts it, with `env` over this process's environment."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "app", "mcp", *args], cwd=str(ROOT),
                                   env={**os.environ, **env})
    async with Client(params, mode=mode) as client:
        yield client


def structured(result: CallToolResult) -> dict[str, Any]:
    """A tool's typed result; raises with the server's reason when the call was a tool error."""
    if result.is_error:
        raise AssertionError(f"tool error: {error_text(result)}")
    assert result.structured_content is not None, result
    return result.structured_content


def error_text(result: CallToolResult) -> str:
    """The reason of a tool error ("" for a result that is not one)."""
    return " ".join(getattr(c, "text", "") for c in result.content) if result.is_error else ""
