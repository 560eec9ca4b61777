"""Load with resource bombs (issue 18, issue 39): a quarter of the users send work built to exhaust
the server, over and over, while the rest ask normal questions; normal users' latency is compared with
the same users alone, and the app process's peak memory is reported. Two kinds of bombs: queries
through the SQL page (one slow VM step, a memory bomb, a temp-disk bomb), and uploads through the data
page (an .xlsx that unzips to 210 MB, a CSV of 200,000 columns, a workbook pointing 3,000 cells at one
50,000-character string, a CSV of 3 million lines).

Each user is its own user (`ASKDB_AUTH=proxy`), so the per-user bound applies to the bombers.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

from bench.live_server import LiveServer
from bench.responders import three_tool_turn
from bench.scripted_llm import ScriptedLLMServer
from bench.traffic import USERS, percentile, tiny_database

BOMBS = [
    "SELECT instr(printf('%.*c', 15000000, 'x') || 'y', printf('%.*c', 5000000, 'x') || 'z')",
    "SELECT " + ", ".join(["zeroblob(19000000)"] * 60),
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 3000000)"
    " SELECT count(*) FROM (SELECT DISTINCT randomblob(1000) FROM c)",
]
TURNS = 10


def _normal_user(url: str, n: int, latencies: list[float], errors: list[str]) -> None:
    headers = {"Accept": "application/json", "X-Forwarded-User": f"user{n}"}
    with httpx.Client(timeout=120, headers=headers) as client:
        thread_id = client.post(url + "/api/conversations", json={"title": f"user {n}"}).json()["thread_id"]
        for turn in range(TURNS):
            started = time.perf_counter()
            try:
                reply = client.post(url + "/api/chat", json={"question": f"turn {turn}: sites?", "thread_id": thread_id})
                problem = reply.text if reply.status_code != 200 else reply.json().get("error")
            except httpx.HTTPError as exc:
                problem = repr(exc)
            latencies.append((time.perf_counter() - started) * 1000)  # list.append is atomic
            if problem:
                errors.append(str(problem)[:200])


def _bomber(url: str, n: int, stop: threading.Event, statuses: Counter, lock: threading.Lock,
            files: list[tuple[str, bytes]] | None = None) -> None:
    """Send SQL bombs, or with `files` upload bombs, without pause until `stop`."""
    with httpx.Client(timeout=300, headers={"X-Forwarded-User": f"bomber{n}"}) as client:
        sent = 0
        while not stop.is_set():
            try:
                if files:
                    name, content = files[(n + sent) % len(files)]
                    reply = str(client.post(url + "/data/upload", files={"file": (name, content)}).status_code)
                else:
                    reply = str(client.get(url + "/sql", params={"sql": BOMBS[(n + sent) % len(BOMBS)]}).status_code)
            except httpx.TransportError as exc:  # a kept-alive connection the server closed as it was reused
                reply = type(exc).__name__
            sent += 1
            with lock:
                statuses[reply] += 1


def upload_bombs() -> list[tuple[str, bytes]]:
    """The upload bombs, made here (tests/app/test_upload_bombs.py makes the same kinds)."""
    import io
    import zipfile

    import openpyxl

    unzips = io.BytesIO()
    with zipfile.ZipFile(unzips, "w", zipfile.ZIP_DEFLATED) as bomb:
        bomb.writestr("[Content_Types].xml", "<Types/>")
        with bomb.open("xl/sharedStrings.xml", "w") as member:
            for _ in range(210):
                member.write(b"a" * (1 << 20))
    book = openpyxl.Workbook()
    for _ in range(1_000):
        book.active.append(["x" * 50_000] * 3)
    cells = io.BytesIO()
    book.save(cells)
    wide = (",".join(f"c{i}" for i in range(200_000)) + "\n" + ",".join(["1"] * 200_000) + "\n").encode()
    long = ("n,label\n" + "".join(f"{i},row {i}\n" for i in range(3_000_000))).encode()
    return [("unzips.xlsx", unzips.getvalue()), ("wide.csv", wide), ("cells.xlsx", cells.getvalue()),
            ("long.csv", long)]


def _peak_rss_mb(pid: int) -> float | None:
    """The process's peak resident memory (VmHWM), in MB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def _run(database: Path, *, normal: int, bombers: int, files: list[tuple[str, bytes]] | None = None) -> dict:
    with tempfile.TemporaryDirectory() as tmp, ScriptedLLMServer() as llm:
        llm.responder(three_tool_turn)
        env = {"ASKDB_DATABASE": str(database), "ASKDB_STORE": str(Path(tmp) / "store.db"),
               "OPENAI_BASE_URL": llm.base_url, "ASKDB_LLM_MAX_RETRIES": "0", "ASKDB_AUTH": "proxy",
               "ASKDB_UPLOADS_DIR": str(Path(tmp) / "uploads")}
        server = LiveServer(env).start()
        latencies: list[float] = []
        errors: list[str] = []
        statuses: Counter = Counter()
        stop, lock = threading.Event(), threading.Lock()
        try:
            bomb_threads = [threading.Thread(target=_bomber, args=(server.url, n, stop, statuses, lock, files))
                            for n in range(bombers)]
            for t in bomb_threads:
                t.start()
            started = time.perf_counter()
            users = [threading.Thread(target=_normal_user, args=(server.url, n, latencies, errors))
                     for n in range(normal)]
            for t in users:
                t.start()
            for t in users:
                t.join()
            elapsed = time.perf_counter() - started
            stop.set()
            for t in bomb_threads:
                t.join()
            peak = _peak_rss_mb(server.process.pid)
        finally:
            server.stop()
        return {"normal_users": normal, "bombers": bombers, "turns": normal * TURNS, "seconds": round(elapsed, 1),
                "turn_ms_p50": round(percentile(latencies, 0.5), 1), "turn_ms_p95": round(percentile(latencies, 0.95), 1),
                "errors": len(errors), "error_samples": errors[:3], "server_peak_rss_mb": peak,
                "bomb_replies": {str(k): v for k, v in sorted(statuses.items())}}


