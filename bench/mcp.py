"""MCP benchmark: what the MCP layer adds to an `ask` over `POST /api/chat` (issue 37).

One real server (`python -m app serve`, the sample database, the offline planner so the turns
themselves cost the same each time), and the offline planner's documented questions on the
sample database, each asked as a new conversation twice in a row: once through
`POST /api/chat` (`Accept: application/json`, one reply) and once through the MCP tool `ask`
(the SDK's own client, Streamable HTTP at /mcp, one session for the whole run), alternating
which goes first. Both wait for the same turn to finish; the difference is the protocol, the
tool layer and the result's shaping. Reports p50 and p95 of each, the p50 added, and the median
of the pairs' differences (each question's MCP ask minus its API ask, side by side in time).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from app.settings import DEFAULT_DATABASE
from bench.live_server import LiveServer
from bench.mcp_client import over_http, run_async, structured
from bench.planner_questions import QUESTIONS
from bench.traffic import percentile

ROUNDS = 5  # each question asked this many times per path
QUESTION_COUNT = 20  # the first documented single-turn questions on the sample database


def _questions() -> list[str]:
    single = [q["question"] for q in QUESTIONS if q["db"] == "sample" and not q.get("after")
              and q.get("expect") != "decline"]
    return single[:QUESTION_COUNT]


async def _measure(server: LiveServer, questions: list[str]) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"api": [], "mcp": []}
    async with httpx.AsyncClient(base_url=server.url, timeout=120) as api, over_http(server.url + "/mcp") as mcp:
        async def via_api(question: str) -> None:
            reply = await api.post("/api/chat", json={"question": question}, headers={"Accept": "application/json"})
            reply.raise_for_status()
            assert reply.json()["answer"] is not None, reply.text

        async def via_mcp(question: str) -> None:
            structured(await mcp.call_tool("ask", {"question": question}))

        for warm_up in (via_api, via_mcp):  # the planner's caches, the first connection, the SDK's imports
            await warm_up(questions[0])
        paths = [("api", via_api), ("mcp", via_mcp)]
        for n in range(ROUNDS * len(questions)):
            question = questions[n % len(questions)]
            for name, call in paths if n % 2 == 0 else paths[::-1]:
                started = time.perf_counter()
                await call(question)
                times[name].append((time.perf_counter() - started) * 1000)
    return times


def run() -> dict:
    questions = _questions()
    with tempfile.TemporaryDirectory(prefix="askdb-bench-mcp-") as tmp:
        server = LiveServer({"ASKDB_DATABASE": str(DEFAULT_DATABASE), "ASKDB_STORE": str(Path(tmp) / "store.db"),
                             "ASKDB_LLM": "offline", "MEMORY_EMBEDDER": "none"}).start()
        try:
            times = run_async(_measure, server, questions)
        finally:
            server.stop()
    figures = {name: {"p50_ms": round(statistics.median(v), 1), "p95_ms": round(percentile(v, 0.95), 1)}
               for name, v in times.items()}
    added = figures["mcp"]["p50_ms"] - figures["api"]["p50_ms"]
    paired = statistics.median(m - a for m, a in zip(times["mcp"], times["api"]))
    return {"questions": len(questions), "rounds": ROUNDS, "asks_per_path": len(times["api"]),
            "api_chat": figures["api"], "mcp_ask": figures["mcp"], "added_p50_ms": round(added, 1),
            "added_p50_percent": round(100 * added / figures["api"]["p50_ms"], 1),
            "added_paired_median_ms": round(paired, 1),
            "_meta": {"load_average_1m": round(os.getloadavg()[0], 2)}}


def markdown(figures: dict) -> str:
    api, mcp = figures["api_chat"], figures["mcp_ask"]
    return "\n".join([
        f"{figures['asks_per_path']} asks per path ({figures['questions']} of the offline planner's documented "
        f"questions on the sample database, {figures['rounds']} rounds, each a new conversation), one server, "
        f"the offline planner; the two paths alternate, load average {figures['_meta'].get('load_average_1m')} "
        "at the end.", "",
        "| path | p50 ms | p95 ms |", "|---|---:|---:|",
        f"| `POST /api/chat` (one JSON reply) | {api['p50_ms']} | {api['p95_ms']} |",
        f"| MCP `ask` (SDK client, Streamable HTTP) | {mcp['p50_ms']} | {mcp['p95_ms']} |", "",
        f"Added by MCP: {figures['added_p50_ms']} ms at the median ({figures['added_p50_percent']}% of an API ask); "
        f"the median of the pairs' differences (the same question by each path, one after the other): "
        f"{figures['added_paired_median_ms']} ms.",
    ])