def run() -> dict:
    normal, bombers = USERS - USERS // 4, USERS // 4
    with tempfile.TemporaryDirectory() as tmp:
        database = tiny_database(Path(tmp))
        load_before = os.getloadavg()[0]
        alone = _run(database, normal=normal, bombers=0)
        bombed = _run(database, normal=normal, bombers=bombers)
        uploads = _run(database, normal=normal, bombers=bombers, files=upload_bombs())
    ratio = round(bombed["turn_ms_p95"] / alone["turn_ms_p95"], 2) if alone["turn_ms_p95"] else None
    upload_ratio = round(uploads["turn_ms_p95"] / alone["turn_ms_p95"], 2) if alone["turn_ms_p95"] else None
    return {"alone": alone, "with_bombs": bombed, "p95_ratio": ratio,
            "with_upload_bombs": uploads, "upload_p95_ratio": upload_ratio,
            "_meta": {"load_average_1m_before": round(load_before, 2),
                      "load_average_1m_after": round(os.getloadavg()[0], 2)}}


def markdown(figures: dict) -> str:
    alone, bombed = figures["alone"], figures["with_bombs"]
    lines = [f"{alone['normal_users']} normal users × {TURNS} turns (3 tools and the answer, scripted model), "
             f"alone and beside {bombed['bombers']} users sending resource bombs to the SQL page without pause "
             "(a slow VM step, a 1 GB row, a 3 GB DISTINCT), one server, default limits, each user its own "
             f"(`ASKDB_AUTH=proxy`). Load average {figures['_meta']['load_average_1m_before']} before, "
             f"{figures['_meta']['load_average_1m_after']} after (the machine is shared).", "",
             "| run | normal turn p50 ms | p95 ms | normal errors | bomb replies (status: count) |",
             "|---|---:|---:|---:|---|"]
    runs = [("alone", alone), ("with SQL bombs", bombed)]
    if "with_upload_bombs" in figures:
        runs.append(("with upload bombs", figures["with_upload_bombs"]))
        lines[-2] = "| run | normal turn p50 ms | p95 ms | normal errors | bomb replies (status: count) | app peak RSS MB |"
        lines[-1] = "|---|---:|---:|---:|---|---:|"
    for name, r in runs:
        replies = ", ".join(f"{k}: {v}" for k, v in r["bomb_replies"].items()) or "none"
        rss = f" {r.get('server_peak_rss_mb')} |" if "with_upload_bombs" in figures else ""
        lines.append(f"| {name} | {r['turn_ms_p50']} | {r['turn_ms_p95']} | {r['errors']} | {replies} |{rss}")
    lines += ["", f"Normal users' p95 with SQL bombs / alone: {figures['p95_ratio']} (target: at most 2, no errors)."]
    if "with_upload_bombs" in figures:
        lines += [f"With upload bombs / alone: {figures['upload_p95_ratio']} (target: at most 2, no errors). The "
                  "upload bombs: an .xlsx that unzips to 210 MB, a CSV of 200,000 columns, a workbook pointing "
                  "3,000 cells at one 50,000-character string, a CSV of 3 million lines; each read in a process "
                  "of its own (agent/sources/upload_worker.py), so the app process does not hold the file."]
    return "\n".join(lines)
